#pragma once
// Shared memory banks: a bank model (how many wavefronts a warp's request needs on a machine of
// B banks of W bytes), the fit that picks B and W from measured conflict curves, and the
// analyzer of the shared_banks family (shared_banks, shared_bank_width, shared_bandwidth_per_sm,
// shared_conflict_penalty_per_way). The probes (microbench/shared_banks.cu) build their lane
// addresses with the same functions the model reads, so the pattern measured and the pattern
// predicted cannot drift apart.
#include <optional>
#include <string>
#include <vector>

#include "analysis/common/util.hpp"
#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::shared_banks {

// Probe names and units, shared by the probes and their analysis.
using analysis::kWarpLanes;
constexpr const char* kStrideLatency = "stride_latency";        // cycles, one warp
constexpr const char* kStrideThroughput = "stride_throughput";  // cycles/request, all warps
constexpr const char* kConflictLatency = "conflict_latency";
constexpr const char* kConflictThroughput = "conflict_throughput";
constexpr const char* kBandwidth = "bandwidth";  // B/clk/SM
constexpr const char* kPerRequest = "cycles/request";
// Columns of shared_banks.csv.
constexpr const char* kAccessBytesColumn = "access_bytes";     // bytes each lane loads
constexpr const char* kStrideColumn = "stride";                // lane t loads element stride * t
constexpr const char* kWarpsPerSmColumn = "warps_per_sm";      // the throughput probes' warps
constexpr const char* kWaysColumn = "ways";                    // distinct words per bank used
constexpr const char* kLanesPerWordColumn = "lanes_per_word";  // lanes reading each word
constexpr const char* kBanksColumn = "banks";  // the bank model the conflict patterns are built on
constexpr const char* kBankWidthColumn = "bank_width";  // its bank width (bytes)

// ld.shared per loop trip of the timed loops, and the kernels' names as the code checks
// (base/code_check.hpp) know them.
constexpr int kLoadsPerTrip = 8;                    // in chase_kernel and request_kernel
std::string chase_kernel_name(int access_bytes);    // "shared_banks::chase_kernel<4>"
std::string request_kernel_name(int access_bytes);  // "shared_banks::request_kernel<16>"

struct BankModel {
  int banks = 0;
  int width = 0;  // bytes per bank per row
  bool operator==(const BankModel& o) const { return banks == o.banks && width == o.width; }
};

// Byte offsets of a warp whose lane t accesses element `stride * t` of an array of
// `access_bytes`-byte elements.
std::vector<long long> stride_offsets(int access_bytes, int stride);

// Byte offsets of a 4-byte access pattern with `ways` distinct words in each bank used and
// `lanes_per_word` lanes reading each word: lanes are taken in groups of `lanes_per_word`,
// group g reads row g % ways of bank g / ways. (ways, 1) is the N-way conflict ladder,
// (1, m) is m-lane multicast without conflict, (N, 32/N) puts the whole warp on one bank.
std::vector<long long> conflict_offsets(const BankModel& m, int ways, int lanes_per_word);

// Wavefronts (bank-conflict-free passes) one warp request needs on machine `m`: lanes are
// served in phases of B*W/access_bytes lanes (a whole warp when that is >= 32); within a
// phase a bank serves one row per pass, and lanes reading the same row of a bank share it.
int bank_wavefronts(const BankModel& m, int access_bytes, const std::vector<long long>& offsets);

struct BankFit {
  BankModel model;
  // measured ~ intercept + slope * max(wavefronts, floor); floor > 1 is an issue limit
  double intercept = 0, slope = 0, floor = 1;
  double rms = 0;               // relative residual of the best model (outliers capped)
  double r2 = 0;                // weighted coefficient of determination, outliers left out
  double banks_separation = 0;  // [0,1]: how much worse the best model with other banks fits
  double width_separation = 0;  // [0,1]: the same for the best model with another width
  BankModel banks_runner_up, width_runner_up;
  int points = 0;
  std::string probe;  // the probe the fit used
};

// The model's banks (width) are reported only when the best model explains the curve and the
// best one with other banks (width) fits clearly worse; the conflict probes are built on the
// model only when both are.
double bank_fit_quality(const BankFit& f);
constexpr double kMinFitQuality = 0.2;
constexpr double kMinSeparation = 0.5;
bool bank_geometry_settled(const BankFit& f);

// Fits every candidate model (banks 8..128, widths 4..16 B) to the rows of `probe` (params
// access_bytes and stride; stride 0, the broadcast, left out) and returns the best, or
// nothing when the curve shows no conflicts or too few points. The candidates are scored by
// relative residual, a few outliers capped; see score_model in the .cpp.
std::optional<BankFit> fit_bank_geometry(const std::vector<Observation>& obs,
                                         const std::string& probe);
// The fit on stride_throughput, or on stride_latency where throughput did not settle the
// geometry (not measured, or ambiguous).
std::optional<BankFit> fit_bank_geometry(const std::vector<Observation>& obs);

std::vector<Parameter> analyze_shared_banks(const std::vector<Observation>& obs,
                                            const Metadata& meta);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"shared_banks", "shared_banks.gp shared_conflicts.gp"};

}  // namespace gpuprobe::shared_banks
