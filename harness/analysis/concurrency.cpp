#include "analysis/concurrency.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/csv.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe::concurrency {

namespace {

// A saturated point agrees with the level within 3 % (a timing's noise), at least 1 launch.
constexpr double kAgreeShare = 0.03;
// The limit's confidence by how many saturated points agree with it: all of them, at least
// kMostAgree of them, fewer; one saturated point alone could be a stray.
constexpr double kAllAgreeConfidence = 0.95;
constexpr double kMostAgree = 0.75, kMostAgreeConfidence = 0.8;
constexpr double kFewAgreeConfidence = 0.5;
constexpr double kOnePointConfidence = 0.7;
// Back-to-back launches are bound by the host's enqueue (CPU, driver): 2.99-5.00 us on H200
// hosts, 3.09-4.34 us on H100 hosts, 0.45 % over three runs in a row on one and 13-26 % on
// others (docs/repeatability.md, "Floors"). The floor covers runs in a row; what another host
// gives it cannot, so the value is the host's as much as the GPU's: its confidence stays at
// kHostBoundConfidence and the method text says so.
constexpr double kLaunchRunToRun = 0.15;
constexpr double kHostBoundConfidence = 0.3;

}  // namespace

int max_overlap(std::vector<Interval> spans) {
  // Sweep the ends in time order; at equal times stops come first, so touching is not overlap.
  std::vector<std::pair<double, int>> ends;
  for (const auto& s : spans)
    if (s.stop > s.start) {
      ends.push_back({s.start, +1});
      ends.push_back({s.stop, -1});
    }
  std::sort(ends.begin(), ends.end());
  int now = 0, most = 0;
  for (const auto& e : ends) most = std::max(most, now += e.second);
  return most;
}

std::optional<ConcurrencyLimit> concurrency_limit(const std::vector<Observation>& rows) {
  double level = 0;
  for (const auto& o : rows)
    if (std::isfinite(o.p50)) level = std::max(level, o.p50);
  if (!(level > 0)) return std::nullopt;
  ConcurrencyLimit c;
  c.value = level;
  c.low = level;
  c.high = level;
  int agree = 0;
  const double tolerance = std::max(1.0, kAgreeShare * level);
  for (const auto& o : rows) {
    if (!(o.param(kStreamsColumn) > level) || !std::isfinite(o.p50)) continue;
    ++c.saturated_points;
    c.low = std::min(c.low, o.p50);
    if (level - o.p50 <= tolerance) ++agree;
  }
  if (c.saturated_points == 0) return std::nullopt;  // every launch ran at once: no limit seen
  const double share = static_cast<double>(agree) / c.saturated_points;
  c.confidence = c.saturated_points == 1 ? kOnePointConfidence
                 : share == 1.0           ? kAllAgreeConfidence
                 : share >= kMostAgree    ? kMostAgreeConfidence
                                          : kFewAgreeConfidence;
  return c;
}

std::vector<Parameter> analyze_concurrency(const std::vector<Observation>& obs, const Metadata&) {
  const std::string ev = std::string(kFamily.name) + ".csv";
  std::vector<Parameter> out;

  auto kernels = select(obs, kConcurrentKernelsProbe, kKernelsUnit);
  if (auto c = concurrency_limit(kernels)) {
    const std::string connections =
        kernels.empty() ? std::string() : kernels.front().param_text(kConnectionsColumn);
    std::string method =
        "one-warp spin kernels, one per non-blocking stream, start/stop "
        "stamped with %globaltimer, most overlapping at once; the count stays at " +
        format_printf("%.0f", c->value) + " for " + std::to_string(c->saturated_points) + " larger launches";
    if (!connections.empty()) {
      method += "; CUDA_DEVICE_MAX_CONNECTIONS " + connections;
      double conn = 0;
      if (std::sscanf(connections.c_str(), "%lf", &conn) == 1 && conn == c->value)
        method += " (the limit seen is the number of hardware queues the streams share)";
    }
    out.push_back({param::max_concurrent_kernels, c->value, kKernelsUnit, c->low, c->high,
                   c->confidence, method, ev});
  }

  auto launches = select(obs, kLaunchProbe, "us");
  if (const Observation* plain = analysis::find_row(launches, {{kModeColumn, "stream"}})) {
    std::string method = "back-to-back empty kernels (one warp) in one stream, events around " +
                         plain->param_text(kKernelsColumn) + " launches, per kernel, median of " +
                         std::to_string(plain->reps);
    if (const Observation* graph = analysis::find_row(launches, {{kModeColumn, "graph"}}))
      method += "; the same kernels as one CUDA graph: " + format_printf("%.2f", graph->p50) + " us each";
    auto latency = select(obs, kLaunchLatencyProbe, "us");
    if (!latency.empty())
      method += "; one launch + stream synchronize, host round trip: " +
                format_printf("%.1f", latency.front().p50) + " us";
    out.push_back({param::kernel_launch_overhead, plain->p50, "us", plain->p05, plain->p95,
                   analysis::spread_confidence(*plain), method, ev});
    analysis::widen_to_repeat(out.back(), kLaunchRunToRun,
                              "what the host's enqueue moved between runs");
    out.back().confidence = std::min(out.back().confidence, kHostBoundConfidence);
    out.back().method +=
        "; host-bound: another host's CPU and driver give another value (3-5 us "
        "on Hopper hosts), which this interval does not cover";
  }
  return out;
}

GPUPROBE_REGISTER_ANALYZER(concurrency::kFamily, analyze_concurrency);

}  // namespace gpuprobe::concurrency
