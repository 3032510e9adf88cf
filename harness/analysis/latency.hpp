#pragma once
// Reading a latency ladder: the cache levels, sizes and latencies that the pointer-chase
// family's curves reveal, from their segmentation into plateaus and knees
// (analysis/common/segmentation.hpp), and the footprints the sweep measures.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/common/memory_chase.hpp"
#include "analysis/common/segmentation.hpp"
#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe {
namespace latency {

// The names of latency.csv, written by the driver and read by the analyzer, the tests and the
// model GPUs; the footprint column is memory_chase::kFootprintColumn. Every row is cycles per
// load of one chase.
constexpr const char* kLdGlobalProbe = "ld_global";    // default ld.global: L1, then L2, DRAM
constexpr const char* kLdCgProbe = "ld_cg";            // ld.global.cg: L1 bypassed
constexpr const char* kLdNcProbe = "ld_nc";            // ld.global.nc: the read-only path
constexpr const char* kSharedProbe = "shared";         // ld.shared
constexpr const char* kConstantProbe = "constant";     // ld.const: the constant caches
constexpr const char* kStrideColumn = "stride_bytes";  // bytes between the chain's pointers
constexpr const char* kSmColumn = "sm";                // the one SM that chases

// `bytes` rounded to a whole number of `stride`-byte lines, at least two.
uint64_t round_to_lines(double bytes, uint32_t stride);

// The coarse footprints of a sweep: geometric from min_bytes to max_bytes in steps of about
// `ratio`, each nudged by up to 30 % of a step (fixed seed, so a rerun measures the same
// footprints) so that the sweep is not only powers of two; then, past max_bytes, a sparse tail
// (steps of 4x) up to tail_bytes. Multiples of `stride`, increasing.
std::vector<uint64_t> coarse_footprints(uint64_t min_bytes, uint64_t max_bytes, uint32_t stride,
                                        double ratio, uint64_t tail_bytes = 0);

// The global chase's range: the fine sweep to 4.5x the L2 the runtime reports (at least
// 1 MiB), then the sparse tail to 1 GiB so that a last-level cache of up to 256 MiB (AMD's
// Infinity Cache) shows past its size; both within a quarter of free memory.
struct GlobalSweep {
  uint64_t max_bytes = 0, tail_bytes = 0;
};
GlobalSweep global_sweep(double l2_bytes, double free_bytes, uint32_t stride);

// The kernels that measure `probe` of the latency family, as the code checks name them
// (base/code_check.hpp registers what each must hold); empty for an unknown probe.
std::vector<std::string> latency_kernels(const std::string& probe);

// The latency family's curve for one probe: footprint_bytes against cycles per load, in order
// of footprint; rows of one footprint (within 0.2 %) are one point, at their medians.
std::vector<segmentation::CurvePoint> latency_curve(const std::vector<Observation>& obs,
                                                    const std::string& probe);

// Infers the latency ladder from the latency family's observations (see docs/parameters.md for
// the names): L1, a mid cache, the L2 (near and far), a last-level cache, DRAM. Uses the
// metadata's l2_bytes and shared_per_sm_bytes, when present, only to tell which step is which
// and to bound l1_size's interval (the unified L1/shared array); every value comes from the
// curves. Where nothing tells which level is which, the names are read at low confidence.
std::vector<Parameter> infer_latency(const std::vector<Observation>& obs, const Metadata& meta);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"latency", "latency.gp"};

}  // namespace latency

}  // namespace gpuprobe
