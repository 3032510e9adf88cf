#include "analysis/granularity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"
#include "base/stats.hpp"

namespace gpuprobe::granularity {

namespace {

using namespace memory_chase;
using analysis::num;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A step in cycles is a fetch granularity only when it stands out: at least kMinPenalty cycles
// (a few cycles is one extra instruction's noise) and kPenaltyOverRms times the fit's rms.
constexpr double kMinPenalty = 5.0;
constexpr double kPenaltyOverRms = 5.0;
// Bytes per request are counted against a warp's aligned 128 B (32 lanes x 4 B).
constexpr double kAlignedRequestBytes = 128.0;
// A stride whose cost grew by more than this over the smallest stride's is past the line.
constexpr double kGrownPastLine = 1.1;
// A width's fit that beats its runner-up by less than this leaves the runner-up possible:
// it joins the interval.
constexpr double kClearSeparation = 0.5;
// The confidence of a granularity: this floor, plus the fits' mean separation times
// kSeparationWeight, times the share of access widths that agree.
constexpr double kGranularityFloor = 0.5;
constexpr double kSeparationWeight = 0.5;
// The L2 line needs the DRAM level above the L2's by this factor to bisect between them.
constexpr double kLevelsApart = 1.2;
// L2 line size confidence: floor + weight x separation, taken down by kWideFactor when the
// estimates span more than kNarrowSpan.
constexpr double kLineFloor = 0.4;
// A smaller L2 fetch-granularity limit was measured but none of its widths fitted: the value
// comes from a larger limit, whose fetch may be more than a sector.
constexpr double kSmallerLimitUnfit = 0.4;
// A footprint past a stride's first miss that still fits: the miss (or the fit) was noise, so
// the capacity read at that stride is in doubt.
constexpr double kFitAfterMiss = 0.5;
// A line fit that beats its runner-up by less than kClearSeparation leaves the runner-up
// possible: it joins the interval, and the confidence is taken down by this factor.
constexpr double kAmbiguousLine = 0.6;
constexpr double kNarrowSpan = 1.3;
constexpr double kWideFactor = 0.7;

const std::string kConstWalk = "granularity::stride_walk<GranularityConstLoader, GranularityConstLoader>";
std::string stride_walk(int path, int width) {
  return templ("granularity::stride_walk", {loader(path, width), loader(kL2, width)});
}

}  // namespace

std::optional<GranularityFit> fit_fetch_granularity(const XY& pts) {
  if (pts.size() < 4) return std::nullopt;
  double smin = pts.front().first, smax = pts.front().first;
  for (const auto& p : pts) {
    smin = std::min(smin, p.first);
    smax = std::max(smax, p.first);
  }
  if (!(smin > 0)) return std::nullopt;
  struct Candidate {
    double g, a, b, sse;
  };
  std::vector<Candidate> cands;
  // g = smin is the flat model (every access misses); g = smax is "still rising at the end".
  for (double g = round_pow2(smin); g <= smax * 1.0001; g *= 2) {
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto& [s, y] : pts) {
      double x = std::min(1.0, s / g);
      n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    double den = n * sxx - sx * sx, a, b;
    if (std::fabs(den) < 1e-12) {
      a = sy / n, b = 0;
    } else {
      b = (n * sxy - sx * sy) / den;
      a = (sy - b * sx) / n;
    }
    double sse = 0;
    for (const auto& [s, y] : pts) {
      double r = y - (a + b * std::min(1.0, s / g));
      sse += r * r;
    }
    cands.push_back({g, a, b, sse});
  }
  if (cands.size() < 3) return std::nullopt;
  std::sort(cands.begin(), cands.end(),
            [](const Candidate& x, const Candidate& y) { return x.sse < y.sse; });
  const Candidate& best = cands[0];
  if (best.g <= smin || best.g >= smax) return std::nullopt;
  GranularityFit f;
  f.granularity = best.g;
  f.base = best.a;
  f.penalty = best.b;
  f.points = static_cast<int>(pts.size());
  f.rms = std::sqrt(best.sse / static_cast<double>(pts.size()));
  f.runner_up = cands[1].g;
  f.separation = cands[1].sse > 0 ? 1.0 - best.sse / cands[1].sse : 0.0;
  if (!(f.penalty > std::max(kMinPenalty, kPenaltyOverRms * f.rms))) return std::nullopt;
  return f;
}

double bytes_per_request(double aligned_gbs, double pattern_gbs) {
  if (!(aligned_gbs > 0) || !(pattern_gbs > 0)) return kNaN;
  return kAlignedRequestBytes * aligned_gbs / pattern_gbs;
}

std::optional<LineFit> fit_line_size(const XY& in) {
  XY pts;
  for (const auto& p : in)
    if (p.first > 0 && p.second > 0) pts.push_back(p);
  std::sort(pts.begin(), pts.end());
  if (pts.size() < 3) return std::nullopt;
  const double smin = pts.front().first, smax = pts.back().first, base = pts.front().second;
  // Normalised to the smallest stride: max(1, s / L) / max(1, smin / L).
  auto model = [&](double s, double line) {
    return std::max(1.0, s / line) / std::max(1.0, smin / line);
  };
  struct Candidate {
    double line, sse;
  };
  std::vector<Candidate> cands;
  for (double line = round_pow2(smin); line <= 2 * smax; line *= 2) {
    double sse = 0;
    for (const auto& [s, c] : pts) {
      double r = std::log2(c / base) - std::log2(model(s, line));
      sse += r * r;
    }
    cands.push_back({line, sse});
  }
  std::sort(cands.begin(), cands.end(),
            [](const Candidate& x, const Candidate& y) { return x.sse < y.sse; });
  const Candidate& best = cands[0];
  if (best.line > smax) return std::nullopt;  // no growth seen: the line is beyond the sweep
  LineFit f;
  f.line = best.line;
  f.points = static_cast<int>(pts.size());
  f.rms = std::sqrt(best.sse / static_cast<double>(pts.size()));
  f.runner_up = cands.size() > 1 ? cands[1].line : 0;
  f.separation = cands.size() > 1 && cands[1].sse > 0 ? 1.0 - best.sse / cands[1].sse : 0.0;
  f.low = f.high = f.line;
  for (const auto& [s, c] : pts) {
    double g = c / base;
    if (s > f.line && g > kGrownPastLine) {
      double est = s / g * std::max(1.0, smin / f.line);
      f.low = std::min(f.low, est);
      f.high = std::max(f.high, est);
    }
  }
  return f;
}

namespace {

struct PathInfo {
  const char* path;
  const char* parameter;
  const char* what;
};
const PathInfo kPaths[] = {
    {"l1", param::l1_sector_size, "ld.global (L1-cached), L1 miss served by L2"},
    {"readonly", param::readonly_line_size, "ld.global.nc (read-only path), miss served by L2"},
    {"l2", param::l2_sector_size, "ld.global.cg, L2 flushed, miss served by DRAM"},
    {"constant", param::constant_line_size,
     "ld.const, L1 constant cache miss served by the next level"},
};

}  // namespace

namespace {

// Line (allocation) size of L2: the footprint at which cycles per access pass half-way from the
// L2 hit level to the DRAM level (both read off the smallest stride), per stride.
std::optional<Parameter> l2_line_size(const std::vector<Observation>& obs, const std::string& ev) {
  auto l2 = grouped(obs, kL2CapacityProbe, "cycles", {}, kStrideColumn, kFootprintColumn);
  XY caps;
  bool fit_after_miss = false;
  if (!l2.empty()) {
    const XY& first = l2.begin()->second;
    double lo = first.front().second, hi = lo;
    for (const auto& pt : first) lo = std::min(lo, pt.second), hi = std::max(hi, pt.second);
    const double mid = 0.5 * (lo + hi);
    for (const auto& [stride, pts] : l2) {
      auto b = hi > kLevelsApart * lo ? first_miss_bracket(pts, mid) : std::nullopt;
      if (!b || !b->found()) continue;
      caps.emplace_back(stride, b->fit);
      for (const auto& [x, y] : pts) fit_after_miss = fit_after_miss || (x > b->miss && y < mid);
    }
  }
  if (auto f = fit_line_size(caps)) {
    double conf = (kLineFloor + kSeparationWeight * f->separation) * (f->high / f->low < kNarrowSpan ? 1.0 : kWideFactor) *
                  (fit_after_miss ? kFitAfterMiss : 1.0);
    if (f->separation < kClearSeparation && f->runner_up > 0) {
      conf *= kAmbiguousLine;
      f->low = std::min(f->low, f->runner_up);
      f->high = std::max(f->high, f->runner_up);
    }
    std::string method = "many ld.global.cg chases (one lane per warp, all SMs), footprint bisected to the "
                         "half-way latency between L2 and DRAM at " + std::to_string(caps.size()) +
                         " strides; capacity grows as stride/line above the line";
    if (f->separation < kClearSeparation) method += "; " + num(f->runner_up) + " B fits almost as well";
    if (fit_after_miss) method += "; a footprint past a stride's first miss still fits";
    return make_parameter(param::l2_line_size, f->line, "bytes", f->low, f->high, conf, method, ev);
  }
  return std::nullopt;
}

}  // namespace

std::vector<Parameter> analyze_granularity(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  const std::string ev = std::string(kFamily.name) + ".csv";
  for (const auto& p : kPaths) {
    // One fit per access width (and, for L2, per fetch-granularity limit); the widths must
    // agree. For L2 the smallest limit is the one that shows the sector itself.
    std::map<std::pair<double, double>, XY> by_limit_width;
    for (const auto& o : select(obs, kStrideProbe, "cycles")) {
      if (o.param_text(kPathColumn) != p.path || o.param_text(kResidencyColumn) != "cold") continue;
      double limit = o.param(kFetchLimitColumn);
      by_limit_width[{std::isfinite(limit) ? limit : 0, o.param(kWidthColumn)}].emplace_back(
          o.param(kStrideColumn), o.value);
    }
    double chosen_limit = kNaN;
    const double smallest_limit = by_limit_width.empty() ? kNaN : by_limit_width.begin()->first.first;
    std::vector<GranularityFit> fits;
    for (const auto& [key, pts] : by_limit_width) {
      if (!fits.empty() && key.first != chosen_limit) break;  // smallest limit that fits
      auto f = fit_fetch_granularity(pts);
      if (!f) continue;
      chosen_limit = key.first;
      fits.push_back(*f);
    }
    if (fits.empty()) continue;
    std::vector<double> gs;
    double sep = 0, pen = 0, rms = 0;
    for (const auto& f : fits) {
      gs.push_back(f.granularity);
      sep += f.separation;
      pen += f.penalty;
      rms += f.rms;
    }
    const double n = static_cast<double>(fits.size());
    double g = round_pow2(median(gs));
    int agree = 0;
    double lo = g, hi = g;
    for (const auto& f : fits) {
      agree += f.granularity == g;
      if (f.separation < kClearSeparation) {
        lo = std::min(lo, f.runner_up);
        hi = std::max(hi, f.runner_up);
      }
      lo = std::min(lo, f.granularity);
      hi = std::max(hi, f.granularity);
    }
    double conf = (kGranularityFloor + kSeparationWeight * sep / n) * (agree / n);
    std::string method = std::string("cold chase, stride 4 B-1 KiB, sequential; ") + p.what +
                         "; fit cycles = base + penalty*min(1, stride/G): penalty " +
                         num(pen / n) + " cycles, rms " + num(rms / n, 2) + ", " +
                         std::to_string(agree) + "/" + std::to_string(fits.size()) +
                         " access widths agree";
    if (std::string(p.path) == "l2" && chosen_limit > 0)
      method += "; cudaLimitMaxL2FetchGranularity " + num(chosen_limit) + " B";
    if (chosen_limit > smallest_limit) {
      conf *= kSmallerLimitUnfit;
      method += "; no width fitted at the smaller limit " + num(smallest_limit) + " B";
    }
    out.push_back(make_parameter(p.parameter, g, "bytes", lo, hi, conf, method, ev));
  }

  if (auto line = l2_line_size(obs, ev)) out.push_back(*line);
  return out;
}

// ---------------------------------------------------------------------------------------
// Code checks

namespace {

std::vector<CodeExpectation> expectations() {
  std::vector<CodeExpectation> out;
  // The walks time two chains (cold, then resident): the path's load, not one chain.
  for (int path : {kL1, kReadonly, kL2})
    for (int width : {4, 8, 16})
      out.push_back(expectation(std::string(kFamily.name), stride_walk(path, width), kStrideProbe,
                                ptx_load(path, width, false), sass_load(path)));
  out.push_back(expectation(std::string(kFamily.name), kConstWalk, kStrideProbe,
                            {R"(^ld\.const\.u32 )", -1, false}, {"^LDC", -1, false}));
  out.push_back(expectation(std::string(kFamily.name), "granularity::warp_pattern",
                            kWarpPatternProbe, ptx_load(kL2, 4, false), sass_load(kL2)));
  out.push_back(expectation(std::string(kFamily.name), "granularity::flush_l2", kStrideProbe,
                            {R"(^ld\.global\.cg\.v4\.u32 )", -1, false}, sass_load(kL2)));
  return out;
}

}  // namespace

std::vector<double> capacity_strides(bool quick) {
  return quick ? std::vector<double>{32, 160, 352} : std::vector<double>{32, 96, 160, 224, 352};
}

void search_capacity(double l2_bytes, double max_bytes, double stride, double first_stride, double quantum,
                     double& limit, const std::function<double(double)>& cycles_at) {
  const double lo = std::ceil(l2_bytes / 4 / quantum) * quantum;
  const double hi = std::floor(std::min(4 * l2_bytes * stride / first_stride, max_bytes) / quantum) * quantum;
  const double y_lo = cycles_at(lo), y_hi = cycles_at(hi);
  if (limit == 0) limit = 0.5 * (y_lo + y_hi);
  if (!(y_lo < limit && y_hi > limit)) return;
  BoundarySearch search(lo, lo, hi, 2.0, quantum, 0.03);
  search.add(lo, true);
  search.add(hi, false);
  while (auto f = search.next()) search.add(*f, cycles_at(*f) < limit);
}

std::vector<std::string> kernels(const std::string& probe) {
  if (probe == kStrideProbe) {
    std::vector<std::string> k = {kConstWalk, "granularity::flush_l2", kWriteChain32, kWriteChain64};
    for (int path : {kL1, kReadonly, kL2})
      for (int width : {4, 8, 16}) k.push_back(stride_walk(path, width));
    return k;
  }
  if (probe == kWarpPatternProbe) return {"granularity::warp_pattern"};
  if (probe == kL2CapacityProbe) return {chase_kernel(false, loader(kL2, 8)), kWriteChain64};
  return {};
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(expectations);
GPUPROBE_REGISTER_ANALYZER(granularity::kFamily, analyze_granularity);

}  // namespace gpuprobe::granularity
