#pragma once
// Fetch granularity (sector) and allocation granularity (line) of each load path, from
// cold chases at strides 4 B .. 1 KiB.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/memory_chase.hpp"
#include "core/family.hpp"
#include "core/observation.hpp"

namespace gpuprobe::granularity {

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

// Code checks (core/code_check.hpp): the kernels that measure `probe` as the checks name them;
// empty for an unknown probe. Each has a registered expectation.
std::vector<std::string> kernels(const std::string& probe);

// The family, declared once (core/family.hpp).
inline constexpr FamilyDescriptor kFamily{"granularity", "granularity.gp"};

}  // namespace gpuprobe::granularity
