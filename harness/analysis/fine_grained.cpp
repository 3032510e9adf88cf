#include "analysis/fine_grained.hpp"

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

namespace gpuprobe::fine_grained {

namespace {

using namespace memory_chase;
using analysis::bytes_text;
using analysis::num;

const std::string kConstChase = chase_kernel(true, "FineGrainedConstLoader");

// Latencies of one level: the next sorted latency is a new level past kLevelGapCycles or
// kLevelGapShare of the last (a hit varies by a few cycles; the next level is tens away).
constexpr double kLevelGapCycles = 12.0;
constexpr double kLevelGapShare = 0.2;
// A set-plateau's capacities agree within this share (one more or fewer line of a few).
constexpr double kSameLines = 0.15;
// Before the plateau, each doubling of the stride halves the lines kept: a ratio in this range.
constexpr double kHalvingLow = 1.6;
constexpr double kHalvingHigh = 2.5;
// A stride counts as tight evidence for the line when its bound is this close to the best one.
constexpr double kTightBound = 1.05;
// The line is the power of two at or below the bound, allowing this much rounding above it.
constexpr double kBoundRounding = 1.02;
// l1_line_size confidence: a floor, plus kUniqueBonus when one size fits alone, plus
// kTightBonus for each tight stride beyond the first (at most two).
constexpr double kLineFloor = 0.45;
constexpr double kUniqueBonus = 0.25;
constexpr double kTightBonus = 0.1;
// Sets x ways x line agrees with the measured capacity within this share: kConsistentConf,
// else kInconsistentConf.
constexpr double kCapacityAgrees = 0.15;
constexpr double kConsistentConf = 0.85;
constexpr double kInconsistentConf = 0.6;
// At least this share of the accesses to ways+1 lines of one set missing reads as LRU.
constexpr double kLruShare = 0.9;
// A constant-cache level's line is read where its misses recur at least this regularly; its
// confidence is the regularity times kRegularityWeight.
constexpr double kMinRegularity = 0.7;
constexpr double kRegularityWeight = 0.8;

}  // namespace

std::vector<LatencyLevel> latency_levels(const std::vector<double>& offsets,
                                         const std::vector<double>& latencies) {
  std::vector<LatencyLevel> levels;
  const size_t n = std::min(offsets.size(), latencies.size());
  if (n == 0) return levels;
  std::vector<double> sorted(latencies.begin(), latencies.begin() + static_cast<long>(n));
  std::sort(sorted.begin(), sorted.end());
  // Clusters of sorted latencies; clusters too small to be a level are outliers.
  const size_t min_count = std::max<size_t>(2, n / 200);
  std::vector<double> cluster = {sorted[0]};
  auto close = [&]() {
    if (cluster.size() >= min_count)
      levels.push_back({median(cluster), cluster.front(), cluster.back(),
                        static_cast<int>(cluster.size()), 0, 0});
    cluster.clear();
  };
  for (size_t i = 1; i < n; ++i) {
    if (sorted[i] > sorted[i - 1] + std::max(kLevelGapCycles, kLevelGapShare * sorted[i - 1])) close();
    cluster.push_back(sorted[i]);
  }
  close();
  for (size_t l = 1; l < levels.size(); ++l) {
    std::vector<double> at;
    for (size_t i = 0; i < n; ++i)
      for (size_t k = l; k < levels.size(); ++k)
        if (latencies[i] >= levels[k].lowest && latencies[i] <= levels[k].highest) {
          at.push_back(offsets[i]);
          break;
        }
    std::sort(at.begin(), at.end());
    std::map<double, int> gaps;
    for (size_t i = 1; i < at.size(); ++i) ++gaps[at[i] - at[i - 1]];
    int total = 0, best = 0;
    for (const auto& [gap, count] : gaps) {
      total += count;
      if (count > best) {
        best = count;
        levels[l].period = gap;
      }
    }
    levels[l].regularity = total ? static_cast<double>(best) / total : 0.0;
  }
  return levels;
}

std::vector<StrideCapacity> capacity_by_stride(const std::vector<Observation>& obs,
                                               const std::string& series) {
  std::vector<StrideCapacity> out;
  for (const auto& [stride, pts] : grouped(obs, kCapacityProbe, "misses", {{kSeriesColumn, series}},
                                           kStrideColumn, kLinesColumn)) {
    auto b = first_miss_bracket(pts, kMissesPerPassLimit);
    if (b) out.push_back({stride, b->fit, b->miss});
  }
  return out;
}

std::optional<SetFit> fit_sets(const std::vector<StrideCapacity>& caps) {
  if (caps.size() < 3) return std::nullopt;
  auto near = [](double a, double b) { return std::fabs(a / b - 1.0) <= kSameLines; };
  for (size_t p = 0; p + 1 < caps.size(); ++p) {
    bool flat = true;
    for (size_t j = p + 1; j < caps.size() && flat; ++j) flat = near(caps[j].lines, caps[p].lines);
    if (!flat) continue;
    SetFit f;
    f.plateau_stride = caps[p].stride;
    std::vector<double> w;
    for (size_t j = p; j < caps.size(); ++j) w.push_back(caps[j].lines);
    f.ways = std::round(median(w));
    f.plateau_points = static_cast<int>(w.size());
    f.halving_before = p > 0;
    for (size_t j = 0; j < p; ++j) {
      double r = caps[j].lines / caps[j + 1].lines * caps[j].stride / caps[j + 1].stride * 2;
      f.halving_before = f.halving_before && r > kHalvingLow && r < kHalvingHigh;
    }
    return f;
  }
  return std::nullopt;
}

std::optional<LineBound> fit_line_bound(const XY& in) {
  XY pts;
  for (const auto& p : in)
    if (p.first > 0 && p.second > 0) pts.push_back(p);
  std::sort(pts.begin(), pts.end());
  if (pts.size() < 3) return std::nullopt;
  // Resident bytes at strides below the line equal C up to the bisection's resolution.
  constexpr double kSame = 1.04;
  const double c = pts.front().second;
  LineBound f;
  f.points = static_cast<int>(pts.size());
  f.high = std::numeric_limits<double>::infinity();
  for (const auto& [s, b] : pts)
    if (b > kSame * c) f.high = std::min(f.high, c * s / b);
  if (!std::isfinite(f.high)) return std::nullopt;
  f.low = pts.front().first;
  for (const auto& [s, b] : pts)
    if (s <= f.high && b <= kSame * c) f.low = std::max(f.low, s);
  for (const auto& [s, b] : pts) f.tight += b > kSame * c && c * s / b <= kTightBound * f.high;
  const double top = std::exp2(std::floor(std::log2(kBoundRounding * f.high)));
  if (top < f.low) return std::nullopt;
  f.line = top;
  f.unique = top / 2 < f.low;
  return f;
}

namespace {

// l1_line_size, and l1_sets and l1_ways where the strides show a set structure.
void l1_line_sets_ways(const std::vector<Observation>& obs, std::vector<Parameter>& out) {
  const std::string ev = std::string(kFamily.name) + ".csv";
  // The family runs at preference 0 with 4 KiB of dynamic shared memory: the smallest
  // carve-out the driver offers for it, i.e. the largest L1.
  const std::string where = "one-thread ld.global chase at the largest L1 (carve-out preference "
                            "0, 4 KiB dynamic shared memory), every access timed with clock64";

  // Line size from the resident bytes at every stride of both series: odd multiples of 32 B
  // (spread over the sets of a modulo-indexed cache) and powers of two.
  auto line_caps = capacity_by_stride(obs, "line");
  auto set_caps = capacity_by_stride(obs, "sets");
  XY pts;
  for (const auto* caps : {&line_caps, &set_caps})
    for (const auto& c : *caps) pts.emplace_back(c.stride, c.lines * c.stride);
  auto lb = fit_line_bound(pts);
  if (!lb) return;
  const double line = lb->line;
  std::sort(pts.begin(), pts.end());
  const double capacity = pts.front().second;

  auto sf = fit_sets(set_caps);
  std::string line_method =
      where + "; lines resident without a miss (bisected) at " + std::to_string(lb->points) +
      " strides; set conflicts only lower that, so resident bytes above the " +
      bytes_text(pts.front().first) + "-stride " + bytes_text(capacity) + " bound the line from above (" +
      bytes_text(lb->high) + ", " + std::to_string(lb->tight) +
      " strides) and strides keeping them bound it from below (" + bytes_text(lb->low) + ")";
  if (sf && !sf->halving_before) {
    // Power-of-two strides from the first on keep every line resident: no set structure
    // shows, so sets and ways are not reported.
    line_method += "; power-of-two strides " + bytes_text(sf->plateau_stride) + " to " +
                   bytes_text(set_caps.back().stride) + " keep " + num(sf->ways, 5) + " lines (" +
                   bytes_text(sf->ways * line) + ") resident: no set conflicts, so the L1 is fully "
                   "associative or its set index hashed; l1_sets and l1_ways not inferred";
  }
  double conf = kLineFloor + (lb->unique ? kUniqueBonus : 0.0) + kTightBonus * std::min(2, lb->tight - 1);
  out.push_back(
      make_parameter(param::l1_line_size, line, "bytes", lb->low, lb->high, conf, line_method, ev));

  if (sf && sf->halving_before) {
    double sets = std::max(1.0, sf->plateau_stride / line);
    bool consistent = std::fabs(sets * sf->ways * line / capacity - 1.0) < kCapacityAgrees;
    double sconf = consistent ? kConsistentConf : kInconsistentConf;
    std::string replacement;
    auto rep = select(obs, kReplacementProbe, "fraction");
    if (!rep.empty()) {
      double f = rep.front().value;
      replacement = f >= kLruShare ? "; replacement LRU-like: " + num(100 * f) +
                                   " % of accesses to ways+1 lines of one set miss"
                             : "; replacement not LRU: only " + num(100 * f) +
                                   " % of accesses to ways+1 lines of one set miss (LRU: 100 %)";
    }
    std::string method = where + "; K lines at power-of-two strides, misses counted per "
                         "access; resident lines halve per stride doubling up to " +
                         bytes_text(sf->plateau_stride) + " = sets*line, then stay at the ways; "
                         "sets*ways*line = " + bytes_text(sets * sf->ways * line) + " vs " +
                         bytes_text(capacity) + " resident" + replacement;
    out.push_back(
        make_parameter(param::l1_ways, sf->ways, "ways", sf->ways, sf->ways, sconf, method, ev));
    out.push_back(make_parameter(param::l1_sets, sets, "sets", sets, sets, sconf, method, ev));
  }
}

}  // namespace

std::vector<Parameter> analyze_fine_grained(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  const std::string ev = std::string(kFamily.name) + ".csv";
  l1_line_sets_ways(obs, out);

  // Constant cache levels from one cold sequential pass: each slower level recurs at the
  // line size of the level in front of it.
  std::vector<double> offs, lats;
  for (const auto& o : select(obs, kTraceProbe, "cycles"))
    if (o.param_text(kTraceColumn) == "constant_cold" && o.param(kPassColumn) == 0) {
      offs.push_back(o.param(kOffsetColumn));
      lats.push_back(o.value);
    }
  auto levels = latency_levels(offs, lats);
  const char* names[] = {param::constant_line_size, param::constant_l15_line_size};
  for (size_t l = 1; l < levels.size() && l <= 2; ++l) {
    const auto& lv = levels[l];
    if (lv.period <= 0 || lv.regularity < kMinRegularity || !is_pow2(lv.period)) continue;
    out.push_back(make_parameter(
        names[l - 1], lv.period, "bytes", lv.period, lv.period, kRegularityWeight * lv.regularity,
        "fine-grained cold ld.const pass, 4 B stride: accesses at >= " + num(lv.lowest) +
            " cycles recur every " + bytes_text(lv.period) + " (" + num(100 * lv.regularity) +
            " % of gaps)",
        ev));
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Code checks

namespace {

std::vector<CodeExpectation> expectations() {
  std::vector<CodeExpectation> out;
  out.push_back(expectation(std::string(kFamily.name), chase_kernel(true, loader(kL1, 8)),
                            kCapacityProbe, ptx_load(kL1, 8, true), sass_load(kL1)));
  out.push_back(expectation(std::string(kFamily.name), chase_kernel(true, loader(kL1, 4)),
                            kTraceProbe, ptx_load(kL1, 4, true), sass_load(kL1)));
  out.push_back(expectation(std::string(kFamily.name), kConstChase, kTraceProbe,
                            {R"(^ld\.const\.u32 )", -1, true}, {"^LDC", -1, false}));
  // Chain layout: stores of the next element's offset.
  out.push_back(expectation(std::string(kFamily.name), kWriteChain32, kTraceProbe,
                            {R"(^st\.global\.u32 )", -1, false}, {R"(^STG\.E)", -1, false}));
  return out;
}

}  // namespace

std::vector<std::string> kernels(const std::string& probe) {
  if (probe == kTraceProbe)
    return {chase_kernel(true, loader(kL1, 8)), chase_kernel(true, loader(kL1, 4)), kConstChase,
            kWriteChain64, kWriteChain32};
  if (probe == kCalibrationProbe || probe == kCapacityProbe || probe == kReplacementProbe)
    return {chase_kernel(true, loader(kL1, 8)), kWriteChain64};
  return {};
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(expectations);
GPUPROBE_REGISTER_ANALYZER(fine_grained::kFamily, analyze_fine_grained);

}  // namespace gpuprobe::fine_grained
