#include "analysis/divergence.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe::divergence {

std::vector<int> path_counts(bool quick) {
  if (quick) return {1, 2, 4, 8, 16, 32};
  return {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 28, 32};
}

std::string kernel_name(int ilp) { return "divergence::paths<" + std::to_string(ilp) + ">"; }

bool fit_paths(const std::vector<int>& paths, const std::vector<double>& cycles, Fit* out) {
  double t1 = 0;
  for (size_t i = 0; i < paths.size() && i < cycles.size(); ++i)
    if (paths[i] == 1) t1 = cycles[i];
  if (!(t1 > 0)) return false;
  // Least squares through (0, 0) of y = t(P)/t(1) - 1 against x = P - 1.
  double sxy = 0, sxx = 0;
  Fit f;
  f.low = 1e300;
  f.high = -1e300;
  for (size_t i = 0; i < paths.size() && i < cycles.size(); ++i) {
    if (paths[i] <= 1) continue;
    double x = paths[i] - 1, y = cycles[i] / t1 - 1;
    sxy += x * y;
    sxx += x * x;
    f.low = std::min(f.low, y / x);
    f.high = std::max(f.high, y / x);
    if (paths[i] > f.paths_max) {
      f.paths_max = paths[i];
      f.slowdown_max = cycles[i] / t1;
    }
  }
  if (sxx <= 0) return false;
  f.cost_per_path = sxy / sxx;
  *out = f;
  return true;
}

namespace {

std::vector<CodeExpectation> divergence_expectations() {
  std::vector<CodeExpectation> out;
  for (int ilp : {1, 4}) {
    CodeExpectation e;
    e.source = std::string(kFamily.name);
    e.kernel = kernel_name(ilp);
    e.probe = ilp == 1 ? kOneWarpProbe : kFullSmProbe;
    // Every path keeps its own FMAs: none merged with another path's, none dropped.
    e.ptx = {{R"(^fma\.rn\.f32 )", kMaxPaths * kStepsPerPath, false}};
    e.sass = {{R"(^FFMA R)", kMaxPaths * kStepsPerPath, false}};
    out.push_back(e);
  }
  return out;
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(divergence_expectations);

}  // namespace

namespace {
// The per-point slopes' range against the slope itself takes the confidence down, but never
// below kSlopeRangeFloor (the line still fits its points); slopes under kSlopeScaleMin are
// measured against that, so a near-zero cost does not make any range look huge.
constexpr double kSlopeRangeFloor = 0.2;
constexpr double kSlopeScaleMin = 0.1;
}  // namespace

std::vector<Parameter> analyze_divergence(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  struct Mode {
    const char* probe;
    const char* cost;                 // the cost per path's name
    std::string (*slowdown)(long p);  // the slowdown at p paths' name
    const char* what;
  };
  for (const Mode& m :
       {Mode{kFullSmProbe, param::divergence_cost_per_path, param::divergence_slowdown_paths,
             "every SM full of warps, 4 chains per path"},
        Mode{kOneWarpProbe, param::divergence_cost_per_path_one_warp,
             param::divergence_slowdown_paths_one_warp,
             "one warp on one SM, one chain per path"}}) {
    // Rows by path count, kept by value: select() returns a temporary.
    std::map<int, Observation> rows;
    for (const auto& o : select(obs, m.probe, "cycles")) {
      const double paths_param = o.param(kPathsColumn);
      // A path count outside 1..kMaxPaths is no row of this probe (and int() of it undefined).
      if (!(paths_param >= 1 && paths_param <= divergence::kMaxPaths)) continue;
      rows[int(paths_param)] = o;
    }
    std::vector<int> paths;
    std::vector<double> cycles;
    double conf = 1;
    for (const auto& [p, o] : rows) {
      paths.push_back(p);
      cycles.push_back(o.value);
      conf = std::min(conf, analysis::spread_confidence(o));
    }
    divergence::Fit f;
    if (!divergence::fit_paths(paths, cycles, &f)) continue;
    Parameter p;
    p.name = m.cost;
    p.value = f.cost_per_path;
    p.unit = "ratio";
    p.low = f.low;
    p.high = f.high;
    // How well the straight line holds: a spread of per-point slopes lowers the confidence.
    p.confidence = conf * std::clamp(1 - (f.high - f.low) / std::max(std::fabs(f.cost_per_path), kSlopeScaleMin),
                                     kSlopeRangeFloor, 1.0);
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "%s; lanes take lane %% P of P paths of %d FMAs; t(P)/t(1) = 1 + c (P - 1), "
                  "c = 1 when every path is paid in full",
                  m.what, divergence::kStepsPerPath);
    p.method = buf;
    p.evidence = "divergence.csv";
    out.push_back(p);
    Parameter s = p;
    s.name = m.slowdown(f.paths_max);
    s.value = f.slowdown_max;
    s.unit = "ratio";
    // The ratio of two rows: the interval from both rows' quantiles.
    const Observation& one = rows.at(1);
    const Observation& most = rows.at(f.paths_max);
    s.low = one.p95 > 0 ? most.p05 / one.p95 : f.slowdown_max;
    s.high = one.p05 > 0 ? most.p95 / one.p05 : f.slowdown_max;
    s.confidence = conf;
    s.method = std::string(m.what) + "; t(" + std::to_string(f.paths_max) + ")/t(1), model: " +
               std::to_string(f.paths_max) + "; interval: t(P)'s p05..p95 over t(1)'s p95..p05";
    out.push_back(s);
  }
  return out;
}

GPUPROBE_REGISTER_ANALYZER(divergence::kFamily, analyze_divergence);

}  // namespace gpuprobe::divergence
