#pragma once
// Fetch granularity (sector) and allocation granularity (line) of each load path, from
// cold chases at strides 4 B .. 1 KiB.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/common/memory_chase.hpp"
#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::granularity {

// The names of granularity.csv, written by the driver and read by the analyzer, the tests and
// the model GPUs; the capacity rows' footprint is memory_chase::kFootprintColumn.
constexpr const char* kStrideProbe = "stride";             // cycles per access of a walk
constexpr const char* kL2CapacityProbe = "l2_capacity";    // cycles per access against footprint
constexpr const char* kWarpPatternProbe = "warp_pattern";  // GB/s, and bytes per warp request
constexpr const char* kPathColumn = "path";                // l1, readonly, l2 or constant
constexpr const char* kWidthColumn = "width_bytes";        // bytes per access
constexpr const char* kStrideColumn = "stride_bytes";      // bytes between accesses
constexpr const char* kFetchLimitColumn = "l2_fetch_limit_bytes";  // cudaLimitMaxL2FetchGranularity
constexpr const char* kResidencyColumn = "residency";              // cold or resident
constexpr const char* kLevelColumn = "level";               // where a warp pattern reads: l2, dram
constexpr const char* kPatternColumn = "pattern";           // the warp's addresses
constexpr const char* kStrideWordsColumn = "stride_words";  // a strided pattern's stride

// avg cycles per access = base + penalty * min(1, stride / granularity): every access that
// starts a new fetch unit misses. Candidates are powers of two.
struct GranularityFit {
  double granularity = 0, base = 0, penalty = 0;
  double rms = 0;
  double separation = 0;  // 1 - SSE(best) / SSE(runner-up), in [0, 1]
  double runner_up = 0;
  int points = 0;
};
std::optional<GranularityFit> fit_fetch_granularity(
    const std::vector<std::pair<double, double>>& stride_cycles);

// Bytes a warp request moves, from effective bandwidths: the aligned pattern moves exactly
// the 128 useful bytes, so a pattern reaching fraction f of its bandwidth moves 128 / f.
double bytes_per_request(double aligned_gbs, double pattern_gbs);

// Allocation granularity from capacity at several strides: the footprint that still fits,
// relative to the one at the smallest stride, is max(1, stride / line).
struct LineFit {
  double line = 0;
  double rms = 0;         // of log2(relative capacity)
  double separation = 0;  // as in GranularityFit
  double runner_up = 0;
  double low = 0, high = 0;  // spread of stride / relative capacity above the line
  int points = 0;
};
// `stride_capacity`: (stride, capacity in bytes at that stride).
std::optional<LineFit> fit_line_size(const std::vector<std::pair<double, double>>& stride_capacity);

std::vector<Parameter> analyze_granularity(const std::vector<Observation>& obs,
                                           const Metadata& meta);

// The probe's shapes (microbench/granularity.cu), shared with the model-GPU generator so that
// neither drifts from the other.
// The walk: each load width, at strides from the width up to kMaxWalkStride, doubling.
inline constexpr int kWalkWidths[] = {4, 8, 16};
inline constexpr double kMaxWalkStride = 1024;
// The capacity chase's strides: odd multiples of 32 B, as for the L1 (fine_grained), so that no
// stride aliases sets whatever the index; a quick run measures three.
std::vector<double> capacity_strides(bool quick);
// Chains per SM of the capacity chase: enough requests in flight to see the L2, not DRAM, turn.
inline constexpr unsigned kCapacityChainsPerSm = 8;
// The capacity search at one stride, as the probe runs it (and the model GPUs mimic it):
// footprints in whole quanta (stride x chains) from a quarter of `l2_bytes` to 4x it times
// stride / first_stride (past the L2 even if a line were as small as the first stride), capped at
// `max_bytes`, bisected to where `cycles_at(footprint)` crosses `limit`. A `limit` of 0 is set
// half-way between the ends' cycles (call at the first stride first: the analysis reads hit and
// miss off the smallest stride). A stride whose ends do not straddle the limit is left there.
void search_capacity(double l2_bytes, double max_bytes, double stride, double first_stride, double quantum,
                     double& limit, const std::function<double(double)>& cycles_at);

// Code checks (base/code_check.hpp): the kernels that measure `probe` as the checks name them;
// empty for an unknown probe. Each has a registered expectation.
std::vector<std::string> kernels(const std::string& probe);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"granularity", "granularity.gp"};

}  // namespace gpuprobe::granularity
