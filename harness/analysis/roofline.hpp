#pragma once
// Roofline check: ordinary kernels the parameters never saw (a STREAM triad over DRAM and over
// an L2-resident size, a dot product, a 7-point stencil, a tiled SGEMM, an FP64 kernel, a
// tensor GEMM, a shared-memory transpose, a global-atomics histogram), each timed and its
// energy measured, with the operations and bytes it must move counted from its code. The
// roofline model (analysis/roofline_model.hpp) predicts each kernel's time and energy from the
// other families' parameters and sets the prediction beside the measurement. This family feeds
// no parameter: a kernel that helped set the ceilings could not test them.
//
// The observations (roofline.csv), one row per kernel and metric:
//   family,probe,metric,item,value,unit,p05,p50,p95,reps
//   probe  the kernel (kKernels)
//   metric kTime   item kLaunch  unit s   seconds per launch (CUDA events, median of reps)
//          kEnergy item kLaunch  unit J   joules per launch (NVML energy windows, the energy
//                                         family's method; total, the static power included)
//          kPower  item kLaunch  unit W   the windows' mean power
//          kCount  item <what>   unit op or B: counted per launch from the kernel's code;
//                                <what> is an item of the energy family (fp32_fma,
//                                dram_read, l2_near_read, shared_write, ...: its energy is the
//                                parameter energy::parameter_name(item)) or one of kFootprint,
//                                kAtomicGlobal, kL2Read (bytes served by L2, near or far)
// A kernel whose code the device cannot run (no wgmma or mma) is listed in skipped.csv.
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/energy.hpp"
#include "base/family.hpp"

namespace gpuprobe::roofline {

inline constexpr FamilyDescriptor kFamily{
    "roofline", "", "its kernels check the other families' parameters and must not feed them",
    "its points are drawn by `gpuprobe roofline` on the model's roofs",
    "its energy windows (NVML's counter moves every 100 ms) take several seconds"};

// The `gpuprobe roofline` command (app/roofline.cpp: the model's roofs from a run's parameters,
// this family's kernels on them) and the folder it writes in a run: the command's word, which a
// rename of the family must leave as it is.
constexpr const char* kCommand = "roofline";

// Columns (swept parameters) of roofline.csv.
constexpr const char* kMetricColumn = "metric";
constexpr const char* kItemColumn = "item";

// Metrics.
constexpr const char* kTime = "time";
constexpr const char* kEnergy = energy::kQuantity;
constexpr const char* kPower = "power";
constexpr const char* kCount = "count";
constexpr const char* kLaunch = "launch";  // the item of the time, energy and power rows

// Count items beyond the energy family's own.
constexpr const char* kFootprint = "footprint";         // bytes the kernel's buffers span
constexpr const char* kAtomicGlobal = "atomic_global";  // global atomics (ops)
constexpr const char* kL2Read = "l2_read";              // bytes read from L2 (near or far)
constexpr const char* kL2Write = "l2_write";            // bytes stored into L2-resident lines

// The kernels, by probe name.
constexpr const char* kTriadDram = "triad_dram";
constexpr const char* kTriadL2 = "triad_l2";
constexpr const char* kDot = "dot";
constexpr const char* kStencil7 = "stencil7";
constexpr const char* kSgemm = "sgemm";
constexpr const char* kFp64Poly = "fp64_poly";
constexpr const char* kTensorGemm = "tensor_gemm";
constexpr const char* kTransposeShared = "transpose_shared";
constexpr const char* kHistogram = "histogram";

inline const std::vector<std::string>& kernels() {
  static const std::vector<std::string> v = {kTriadDram,  kTriadL2,         kDot,
                                             kStencil7,   kSgemm,           kFp64Poly,
                                             kTensorGemm, kTransposeShared, kHistogram};
  return v;
}

// --- Sizes (from the device's L2 and SM count) ------------------------------------------------
// The DRAM kernels' buffers each span kDramFootprintL2 x L2, so that no pass is served by L2;
// the L2 triad spans kL2Fraction of L2 in all, the fraction the bandwidth and energy families
// read as L2-near, and reads it kL2Passes times per launch.
constexpr double kDramFootprintL2 = 4.0;
constexpr double kL2Fraction = 0.25;
constexpr uint32_t kL2Passes = 32;
constexpr int kSgemmTile = 128, kSgemmTileK = 8,
              kSgemmThreadTile = 8;  // C tile, K step, per thread
constexpr int kPolyDegree = 512;     // DFMAs per element: well past the FP64/DRAM ridge
constexpr int kPolyPerThread = 16;   // elements per thread per SM-full grid
constexpr int kTransposeTile = 32;   // shared tile side (rows padded by one word)
constexpr int kTransposeRows = 8;    // a block: kTransposeTile x kTransposeRows threads
constexpr uint32_t kHistogramBins = 4096;
constexpr int kTensorTrips = 64;  // the held-out GEMM's trips per launch

struct Sizes {
  uint64_t triad_dram = 0;  // floats per array
  uint64_t triad_l2 = 0;    // floats per array
  uint64_t dot = 0;         // floats per vector
  uint64_t stencil = 0;     // points per side of the cube
  uint64_t sgemm = 0;       // M = N = K
  uint64_t poly = 0;        // doubles
  uint64_t transpose = 0;   // side of the square matrix
  uint64_t histogram = 0;   // keys
};
// The sizes of a device with `l2_bytes` of L2 and `sm_count` SMs; `mem_cap` bytes at most in
// one kernel's buffers (the DRAM sizes shrink to fit).
Sizes sizes_for(uint64_t l2_bytes, int sm_count, uint64_t mem_cap);
// Small sizes for the result check (a fresh, random input checked on the host).
Sizes check_sizes();

// --- Counts per launch, from each kernel's code (microbench/roofline.cu) ----------------------
// One count: an item (an energy family level or op, or kFootprint, kAtomicGlobal, kL2Read,
// kL2Write) and its unit ("B" for bytes, "op" for operations). fp32_fma and fp64_fma count
// the FP32 / FP64 pipe instructions per lane (an FMUL or FADD is one, as an FFMA is). kL2Read
// counts every byte a global load takes from L2, hit or miss; dram_read the bytes L2 must
// fetch at least once (each buffer once per launch); l2_near_read only the bytes L2 serves
// as hits.
struct Count {
  std::string item;
  double value = 0;
  std::string unit = {};  // the model reads the item, not the unit: a test's count may leave it
};
using Counts = std::vector<Count>;

Counts triad_counts(uint64_t n, uint32_t passes, bool l2_resident);
Counts dot_counts(uint64_t n, uint64_t blocks);
Counts stencil7_counts(uint64_t side);
Counts sgemm_counts(uint64_t s);
Counts fp64_poly_counts(uint64_t n, int degree);
Counts tensor_gemm_counts(int blocks, int trips);
Counts transpose_counts(uint64_t side);
Counts histogram_counts(uint64_t n, uint32_t bins);
// The counts of `kernel` (a kernels() name) at sizes `z` on `sm_count` SMs, with the grid the
// probe launches (dot: `blocks`).
Counts counts_of(const std::string& kernel, const Sizes& z, int sm_count, uint64_t dot_blocks);
// The value of `item` in `c` (0 when absent).
double count_of(const Counts& c, const std::string& item);

}  // namespace gpuprobe::roofline
