#include "analysis/memory_structure.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "analysis/analyzer.hpp"
#include "core/code_check.hpp"
#include "core/stats.hpp"

namespace gpuprobe {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using XY = std::vector<std::pair<double, double>>;

std::string kib(double bytes) {
  char buf[64];
  if (bytes >= 1 << 30)
    std::snprintf(buf, sizeof buf, bytes >= 1000.0 * (1 << 30) ? "%.0f GiB" : "%.3g GiB", bytes / (1 << 30));
  else if (bytes >= 1 << 20)
    std::snprintf(buf, sizeof buf, "%.3g MiB", bytes / (1 << 20));
  else if (bytes >= 1 << 10)
    std::snprintf(buf, sizeof buf, "%.4g KiB", bytes / (1 << 10));
  else
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  return buf;
}

std::string num(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

double clamp01(double v) { return std::isfinite(v) ? std::min(1.0, std::max(0.0, v)) : 0.0; }

bool is_pow2(double v) {
  if (!(v >= 1) || v != std::floor(v)) return false;
  auto u = static_cast<unsigned long long>(v);
  return (u & (u - 1)) == 0;
}

double round_pow2(double v) { return std::exp2(std::round(std::log2(v))); }

// Rows of `probe` in `unit` whose text parameters match every (key, value) of `where`,
// grouped by the numeric parameter `key` and returned as (key, x_param, value) points.
std::map<double, XY> grouped(const std::vector<Observation>& obs, const std::string& probe,
                             const std::string& unit, const Params& where,
                             const std::string& group_key, const std::string& x_key) {
  std::map<double, XY> out;
  for (const auto& o : select(obs, probe, unit)) {
    bool match = true;
    for (const auto& [k, v] : where) match = match && o.param_text(k) == v;
    double g = group_key.empty() ? 0.0 : o.param(group_key);
    double x = o.param(x_key);
    if (match && std::isfinite(g) && std::isfinite(x) && std::isfinite(o.value))
      out[g].emplace_back(x, o.value);
  }
  for (auto& [g, xy] : out) std::sort(xy.begin(), xy.end());
  return out;
}

Parameter param(const std::string& name, double value, const std::string& unit, double low,
                double high, double confidence, const std::string& method,
                const std::string& evidence) {
  return {name, value, unit, low, high, clamp01(confidence), method, evidence};
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Shared pieces

double split_threshold(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }),
          v.end());
  std::sort(v.begin(), v.end());
  if (v.size() < 2 || v.front() == v.back()) return kNaN;
  std::vector<double> prefix(v.size() + 1, 0.0);
  for (size_t i = 0; i < v.size(); ++i) prefix[i + 1] = prefix[i] + v[i];
  const double n = static_cast<double>(v.size());
  double best = -1, threshold = kNaN;
  for (size_t k = 1; k < v.size(); ++k) {
    if (v[k] == v[k - 1]) continue;
    double w0 = static_cast<double>(k) / n, w1 = 1 - w0;
    double m0 = prefix[k] / static_cast<double>(k);
    double m1 = (prefix.back() - prefix[k]) / static_cast<double>(v.size() - k);
    double between = w0 * w1 * (m0 - m1) * (m0 - m1);
    if (between > best) {
      best = between;
      threshold = 0.5 * (v[k - 1] + v[k]);
    }
  }
  return threshold;
}

BoundarySearch::BoundarySearch(double start, double min_x, double max_x, double growth,
                               double quantum, double resolution)
    : start_(start), min_(min_x), max_(max_x), growth_(growth), quantum_(quantum),
      resolution_(resolution), lo_(kNaN), hi_(kNaN) {}

double BoundarySearch::round(double x) const {
  return std::max(quantum_, std::round(x / quantum_) * quantum_);
}

std::optional<double> BoundarySearch::next() const {
  if (std::isnan(lo_) && std::isnan(hi_)) return round(std::min(std::max(start_, min_), max_));
  if (std::isnan(lo_)) {  // only misses so far: shrink
    double x = round(hi_ / growth_);
    if (x >= hi_) x = hi_ - quantum_;
    if (x < min_) return std::nullopt;
    return x;
  }
  if (std::isnan(hi_)) {  // only fits so far: grow
    if (lo_ >= max_) return std::nullopt;
    double x = std::min(round(lo_ * growth_), std::floor(max_ / quantum_) * quantum_);
    if (x <= lo_) x = lo_ + quantum_;
    if (x > max_) return std::nullopt;
    return x;
  }
  if (hi_ - lo_ <= std::max(quantum_, resolution_ * lo_)) return std::nullopt;
  // Geometric midpoint across a wide bracket, arithmetic once it is narrow.
  double mid = round(hi_ > 2 * lo_ ? std::sqrt(lo_ * hi_) : 0.5 * (lo_ + hi_));
  if (mid <= lo_ || mid >= hi_) return std::nullopt;
  return mid;
}

