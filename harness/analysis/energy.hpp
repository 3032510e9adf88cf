#pragma once
// Energy: what one operation of each pipe and one byte moved at each memory level costs in
// joules, and the idle and static power. The probe (microbench/energy.cu) runs each kernel
// back to back for a window of NVML energy-counter updates at two or more rates (kernels on
// a fraction of the SMs), and between them kernels that keep every SM resident with nothing
// to issue (the static baseline); the analysis fits power against the rate of the operation:
// the slope is the energy of one operation, the intercept the static power. Three kernels the
// fits never saw (a tiled matrix multiply on the tensor pipe, a stream triad, FMAs on data
// streamed from DRAM) check that the energies add up to what those kernels draw.
// Pure C++: the probe includes it for the shared constants and names.
#include <optional>
#include <string>
#include <vector>

#include "analysis/pipes.hpp"
#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::energy {

inline constexpr FamilyDescriptor kFamily{
    "energy", "energy.gp energy_trace.gp", "", "",
    "its power windows (NVML's energy counter moves every 100 ms) take 20-30 s, longer than a "
    "whole quick run"};

// --- The windows -----------------------------------------------------------------------
// The energy counter moves about every 100 ms (4 x H200, 2026-11-28: median 100.0 ms, some
// 22-90 ms), so a window is measured from counter step to counter step: after the load has
// run kSettleS (power and clock settled, the counter's own lag passed), the steps of
// kIntervals updates; power is the energy between the first and last step over their time.
constexpr double kSettleS = 0.08;
constexpr int kIntervals = 2;
constexpr double kLaunchS = 0.01;        // one launch: short against the window, long against a gap
constexpr double kPollS = 0.0005;        // the host reads the counter this often
constexpr double kSampleS = 0.02;        // and clocks, temperature and reasons this often
constexpr double kWindowTimeoutS = 1.5;  // a counter that has not moved by then is broken
constexpr double kIdleSettleS = 0.3;     // no work for this long before an idle window
// A window's power is recorded as p05..p95 = power -+ kSpreadZ sd (its counter intervals'
// spread), the scale spread_confidence reads repetitions on; the analysis reads it back.
constexpr double kSpreadZ = 1.645;
// The family stops starting windows past this (the 30 s, less the last window).
constexpr double kFamilyBudgetS = 28.0;

// Rates: fractions of the SMs that run the kernel (one block each). The tensor pipe at full
// rate reaches the power limit (an 8192^3 bf16 matmul drew 700 W = the H200's limit, SM clock
// 1485 MHz against 1980 idle), so it is measured below it.
inline const std::vector<double>& alu_fractions() {
  static const std::vector<double> f = {0.5, 1.0};
  return f;
}
inline const std::vector<double>& tensor_fractions() {
  static const std::vector<double> f = {0.25, 0.5};
  return f;
}

// --- Names ---------------------------------------------------------------------------------
// The names of energy.csv, written by the driver and read by the analyzer, the tests and the
// roofline family's counts. A probe is a window's load: a baseline, an op of the pipes family
// (named as its probe there), a level (<level>_read / <level>_write) or a held-out kernel.
constexpr const char* kIdle = "idle";                       // nothing launched
constexpr const char* kStatic = "static";                   // every SM holds a block of sleepers
constexpr const char* kStaticOneSm = "static_one_sm";       // one such block, the other SMs empty
constexpr const char* kNvlinkBaseline = "nvlink_baseline";  // both GPUs of the NVLink pair at rest
constexpr const char* kFp32Fma = pipes::kFp32FmaProbe;      // FFMA results (lanes)
constexpr const char* kFp64Fma = pipes::kFp64FmaProbe;      // DFMA results (lanes)
constexpr const char* kInt32Mad = pipes::kInt32MadProbe;    // IMAD results (lanes)
constexpr const char* kSfuSin = pipes::kSfuSinProbe;        // MUFU.SIN results (lanes)
constexpr const char* kMmaF16 = pipes::kTensorMmaF16Probe;  // mma.sync multiply-adds, below sm_90
constexpr const char* kMmaBf16 = pipes::kTensorMmaBf16Probe;  // the same, bf16
constexpr const char* kMmaTf32 = pipes::kTensorMmaTf32Probe;  // the same, tf32
constexpr const char* kMmaInt8 = pipes::kTensorMmaInt8Probe;  // the same, int8
constexpr const char* kWgmmaBf16 =
    pipes::kTensorWgmmaBf16Probe;                            // wgmma bf16 multiply-adds (sm_90)
