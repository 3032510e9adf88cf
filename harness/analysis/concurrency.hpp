#pragma once
// Concurrency limits: how many kernels ran at once (the step where "running" stops following
// "launched"), and what a kernel launch costs.
#include <optional>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::concurrency {

// The names of concurrency.csv, written by the driver and read by the analyzer and the tests.
constexpr const char* kConcurrentKernelsProbe = "concurrent_kernels";  // most running at once
constexpr const char* kPriorityProbe = "priority";  // share of waiting blocks overtaken
constexpr const char* kLaunchProbe = "launch";      // per-kernel time of back-to-back kernels
constexpr const char* kLaunchLatencyProbe = "launch_latency";  // one launch + synchronize
constexpr const char* kWavesProbe = "waves";                   // time against grid size
constexpr const char* kKernelsUnit = "kernels";    // concurrent_kernels' unit: kernels at once
constexpr const char* kStreamsColumn = "streams";  // kernels launched, one per stream
constexpr const char* kConnectionsColumn = "connections";  // CUDA_DEVICE_MAX_CONNECTIONS
constexpr const char* kSecondColumn = "second";            // the later kernel's priority
constexpr const char* kFirstWavesColumn = "first_waves";   // the running kernel's waves
constexpr const char* kWaveBlocksColumn = "wave_blocks";   // blocks resident at once
constexpr const char* kModeColumn = "mode";                // stream or graph
constexpr const char* kKernelsColumn = "kernels";          // launches timed together
constexpr const char* kBlocksColumn = "blocks";            // the grid
constexpr const char* kWavesColumn = "waves";              // the grid in waves
constexpr const char* kBlockUsColumn = "block_us";         // one block's spin

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