void BoundarySearch::add(double x, bool fits) {
  if (fits) {
    if (std::isnan(lo_) || x > lo_) lo_ = x;
    if (!std::isnan(hi_) && hi_ <= lo_) hi_ = kNaN;  // the earlier miss was noise
  } else {
    if (std::isnan(hi_) || x < hi_) hi_ = x;
    if (!std::isnan(lo_) && lo_ >= hi_) lo_ = kNaN;
  }
}

bool BoundarySearch::bracketed() const { return !std::isnan(lo_) && !std::isnan(hi_); }

bool Bracket::found() const { return std::isfinite(miss); }

std::optional<Bracket> first_miss_bracket(XY xy, double limit) {
  std::sort(xy.begin(), xy.end());
  for (size_t i = 0; i < xy.size(); ++i) {
    if (xy[i].second > limit) {
      if (i == 0) return std::nullopt;
      return Bracket{xy[i - 1].first, xy[i].first};
    }
  }
  if (xy.empty()) return std::nullopt;
  return Bracket{xy.back().first, kNaN};
}

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
    if (sorted[i] > sorted[i - 1] + std::max(12.0, 0.2 * sorted[i - 1])) close();
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

// ---------------------------------------------------------------------------------------
// granularity

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
  if (!(f.penalty > std::max(5.0, 5.0 * f.rms))) return std::nullopt;
  return f;
}

double bytes_per_request(double aligned_gbs, double pattern_gbs) {
  if (!(aligned_gbs > 0) || !(pattern_gbs > 0)) return kNaN;
  return 128.0 * aligned_gbs / pattern_gbs;
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
    if (s > f.line && g > 1.1) {
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
    {"l1", "l1_sector_size", "ld.global (L1-cached), L1 miss served by L2"},
    {"readonly", "readonly_line_size", "ld.global.nc (read-only path), miss served by L2"},
    {"l2", "l2_sector_size", "ld.global.cg, L2 flushed, miss served by DRAM"},
    {"constant", "constant_line_size", "ld.const, L1 constant cache miss served by the next level"},
};

}  // namespace

