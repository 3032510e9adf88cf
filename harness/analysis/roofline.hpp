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
#include <string>
#include <vector>

#include "base/family.hpp"

namespace gpuprobe::roofline {

inline constexpr FamilyDescriptor kFamily{
    "roofline", "", "its kernels check the other families' parameters and must not feed them",
    "its points are drawn by `gpuprobe roofline` on the model's roofs",
    "its energy windows (NVML's counter moves every 100 ms) take several seconds"};

// Columns (swept parameters) of roofline.csv.
constexpr const char* kMetricColumn = "metric";
constexpr const char* kItemColumn = "item";

// Metrics.
constexpr const char* kTime = "time";
constexpr const char* kEnergy = "energy";
constexpr const char* kPower = "power";
constexpr const char* kCount = "count";
constexpr const char* kLaunch = "launch";  // the item of the time, energy and power rows

// Count items beyond the energy family's own.
constexpr const char* kFootprint = "footprint";         // bytes the kernel's buffers span
constexpr const char* kAtomicGlobal = "atomic_global";  // global atomics (ops)
constexpr const char* kL2Read = "l2_read";              // bytes read from L2 (near or far)

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
  static const std::vector<std::string> v = {kTriadDram, kTriadL2,  kDot,
                                             kStencil7,  kSgemm,    kFp64Poly,
                                             kTensorGemm, kTransposeShared, kHistogram};
  return v;
}

}  // namespace gpuprobe::roofline
