#pragma once
// Concurrency limits: how many kernels ran at once (the step where "running" stops following
// "launched"), and what a kernel launch costs.
#include <optional>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::concurrency {

struct Interval {
  double start = 0, stop = 0;
};

// The most intervals that hold one instant in common. An interval that never ran
// (stop <= start) counts for none; intervals that only touch (one stops as the other starts)
// do not overlap.
int max_overlap(std::vector<Interval> spans);

// The level where a "running at once" count stops following the number launched: the
// largest count, found again at every larger launch. Needs at least one launch larger than
// the level (otherwise the sweep never reached it).
struct ConcurrencyLimit {
  double value = 0;
  double low = 0, high = 0;  // the counts seen past the level
  int saturated_points = 0;  // launches larger than the level
  double confidence = 0;
};
std::optional<ConcurrencyLimit> concurrency_limit(const std::vector<Observation>& rows);

// max_concurrent_kernels (kernels) and kernel_launch_overhead (us).
std::vector<Parameter> analyze_concurrency(const std::vector<Observation>& obs,
                                           const Metadata& meta);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"concurrency", "concurrency.gp waves.gp"};

}  // namespace gpuprobe::concurrency