constexpr const char* kSharedRead = "shared_read";           // bytes loaded from shared memory
constexpr const char* kSharedWrite = "shared_write";         // bytes stored to shared memory
constexpr const char* kL1Read = "l1_read";                   // bytes read, L1-resident
constexpr const char* kL2NearRead = "l2_near_read";          // bytes read, L2-resident, near
constexpr const char* kL2FarRead = "l2_far_read";            // bytes read, L2-resident, far too
constexpr const char* kDramRead = "dram_read";               // bytes read from DRAM
constexpr const char* kDramWrite = "dram_write";             // bytes written to DRAM
constexpr const char* kHostLinkRead = "host_link_read";      // bytes copied host to device
constexpr const char* kHostLinkWrite = "host_link_write";    // bytes copied device to host
constexpr const char* kNvlinkWrite = "nvlink_write";         // bytes copied to an NVLink peer
constexpr const char* kHeldOutPrefix = "heldout_";           // a held-out kernel's probe: + kernel
constexpr const char* kHeldOutGemm = "heldout_gemm";         // the tiled wgmma GEMM
constexpr const char* kHeldOutTriad = "heldout_triad";       // the stream triad
constexpr const char* kHeldOutFmaDram = "heldout_fma_dram";  // FMAs on words read from DRAM

// Columns: a window's rows share all but the component.
constexpr const char* kOperandsColumn = "operands";     // kRandom, kZero, or "-" (no operands)
constexpr const char* kActiveSmsColumn = "active_sms";  // SMs that run the load
constexpr const char* kWindowColumn = "window";         // the window's number in the run
constexpr const char* kReasonsColumn = "reasons";       // limiting clock-event reasons seen
constexpr const char* kComponentColumn = "component";   // a held-out rate row's item

// "energy" in other formats, which a rename of the family must leave as they are: the
// quantity beside time (roofline.csv's metric of joules per launch, the roofline model's
// energy ceilings: roofline::kEnergy),
constexpr const char* kQuantity = "energy";
// and the key of gpuprobe's export schema (gpuprobe-run, `export --json`) that holds this
// family's parameters.
constexpr const char* kExportKey = "energy";

// The pipes' ops measured, and the levels (parameter <level>_<read|write>_energy_per_byte).
inline const std::vector<std::string>& alu_ops() {
  static const std::vector<std::string> v = {kFp32Fma, kFp64Fma, kInt32Mad, kSfuSin};
  return v;
}
// The tensor pipe below sm_90 (mma.sync); sm_90 measures pipes::wgmma_ops().
inline const std::vector<std::string>& mma_ops() {
  static const std::vector<std::string> v = {kMmaF16, kMmaBf16, kMmaTf32, kMmaInt8};
  return v;
}
inline const std::vector<std::string>& levels() {
  static const std::vector<std::string> v = {
      kSharedRead, kSharedWrite, kL1Read,       kL2NearRead,    kL2FarRead,
      kDramRead,   kDramWrite,   kHostLinkRead, kHostLinkWrite, kNvlinkWrite};
  return v;
}
inline const std::vector<std::string>& heldout_kernels() {
  static const std::vector<std::string> v = {kHeldOutGemm, kHeldOutTriad, kHeldOutFmaDram};
  return v;
}
bool is_level(const std::string& probe);
bool is_heldout(const std::string& probe);

// Rates are recorded in Gop/s (results of the pipes' op: lanes, or multiply-adds) and GB/s:
// a tensor pipe's 10^15 multiply-adds a second would read as an absurd number in op/s.
constexpr double kRateScale = 1e9;
inline std::string rate_unit(const std::string& item) { return is_level(item) ? "GB/s" : "Gop/s"; }

// Operands: random (the figures quoted) and all-zero (parameter name + "_zero").
constexpr const char* kRandom = "random";  // hashed operands, swinging between two values
constexpr const char* kZero = "zero";      // every operand zero

// The parameter of an item: fp32_fma -> fp32_fma_energy (pJ/op), dram_read ->
// dram_read_energy_per_byte (pJ/B); "_zero" after either for all-zero operands.
std::string parameter_name(const std::string& item, bool zero_operands);

