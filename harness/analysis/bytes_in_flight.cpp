#include "analysis/bytes_in_flight.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "analysis/analyzer.hpp"
#include "base/csv.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe::bytes_in_flight {

// The saturation point's confidence: kSaturationBest when the sweep brackets the crossing
// within one doubling (ratios up to 2, with slack for rounded sweep points) and the curve
// flattened; a bracket of two doublings or wider, or a curve still rising at its end (the
// peak may be the sweep's end, not the level's), take it down by these factors.
constexpr double kSaturationBest = 0.95;  // interpolation inside a bracket is never exact
constexpr double kBracketOneStep = 2.05, kBracketTwoSteps = 4.1;
constexpr double kBracketTwoStepsFactor = 0.85, kBracketWideFactor = 0.7;
constexpr double kPlateauReached = 0.97;  // the best of the last two x within 3 % of the peak
constexpr double kNoPlateauFactor = 0.7;

std::optional<Saturation> saturation_point(std::vector<CurvePoint> curve, double fraction) {
  curve.erase(std::remove_if(curve.begin(), curve.end(),
                             [](const CurvePoint& p) {
                               return !(std::isfinite(p.x) && std::isfinite(p.y) && p.x > 0);
                             }),
              curve.end());
  // Best y at each distinct x, then the running maximum.
  std::map<double, double> best;
  for (const auto& p : curve) {
    auto it = best.find(p.x);
    if (it == best.end() || p.y > it->second) best[p.x] = p.y;
  }
  if (best.size() < 3) return std::nullopt;
  std::vector<CurvePoint> env;
  for (const auto& [x, y] : best) env.push_back({x, env.empty() ? y : std::max(y, env.back().y)});

  Saturation s;
  s.peak = env.back().y;
  for (const auto& [x, y] : best)
    if (y == s.peak) {
      s.peak_x = x;
      break;
    }
  if (!(s.peak > 0)) return std::nullopt;
  const double target = fraction * s.peak;
  if (env.front().y >= target) return std::nullopt;
  size_t hi = 1;
  while (env[hi].y < target) ++hi;
  const CurvePoint a = env[hi - 1], b = env[hi];
  s.low = a.x;
  s.high = b.x;
  const double t = (target - a.y) / (b.y - a.y);
  s.x = std::exp(std::log(a.x) + t * (std::log(b.x) - std::log(a.x)));

  // Confidence: how tightly the sweep brackets the crossing, and whether the curve flattened
  // (the best of the last two x within 3 %) so that the peak is the level's and not merely
  // the end of the sweep.
  const double ratio = s.high / s.low;
  const double bracket = ratio <= kBracketOneStep    ? 1.0
                         : ratio <= kBracketTwoSteps ? kBracketTwoStepsFactor
                                                     : kBracketWideFactor;
  const double before_last = env[env.size() - 2].y;
  s.plateau = before_last >= kPlateauReached * s.peak;
  s.confidence = kSaturationBest * bracket * (s.plateau ? 1.0 : kNoPlateauFactor);
  return s;
}

double littles_law_bytes_per_sm(double latency_ns, double gbs, int sms) {
  return sms > 0 ? latency_ns * gbs / sms : std::nan("");
}

std::vector<Parameter> analyze_bytes_in_flight(const std::vector<Observation>& obs,
                                               const Metadata&) {
  std::vector<Parameter> out;
  struct Level {
    const char* probe;  // and the level's name in the littles_law rows
    const char* name;
  };
  for (const Level& lv : {Level{kDramProbe, param::dram_bytes_in_flight_90pct},
                          Level{kL2Probe, param::l2_bytes_in_flight_90pct}}) {
    const std::string level = lv.probe;
    std::vector<CurvePoint> curve;
    for (const auto& o : select(obs, level, "GB/s"))
      curve.push_back({o.param(kInFlightColumn), o.p50});
    auto s = saturation_point(curve, 0.9);
    if (!s) continue;
    std::string method =
        "least bytes in flight per SM (warps x ILP x width, best configuration at each) "
        "reaching 90 % of the sweep's peak " +
        format_printf("%.0f", s->peak) +
        " GB/s, log-interpolated "
        "between " +
        format_printf("%.0f", s->low) + " and " + format_printf("%.0f", s->high) + " B";
    if (!s->plateau) method += "; the curve was still rising at the largest point";
    for (const auto& l : select(obs, kLittlesLawProbe, "B/SM"))
      if (l.param_text(kLevelColumn) == level)
        method += "; Little's law: " + format_printf("%.0f", l.param(kLatencyColumn)) +
                  " ns unloaded x " + format_printf("%.0f", l.param(kPeakColumn)) +
                  " GB/s = " + format_printf("%.0f", l.p50) +
                  " B/SM for the full peak (measured 90 % point / prediction = " +
                  format_printf("%.2f", s->x / l.p50) + ")";
    out.push_back({lv.name, s->x, "bytes", s->low, s->high, s->confidence, method,
                   std::string(kFamily.name) + ".csv"});
  }
  return out;
}

GPUPROBE_REGISTER_ANALYZER(bytes_in_flight::kFamily, analyze_bytes_in_flight);

}  // namespace gpuprobe::bytes_in_flight