std::vector<Parameter> analyze_granularity(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  const std::string ev = "granularity.csv";
  for (const auto& p : kPaths) {
    // One fit per access width (and, for L2, per fetch-granularity limit); the widths must
    // agree. For L2 the smallest limit is the one that shows the sector itself.
    std::map<std::pair<double, double>, XY> by_limit_width;
    for (const auto& o : select(obs, "stride", "cycles")) {
      if (o.param_text("path") != p.path || o.param_text("residency") != "cold") continue;
      double limit = o.param("l2_fetch_limit_bytes");
      by_limit_width[{std::isfinite(limit) ? limit : 0, o.param("width_bytes")}].emplace_back(
          o.param("stride_bytes"), o.value);
    }
    double chosen_limit = kNaN;
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
      if (f.separation < 0.5) {
        lo = std::min(lo, f.runner_up);
        hi = std::max(hi, f.runner_up);
      }
      lo = std::min(lo, f.granularity);
      hi = std::max(hi, f.granularity);
    }
    double conf = (0.5 + 0.5 * sep / n) * (agree / n);
    std::string method = std::string("cold chase, stride 4 B-1 KiB, sequential; ") + p.what +
                         "; fit cycles = base + penalty*min(1, stride/G): penalty " +
                         num(pen / n) + " cycles, rms " + num(rms / n, 2) + ", " +
                         std::to_string(agree) + "/" + std::to_string(fits.size()) +
                         " access widths agree";
    if (std::string(p.path) == "l2" && chosen_limit > 0)
      method += "; cudaLimitMaxL2FetchGranularity " + num(chosen_limit) + " B";
    out.push_back(param(p.parameter, g, "bytes", lo, hi, conf, method, ev));
  }

  // Line (allocation) size of L2: the footprint at which cycles per access pass half-way
  // from the L2 hit level to the DRAM level (both read off the smallest stride), per stride.
  auto l2 = grouped(obs, "l2_capacity", "cycles", {}, "stride_bytes", "footprint_bytes");
  XY caps;
  if (!l2.empty()) {
    const XY& first = l2.begin()->second;
    double lo = first.front().second, hi = lo;
    for (const auto& pt : first) lo = std::min(lo, pt.second), hi = std::max(hi, pt.second);
    for (const auto& [stride, pts] : l2) {
      auto b = hi > 1.2 * lo ? first_miss_bracket(pts, 0.5 * (lo + hi)) : std::nullopt;
      if (b && b->found()) caps.emplace_back(stride, b->fit);
    }
  }
  if (auto f = fit_line_size(caps)) {
    double conf = (0.4 + 0.5 * f->separation) * (f->high / f->low < 1.3 ? 1.0 : 0.7);
    out.push_back(param("l2_line_size", f->line, "bytes", f->low, f->high, conf,
                        "many ld.global.cg chases (one lane per warp, all SMs), footprint "
                        "bisected to the half-way latency between L2 and DRAM at " +
                            std::to_string(caps.size()) +
                            " strides; capacity grows as stride/line above the line",
                        ev));
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// fine_grained

std::vector<StrideCapacity> capacity_by_stride(const std::vector<Observation>& obs,
                                               const std::string& series) {
  std::vector<StrideCapacity> out;
  for (const auto& [stride, pts] :
       grouped(obs, "capacity", "misses", {{"series", series}}, "stride_bytes", "lines")) {
    auto b = first_miss_bracket(pts, kMissesPerPassLimit);
    if (b) out.push_back({stride, b->fit, b->miss});
  }
  return out;
}

std::optional<SetFit> fit_sets(const std::vector<StrideCapacity>& caps) {
  if (caps.size() < 3) return std::nullopt;
  auto near = [](double a, double b) { return std::fabs(a / b - 1.0) <= 0.15; };
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
      f.halving_before = f.halving_before && r > 1.6 && r < 2.5;
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
  for (const auto& [s, b] : pts) f.tight += b > kSame * c && c * s / b <= 1.05 * f.high;
  const double top = std::exp2(std::floor(std::log2(1.02 * f.high)));
  if (top < f.low) return std::nullopt;
  f.line = top;
  f.unique = top / 2 < f.low;
  return f;
}

namespace {

// l1_line_size, and l1_sets and l1_ways where the strides show a set structure.
void l1_line_sets_ways(const std::vector<Observation>& obs, std::vector<Parameter>& out) {
  const std::string ev = "fine_grained.csv";
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
      kib(pts.front().first) + "-stride " + kib(capacity) + " bound the line from above (" +
      kib(lb->high) + ", " + std::to_string(lb->tight) +
      " strides) and strides keeping them bound it from below (" + kib(lb->low) + ")";
  if (sf && !sf->halving_before) {
    // Power-of-two strides from the first on keep every line resident: no set structure
    // shows, so sets and ways are not reported.
    line_method += "; power-of-two strides " + kib(sf->plateau_stride) + " to " +
                   kib(set_caps.back().stride) + " keep " + num(sf->ways, 5) + " lines (" +
                   kib(sf->ways * line) + ") resident: no set conflicts, so the L1 is fully "
                   "associative or its set index hashed; l1_sets and l1_ways not inferred";
  }
  double conf = 0.45 + (lb->unique ? 0.25 : 0.0) + 0.1 * std::min(2, lb->tight - 1);
  out.push_back(param("l1_line_size", line, "bytes", lb->low, lb->high, conf, line_method, ev));

  if (sf && sf->halving_before) {
    double sets = std::max(1.0, sf->plateau_stride / line);
    bool consistent = std::fabs(sets * sf->ways * line / capacity - 1.0) < 0.15;
    double sconf = consistent ? 0.85 : 0.6;
    std::string replacement;
    auto rep = select(obs, "replacement", "fraction");
    if (!rep.empty()) {
      double f = rep.front().value;
      replacement = f >= 0.9 ? "; replacement LRU-like: " + num(100 * f) +
                                   " % of accesses to ways+1 lines of one set miss"
                             : "; replacement not LRU: only " + num(100 * f) +
                                   " % of accesses to ways+1 lines of one set miss (LRU: 100 %)";
    }
    std::string method = where + "; K lines at power-of-two strides, misses counted per "
                         "access; resident lines halve per stride doubling up to " +
                         kib(sf->plateau_stride) + " = sets*line, then stay at the ways; "
                         "sets*ways*line = " + kib(sets * sf->ways * line) + " vs " +
                         kib(capacity) + " resident" + replacement;
    out.push_back(param("l1_ways", sf->ways, "ways", sf->ways, sf->ways, sconf, method, ev));
    out.push_back(param("l1_sets", sets, "sets", sets, sets, sconf, method, ev));
  }
}

}  // namespace

std::vector<Parameter> analyze_fine_grained(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  const std::string ev = "fine_grained.csv";
  l1_line_sets_ways(obs, out);

  // Constant cache levels from one cold sequential pass: each slower level recurs at the
  // line size of the level in front of it.
  std::vector<double> offs, lats;
  for (const auto& o : select(obs, "trace", "cycles"))
    if (o.param_text("trace") == "constant_cold" && o.param("pass") == 0) {
      offs.push_back(o.param("offset_bytes"));
      lats.push_back(o.value);
    }
  auto levels = latency_levels(offs, lats);
  const char* names[] = {"constant_line_size", "constant_l15_line_size"};
  for (size_t l = 1; l < levels.size() && l <= 2; ++l) {
    const auto& lv = levels[l];
    if (lv.period <= 0 || lv.regularity < 0.7 || !is_pow2(lv.period)) continue;
    out.push_back(param(names[l - 1], lv.period, "bytes", lv.period, lv.period,
                        0.8 * lv.regularity,
                        "fine-grained cold ld.const pass, 4 B stride: accesses at >= " +
                            num(lv.lowest) + " cycles recur every " + kib(lv.period) + " (" +
                            num(100 * lv.regularity) + " % of gaps)",
                        ev));
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// carveout

std::vector<CarveoutCapacity> l1_capacity_by_carveout(const std::vector<Observation>& obs) {
  std::vector<CarveoutCapacity> out;
  std::map<double, double> request;
  for (const auto& o : select(obs, "chase", "cycles"))
    request[o.param("carveout_percent")] = o.param("shared_request_bytes");
  for (const auto& [pct, pts] :
       grouped(obs, "chase", "cycles", {}, "carveout_percent", "footprint_bytes")) {
    double hit = pts.front().second;
    for (const auto& p : pts) hit = std::min(hit, p.second);
    auto b = first_miss_bracket(pts, kL1FitFactor * hit);
    if (!b || !b->found()) continue;
    out.push_back({pct, request[pct], b->fit, b->miss});
  }
  return out;
}

std::vector<Parameter> analyze_carveout(const std::vector<Observation>& obs, const Metadata&) {
  auto caps = l1_capacity_by_carveout(obs);
  if (caps.empty()) return {};
  const CarveoutCapacity* best = &caps.front();
  for (const auto& c : caps)
    if (c.l1_bytes > best->l1_bytes) best = &c;
  double resolution = (best->miss_bytes - best->l1_bytes) / best->l1_bytes;
  double conf = 0.95 - std::min(0.4, 4 * resolution) - (caps.size() < 2 ? 0.1 : 0.0);
  // The onset of misses, not the capacity: with a replacement that is not LRU, misses begin
  // before the cache is full (H100: 218 KiB against the 256 KiB the ladder's half step reads),
  // so it has its own name and never stands in for l1_size.
  return {param("l1_size_no_miss", best->l1_bytes, "bytes", best->l1_bytes, best->miss_bytes, conf,
                "one-thread ld.global chase, 32 B spacing, quasi-random cyclic order; "
                "footprint bisected to where cycles/access exceed " +
                    num(kL1FitFactor) + "x the hit level; largest over " +
                    std::to_string(caps.size()) + " carve-out preferences (at " +
                    num(best->percent) + " %)",
                "carveout.csv")};
}

// ---------------------------------------------------------------------------------------
// tlb

ladder::SegmentOptions tlb_segment_options() {
  ladder::SegmentOptions o;
  // The H100's first step is 10 cycles on a 277-cycle L2 hit (3.7 %), on points that repeat
  // to 0.1 %: steps and plateaus are told apart more finely than cache levels are.
  o.min_jump = 0.02;
  o.min_tolerance = 0.01;
  return o;
}

namespace {

// A footprint sweep has tens of points per stride; past this many, more points resolve no
// step better and only make the segmentation (superlinear in a curve's length) slow.
constexpr size_t kMaxTlbCurvePoints = 256;

double median_of(std::vector<double>& v) {
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// Consecutive points (sorted by x) in groups of `per`, each replaced by its median x and y.
std::vector<ladder::CurvePoint> medians_of_groups(const std::vector<ladder::CurvePoint>& pts,
                                                  size_t per, bool same_x) {
  std::vector<ladder::CurvePoint> out;
  std::vector<double> xs, ys;
  for (size_t i = 0; i < pts.size();) {
    size_t j = i;
    xs.clear();
    ys.clear();
    while (j < pts.size() && (same_x ? pts[j].x == pts[i].x : j - i < per)) {
      xs.push_back(pts[j].x);
      ys.push_back(pts[j].y);
      ++j;
    }
    out.push_back({median_of(xs), median_of(ys)});
    i = j;
  }
  return out;
}

// Every stride's curve of `probe`, in one pass over the rows: sorted by footprint, repeated
// footprints merged into their median, and at most kMaxTlbCurvePoints points, so that
// analysis stays linear in the rows however many a file holds.
std::map<double, std::vector<ladder::CurvePoint>> tlb_curves(const std::vector<Observation>& obs,
                                                             const std::string& probe) {
  std::map<double, std::vector<ladder::CurvePoint>> out;
  for (const auto& o : obs) {
    if (o.probe != probe || o.unit != "cycles") continue;
    const double stride = o.param("stride_bytes"), x = o.param("footprint_bytes");
    if (std::isfinite(stride) && std::isfinite(x) && std::isfinite(o.value))
      out[stride].push_back({x, o.value});
  }
  for (auto& [stride, pts] : out) {
    std::stable_sort(pts.begin(), pts.end(),
                     [](const ladder::CurvePoint& a, const ladder::CurvePoint& b) { return a.x < b.x; });
    for (size_t i = 1; i < pts.size(); ++i)
      if (pts[i].x == pts[i - 1].x) {
        pts = medians_of_groups(pts, 0, true);
        break;
      }
    if (pts.size() > kMaxTlbCurvePoints)
      pts = medians_of_groups(pts, (pts.size() + kMaxTlbCurvePoints - 1) / kMaxTlbCurvePoints, false);
  }
  return out;
}

std::vector<std::pair<double, double>> first_tlb_steps_of(
    const std::map<double, std::vector<ladder::CurvePoint>>& chase) {
  XY out;
  for (const auto& [stride, pts] : chase) {
    auto seg = ladder::segment_curve(pts, tlb_segment_options());
    if (!seg.knees.empty()) out.emplace_back(stride, seg.knees.front().low);
  }
  return out;
}

}  // namespace

std::vector<ladder::CurvePoint> tlb_curve(const std::vector<Observation>& obs, double stride,
                                          const std::string& probe) {
  auto curves = tlb_curves(obs, probe);
  auto it = curves.find(stride);
  return it == curves.end() ? std::vector<ladder::CurvePoint>{} : it->second;
}

std::vector<std::pair<double, double>> first_tlb_steps(const std::vector<Observation>& obs) {
  return first_tlb_steps_of(tlb_curves(obs, "chase"));
}

std::optional<PageEntryFit> fit_page_entry(const XY& in) {
  XY steps = in;
  std::sort(steps.begin(), steps.end());
  if (steps.empty()) return std::nullopt;
  PageEntryFit f;
  const double k0 = steps.front().second;
  std::vector<double> below, entries;
  for (const auto& [stride, reach] : steps) {
    if (reach <= 1.5 * k0 && reach >= k0 / 1.5) {
      below.push_back(reach);
      f.sweep_stride = stride;
    } else if (reach > 1.5 * k0) {
      entries.push_back(reach / stride);
    }
  }
  f.strides_below = static_cast<int>(below.size());
  f.strides_above = static_cast<int>(entries.size());
  f.reach = median(below);
  f.reach_low = *std::min_element(below.begin(), below.end());
  f.reach_high = *std::max_element(below.begin(), below.end());
  f.agree = static_cast<double>(std::count_if(below.begin(), below.end(), [&](double r) {
              return std::fabs(r / f.reach - 1) <= 0.1;
            })) /
            static_cast<double>(below.size());
  if (!entries.empty()) {
    f.entries = std::round(median(entries));
    if (f.entries >= 1) f.entry_size = round_pow2(f.reach / f.entries);
  }
  return f;
}

std::vector<Parameter> analyze_tlb(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  const std::string ev = "tlb.csv";
  const auto curves = tlb_curves(obs, "chase");
  if (curves.empty()) return out;
  auto pe = fit_page_entry(first_tlb_steps_of(curves));
  if (pe && pe->entry_size > 0 && pe->strides_below > 0) {
    double conf = pe->strides_above >= 2 && pe->strides_below >= 2 ? 0.85 : 0.6;
    out.push_back(param("tlb_page_entry_size", pe->entry_size, "bytes", pe->entry_size,
                        pe->entry_size, conf,
                        "first TLB step of ld.global.cg chases at " +
                            std::to_string(pe->strides_below + pe->strides_above) +
                            " strides: reach stays at " + kib(pe->reach) + " below the entry "
                            "size and grows as " + num(pe->entries) + " entries * stride above",
                        ev));
  }
  // Coverage from the longest plain sweep whose stride is not above the entry size.
  double sweep = 0, longest = 0;
  for (const auto& [stride, pts] : curves) {
    bool ok = !pe || pe->entry_size <= 0 || stride <= pe->entry_size;
    if (ok && pts.back().x > longest) longest = pts.back().x, sweep = stride;
  }
  if (sweep <= 0) return out;
  const auto seg = ladder::segment_curve(curves.at(sweep), tlb_segment_options());
  if (seg.knees.empty()) return out;
  auto steps_text = [](const ladder::Segmentation& sg, size_t from) {
    std::string t;
    for (size_t k = from; k < sg.knees.size(); ++k)
      t += std::string(t.empty() ? "" : ", then ") + num(sg.plateaus[sg.knees[k].lower].level) +
           " -> " + num(sg.plateaus[sg.knees[k].lower + 1].level) + " cycles at " +
           kib(sg.knees[k].low);
    return t;
  };
  std::string how = "one-thread ld.global.cg chase, one access per " + kib(sweep) +
                    " (TLB and L2 warmed by a first pass), footprint swept to " + kib(longest);
  const double l1_reach = pe && pe->strides_below >= 2 ? pe->reach : seg.knees.front().low;
  if (pe && pe->strides_below >= 2) {
    // The first step at every stride below the entry size: one sweep's transition points
    // may sit on either side of the level, the median over strides does not.
    out.push_back(param("tlb_l1_coverage", pe->reach, "bytes", pe->reach_low, pe->reach_high,
                        std::max(seg.knees.front().confidence, 0.4 + 0.5 * pe->agree),
                        how + "; steps: " + steps_text(seg, 0) + "; reach " + kib(pe->reach) +
                            " = median of the first steps at " +
                            std::to_string(pe->strides_below) + " strides up to the entry size (" +
                            kib(pe->reach_low) + " to " + kib(pe->reach_high) + ")",
                        ev));
  } else {
    const auto& kn = seg.knees.front();
    out.push_back(param("tlb_l1_coverage", kn.low, "bytes", kn.low, kn.high, kn.confidence,
                        how + "; steps: " + steps_text(seg, 0), ev));
  }

  // The levels beyond the L1 TLB, from the aliased space where it was measured (it reaches
  // far past device memory): of its strides, the one whose first step past the L1 reach is
  // clearest. Its first such step is the L2 TLB's reach; any later one a further level.
  struct Beyond {
    double stride = 0, longest = 0;
    ladder::Segmentation seg;
    size_t first = 0;  // index of the first knee past the L1 reach
    double reach = 0, above = 0;  // the last footprint below that step, the first above
  };
  std::optional<Beyond> beyond;
  std::vector<Beyond> aliased;
  for (const auto& [stride, pts] : tlb_curves(obs, "chase_aliased")) {
    Beyond bd{stride, pts.back().x, ladder::segment_curve(pts, tlb_segment_options())};
    // A knee past the L1 reach that climbs (a plateau may also split on a 1 % dip).
    auto climbs = [&](size_t k) {
      const auto& kn = bd.seg.knees[k];
      return bd.seg.plateaus[kn.lower + 1].level >
             (1 + tlb_segment_options().min_jump) * bd.seg.plateaus[kn.lower].level;
    };
    while (bd.first < bd.seg.knees.size() &&
           (bd.seg.knees[bd.first].low < 2 * l1_reach || !climbs(bd.first)))
      ++bd.first;
    if (bd.first == bd.seg.knees.size()) continue;
    // The knee's bracket may open early where the lower plateau wanders by a few cycles,
    // and the step is a ramp (misses grow over some GiB): the reach is the last point before
    // the ramp: under 15 % of the way up the step and within 5 % of the level (where the
    // sweep did not resolve a level between, the step may be far larger than this one);
    // the bracket's top is the first point above.
    const auto& kn = bd.seg.knees[bd.first];
    const double lower = bd.seg.plateaus[kn.lower].level;
    const double on_level =
        lower + std::min(0.15 * (bd.seg.plateaus[kn.lower + 1].level - lower), 0.05 * lower);
    bd.reach = kn.low;
    bd.above = kn.high;
    for (const auto& p : bd.seg.points) {
      if (p.x <= kn.low) continue;
      if (p.y > on_level) {
        bd.above = p.x;
        break;
      }
      bd.reach = p.x;
    }
    aliased.push_back(bd);
  }
  // Strides in increasing order: the first that moves the step with it (by the strides'
  // ratio) is above the L2 TLB's entry size, the ones before within it, where the step is
  // the L2 TLB's reach in bytes; of those, the clearest step gives it.
  size_t within = aliased.size();
  std::string entries_text;
  for (size_t i = 0; i + 1 < aliased.size(); ++i) {
    const double r0 = aliased[i].reach, r1 = aliased[i + 1].reach;
    const double grow = (r1 / r0) / (aliased[i + 1].stride / aliased[i].stride);
    if (std::fabs(grow - 1) > 0.25) continue;
    const double entries = std::round(r1 / aliased[i + 1].stride);
    entries_text = "; the step moves with strides above " + kib(aliased[i].stride) + ": " +
                   std::to_string(static_cast<long long>(entries)) + " entries of " +
                   kib(r0 / entries);
    within = i + 1;
    break;
  }
  for (size_t i = 0; i < within; ++i)
    if (!beyond || aliased[i].seg.knees[aliased[i].first].confidence >
                       beyond->seg.knees[beyond->first].confidence)
      beyond = aliased[i];
  std::string beyond_how;
  if (beyond) {
    beyond_how = "the same chase, one access per " + kib(beyond->stride) + ", over " +
                 kib(beyond->longest) + " of virtual addresses mapped onto one physical chunk "
                 "again and again";
    // Where the step sits at the other strides: at the same footprint, the level covers a
    // range of addresses whatever the stride; at a footprint growing with the stride, it
    // holds a count of entries of one stride each.
    std::string others;
    for (const auto& o : aliased)
      if (o.stride != beyond->stride)
        others += "; at " + kib(o.stride) + " the step lies at " + kib(o.reach);
    others += entries_text;
    const auto& kn = beyond->seg.knees[beyond->first];
    out.push_back(param("tlb_l2_coverage", beyond->reach, "bytes", beyond->reach, beyond->above,
                        kn.confidence,
                        beyond_how + "; steps past the L1 TLB's reach: " +
                            steps_text(beyond->seg, beyond->first) + others,
                        ev));
  } else if (seg.knees.size() >= 2) {
    const auto& kn = seg.knees[1];
    out.push_back(param("tlb_l2_coverage", kn.low, "bytes", kn.low, kn.high, kn.confidence,
                        how + "; steps: " + steps_text(seg, 0), ev));
  }

  // The cost of the deepest miss seen: the last plateau over the L1 TLB hits.
  const auto& last = beyond ? beyond->seg : seg;
  const bool deep = beyond || seg.knees.size() >= 2;
  const double penalty = last.plateaus.back().level - seg.plateaus.front().level;
  double conf = 0;
  for (const auto& kn : last.knees) conf = std::max(conf, kn.confidence);
  std::string what =
      deep ? "cycles added per access beyond the last TLB level's reach (" +
                 kib(last.knees.back().high) + "): a page walk"
           : "cycles added per access by an L1 TLB miss; no further step up to " + kib(longest);
  out.push_back(param("tlb_miss_latency", penalty, "cycles", penalty, penalty,
                      conf * (deep ? 1.0 : 0.7),
                      (beyond ? beyond_how : how) + "; " + what, ev));
  return out;
}

// ---------------------------------------------------------------------------------------
// Code checks

namespace {

// Kernel names as kernel_name() prints them.
std::string templ(const std::string& name, const std::vector<std::string>& args) {
  std::string s = name + "<";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + (s.back() == '>' ? " >" : ">");
}
std::string loader(int path, int width) {
  return templ("GlobalLoader", {"(Path)" + std::to_string(path), std::to_string(width)});
}
std::string chase_kernel(bool per_access, const std::string& ld) {
  return templ("memory_chase::chase", {per_access ? "true" : "false", ld});
}
const std::string kWriteChain64 = "memory_chase::write_chain<unsigned long>";
const std::string kWriteChain32 = "memory_chase::write_chain<unsigned int>";
const std::string kConstWalk = "granularity::stride_walk<GranularityConstLoader, GranularityConstLoader>";
const std::string kFineConst = chase_kernel(true, "FineGrainedConstLoader");
constexpr int kL1 = 0, kReadonly = 1, kL2 = 2;  // Path in microbench/memory_chase.cuh

std::string stride_walk(int path, int width) {
  return templ("granularity::stride_walk", {loader(path, width), loader(kL2, width)});
}

// The load of each path and width: PTX as written; SASS as sm_70-sm_90 spell it (the default
// load weak, .nc CONSTANT, .cg STRONG.GPU), lenient about the size modifier.
InstructionRule ptx_load(int path, int width, bool chained) {
  const char* op[] = {R"(^ld\.global\.)", R"(^ld\.global\.nc\.)", R"(^ld\.global\.cg\.)"};
  const char* ty = width == 4 ? R"(u32 )" : width == 8 ? R"(u64 )" : R"(v2\.u64 )";
  return {std::string(op[path]) + ty, -1, chained};
}
InstructionRule sass_load(int path) {
  const char* re[] = {R"(^LDG\.E(\.64|\.128)?(\.SYS)? )", R"(^LDG\.E[.0-9A-Z]*\.CONSTANT)",
                      R"(^LDG\.E[.0-9A-Z]*\.STRONG\.GPU)"};
  return {re[path], -1, false};
}

std::vector<CodeExpectation> memory_structure_expectations() {
  std::vector<CodeExpectation> out;
  auto add = [&](const std::string& source, const std::string& kernel, const std::string& probe,
                 InstructionRule ptx, InstructionRule sass) {
    CodeExpectation e;
    e.source = source;
    e.kernel = kernel;
    e.probe = probe;
    e.ptx = {std::move(ptx)};
    e.sass = {std::move(sass)};
    out.push_back(std::move(e));
  };
  // Timed chases: one dependent chain of the path's load between the clock reads.
  add("carveout", chase_kernel(false, loader(kL1, 8)), "chase", ptx_load(kL1, 8, true),
      sass_load(kL1));
  add("tlb", chase_kernel(false, loader(kL2, 8)), "chase", ptx_load(kL2, 8, true),
      sass_load(kL2));
  add("fine_grained", chase_kernel(true, loader(kL1, 8)), "capacity", ptx_load(kL1, 8, true),
      sass_load(kL1));
  add("fine_grained", chase_kernel(true, loader(kL1, 4)), "trace", ptx_load(kL1, 4, true),
      sass_load(kL1));
  add("fine_grained", kFineConst, "trace", {R"(^ld\.const\.u32 )", -1, true}, {"^LDC", -1, false});
  // The walks time two chains (cold, then resident): the path's load, not one chain.
  for (int path : {kL1, kReadonly, kL2})
    for (int width : {4, 8, 16})
      add("granularity", stride_walk(path, width), "stride", ptx_load(path, width, false),
          sass_load(path));
  add("granularity", kConstWalk, "stride", {R"(^ld\.const\.u32 )", -1, false}, {"^LDC", -1, false});
  add("granularity", "granularity::warp_pattern", "warp_pattern", ptx_load(kL2, 4, false),
      sass_load(kL2));
  add("granularity", "granularity::flush_l2", "stride", {R"(^ld\.global\.cg\.v4\.u32 )", -1, false},
      sass_load(kL2));
  // Chain layout: stores of the next element's offset.
  add("carveout", kWriteChain64, "chase", {R"(^st\.global\.u64 )", -1, false}, {R"(^STG\.E)", -1, false});
  add("fine_grained", kWriteChain32, "trace", {R"(^st\.global\.u32 )", -1, false},
      {R"(^STG\.E)", -1, false});
  return out;
}

}  // namespace

std::vector<std::string> memory_structure_kernels(const std::string& family,
                                                  const std::string& probe) {
  if (family == "granularity") {
    if (probe == "stride") {
      std::vector<std::string> k = {kConstWalk, "granularity::flush_l2", kWriteChain32,
                                    kWriteChain64};
      for (int path : {kL1, kReadonly, kL2})
        for (int width : {4, 8, 16}) k.push_back(stride_walk(path, width));
      return k;
    }
    if (probe == "warp_pattern") return {"granularity::warp_pattern"};
    if (probe == "l2_capacity") return {chase_kernel(false, loader(kL2, 8)), kWriteChain64};
  }
  if (family == "fine_grained") {
    if (probe == "trace")
      return {chase_kernel(true, loader(kL1, 8)), chase_kernel(true, loader(kL1, 4)), kFineConst,
              kWriteChain64, kWriteChain32};
    if (probe == "calibration" || probe == "capacity" || probe == "replacement")
      return {chase_kernel(true, loader(kL1, 8)), kWriteChain64};
  }
  if (family == "carveout" && (probe == "chase" || probe == "l1_size"))
    return {chase_kernel(false, loader(kL1, 8)), kWriteChain64};
  if (family == "tlb" && probe == "chase") return {chase_kernel(false, loader(kL2, 8)), kWriteChain64};
  return {};
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(memory_structure_expectations);

GPUPROBE_REGISTER_ANALYZER("granularity", analyze_granularity);
GPUPROBE_REGISTER_ANALYZER("fine_grained", analyze_fine_grained);
GPUPROBE_REGISTER_ANALYZER("carveout", analyze_carveout);
GPUPROBE_REGISTER_ANALYZER("tlb", analyze_tlb);

}  // namespace gpuprobe