// --- Kernel shapes (the probe's, and its code expectations') ---------------------------------
// ALU chains per thread (mma.sync: 4 accumulators of 4 registers), steps per chain and loop
// trip; 16-byte shared accesses per trip; streaming loads or stores in flight per thread.
constexpr int kAluIlp = 8, kMmaIlp = 4, kAluUnroll = 32;
constexpr int kSharedUnroll = 16;
constexpr int kStreamIlp = 4;

// --- Held-out kernels -------------------------------------------------------------------------
// Their sizes: the GEMM's C tile per block is 128 x 256 (two warpgroups of wgmma m64n256k16
// bf16), its K kGemmK (A and B then fill under a quarter of an H100's L2: L2 hits), staged
// kGemmStageK at a time; each FMA+DRAM thread does kMixedFmasPerWord dependent FMAs on each
// word it reads.
constexpr int kGemmK = 256;
constexpr int kGemmStageK = 64;
constexpr int kGemmCopyBatch = 8;  // 16-byte global loads in flight per thread while staging
constexpr int kMixedFmasPerWord = 32;
constexpr double kHeldOutGoal = 0.10;  // the issue's: predicted within 10 % of measured

// --- Analysis ----------------------------------------------------------------------------------
// One window as the probe recorded it (rows sharing its `window` parameter).
struct Window {
  int id = 0;
  std::string probe, operands;
  int active_sms = 0;
  std::string reasons;                 // limiting clock-event reasons seen ("none")
  double power_w = 0, power_sd_w = 0;  // and the spread of its counter intervals' powers
  int intervals = 0;
  double rate = 0;  // op/s or B/s, read from Gop/s or GB/s (0 for idle, static)
  std::string rate_unit;
  double sm_clock_mhz = 0, temperature_c = 0, t_s = 0, launch_s = 0;
  std::vector<std::pair<std::string, double>> components;  // held-out: item -> rate (op/s, B/s)
};
std::vector<Window> windows_of(const std::vector<Observation>& obs);

// The static baseline a window is compared with: the static windows' power as a straight line
// in time (thermal drift), and the power one resident SM adds (static minus static_one_sm,
// spread over the SMs): baseline(k, t) = static(t) - (N - k) x per_sm.
struct Baseline {
  double static_w = 0;  // mean of the static windows
  double drift_w_per_s = 0, t_mean_s = 0;
  double sd_w = 0;  // scatter of the static windows about the line
  double per_sm_w = 0, per_sm_sd_w = 0;
  int sm_count = 0, windows = 0;
  double clock_mhz = 0;                         // median NVML SM clock of the static windows
  double at(int active_sms, double t_s) const;  // the baseline power
  double drift(double t_s) const;               // static(t) - static_w
};
std::optional<Baseline> baseline_of(const std::vector<Window>& windows);

// Energy per unit (J) of one item and operand set: a line through the static windows (rate 0)
// and the item's windows, each corrected to all SMs resident at the mean static's time.
struct EnergyFit {
  double energy_j = 0, low_j = 0, high_j = 0, confidence = 0;
  double intercept_w = 0;
  int points = 0;    // the item's windows in the fit
  int excluded = 0;  // left out: run power-capped or throttled, or at another clock
  double clock_mhz = 0, max_rate = 0;
  std::string notes;  // why the confidence is lower, for the method text
};
std::optional<EnergyFit> fit_energy(const std::vector<Window>& windows, const Baseline& base,
                                    const std::string& item, const std::string& operands);

// A held-out kernel: the energy of one launch, measured and predicted from the parameters
// (static_power x time + each component's energy x its count).
struct HeldOutCheck {
  std::string kernel;
  double measured_j = 0, predicted_j = 0;
  double error = 0;                                   // (predicted - measured) / measured
  std::vector<std::pair<std::string, double>> terms;  // "static", then each item: J per launch
  std::string note;  // why there is no prediction, or what the window ran under
  bool predicted = false;
};
std::vector<HeldOutCheck> heldout_checks(const std::vector<Observation>& obs,
                                         const std::vector<Parameter>& params);

// The parameters above (idle_power, static_power, <item>_energy[_zero],
// <level>_energy_per_byte[_zero]) from the family's windows.
std::vector<Parameter> analyze_energy(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace gpuprobe::energy
