#include "analysis/latency.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <utility>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"
#include "base/stats.hpp"

namespace gpuprobe {
namespace latency {

using segmentation::CurvePoint;
using segmentation::Knee;
using segmentation::Plateau;
using segmentation::SegmentOptions;
using segmentation::Segmentation;
using segmentation::segment_curve;
using analysis::clamp01;
using analysis::meta_number;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace


uint64_t round_to_lines(double bytes, uint32_t stride) {
  return static_cast<uint64_t>(std::max(2.0, std::round(bytes / stride))) * stride;
}

// The tail's step: sparse, for its footprints cost the most to prepare and chase (two
// doublings past the H100's 225 MiB made the family 32 % slower, 8.8 s against 6.7 s);
// refinement fills in around any knee it shows.
constexpr double kTailStep = 4;
// The tail ends at its end when the last step stopped short of it by this factor.
constexpr double kTailEndGap = 1.5;

// Each footprint moves by up to this share of a step, so that no capacity sits exactly
// between two footprints on every GPU (the seed is fixed: runs repeat).
constexpr double kFootprintJitter = 0.3;

std::vector<uint64_t> coarse_footprints(uint64_t min_bytes, uint64_t max_bytes, uint32_t stride,
                                        double ratio, uint64_t tail_bytes) {
  auto to_lines = [stride](double bytes) { return round_to_lines(bytes, stride); };
  const double span = std::log(double(max_bytes) / double(min_bytes));
  const int n = std::max(1, int(std::ceil(span / std::log(ratio))));
  const double step = span / n;
  std::mt19937_64 rng(0x1a7e9c7ULL);
  std::uniform_real_distribution<double> jitter(-kFootprintJitter, kFootprintJitter);
  std::vector<uint64_t> out;
  for (int k = 0; k <= n; ++k) {
    double u = jitter(rng);
    if (k == 0) u = std::fabs(u);
    if (k == n) u = -std::fabs(u);
    const uint64_t f = to_lines(double(min_bytes) * std::exp(step * (k + u)));
    if (out.empty() || f > out.back()) out.push_back(f);
  }
  for (double f = kTailStep * double(max_bytes); f <= double(tail_bytes); f *= kTailStep)
    if (to_lines(f) > out.back()) out.push_back(to_lines(f));
  // the tail's end itself, unless the last step came close to it
  if (double(tail_bytes) > kTailEndGap * double(out.back())) out.push_back(to_lines(double(tail_bytes)));
  return out;
}

namespace {
// The tail's end: past a 256 MiB last-level cache by a factor of four.
constexpr double kTailBytes = 1024.0 * 1024 * 1024;
// The fine sweep's end, in multiples of the L2: past its size (and the far partition's ramp).
constexpr double kL2Multiple = 4.5;
// A quarter of free memory leaves room for the rest of the run.
constexpr double kFreeShare = 0.25;
// The device attribute's L2 size is raised to at least this, so that a GPU reporting 0 still
// gets a sweep out to DRAM (kL2Multiple x 1 MiB).
constexpr double kMinL2Bytes = 1024.0 * 1024.0;
}  // namespace

GlobalSweep global_sweep(double l2_bytes, double free_bytes, uint32_t stride) {
  const double l2 = std::max(l2_bytes, kMinL2Bytes);
  const double limit = kFreeShare * free_bytes;
  auto to_lines = [stride](double bytes) { return round_to_lines(bytes, stride); };
  GlobalSweep s;
  s.max_bytes = to_lines(std::min(kL2Multiple * l2, limit));
  s.tail_bytes = to_lines(std::min(std::max(kTailBytes, double(s.max_bytes)), limit));
  return s;
}

// Footprints within this factor of each other are one footprint measured again (a file that
// repeats its rows, or a sweep denser than any analysis needs): the latency family's refinement
// never splits a gap narrower than 0.76 % (2^(1/6) / 16), and committed runs hold no two
// footprints of a probe closer than 0.9 %. Merging them bounds the points a curve can have
// (about 350 an octave), so that the segmentation's cost does not grow with the file.
constexpr double kSameFootprint = 1.002;

std::vector<CurvePoint> latency_curve(const std::vector<Observation>& obs,
                                      const std::string& probe) {
  std::vector<CurvePoint> all;
  for (const auto& o : obs) {
    if (o.probe != probe || o.unit != "cycles") continue;
    CurvePoint q{o.param(memory_chase::kFootprintColumn), o.value};
    if (std::isfinite(q.x) && std::isfinite(q.y) && q.x > 0 && q.y > 0) all.push_back(q);
  }
  std::sort(all.begin(), all.end(),
            [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
  std::vector<CurvePoint> out;
  for (size_t i = 0; i < all.size();) {
    std::vector<double> xs, ys;
    for (size_t j = i; j < all.size() && all[j].x <= all[i].x * kSameFootprint; ++j) {
      xs.push_back(all[j].x);
      ys.push_back(all[j].y);
    }
    i += xs.size();
    out.push_back({median(xs), median(ys)});
  }
  return out;
}

namespace {

// How each probe's loads are made, for the method column.
std::string load_text(const std::string& probe) {
  if (probe == kLdGlobalProbe) return "default ld.global, L1-cached, 8 B pointers";
  if (probe == kLdCgProbe) return "ld.global.cg, 8 B pointers";
  if (probe == kLdNcProbe) return "ld.global.nc, 8 B pointers";
  if (probe == kSharedProbe) return "ld.shared, 4 B offsets";
  return "ld.const, 4 B offsets";
}

std::string method_text(const std::vector<Observation>& obs, const std::string& probe,
                        const std::string& what) {
  std::string spacing;
  for (const auto& o : obs) {
    if (o.probe == probe && o.unit == "cycles") spacing = o.param_text(kStrideColumn);
    if (!spacing.empty()) break;
  }
  return "pointer chase (" + load_text(probe) +
         (spacing.empty() ? "" : ", " + spacing + " B spacing") + ", random single cycle): " + what;
}

// The file every parameter of the family is read from.
std::string evidence() { return std::string(kFamily.name) + ".csv"; }

Parameter level_param(const std::string& name, const Plateau& p, double confidence,
                      const std::string& method) {
  return {name, p.level, "cycles", p.min, p.max, clamp01(confidence), method, evidence()};
}

Parameter size_param(const std::string& name, const Knee& k, double confidence,
                     const std::string& method) {
  return {name, k.x, "bytes", k.low, k.high, clamp01(confidence), method, evidence()};
}

// ld.cg's L2 levels are read from footprints of at least L2 size / this (see segment_probes).
constexpr double kL2LevelFraction = 64;

// A capacity read off a knee where the step is half done: the footprint (log-interpolated)
// where the curve crosses the geometric mean of the two levels. A cache that empties
// gradually (non-LRU replacement) starts missing well before it is full and is not empty until
// well after; half way is where a random-replacement or hashed cache holds its size, and a
// creep before an LRU cliff (the H100's L1 crept 4 % at 232 KiB before its cliff at 238-245 KiB)
// does not move it. The interval spans the whole transition: the last footprint on the lower
// level to the first on the upper one (for a cliff, the two points around the crossing).
const std::string kCapacityText =
    " (half of the step climbed, in log; a gradual step's interval spans it)";
// Where a transition starts and ends, as a fraction of the step (in log).
constexpr double kTransitionEdge = 0.15;
// How much a transition wider than a factor of two in footprint leaves in doubt: 1 up to 2x,
// falling by 0.35 per further doubling, to 0.3.
double transition_doubt(const Knee& k) {
  const double span = std::log(k.high / k.low) / std::log(2.0);
  return span <= 1 ? 1.0 : std::max(0.3, 1.0 - 0.35 * (span - 1));
}

// `upper`: the plateau the step climbs to, when not the next one (a piece of the ramp between
// the two counts as the transition's).
Knee capacity_knee(const Segmentation& s, const Knee& k,
                   std::optional<size_t> upper = std::nullopt) {
  const Plateau& lo = s.plateaus[k.lower];
  const Plateau& hi = s.plateaus[upper.value_or(k.lower + 1)];
  if (hi.level <= lo.level) return k;
  const double zlo = std::log(lo.level), dz = std::log(hi.level / lo.level);
  // The transition read on the points that are not above any point after them: latency does
  // not fall as the footprint grows, so such a point is a slow load (an outlier), which would
  // put the crossing early.
  std::vector<size_t> on;  // those points, from lo.last to hi.first
  double below = s.points[hi.first].y;
  for (size_t i = hi.first + 1; i-- > lo.last;)
    if (s.points[i].y <= below || i == lo.last) {
      on.insert(on.begin(), i);
      below = std::min(below, s.points[i].y);
    }
  auto done = [&](size_t j) { return (std::log(s.points[on[j]].y) - zlo) / dz; };
  Knee c = k;
  size_t cross = on.size() - 1;
  // the point after the last one below half the step
  for (size_t j = on.size() - 1; j > 0; --j)
    if (done(j - 1) < 0.5) {
      cross = j;
      break;
    }
  if (cross == 0) return k;
  const CurvePoint& a = s.points[on[cross - 1]];
  const CurvePoint& b = s.points[on[cross]];
  const double t = done(cross) > done(cross - 1)
                       ? std::clamp((0.5 - done(cross - 1)) / (done(cross) - done(cross - 1)), 0.0, 1.0)
                       : 0.5;
  c.x = std::exp(std::log(a.x) + t * std::log(b.x / a.x));
  // The interval spans the transition: from the last point within kTransitionEdge of the lower
  // level to the first within it of the upper one (for a cliff, the points around the crossing).
  // The lower plateau may have taken in the first points of the climb (its members are those
  // near its median: an H200's L2 climbs from 57 MiB, its plateau ends at 60.3): the low end
  // is the last of its points still within the edge.
  size_t start = lo.last;
  while (start > lo.first && (std::log(s.points[start].y) - zlo) / dz > kTransitionEdge) --start;
  c.low = s.points[start].x;
  for (size_t j = 0; j < cross; ++j)
    if (done(j) <= kTransitionEdge) c.low = s.points[on[j]].x;
  c.high = b.x;
  for (size_t j = cross; j < on.size(); ++j)
    if (done(j) >= 1 - kTransitionEdge) {
      c.high = s.points[on[j]].x;
      break;
    }
  // A transition that spans more than a factor of two in footprint leaves the size uncertain
  // beyond the 10 % a size is held to: say so in the confidence.
  c.confidence = k.confidence * transition_doubt(c);
  return c;
}

// An L2 step read this far from the device's L2 size (or farther) leaves the reading in doubt:
// at half of it is where a split L2 whose far partition was missed steps (its near partition's
// end), and a gradual step read at its middle lies well within it.
constexpr double kL2SizeFit = 1.5;
// A far L2 partition ends at about twice the footprint the near one does.
constexpr double kSplitMin = 1.5, kSplitMax = 2.8;
// ... and is this much slower at least (the H100's far/near is 1.9, the A100's about 1.8): a
// swing that splits one level does not pass for two partitions.
constexpr double kFarStep = 1.3;
// A step past the L2 of less than this is a TLB reach (a page walk, which mostly hits in
// caches, adds less than the memory access it precedes); a cache level's miss to the next
// level at least this (an LLC is about half as far as DRAM).
constexpr double kCacheStep = 1.5;

// Where a curve's L2 ends and, split, where its near partition does (knee indices), and how
// well the L2 step fits the device's L2 size.
struct L2Steps {
  size_t end = 0;
  std::optional<size_t> segment;
  double fit = 1.0;
};

// `first` is the first plateau past any L1-class level. With the device's L2 size known, the L2
// step is the knee nearest it (a TLB step past it is not the L2's end) and a split L2's near
// level ends at the knee nearest half of it; without, the L2 ends at the knee after `first`. The
// plateau between the two is a far partition when it ends at about twice the near one's
// footprint and is kFarStep slower: Hopper's far partition, or Blackwell's second die's half.
L2Steps l2_steps(const Segmentation& s, size_t first, double l2_bytes) {
  L2Steps l{first, std::nullopt, 1.0};
  auto size_at = [&](size_t knee) { return capacity_knee(s, s.knees[knee]).x; };
  auto partitions = [&](size_t seg, size_t end) {
    const double r = size_at(end) / size_at(seg);
    return end > seg && r >= kSplitMin && r <= kSplitMax &&
           s.plateaus[end].level >= kFarStep * s.plateaus[seg].level;
  };
  const size_t knees = s.knees.size();
  if (first >= knees) return l;
  if (!(std::isfinite(l2_bytes) && l2_bytes > 0)) {
    if (first + 1 < knees && partitions(first, first + 1)) {
      l.segment = first;
      l.end = first + 1;
    }
    return l;
  }
  auto off = [&](size_t k, double bytes) { return std::fabs(std::log(size_at(k) / bytes)); };
  for (size_t k = first; k < knees; ++k)
    if (off(k, l2_bytes) < off(l.end, l2_bytes)) l.end = k;
  size_t seg = first;
  for (size_t k = first; k < l.end; ++k)
    if (off(k, l2_bytes / 2) < off(seg, l2_bytes / 2)) seg = k;
  l.fit = off(l.end, l2_bytes) < std::log(kL2SizeFit) ? 1.0 : 0.5;
  if (partitions(seg, l.end)) l.segment = seg;
  return l;
}

// What the plateaus of a curve past its L1-class levels are.
struct Ladder {
  const Segmentation* seg = nullptr;
  size_t near = 0;                // plateau of the near (or only) L2 level
  std::optional<size_t> segment;  // knee where the near partition ends (split L2)
  std::optional<size_t> far;      // plateau of the far L2 partition: the one the L2 step leaves
  size_t l2_end = 0;              // knee where the L2 ends
  std::optional<size_t> llc;      // plateau of a cache between L2 and DRAM
  size_t dram = 0;                // plateau of DRAM
  size_t past_l2 = 0;             // plateau the L2 step climbs to (the LLC's, or DRAM's)
  double fit = 1.0;               // lower when the L2 step lies far from the device's L2 size
  double past = 1.0;              // lower when the levels past the L2 leave their names in doubt
  std::string past_note;          // ... and why
};

// A plateau less than this share as sure as the next one of its tier is a piece of the ramp into
// the tier's level (rdna2 model seed 59: 5 points climbing 318-392 before an LLC at 399).
constexpr double kRampPiece = 0.5;
// More cache steps past the L2 than a last-level cache's and DRAM's leave both names in doubt.
constexpr double kExtraStepsDoubt = 0.45;

// Past the L2, the plateaus fall into tiers: a step of kCacheStep or more (a cache miss to the
// next level) starts a tier, smaller ones (a TLB reach, which adds less than the access it
// precedes) stay in it. The last tier is DRAM's; the first, when another follows it, a
// last-level cache's: a level that a farther, slower tier follows within the sweep is never
// DRAM, whatever smaller steps lie between (a TLB reach inside an Infinity Cache).
void read_past_l2(const Segmentation& s, Ladder& l) {
  const size_t n = s.plateaus.size();
  std::vector<size_t> tiers = {l.l2_end + 1};
  for (size_t k = tiers[0] + 1; k < n; ++k)
    if (s.plateaus[k].level >= kCacheStep * s.plateaus[tiers.back()].level) tiers.push_back(k);
  // A tier's level is its first plateau but for a piece of the ramp into it (short, climbing:
  // less than kRampPiece as sure as the plateau after it in the tier)
  auto level_of = [&](size_t t) {
    const size_t end = t + 1 < tiers.size() ? tiers[t + 1] : n;
    size_t k = tiers[t];
    while (k + 1 < end && s.plateaus[k].confidence < kRampPiece * s.plateaus[k + 1].confidence) ++k;
    return k;
  };
  l.dram = level_of(tiers.size() - 1);
  if (tiers.size() >= 2) l.llc = level_of(0);
  l.past_l2 = level_of(0);
  if (tiers.size() > 2) {
    l.past = kExtraStepsDoubt;
    l.past_note = "; " + std::to_string(tiers.size() - 1) +
                  " cache steps past the L2 where an LLC makes one: names in doubt";
  }
}

std::optional<Ladder> find_ladder(const Segmentation& s, size_t first, double l2_bytes) {
  if (s.plateaus.size() < first + 2) return std::nullopt;
  const L2Steps steps = l2_steps(s, first, l2_bytes);
  Ladder l;
  l.seg = &s;
  l.near = first;
  l.l2_end = steps.end;
  l.fit = steps.fit;
  if (steps.segment) {
    l.segment = steps.segment;
    l.far = steps.end;
  }
  if (l.l2_end + 1 >= s.plateaus.size()) return std::nullopt;
  read_past_l2(s, l);
  return l;
}

// A sweep that ended past a cache's step with no plateau after it (the sparse tail puts one or
// two points past a 96-256 MiB last-level cache): the last point stands for the level the
// curve climbs to, as a plateau of its own at kEndPointConfidence, so that the level before
// is read as the cache it is and not as DRAM. It takes a climb to it, a point between: a lone
// slow point right after a level is as likely an outlier (a slow load) as a step, and only
// lowers the confidence of DRAM read before it (add_past_l2).
constexpr double kEndPointConfidence = 0.3;
void close_end(Segmentation& s) {
  if (s.plateaus.empty() || s.plateaus.back().last + 2 >= s.points.size()) return;
  const CurvePoint& end = s.points.back();
  if (end.y < kCacheStep * s.plateaus.back().level) return;
  Plateau top;
  top.first = top.last = s.points.size() - 1;
  top.level = top.min = top.max = end.y;
  top.members = 1;
  top.confidence = kEndPointConfidence;
  s.plateaus.push_back(top);
  const SegmentOptions defaults;
  s.knees.push_back(make_knee(s, s.plateaus.size() - 2, std::log1p(defaults.min_jump),
                              std::log1p(s.tolerance)));
}

// A far L2 level that a coarse or gappy sweep samples at too few points to make a plateau (a
// sweep stepping 1.375x puts two on the H100's 25-50 MiB far partition): consecutive points inside
// a step, at least kFarStep above the level before it and a jump below the level after it, that
// keep within kHiddenRise of the step (a gradual step climbs more across them) over at least
// kHiddenSpan in footprint. They stand for the far level, as a plateau of their own at
// kHiddenConfidence, where the step before them lies at about half the device's L2 size (with
// it; a step at its full size is the L2's end) or, without it, the first point past them lies at
// kSplitMin-kSplitMax times that step's footprint: the ladder then reads a split L2 with its near
// segment under its own name, and the sizes and the far level at that confidence at most.
constexpr size_t kHiddenPoints = 2;  // fewer than a plateau's three: two is what 1.375x gives
constexpr double kHiddenSpan = 1.2;  // two points 1.2x apart or more: no refinement packed them
constexpr double kHiddenRise = 0.3;  // as a shelf between two levels (kShelfRise)
constexpr double kHiddenConfidence = 0.25;  // a level and its ends read off two or three points
// ... and only across a step the sweep left unrefined: every gap in it at least this factor (the
// family refines a knee's gaps down to 1.0076x, and a level there gets points enough to make a
// plateau; a gradual step's refined points would pass for one)
constexpr double kUnrefinedGap = 1.1;

// The run of transition points between plateaus k and k + 1 that may be a hidden far level, the
// widest in footprint, as [first, last] point indices; nullopt when none qualifies. A point above
// the level after the step inside it is a slow load (latency does not fall as the footprint
// grows) and is passed over.
std::optional<std::pair<size_t, size_t>> hidden_run(const Segmentation& s, size_t k) {
  const Plateau& lo = s.plateaus[k];
  const Plateau& hi = s.plateaus[k + 1];
  const double jump = 1 + SegmentOptions{}.min_jump;
  const double most_rise = kHiddenRise * std::log(hi.level / lo.level);
  auto y = [&](size_t i) { return s.points[i].y; };
  auto between = [&](size_t i) { return y(i) >= kFarStep * lo.level && y(i) * jump <= hi.level; };
  std::optional<std::pair<size_t, size_t>> best;
  auto span = [&](const std::pair<size_t, size_t>& r) {
    return s.points[r.second].x / s.points[r.first].x;
  };
  for (size_t i = lo.last + 1; i < hi.first; ++i) {
    if (!between(i)) continue;
    double zmin = std::log(y(i)), zmax = zmin;
    size_t members = 1;
    for (size_t j = i + 1; j < hi.first; ++j) {
      if (y(j) > hi.level * jump) continue;
      if (!between(j)) break;
      zmin = std::min(zmin, std::log(y(j)));
      zmax = std::max(zmax, std::log(y(j)));
      if (zmax - zmin > most_rise) break;
      const std::pair<size_t, size_t> r{i, j};
      if (++members >= kHiddenPoints && span(r) >= kHiddenSpan && (!best || span(r) > span(*best)))
        best = r;
    }
  }
  return best;
}

// Inserts the hidden far level of the first step that holds one (above) as a plateau.
void reveal_far_level(Segmentation& s, double l2_bytes) {
  const bool known = std::isfinite(l2_bytes) && l2_bytes > 0;
  for (size_t k = 0; k < s.knees.size(); ++k) {
    bool unrefined = true;
    for (size_t i = s.plateaus[k].last; i < s.plateaus[k + 1].first; ++i)
      unrefined = unrefined && s.points[i + 1].x >= kUnrefinedGap * s.points[i].x;
    if (!unrefined) continue;
    const auto run = hidden_run(s, k);
    if (!run) continue;
    const double near_end = std::sqrt(s.points[s.plateaus[k].last].x * s.points[run->first].x);
    const double after = s.points[run->second + 1].x;
    const bool half =
        known ? std::fabs(std::log(near_end / (l2_bytes / 2))) <
                    std::fabs(std::log(near_end / l2_bytes))
              : after >= kSplitMin * near_end && s.points[run->second].x <= kSplitMax * near_end;
    if (!half) continue;
    Plateau far;
    far.first = run->first;
    far.last = run->second;
    std::vector<double> ys;
    for (size_t i = far.first; i <= far.last; ++i)
      if (s.points[i].y * (1 + SegmentOptions{}.min_jump) <= s.plateaus[k + 1].level)
        ys.push_back(s.points[i].y);
    far.level = median(ys);
    far.min = *std::min_element(ys.begin(), ys.end());
    far.max = *std::max_element(ys.begin(), ys.end());
    far.members = ys.size();
    far.confidence = kHiddenConfidence;
    s.plateaus.insert(s.plateaus.begin() + static_cast<std::ptrdiff_t>(k + 1), far);
    const SegmentOptions defaults;
    const double jump = std::log1p(defaults.min_jump), tol = std::log1p(s.tolerance);
    s.knees[k] = make_knee(s, k, jump, tol);
    s.knees.insert(s.knees.begin() + static_cast<std::ptrdiff_t>(k + 1),
                   make_knee(s, k + 1, jump, tol));
    return;
  }
}

// The latency family's curves, segmented, and what the metadata says.
struct Curves {
  const std::vector<Observation>* obs = nullptr;
  double l2_bytes = kNaN, shared_per_sm = kNaN, compute_capability = kNaN;
  bool l2_known = false;
  std::optional<Segmentation> g, cg, nc, sh, cn;
  double l2_level = kNaN;  // ld.cg's first plateau: an L2 hit
  std::string method(const std::string& probe, const std::string& what) const {
    return method_text(*obs, probe, what);
  }
};

// ld.cg's L2 levels from footprints of at least L2/kL2LevelFraction: a chase over fewer lines
// visits few L2 slices, whose distance from the SM depends on where the pages landed (the
// H100 gave 275-287 cycles below 6 KiB, different in each run, and 278.7 +- 0.3 from 256 KiB up).
Curves segment_probes(const std::vector<Observation>& obs, const Metadata& meta) {
  Curves v;
  v.obs = &obs;
  v.l2_bytes = meta_number(meta, "l2_bytes");
  v.shared_per_sm = meta_number(meta, "shared_per_sm_bytes");
  v.compute_capability = meta_number(meta, "compute_capability");
  v.l2_known = std::isfinite(v.l2_bytes) && v.l2_bytes > 0;
  auto segment = [&](const std::string& probe, double min_bytes) -> std::optional<Segmentation> {
    auto curve = latency_curve(obs, probe);
    const size_t all = curve.size();
    curve.erase(std::remove_if(curve.begin(), curve.end(),
                               [&](const CurvePoint& q) { return q.x < min_bytes; }),
                curve.end());
    if (curve.size() < 3) return std::nullopt;
    SegmentOptions opt;
    opt.first_level_climbs = curve.size() == all;
    opt.shelf_levels = true;
    return segment_curve(curve, opt);
  };
  v.g = segment(kLdGlobalProbe, 0);
  v.cg = segment(kLdCgProbe, v.l2_known ? v.l2_bytes / kL2LevelFraction : 0);
  for (auto* s : {&v.g, &v.cg})
    if (*s) {
      close_end(**s);
      reveal_far_level(**s, v.l2_bytes);
    }
  v.nc = segment(kLdNcProbe, 0);
  v.sh = segment(kSharedProbe, 0);
  v.cn = segment(kConstantProbe, 0);
  if (v.cg && !v.cg->plateaus.empty()) v.l2_level = v.cg->plateaus[0].level;
  return v;
}

// The L1-class levels of a curve (L1, and a mid cache between L1 and L2: RDNA's 128-256 KiB
// L1 behind a 16-32 KiB L0), and how sure their count is.
struct Inner {
  size_t count = 0;
  double doubt = 1.0;  // applies to every name between L1 and DRAM
  std::string note;    // why, for the method text
};

// A plateau is an L1-class level when it is below kInnerBelowL2 of an L2 hit (ld.cg's first
// plateau); at most kMostInner of them. Without ld.cg (another vendor's curve has one chase),
// the runtime's L2 size tells which step is the L2's: the plateaus before the L2's (its near
// partition's) are L1-class. With neither, a plateau is one when it ends within kInnerPerShared
// times what the SM's L1/shared array holds. With none of the three, the first plateau is the L1
// when two more levels follow it, and the second a mid cache when it ends within kMidCacheMost
// and three more follow it (an L2, an LLC, DRAM); which level is which is then a guess between
// a mid cache, the L2 and a last-level cache, and every name between L1 and DRAM says so.
constexpr double kInnerBelowL2 = 0.75;
constexpr size_t kMostInner = 2;
constexpr double kInnerPerShared = 4;
// No L2 documented holds less than 1.5 MiB (the K80's); no mid cache more than 256 KiB (RDNA 3).
constexpr double kMidCacheMost = 1024.0 * 1024;
// A name read from a curve's shape alone is a guess.
constexpr double kShapeOnlyDoubt = 0.45;
const std::string kShapeOnlyNote =
    "; no ld.cg curve, L2 size or shared memory per SM to tell a mid cache, the L2 and a "
    "last-level cache apart: named by their order and sizes alone";

Inner inner_levels(const Curves& v, const Segmentation& s) {
  const size_t n = s.plateaus.size();
  if (n == 0) return {};
  Inner in;
  if (std::isfinite(v.l2_level)) {
    while (in.count < n && in.count < kMostInner &&
           s.plateaus[in.count].level < kInnerBelowL2 * v.l2_level)
      ++in.count;
    return in;
  }
  if (v.l2_known) {
    const L2Steps l2 = l2_steps(s, 0, v.l2_bytes);
    const size_t near = l2.segment ? *l2.segment : l2.end;
    in.count = std::min(near, kMostInner);
    return in;
  }
  auto ends_by = [&](size_t k, double bytes) { return s.points[s.plateaus[k].last].x <= bytes; };
  if (std::isfinite(v.shared_per_sm) && v.shared_per_sm > 0) {
    // the L1 needs a level after it, a mid cache two (the L2 and DRAM)
    while (in.count < kMostInner && in.count + (in.count == 0 ? 1 : 2) < n &&
           ends_by(in.count, kInnerPerShared * v.shared_per_sm))
      ++in.count;
    return in;
  }
  in.count = n >= 3 ? 1 : 0;
  if (n >= 5 && ends_by(1, kMidCacheMost)) in.count = 2;
  if (n >= 4) {
    in.doubt = kShapeOnlyDoubt;
    in.note = kShapeOnlyNote;
  }
  return in;
}

// The L1 shares one array with shared memory: it holds at most the largest shared memory per
// SM (the runtime's shared_per_sm_bytes) and what the smallest carve-out keeps for the L1
// (CUDA C++ Programming Guide, compute capabilities: 96 + 32 KB on 7.0, 64 + 32 on 7.5; 164 + 28
// on 8.0, 100 + 28 on 8.6 and 8.9, 228 + 28 on 9.0). Kepler's 16 KiB and the separate L1 of
// Maxwell and Pascal, smaller than their shared memory, lie within the larger figure, which
// also serves where the compute capability is unknown.
constexpr double kL1BeyondShared = 32 * 1024;
constexpr double kL1BeyondSharedFromAmpere = 28 * 1024;
constexpr double kAmpere = 8.0;
// A reading past that bound is cut to it; where the first level itself held on past it, the
// reading is off and loses this share of its confidence.
constexpr double kPastBoundLoss = 0.5;

// l1_size's interval (and value) cut at what the device's attributes allow.
void bound_l1(const Curves& v, Parameter& p) {
  if (!(std::isfinite(v.shared_per_sm) && v.shared_per_sm > 0)) return;
  const double beyond =
      v.compute_capability >= kAmpere ? kL1BeyondSharedFromAmpere : kL1BeyondShared;
  const double most = v.shared_per_sm + beyond;
  if (p.high <= most) return;
  const std::string why = " (interval cut at shared memory per SM + " + analysis::kib(beyond) +
                          ", " + analysis::kib(most) +
                          ": the unified L1/shared array holds no more)";
  p.method += why;
  if (p.value > most && p.low > most) p.confidence *= kPastBoundLoss;
  p.value = std::min(p.value, most);
  p.high = most;
  p.low = std::min(p.low, most);
}

// l1_hit_latency and l1_size, and mid_cache_* for a second level below the L2's.
void add_inner_levels(const Curves& v, const Inner& in, std::vector<Parameter>& out) {
  const Segmentation& g = *v.g;
  if (in.count > 0) {
    const Plateau& p0 = g.plateaus[0];
    out.push_back(level_param(param::l1_hit_latency, p0, p0.confidence,
                              v.method(kLdGlobalProbe, "first plateau")));
    if (!g.knees.empty()) {
      const Knee k = capacity_knee(g, g.knees[0]);
      out.push_back(size_param(
          param::l1_size, k, k.confidence,
          v.method(kLdGlobalProbe, "footprint where the first plateau ends" + kCapacityText +
                                       " (largest L1: carve-out preference 0)")));
      bound_l1(v, out.back());
    }
  }
  if (in.count > 1 && g.knees.size() > 1) {
    const Plateau& p1 = g.plateaus[1];
    const Knee k = capacity_knee(g, g.knees[1]);
    out.push_back(
        level_param(param::mid_cache_hit_latency, p1, p1.confidence * in.doubt,
                    v.method(kLdGlobalProbe, "second plateau, before the L2's" + in.note)));
    out.push_back(size_param(param::mid_cache_size, k, k.confidence * in.doubt,
                             v.method(kLdGlobalProbe, "footprint where the second plateau ends" +
                                                          kCapacityText + in.note)));
  }
}

// Two curves that both saw the L2 step should agree on where it is (within kStepsAgree).
constexpr double kStepsAgree = 1.25, kDisagreeLoss = 0.6;

// The L2 level(s) and sizes of a ladder read from `probe`: l2_hit_latency (unsplit) or
// l2_near_hit_latency, l2_segment_size and l2_far_hit_latency; l2_size. `in`'s doubt about
// which plateau is the L2 applies to each.
void add_l2(const Curves& v, const Ladder& l, const std::string& probe, double agree,
            const Inner& in, std::vector<Parameter>& out) {
  const Segmentation& s = *l.seg;
  const Plateau& near = s.plateaus[l.near];
  const Knee l2_step = capacity_knee(s, s.knees[l.l2_end], l.past_l2);
  const std::string from = probe == kLdCgProbe && v.l2_known ? ", footprints from L2/64" : "";
  const bool split = l.far.has_value();
  auto method = [&](const std::string& what) { return v.method(probe, what + in.note); };
  // an L2 step far from the device's L2 size (a far partition missed?) leaves its name in doubt
  out.push_back(level_param(
      split ? param::l2_near_hit_latency : param::l2_hit_latency, near,
      near.confidence * l.fit * in.doubt,
      method((split ? "first L2 plateau (near partition)" : "L2 plateau (one level seen)") +
             from)));
  // a far level read off the few points a coarse or gappy sweep put on it (reveal_far_level)
  const bool few = split && s.plateaus[*l.far].members < SegmentOptions{}.min_points;
  const std::string few_note =
      few ? "; far level seen at " + std::to_string(s.plateaus[*l.far].members) +
                " points only (coarse or gappy sweep): the L2 holds at least the interval's low "
                "end, its size lies within the interval"
          : "";
  if (split) {
    const Plateau& far = s.plateaus[*l.far];
    const Knee seg_step = capacity_knee(s, s.knees[*l.segment]);
    out.push_back(size_param(param::l2_segment_size, seg_step,
                             seg_step.confidence * agree * in.doubt,
                             method("footprint where the near L2 plateau ends" + kCapacityText)));
    out.push_back(
        level_param(param::l2_far_hit_latency, far, far.confidence * in.doubt,
                    method("L2 plateau ending at about twice the near one's footprint (far "
                           "partition, or a second die's L2 half)" +
                           few_note)));
  }
  out.push_back(
      size_param(param::l2_size, l2_step, l2_step.confidence * l.fit * agree * in.doubt,
                 method("footprint where the last L2 plateau ends" + kCapacityText + few_note)));
}

// Past the L2: llc_* for a last-level cache, dram_latency and cache_levels.
void add_past_l2(const Curves& v, const Ladder& l, const std::string& probe, const Inner& in,
                 std::vector<Parameter>& out) {
  const Segmentation& s = *l.seg;
  const std::string note = l.past_note + in.note;
  if (l.llc) {
    const Plateau& llc = s.plateaus[*l.llc];
    const Knee llc_step = capacity_knee(s, s.knees[*l.llc], l.dram);
    // the level is an LLC only by the DRAM plateau after it (a lone slow point at the sweep's end
    // may be an outlier): no surer than that plateau
    const double named =
        std::min(llc.confidence, s.plateaus[l.dram].confidence) * l.fit * l.past * in.doubt;
    out.push_back(level_param(param::llc_hit_latency, llc, named,
                              v.method(probe,
                                       "plateau past the L2 that a cache miss's step (>= 1.5x) "
                                       "follows within the sweep" +
                                           note)));
    out.push_back(size_param(
        param::llc_size, llc_step, std::min(llc_step.confidence * l.fit * l.past * in.doubt, named),
        v.method(probe, "footprint where that plateau ends" + kCapacityText + note)));
  }
  const Plateau& dram = s.plateaus[l.dram];
  // Points past the last plateau that climb beyond it: the sweep may have ended inside a
  // last-level cache's transition, and the "DRAM" plateau be that cache.
  bool climbs_on = false;
  if (l.dram + 1 == s.plateaus.size())
    for (size_t i = dram.last + 1; i < s.points.size(); ++i)
      climbs_on = climbs_on || s.points[i].y > dram.level * kCacheStep;
  // ... and a wide transition into it may hide a short DRAM plateau before a TLB step
  const double tail =
      (climbs_on ? 0.5 : 1.0) * transition_doubt(capacity_knee(s, s.knees[l.l2_end], l.past_l2));
  out.push_back(level_param(param::dram_latency, dram, dram.confidence * l.fit * tail * l.past,
                            v.method(probe,
                                     "first plateau of the last cache miss's step (later, "
                                     "smaller steps: TLB reach)" +
                                         l.past_note)));
  const size_t levels = in.count + 1 + (l.llc ? 1 : 0);
  const double conf =
      std::min(s.plateaus[l.near].confidence, dram.confidence) * l.fit * tail * l.past * in.doubt;
  out.push_back({param::cache_levels, double(levels), "levels", double(levels), double(levels),
                 clamp01(conf),
                 v.method(probe,
                          "plateaus below DRAM: L1-class levels of ld.global, the L2 "
                          "(partitions count once) and any last-level cache" +
                              note),
                 evidence()});
}

// Where a ladder's L2 ends, in bytes.
double l2_end_bytes(const Ladder& l) {
  return capacity_knee(*l.seg, l.seg->knees[l.l2_end], l.past_l2).x;
}

// L2 levels and DRAM: from ld.cg (no L1 in the way), else from ld.global past its L1-class
// levels; from ld.global too when ld.cg's L2 step lies far from the device's L2 size and
// ld.global's near it (ld.cg's segmentation missed a far level that ld.global's shows).
void add_ladder(const Curves& v, const Inner& in, std::vector<Parameter>& out) {
  const std::optional<Ladder> g = v.g ? find_ladder(*v.g, in.count, v.l2_bytes) : std::nullopt;
  const std::optional<Ladder> cg = v.cg ? find_ladder(*v.cg, 0, v.l2_bytes) : std::nullopt;
  const bool use_cg = cg && !(g && g->fit > cg->fit);
  const std::optional<Ladder>& ladder = use_cg ? cg : g;
  const std::optional<Ladder>& other = use_cg ? g : cg;
  if (!ladder) return;
  const std::string probe = use_cg ? kLdCgProbe : kLdGlobalProbe;
  // two curves that both saw the L2 step should agree on where it is
  const double agree = other && std::fabs(std::log(l2_end_bytes(*other) / l2_end_bytes(*ladder))) >
                                    std::log(kStepsAgree)
                           ? kDisagreeLoss
                           : 1.0;
  add_l2(v, *ladder, probe, agree, in, out);
  add_past_l2(v, *ladder, probe, in, out);
}

}  // namespace

std::vector<Parameter> infer_latency(const std::vector<Observation>& obs, const Metadata& meta) {
  const Curves v = segment_probes(obs, meta);
  std::vector<Parameter> out;
  const Inner inner = v.g ? inner_levels(v, *v.g) : Inner{};
  if (v.g) add_inner_levels(v, inner, out);
  add_ladder(v, inner, out);
  if (v.nc && inner_levels(v, *v.nc).count > 0)
    out.push_back(level_param(param::readonly_hit_latency, v.nc->plateaus[0],
                              v.nc->plateaus[0].confidence, v.method(kLdNcProbe, "first plateau")));
  if (v.sh && !v.sh->plateaus.empty())
    out.push_back(level_param(param::shared_latency, v.sh->plateaus[0],
                              v.sh->plateaus[0].confidence,
                              v.method(kSharedProbe, "first plateau")));
  if (v.cn && !v.cn->plateaus.empty())
    out.push_back(level_param(param::constant_hit_latency, v.cn->plateaus[0],
                              v.cn->plateaus[0].confidence,
                              v.method(kConstantProbe, "first plateau")));
  return out;
}

GPUPROBE_REGISTER_ANALYZER(latency::kFamily, infer_latency);

namespace {

// The dependent load each probe times, as PTX and as SASS (sm_75 to sm_90 spell the default
// load LDG.E.64, ld.cg LDG.E.64.STRONG.GPU, ld.nc LDG.E.64.CONSTANT; older ones add .SYS).
struct ChaseCode {
  const char* probe;
  const char* kernel;
  const char* ptx;
  const char* sass;
};
const ChaseCode kChaseCode[] = {
    {kLdGlobalProbe, "latency::chase_global<latency::LoadDefault>", R"(^ld\.global\.u64 )",
     R"(^LDG\.E\.64(\.SYS)? )"},
    {kLdCgProbe, "latency::chase_global<latency::LoadCg>", R"(^ld\.global\.cg\.u64 )",
     R"(^LDG\.E\.64\.STRONG\.GPU )"},
    {kLdNcProbe, "latency::chase_global<latency::LoadNc>", R"(^ld\.global\.nc\.u64 )",
     R"(^LDG\.E\.64\.CONSTANT(\.SYS)? )"},
    {kSharedProbe, "latency::chase_shared", R"(^ld\.shared\.u32 )", R"(^LDS(\.U)?(\.32)? )"},
    {kConstantProbe, "latency::chase_constant", R"(^ld\.const\.u32 )", R"(^LDC R[0-9]+, c\[0x3\])"},
};
// Write the global chain once per footprint, for the three global probes; find the SM every
// chase runs on (once per run).
constexpr const char* kLinkKernel = "latency::link_lines";
constexpr const char* kLowestSmKernel = "latency::lowest_sm";

// Every timed region holds the probe's load, each on the one before; the link kernel stores
// one 8 B pointer per line; the SM finder makes one atomic min.
std::vector<CodeExpectation> latency_expectations() {
  std::vector<CodeExpectation> out;
  for (const auto& c : kChaseCode) {
    CodeExpectation e;
    e.source = std::string(kFamily.name);
    e.kernel = c.kernel;
    e.probe = c.probe;
    e.ptx = {{c.ptx, -1, true}};
    e.sass = {{c.sass, -1, true}};
    out.push_back(e);
  }
  CodeExpectation link;
  link.source = std::string(kFamily.name);
  link.kernel = kLinkKernel;
  link.probe = kLdGlobalProbe;
  link.ptx = {{R"(^st\.global\.u64 )", 1, false}};
  link.sass = {{R"(^STG\.E\.64(\.SYS)? )", 1, false}};
  out.push_back(link);
  CodeExpectation sm;
  sm.source = std::string(kFamily.name);
  sm.kernel = kLowestSmKernel;
  sm.probe = kLdGlobalProbe;
  sm.ptx = {{R"(^atom\.global\.min\.u32 )", 1, false}};
  sm.sass = {{R"(^REDG?\.E\.MIN)", 1, false}};
  out.push_back(sm);
  return out;
}

}  // namespace

GPUPROBE_REGISTER_CODE_EXPECTATIONS(latency_expectations);

std::vector<std::string> latency_kernels(const std::string& probe) {
  for (const auto& c : kChaseCode)
    if (probe == c.probe) {
      std::vector<std::string> k = {c.kernel, kLowestSmKernel};
      if (probe.rfind("ld_", 0) == 0) k.push_back(kLinkKernel);
      return k;
    }
  return {};
}

}  // namespace latency
}  // namespace gpuprobe
