#include "analysis/latency.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include "analysis/analyzer.hpp"
#include "analysis/util.hpp"
#include "core/code_check.hpp"
#include "core/stats.hpp"

namespace gpuprobe {
namespace latency {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using analysis::clamp01;
using analysis::meta_number;

// Curve in log-log coordinates, where a cache level is a horizontal run at any latency.
struct LogCurve {
  std::vector<double> lx, z;
  explicit LogCurve(const std::vector<CurvePoint>& p) {
    for (const auto& q : p) {
      lx.push_back(std::log(q.x));
      z.push_back(std::log(q.y));
    }
  }
  double median_z(const std::vector<size_t>& idx) const {
    std::vector<double> v;
    for (size_t i : idx) v.push_back(z[i]);
    return median(v);
  }
  // Whether every member lies within `tol` of the members' median.
  bool level(const std::vector<size_t>& idx, double tol) const {
    double m = median_z(idx);
    return std::all_of(idx.begin(), idx.end(),
                       [&](size_t i) { return std::fabs(z[i] - m) <= tol; });
  }
  // The members' least-squares line z = mz + slope (lx - mx).
  struct Line {
    double mx = 0, mz = 0, slope = 0;
    double at(double x) const { return mz + slope * (x - mx); }
  };
  Line fit(const std::vector<size_t>& idx) const {
    Line l;
    if (idx.empty()) return l;
    for (size_t i : idx) {
      l.mx += lx[i];
      l.mz += z[i];
    }
    l.mx /= static_cast<double>(idx.size());
    l.mz /= static_cast<double>(idx.size());
    double sxx = 0, sxz = 0;
    for (size_t i : idx) {
      sxx += (lx[i] - l.mx) * (lx[i] - l.mx);
      sxz += (lx[i] - l.mx) * (z[i] - l.mz);
    }
    if (sxx > 0) l.slope = sxz / sxx;
    return l;
  }
  // Change of the least-squares line across the members' x-range: how much the run climbs.
  double rise(const std::vector<size_t>& idx) const {
    if (idx.size() < 2) return 0;
    return std::fabs(fit(idx).slope) * (lx[idx.back()] - lx[idx.front()]);
  }
};

struct Run {
  size_t first = 0, last = 0;
  std::vector<size_t> members;
  double tol = 0;  // the band the run was grown with (log)
};

// Grows a run from `start` while every member stays within `tol` of the members' median. A
// lone point off the level is skipped (kept inside the run, left out of the level) when the
// run is established and the two points after it are back on the level.
Run grow_run(const LogCurve& c, size_t start, double tol) {
  const size_t n = c.z.size();
  Run r{start, start, {start}, tol};
  size_t j = start + 1;
  while (j < n) {
    auto with = r.members;
    with.push_back(j);
    if (c.level(with, tol)) {
      r.members = std::move(with);
      r.last = j++;
      continue;
    }
    if (r.members.size() >= 2 && j + 2 < n) {
      auto skip = r.members;
      skip.push_back(j + 1);
      skip.push_back(j + 2);
      if (c.level(skip, tol)) {
        r.members = std::move(skip);
        r.last = j + 2;
        j += 3;
        continue;
      }
    }
    break;
  }
  return r;
}

// A shelf's band in multiples of its own spread: a swing of amplitude a has a robust sigma of
// about a, and 2a holds the whole swing.
constexpr double kWobbleBand = 2.0;
// ... up to this: a swing of +-8 % and a median a few percent off it (the closest distinct
// levels of a ladder are 1.3x apart).
constexpr double kMaxWobbleBand = 0.14;
// Two wobbly neighbours merge when closer than their two bands together, up to this factor
// (the closest distinct levels seen: a TLB step of 1.3x on DRAM, near and far L2 at 1.8x).
constexpr double kMergeMax = 1.25;
// ... when together they span less than this factor in footprint (a far L2 partition spans 2).
constexpr double kShelfMaxSpan = 4;
// A plateau of at least kTrimMembers reads its level away from its ends (kEdgeTrim of its span
// at either end); at its ends, a member this far (relative) below or above its core level,
// still climbing, is a transition's.
constexpr size_t kTrimMembers = 8;
constexpr double kEdgeTrim = 0.15;
constexpr double kApproach = 0.03;
// The tolerance a latency is held to (docs/parameters.md), in log.
constexpr double kLevelTolerance = 0.03;
// A first level that climbs by more than this across its members, and by kClimbErrors times the
// climb's standard error (a wobble's swing tilts the line too), is read at the climb's start: a
// mean, in the climb's middle, would be off by more than a quarter of the tolerance.
constexpr double kFirstLevelClimb = kLevelTolerance / 2;
constexpr double kClimbErrors = 1;

// The climb of the members' least-squares line across them, and its standard error.
struct Climb {
  double rise = 0, error = 0;
};
Climb climb(const LogCurve& c, const std::vector<size_t>& idx) {
  if (idx.size() < 3) return {};
  const LogCurve::Line l = c.fit(idx);
  double sxx = 0, ss = 0;
  for (size_t i : idx) {
    sxx += (c.lx[i] - l.mx) * (c.lx[i] - l.mx);
    ss += (c.z[i] - l.at(c.lx[i])) * (c.z[i] - l.at(c.lx[i]));
  }
  if (!(sxx > 0)) return {};
  const double span = c.lx[idx.back()] - c.lx[idx.front()];
  return {l.slope * span, std::sqrt(ss / double(idx.size() - 2) / sxx) * span};
}
// A shelf between two levels climbs less than this fraction of the step between them.
constexpr double kShelfRise = 0.3;
// ... and spans at least this factor in footprint (a gradual step's middle spans less).
constexpr double kShelfSpan = 1.5;
// A shelf's level is a median over a swing: it keeps this share of a flat plateau's confidence.
constexpr double kShelfConfidence = 0.7;
// A run is a plateau if it climbs no more than this many bands end to end (a level's own
// wobble, not a slope through it).
constexpr double kRunMaxRise = 1.25;
// Points ahead of a run's start whose spread sets its band.
constexpr size_t kSpreadWindow = 7;

// A plateau's confidence, the product of three parts:
// - its members: kMembersBase + kPerMember each (5 points: 0.95), at most kMembersMost, since
//   no count of points proves a level is not a shelf;
constexpr double kMembersBase = 0.45, kPerMember = 0.1, kMembersMost = 0.99;
// - its flatness: a climb of kClimbTolerances times the latency tolerance takes kClimbLoss off;
constexpr double kClimbTolerances = 3, kClimbLoss = 0.5;
// - its swing: members whose robust sigma (kMadToSigma x the median absolute deviation) passes
//   the tolerance scale it by tolerance / sigma, down to kSwingFloor, and by kShortSwing more
//   over a short shelf (fewer swings to average).
constexpr double kMadToSigma = 1.4826;
constexpr double kNormalMad = 0.6745;  // the MAD of a unit normal (1 / kMadToSigma, rounded)
constexpr double kSwingFloor = 0.4, kShortSwing = 0.75;

// A knee's confidence: its plateaus' (the weaker), times
// - its step: a level change of kStepJumps times the curve's jump noise, or kStepTolerances
//   times the tolerance, whichever is larger, counts in full;
constexpr double kStepJumps = 3, kStepTolerances = 4;
// - its bracket: sweep points up to kTightBracket apart (log) lose nothing, a full doubling
//   loses kBracketLoss;
constexpr double kTightBracket = 0.05, kBracketLoss = 0.5;
// - its arrival: reaching the next level kSlowArrival times past the bracket loses kGradualLoss.
constexpr double kSlowArrival = 4, kGradualLoss = 0.3;

// Robust sigma (1.4826 x MAD, log) of the points from i on: wobble and jitter of the shelf
// there; a step inside the window moves few of the points off the median and barely counts.
double local_spread(const LogCurve& c, size_t i) {
  const size_t end = std::min(c.z.size(), i + kSpreadWindow);
  if (end - i < 3) return 0;
  std::vector<size_t> idx;
  for (size_t k = i; k < end; ++k) idx.push_back(k);
  const double m = c.median_z(idx);
  std::vector<double> dev;
  for (size_t k : idx) dev.push_back(std::fabs(c.z[k] - m));
  return kMadToSigma * median(dev);
}

// A level is read from its members' curve sampled at kEvenSamples evenly spaced footprints
// (in log): refinement packs points where it looked for a knee, and the points themselves would
// weigh a wobble's swing there more than elsewhere. A gap between members counts as at most
// kLongestGap (two of a full sweep's coarse steps of 2^(1/6)), so that the sparse tail's few
// points (4x apart) do not outweigh the fine sweep.
constexpr size_t kEvenSamples = 64;
constexpr double kLongestGap = 0.231;  // log(2^(1/3))
// The mean leaves out this share of the samples at either end: a transition's shoulder left
// among a level's members (the H100's far L2 holds a few points at 490 cycles before its 525)
// does not pull it, and a wobble's swings still average.
constexpr double kMeanTrim = 0.15;
enum class Centre { median, mean };
double even_level(const LogCurve& c, const std::vector<size_t>& idx, Centre centre) {
  std::vector<double> u = {0};  // members' positions with long gaps shortened
  for (size_t k = 1; k < idx.size(); ++k)
    u.push_back(u.back() + std::min(kLongestGap, c.lx[idx[k]] - c.lx[idx[k - 1]]));
  if (idx.size() < 3 || !(u.back() > 0)) return std::exp(c.median_z(idx));
  std::vector<double> z;
  size_t k = 0;
  for (size_t j = 0; j < kEvenSamples; ++j) {
    const double x = u.back() * double(j) / double(kEvenSamples - 1);
    while (k + 2 < idx.size() && u[k + 1] < x) ++k;
    const double w = u[k + 1] > u[k] ? std::clamp((x - u[k]) / (u[k + 1] - u[k]), 0.0, 1.0) : 0.5;
    z.push_back((1 - w) * c.z[idx[k]] + w * c.z[idx[k + 1]]);
  }
  if (centre == Centre::median) return std::exp(median(z));
  std::sort(z.begin(), z.end());
  const size_t cut = static_cast<size_t>(kMeanTrim * double(z.size()));
  double sum = 0;
  for (size_t j = cut; j < z.size() - cut; ++j) sum += z[j];
  return std::exp(sum / double(z.size() - 2 * cut));
}

// The members of a run of at least kTrimMembers away from its ends (kEdgeTrim of its span in
// log footprint at either end), if three or more.
std::vector<size_t> inner_members(const LogCurve& c, const std::vector<size_t>& members) {
  if (members.size() < kTrimMembers) return members;
  const double x0 = c.lx[members.front()], x1 = c.lx[members.back()];
  std::vector<size_t> inner;
  for (size_t i : members)
    if (c.lx[i] >= x0 + kEdgeTrim * (x1 - x0) && c.lx[i] <= x1 - kEdgeTrim * (x1 - x0))
      inner.push_back(i);
  return inner.size() >= 3 ? inner : members;
}
// Stripping leaves a shelf at least this many members: the sparse tail puts two or three
// points on DRAM, the first of them often still in the last cache's transition.
constexpr size_t kShelfKeeps = 2;
// The members a level is read from. First a core level: the median over the members away from
// the ends (kEdgeTrim of the span in log footprint at either end, in a run of at least
// kTrimMembers). Then, at either end, members that still climb towards the level from the step
// before (each below the next and more than kApproach below the core level) or on to the step
// after (each above the one before and as far above) are a transition's, and are left out.
std::vector<size_t> level_members(const LogCurve& c, const std::vector<size_t>& members) {
  auto z = [&](size_t k) { return c.z[members[k]]; };
  size_t lo = 0, hi = members.size();
  // the core level is read again from what is left until nothing more is stripped: the
  // transition's own members pull the first reading towards them
  for (bool stripped = true; stripped;) {
    const std::vector<size_t> left(members.begin() + static_cast<std::ptrdiff_t>(lo),
                                   members.begin() + static_cast<std::ptrdiff_t>(hi));
    // in log, as the members are compared with it
    const double core = std::log(even_level(c, inner_members(c, left), Centre::median));
    const size_t was_lo = lo, was_hi = hi;
    while (hi - lo > kShelfKeeps && z(lo) < z(lo + 1) && z(lo) < core + std::log1p(-kApproach)) ++lo;
    while (hi - lo > kShelfKeeps && z(hi - 1) > z(hi - 2) && z(hi - 1) > core + std::log1p(kApproach))
      --hi;
    stripped = lo != was_lo || hi != was_hi;
  }
  return std::vector<size_t>(members.begin() + static_cast<std::ptrdiff_t>(lo),
                             members.begin() + static_cast<std::ptrdiff_t>(hi));
}

// The members a level is read from without shelf_levels (SegmentOptions): a plateau of at
// least kTrimMembers away from its ends (kEdgeTrim of its span in log footprint at either end);
// a shorter one without the members that still climb towards its median from the step before
// (each below the next and more than kApproach below it) or on to the step after (each above
// the one before and as far above).
std::vector<size_t> median_members(const LogCurve& c, const std::vector<size_t>& members) {
  if (members.size() >= kTrimMembers) return inner_members(c, members);
  const double level = c.median_z(members);
  auto z = [&](size_t k) { return c.z[members[k]]; };
  size_t lo = 0, hi = members.size();
  while (hi - lo > 3 && z(lo) < z(lo + 1) && z(lo) < level + std::log1p(-kApproach)) ++lo;
  while (hi - lo > 3 && z(hi - 1) > z(hi - 2) && z(hi - 1) > level + std::log1p(kApproach)) --hi;
  return std::vector<size_t>(members.begin() + static_cast<std::ptrdiff_t>(lo),
                             members.begin() + static_cast<std::ptrdiff_t>(hi));
}

// The members a shelf's level is read from (shelf_levels): the transitions' members stripped
// (level_members), and a point the run skipped as an outlier while it grew taken back when it
// lies below the level read without them or within the run's band above it: it was judged
// against a median that the transition's members or a wobble's crests pulled away from it (a
// load is never faster than its level: a point below it is the wobble's trough, however deep);
// beyond the band above, a slow load.
std::vector<size_t> shelf_members(const LogCurve& c, const Run& r) {
  const std::vector<size_t> kept = level_members(c, r.members);
  const double core = std::log(even_level(c, kept, Centre::median));
  std::vector<size_t> with;
  for (size_t i = kept.front(); i <= kept.back(); ++i)
    if (std::binary_search(kept.begin(), kept.end(), i) || c.z[i] - core <= r.tol)
      with.push_back(i);
  return with;
}

Plateau make_plateau(const std::vector<CurvePoint>& p, const LogCurve& c, const Run& r,
                     bool first_level, bool shelf) {
  Plateau pl;
  pl.first = r.first;
  pl.last = r.last;
  pl.members = r.members.size();
  std::vector<double> ys;
  for (size_t i : r.members) ys.push_back(p[i].y);
  pl.level = median(ys);
  // A wide band lets a plateau take the tail of the transitions at its ends: the level is read
  // from the members between them, as the (trimmed) mean of their curve (a shelf's slow wobble
  // over a swing or two averages out in a mean; a median of a swing and a half is off by a
  // third of its amplitude, the mean by a fifth at most).
  const std::vector<size_t> kept = shelf ? shelf_members(c, r) : median_members(c, r.members);
  pl.level = even_level(c, kept, shelf ? Centre::mean : Centre::median);
  // A first level that climbs (cold misses spread over the chase, fewer the smaller the
  // footprint) hits at the climb's start: the members' line there.
  if (first_level) {
    const LogCurve::Line line = c.fit(kept);
    const Climb up = climb(c, kept);
    if (shelf ? up.rise > kFirstLevelClimb && up.rise > kClimbErrors * up.error
              : up.rise > kLevelTolerance)
      pl.level = std::exp(line.at(c.lx[r.members.front()]));
  }
  // the range of the members, and the level (a climb's start may lie just below them)
  pl.min = std::min(pl.level, *std::min_element(ys.begin(), ys.end()));
  pl.max = std::max(pl.level, *std::max_element(ys.begin(), ys.end()));
  pl.rise = c.rise(r.members);
  const double points = std::min(kMembersMost, kMembersBase + kPerMember * static_cast<double>(pl.members));
  // a level that climbs across its run (cold misses spread over the chase) has no one value:
  // a climb of three times the 3 % a latency is held to halves the confidence; the band the
  // run was grown with no longer sets this (a wide wobble band would excuse any climb)
  const double flat = 1.0 - kClimbLoss * clamp01(pl.rise / (kClimbTolerances * kLevelTolerance));
  // A level whose members swing by more than a latency's 3 % tolerance may have its median off
  // by that much (a wobble over a short shelf does not average out).
  std::vector<double> dev;
  const double mz = std::log(pl.level);
  for (size_t i : r.members) dev.push_back(std::fabs(c.z[i] - mz));
  const double sigma = kMadToSigma * median(dev);
  double swing = sigma > kLevelTolerance ? std::max(kSwingFloor, kLevelTolerance / sigma) : 1.0;
  // ... the more so over a short shelf, which holds few swings
  if (sigma > kLevelTolerance / 2 && c.lx[r.last] - c.lx[r.first] < std::log(kShelfMaxSpan))
    swing *= kShortSwing;
  pl.confidence = points * flat * swing;
  return pl;
}

}  // namespace

double curve_noise(const std::vector<CurvePoint>& p) {
  if (p.size() < 3) return 0;
  // Each point against the straight line (in log-log) through its neighbours: zero on a
  // plateau or a steady ramp whatever the spacing, so only noise and the few knees remain,
  // and the median ignores those.
  std::vector<double> r;
  for (size_t i = 1; i + 1 < p.size(); ++i) {
    const double x0 = std::log(p[i - 1].x), x1 = std::log(p[i].x), x2 = std::log(p[i + 1].x);
    const double w = x2 > x0 ? (x1 - x0) / (x2 - x0) : 0.5;
    const double line = (1 - w) * std::log(p[i - 1].y) + w * std::log(p[i + 1].y);
    // the residual of Gaussian noise sigma has sd sigma * sqrt(1 + w^2 + (1 - w)^2)
    r.push_back(std::fabs(std::log(p[i].y) - line) / std::sqrt(1 + w * w + (1 - w) * (1 - w)));
  }
  return median(r) / kNormalMad;
}

namespace {

// The curve's usable points (finite, positive), sorted by footprint.
std::vector<CurvePoint> usable_sorted(std::vector<CurvePoint> points) {
  points.erase(
      std::remove_if(points.begin(), points.end(),
                     [](const CurvePoint& q) {
                       return !(std::isfinite(q.x) && std::isfinite(q.y) && q.x > 0 && q.y > 0);
                     }),
      points.end());
  std::stable_sort(points.begin(), points.end(),
                   [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
  return points;
}

// 1. Greedy runs; only long, wide, flat ones are plateaus (a gradual ramp makes short, narrow
//    or climbing runs). A run that is no plateau is retried from its next point, so that a
//    transition point just below a level does not spoil the level's run. Each run's band is
//    the curve's (`tol`), widened to the spread of the points ahead of its start: a shelf that
//    wobbles by a few percent (the far L2 partition does, by 3-7 %) keeps its points together,
//    while flat levels elsewhere keep the narrow band.
std::vector<Run> greedy_runs(const std::vector<CurvePoint>& p, const LogCurve& c, double tol,
                             const SegmentOptions& opt) {
  std::vector<Run> out;
  for (size_t i = 0; i < p.size();) {
    const double band =
        std::min(std::log1p(kMaxWobbleBand), std::max(tol, kWobbleBand * local_spread(c, i)));
    Run r = grow_run(c, i, band);
    if (r.members.size() >= opt.min_points && p[r.last].x >= opt.min_span * p[r.first].x &&
        c.rise(r.members) <= kRunMaxRise * band) {
      i = r.last + 1;
      out.push_back(std::move(r));
    } else {
      ++i;
    }
  }
  return out;
}

// 2. A greedy run may start a point late or stop a point early: each plateau takes the free
//    neighbours that sit on its level.
void take_neighbours(const LogCurve& c, std::vector<Run>& plateaus) {
  const size_t n = c.z.size();
  std::vector<int> owner(n, -1);
  for (size_t k = 0; k < plateaus.size(); ++k)
    for (size_t i = plateaus[k].first; i <= plateaus[k].last; ++i) owner[i] = static_cast<int>(k);
  for (size_t k = 0; k < plateaus.size(); ++k) {
    Run& r = plateaus[k];
    const double m = c.median_z(r.members);
    while (r.first > 0 && owner[r.first - 1] < 0 && std::fabs(c.z[r.first - 1] - m) <= r.tol) {
      owner[--r.first] = static_cast<int>(k);
      r.members.insert(r.members.begin(), r.first);
    }
    while (r.last + 1 < n && owner[r.last + 1] < 0 && std::fabs(c.z[r.last + 1] - m) <= r.tol) {
      owner[++r.last] = static_cast<int>(k);
      r.members.push_back(r.last);
    }
  }
}

// Whether two neighbouring plateaus are one level that noise or a wobble split: closer than
// `jump` (or, on a short wobbly shelf, than their two bands, up to kMergeMax), with nothing
// between them below the two levels' range by more than the band (or at most two points
// between); points above it are slow loads (outliers), for a latency that climbs to another
// level does not come back. Two long flat levels a clean step apart (a TLB reach on DRAM) stay
// two.
bool one_level(const LogCurve& c, const Run& a, const Run& b, double jump, bool shelf) {
  const double za = c.median_z(a.members), zb = c.median_z(b.members);
  const double band = std::max(a.tol, b.tol);
  bool between = true;
  for (size_t i = a.last + 1; i < b.first; ++i) between = between && c.z[i] >= std::min(za, zb) - band;
  const bool short_shelf = c.lx[b.last] - c.lx[a.first] < std::log(kShelfMaxSpan);
  const double apart =
      short_shelf ? std::min(std::log(kMergeMax), std::max(jump, a.tol + b.tol)) : jump;
  // ... or, with shelf_levels, their members together keep within the wider of the two bands
  // they were grown with, without climbing through it: one run that a wobble broke
  std::vector<size_t> both = a.members;
  both.insert(both.end(), b.members.begin(), b.members.end());
  const bool one_band = shelf && c.level(both, band) && c.rise(both) <= kRunMaxRise * band;
  return (std::fabs(za - zb) < apart || one_band) && (b.first - a.last <= 3 || between);
}

// Run k+1 joins run k: one level.
void join_next(std::vector<Run>& plateaus, size_t k) {
  Run& a = plateaus[k];
  const Run& b = plateaus[k + 1];
  a.members.insert(a.members.end(), b.members.begin(), b.members.end());
  a.last = b.last;
  a.tol = std::max(a.tol, b.tol);
  plateaus.erase(plateaus.begin() + static_cast<std::ptrdiff_t>(k + 1));
}

// 3. Neighbouring plateaus that are one level are merged.
void merge_split_levels(const LogCurve& c, std::vector<Run>& plateaus, double jump, bool shelf) {
  for (size_t k = 0; k + 1 < plateaus.size();) {
    if (one_level(c, plateaus[k], plateaus[k + 1], jump, shelf)) join_next(plateaus, k);
    else ++k;
  }
}

// The widest run (in footprint) of consecutive points strictly between levels za and zb (a
// jump from each) that stays within the widest band; empty when none has min_points.
Run widest_between(const std::vector<CurvePoint>& p, const LogCurve& c, const Run& a,
                   const Run& b, double jump, const SegmentOptions& opt) {
  const double za = c.median_z(a.members), zb = c.median_z(b.members);
  Run r;
  for (size_t j = a.last + 1; j < b.first; ++j) {
    Run t;
    t.tol = std::log1p(opt.max_tolerance);
    for (size_t i = j; i < b.first && c.z[i] > za + jump && c.z[i] < zb - jump; ++i) {
      t.members.push_back(i);
      if (!c.level(t.members, t.tol)) {
        t.members.pop_back();
        break;
      }
    }
    if (t.members.size() < opt.min_points) continue;
    t.first = t.members.front();
    t.last = t.members.back();
    if (r.members.empty() || p[t.last].x / p[t.first].x > p[r.last].x / p[r.first].x) r = t;
  }
  return r;
}

// 4. A shelf between two levels: the widest run between them, over at least kShelfSpan in
//    footprint, that climbs less than kShelfRise of the step between the levels. The far L2
//    partition makes one when its plateau wobbles too much to keep inside a band (it swings
//    3-7 % over less than an octave); a gradual transition climbs most of the step across the
//    same points and makes none, and outliers scatter beyond the widest band. Returns which
//    plateaus are such shelves.
std::vector<bool> insert_shelves(const std::vector<CurvePoint>& p, const LogCurve& c,
                                 std::vector<Run>& plateaus, double jump,
                                 const SegmentOptions& opt) {
  std::vector<bool> shelf(plateaus.size(), false);
  for (size_t k = 0; k + 1 < plateaus.size(); ++k) {
    const double step = c.median_z(plateaus[k + 1].members) - c.median_z(plateaus[k].members);
    if (step < 2 * jump) continue;
    const Run r = widest_between(p, c, plateaus[k], plateaus[k + 1], jump, opt);
    if (r.members.empty() || p[r.last].x < kShelfSpan * p[r.first].x ||
        c.rise(r.members) > kShelfRise * step)
      continue;
    plateaus.insert(plateaus.begin() + static_cast<std::ptrdiff_t>(k + 1), r);
    shelf.insert(shelf.begin() + static_cast<std::ptrdiff_t>(k + 1), true);
    ++k;
  }
  return shelf;
}

// 5. A run inside a transition that the wide band let pass (it climbs more across itself than
//    the step left from it to the next level) is the ramp into that level, not a level.
//    With shelf_levels, a run that a ramp's points joined (a piece of the transition grown with a
//    wide band and merged into the level after it) keeps the level left when the transitions'
//    members are stripped (level_members), if that is still a run: flat, and wide enough; it
//    joins the next plateau when the two are one level.
std::optional<Run> stripped_run(const std::vector<CurvePoint>& p, const LogCurve& c, const Run& r,
                                const Run& next, const SegmentOptions& opt) {
  if (!opt.shelf_levels) return std::nullopt;
  // Members at either end beyond the run's band of its core level are another level's (a merge
  // took them in); level_members strips what still climbs towards it.
  std::vector<size_t> within = r.members;
  const double core = std::log(even_level(c, inner_members(c, within), Centre::median));
  while (within.size() > kShelfKeeps && std::fabs(c.z[within.back()] - core) > r.tol)
    within.pop_back();
  while (within.size() > kShelfKeeps && std::fabs(c.z[within.front()] - core) > r.tol)
    within.erase(within.begin());
  const std::vector<size_t> kept = level_members(c, within);
  if (kept.size() == r.members.size() || kept.size() < opt.min_points ||
      p[kept.back()].x < opt.min_span * p[kept.front()].x)
    return std::nullopt;
  const double up = c.median_z(next.members) - c.median_z(kept);
  if (c.rise(kept) > up || c.rise(kept) > kRunMaxRise * r.tol) return std::nullopt;
  Run out = r;
  out.members = kept;
  out.first = kept.front();
  out.last = kept.back();
  return out;
}

void drop_ramps(const std::vector<CurvePoint>& p, const LogCurve& c, std::vector<Run>& plateaus,
                std::vector<bool>& shelf, double jump, const SegmentOptions& opt) {
  for (size_t k = 1; k + 1 < plateaus.size();) {
    Run& next = plateaus[k + 1];
    const double up = c.median_z(next.members) - c.median_z(plateaus[k].members);
    if (c.rise(plateaus[k].members) <= up) {
      ++k;
      continue;
    }
    const std::optional<Run> level = stripped_run(p, c, plateaus[k], next, opt);
    if (level && !one_level(c, *level, next, jump, opt.shelf_levels)) {
      plateaus[k] = *level;
      ++k;
      continue;
    }
    if (level) {  // the start of the next level
      next.members.insert(next.members.begin(), level->members.begin(), level->members.end());
      next.first = level->first;
    }
    plateaus.erase(plateaus.begin() + static_cast<std::ptrdiff_t>(k));
    shelf.erase(shelf.begin() + static_cast<std::ptrdiff_t>(k));
  }
}

// How far apart two touching wobbly pieces' levels may lie and still be one level: within the
// band the wobblier of the two was grown with (its own swing), when no point lies between them
// and the step across their boundary (the medians of kBoundaryMembers members either side) is
// less than kBoundaryShare of the levels' difference: a knee steps where the pieces meet, a
// wobble's swing split the level anywhere. 0 when they do not qualify.
constexpr size_t kBoundaryMembers = 3;
constexpr double kBoundaryShare = 0.5;
double within_wobble(const LogCurve& c, const Run& a, const Run& b) {
  if (b.first != a.last + 1 || a.members.size() < kBoundaryMembers ||
      b.members.size() < kBoundaryMembers)
    return 0;
  const std::vector<size_t> end(a.members.end() - kBoundaryMembers, a.members.end());
  const std::vector<size_t> start(b.members.begin(), b.members.begin() + kBoundaryMembers);
  const double across = std::fabs(c.median_z(start) - c.median_z(end));
  const double apart = std::fabs(c.median_z(b.members) - c.median_z(a.members));
  if (across >= kBoundaryShare * apart) return 0;
  return std::max(a.tol, b.tol);
}

// 6. With shelf_levels, neighbouring plateaus whose levels as read (the transitions' members
//    stripped) are closer than `jump` are one level: a knee must step by more. A run that took a
//    transition's points has its median, by which step 3 judged it, a jump below the level after
//    it, while its level is not (an LLC's shelf split by its wobble, RDNA 2 seed 14). Two
//    touching pieces that no knee separates are one level when closer than the wobblier one's
//    band (within_wobble: RDNA 2 seed 15, an LLC swinging 7 % read as two levels 11 % apart).
void merge_close_levels(const std::vector<CurvePoint>& p, const LogCurve& c,
                        std::vector<Run>& plateaus, std::vector<bool>& shelf, double jump,
                        const SegmentOptions& opt) {
  if (!opt.shelf_levels || plateaus.empty()) return;
  auto level = [&](size_t k) {
    return std::log(make_plateau(p, c, plateaus[k], k == 0 && opt.first_level_climbs, true).level);
  };
  double lk = level(0);  // each run's level read once, again only where runs joined
  for (size_t k = 0; k + 1 < plateaus.size();) {
    const double next = level(k + 1);
    if (std::fabs(next - lk) >= std::max(jump, within_wobble(c, plateaus[k], plateaus[k + 1]))) {
      ++k;
      lk = next;
      continue;
    }
    join_next(plateaus, k);
    shelf[k] = shelf[k] && shelf[k + 1];
    shelf.erase(shelf.begin() + static_cast<std::ptrdiff_t>(k + 1));
    lk = level(k);
  }
}

// The knee from plateau k to k + 1; `jump` and `tol` (log) scale what a clear step is.
Knee make_knee(const Segmentation& s, size_t k, double jump, double tol) {
  const auto& p = s.points;
  const Plateau& a = s.plateaus[k];
  const Plateau& b = s.plateaus[k + 1];
  Knee kn;
  kn.lower = k;
  kn.low = p[a.last].x;
  kn.high = p[a.last + 1].x;
  kn.arrive = p[b.first].x;
  kn.x = std::sqrt(kn.low * kn.high);
  kn.ratio = b.level / a.level;
  const double step =
      clamp01(std::fabs(std::log(kn.ratio)) / std::max(kStepJumps * jump, kStepTolerances * tol));
  const double bracket = 1.0 - kBracketLoss * clamp01((std::log(kn.high / kn.low) - kTightBracket) /
                                                      (std::log(2.0) - kTightBracket));
  // a knee that takes long to reach the next level leaves more room for doubt about it
  const double gradual =
      1.0 - kGradualLoss * clamp01(std::log(kn.arrive / kn.high) / std::log(kSlowArrival));
  kn.confidence = std::min(a.confidence, b.confidence) * step * bracket * gradual;
  return kn;
}

}  // namespace

Segmentation segment_curve(std::vector<CurvePoint> points, const SegmentOptions& opt) {
  Segmentation s;
  s.points = usable_sorted(std::move(points));
  const auto& p = s.points;
  s.noise = curve_noise(p);
  const double tol = std::min(std::log1p(opt.max_tolerance),
                              std::max(std::log1p(opt.min_tolerance), opt.noise_factor * s.noise));
  s.tolerance = std::expm1(tol);
  if (p.empty()) return s;
  const LogCurve c(p);
  const double jump = std::log1p(opt.min_jump);
  std::vector<Run> plateaus = greedy_runs(p, c, tol, opt);
  take_neighbours(c, plateaus);
  merge_split_levels(c, plateaus, jump, opt.shelf_levels);
  std::vector<bool> shelf = insert_shelves(p, c, plateaus, jump, opt);
  drop_ramps(p, c, plateaus, shelf, jump, opt);
  merge_close_levels(p, c, plateaus, shelf, jump, opt);
  for (size_t k = 0; k < plateaus.size(); ++k) {
    s.plateaus.push_back(make_plateau(p, c, plateaus[k], k == 0 && opt.first_level_climbs, opt.shelf_levels));
    // a shelf's level is a median over a swing: less sure than a flat plateau's
    if (shelf[k]) s.plateaus.back().confidence *= kShelfConfidence;
  }
  for (size_t k = 0; k + 1 < s.plateaus.size(); ++k) s.knees.push_back(make_knee(s, k, jump, tol));
  return s;
}

// Refinement splits the gaps where a knee leaves its plateau first, then those where it
// arrives at the next, then any other step: these offsets rank them above any step's size.
constexpr double kLeaveFirst = 3.0, kArriveNext = 2.0;

std::vector<double> refinement_points(const std::vector<CurvePoint>& points,
                                      const RefineOptions& opt) {
  const Segmentation s = segment_curve(points, opt.segment);
  const auto& p = s.points;
  if (p.size() < 2) return {};
  const double tol = std::log1p(s.tolerance);
  // priority of splitting the gap between p[i] and p[i + 1]
  std::vector<double> priority(p.size() - 1, 0.0);
  auto dz = [&](size_t i) { return std::fabs(std::log(p[i + 1].y / p[i].y)); };
  for (size_t i = 0; i + 1 < p.size(); ++i)
    if (dz(i) > tol) priority[i] = dz(i);
  for (const auto& k : s.knees) {
    const size_t leave = s.plateaus[k.lower].last;
    const size_t arrive = s.plateaus[k.lower + 1].first - 1;
    priority[leave] = std::max(priority[leave], kLeaveFirst + dz(leave));
    priority[arrive] = std::max(priority[arrive], kArriveNext + dz(arrive));
  }
  std::vector<size_t> gaps;
  for (size_t i = 0; i + 1 < p.size(); ++i)
    if (priority[i] > 0 && p[i + 1].x > p[i].x * opt.min_ratio) gaps.push_back(i);
  std::stable_sort(gaps.begin(), gaps.end(),
                   [&](size_t a, size_t b) { return priority[a] > priority[b]; });
  if (gaps.size() > opt.max_points) gaps.resize(opt.max_points);
  std::vector<double> out;
  for (size_t i : gaps) out.push_back(std::sqrt(p[i].x * p[i + 1].x));
  std::sort(out.begin(), out.end());
  return out;
}

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

std::vector<CurvePoint> latency_curve(const std::vector<Observation>& obs,
                                      const std::string& probe) {
  std::vector<CurvePoint> out;
  for (const auto& o : select(obs, probe, "cycles")) {
    CurvePoint q{o.param("footprint_bytes"), o.value};
    if (std::isfinite(q.x) && std::isfinite(q.y) && q.x > 0 && q.y > 0) out.push_back(q);
  }
  std::sort(out.begin(), out.end(),
            [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
  return out;
}

namespace {

// How each probe's loads are made, for the method column.
std::string load_text(const std::string& probe) {
  if (probe == "ld_global") return "default ld.global, L1-cached, 8 B pointers";
  if (probe == "ld_cg") return "ld.global.cg, 8 B pointers";
  if (probe == "ld_nc") return "ld.global.nc, 8 B pointers";
  if (probe == "shared") return "ld.shared, 4 B offsets";
  return "ld.const, 4 B offsets";
}

std::string method_text(const std::vector<Observation>& obs, const std::string& probe,
                        const std::string& what) {
  std::string spacing;
  for (const auto& o : select(obs, probe, "cycles")) {
    spacing = o.param_text("stride_bytes");
    if (!spacing.empty()) break;
  }
  return "pointer chase (" + load_text(probe) +
         (spacing.empty() ? "" : ", " + spacing + " B spacing") + ", random single cycle): " + what;
}

Parameter level_param(const std::string& name, const Plateau& p, double confidence,
                      const std::string& method) {
  return {name, p.level, "cycles", p.min, p.max, clamp01(confidence), method, "latency.csv"};
}

Parameter size_param(const std::string& name, const Knee& k, double confidence,
                     const std::string& method) {
  return {name, k.x, "bytes", k.low, k.high, clamp01(confidence), method, "latency.csv"};
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

Knee capacity_knee(const Segmentation& s, const Knee& k) {
  const Plateau& lo = s.plateaus[k.lower];
  const Plateau& hi = s.plateaus[k.lower + 1];
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
  c.low = s.points[lo.last].x;
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

// What the plateaus of a curve past its L1-class levels are.
struct Ladder {
  const Segmentation* seg = nullptr;
  size_t near = 0;                // plateau of the near (or only) L2 level
  std::optional<size_t> segment;  // knee where the near partition ends (split L2)
  std::optional<size_t> far;      // plateau of the far L2 partition: the one the L2 step leaves
  size_t l2_end = 0;              // knee where the L2 ends
  std::optional<size_t> llc;      // plateau of a cache between L2 and DRAM
  size_t dram = 0;                // plateau of DRAM
  double fit = 1.0;               // lower when the reading is less certain
};

// `first` is the first plateau past any L1-class level. The L2 ends at the knee after it, or
// after the far partition: the plateau between is a far partition when it ends at about twice
// the near one's footprint (and, with the device's L2 size known, near that size). Past the L2,
// a plateau is a last-level cache when the next step is a cache miss's (>= kCacheStep), else
// DRAM, and later, smaller steps are TLB reaches, not levels.
std::optional<Ladder> find_ladder(const Segmentation& s, size_t first, double l2_bytes) {
  const size_t n = s.plateaus.size();
  if (n < first + 2) return std::nullopt;
  const bool known = std::isfinite(l2_bytes) && l2_bytes > 0;
  Ladder l;
  l.seg = &s;
  l.near = first;
  l.l2_end = first;
  auto size_at = [&](size_t knee) { return capacity_knee(s, s.knees[knee]).x; };
  auto partitions = [&](size_t seg, size_t end) {
    const double r = size_at(end) / size_at(seg);
    return end > seg && r >= kSplitMin && r <= kSplitMax &&
           s.plateaus[end].level >= kFarStep * s.plateaus[seg].level;
  };
  const size_t knees = s.knees.size();
  if (known) {
    // The L2 step is the knee nearest the device's L2 size (a TLB step past it is not the
    // L2's end); a split L2's near level ends at the knee nearest half of it.
    size_t end = first;
    for (size_t k = first; k < knees; ++k)
      if (std::fabs(std::log(size_at(k) / l2_bytes)) < std::fabs(std::log(size_at(end) / l2_bytes)))
        end = k;
    size_t seg = first;
    for (size_t k = first; k < end; ++k)
      if (std::fabs(std::log(size_at(k) / (l2_bytes / 2))) <
          std::fabs(std::log(size_at(seg) / (l2_bytes / 2))))
        seg = k;
    l.l2_end = end;
    l.fit = std::fabs(std::log(size_at(end) / l2_bytes)) < std::log(kL2SizeFit) ? 1.0 : 0.5;
    if (partitions(seg, end)) {
      l.segment = seg;
      l.far = end;
    }
  } else if (first + 1 < knees && partitions(first, first + 1)) {
    l.segment = first;
    l.far = first + 1;
    l.l2_end = first + 1;
  }
  l.dram = l.l2_end + 1;
  if (l.dram + 1 < n && s.plateaus[l.dram + 1].level >= kCacheStep * s.plateaus[l.dram].level) {
    l.llc = l.dram;
    l.dram = l.dram + 1;
  }
  return l;
}

// A sweep that ended past a cache's step with no plateau after it (the sparse tail puts one or
// two points past a 96-256 MiB last-level cache): the last point stands for the level the
// curve climbs to, as a plateau of its own at kEndPointConfidence, so that the level before
// is read as the cache it is and not as DRAM.
constexpr double kEndPointConfidence = 0.3;
void close_end(Segmentation& s) {
  if (s.plateaus.empty() || s.plateaus.back().last + 1 >= s.points.size()) return;
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

// The latency family's curves, segmented, and what the metadata says.
struct Curves {
  const std::vector<Observation>* obs = nullptr;
  double l2_bytes = kNaN, shared_per_sm = kNaN;
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
  v.g = segment("ld_global", 0);
  v.cg = segment("ld_cg", v.l2_known ? v.l2_bytes / kL2LevelFraction : 0);
  for (auto* s : {&v.g, &v.cg})
    if (*s) close_end(**s);
  v.nc = segment("ld_nc", 0);
  v.sh = segment("shared", 0);
  v.cn = segment("constant", 0);
  if (v.cg && !v.cg->plateaus.empty()) v.l2_level = v.cg->plateaus[0].level;
  return v;
}

// A plateau is an L1-class level (L1, or a mid cache between L1 and L2) when it is below
// kInnerBelowL2 of an L2 hit (ld.cg's first plateau); at most kMostInner of them. Without
// ld.cg, the first plateau is one when it ends within kInnerPerShared times what the SM's
// L1/shared array holds, or, with neither, when two more levels follow it.
constexpr double kInnerBelowL2 = 0.75;
constexpr size_t kMostInner = 2;
constexpr double kInnerPerShared = 4;
size_t inner_levels(const Curves& v, const Segmentation& s) {
  if (s.plateaus.empty()) return 0;
  if (std::isfinite(v.l2_level)) {
    size_t k = 0;
    while (k < s.plateaus.size() && k < kMostInner && s.plateaus[k].level < kInnerBelowL2 * v.l2_level)
      ++k;
    return k;
  }
  const Plateau& p0 = s.plateaus[0];
  if (std::isfinite(v.shared_per_sm) && v.shared_per_sm > 0)
    return s.plateaus.size() >= 2 && s.points[p0.last].x <= kInnerPerShared * v.shared_per_sm ? 1 : 0;
  return s.plateaus.size() >= 3 ? 1 : 0;
}

// l1_hit_latency and l1_size, and mid_cache_* for a second level below the L2's.
void add_inner_levels(const Curves& v, size_t inner, std::vector<Parameter>& out) {
  const Segmentation& g = *v.g;
  if (inner > 0) {
    const Plateau& p0 = g.plateaus[0];
    out.push_back(level_param("l1_hit_latency", p0, p0.confidence, v.method("ld_global", "first plateau")));
    if (!g.knees.empty()) {
      const Knee k = capacity_knee(g, g.knees[0]);
      out.push_back(size_param("l1_size", k, k.confidence,
                               v.method("ld_global", "footprint where the first plateau ends" + kCapacityText +
                                                         " (largest L1: carve-out preference 0)")));
    }
  }
  if (inner > 1 && g.knees.size() > 1) {
    const Plateau& p1 = g.plateaus[1];
    const Knee k = capacity_knee(g, g.knees[1]);
    out.push_back(level_param("mid_cache_hit_latency", p1, p1.confidence,
                              v.method("ld_global", "second plateau, below the L2's level")));
    out.push_back(size_param("mid_cache_size", k, k.confidence,
                             v.method("ld_global", "footprint where the second plateau ends" + kCapacityText)));
  }
}

// Two curves that both saw the L2 step should agree on where it is (within kStepsAgree).
constexpr double kStepsAgree = 1.25, kDisagreeLoss = 0.6;

// The L2 level(s) and sizes of a ladder read from `probe`: l2_hit_latency (unsplit) or
// l2_near_hit_latency, l2_segment_size and l2_far_hit_latency; l2_size.
void add_l2(const Curves& v, const Ladder& l, const std::string& probe, double agree,
            std::vector<Parameter>& out) {
  const Segmentation& s = *l.seg;
  const Plateau& near = s.plateaus[l.near];
  const Knee l2_step = capacity_knee(s, s.knees[l.l2_end]);
  const std::string from = probe == "ld_cg" && v.l2_known ? ", footprints from L2/64" : "";
  const bool split = l.far.has_value();
  // an L2 step far from the device's L2 size (a far partition missed?) leaves its name in doubt
  out.push_back(level_param(
      split ? "l2_near_hit_latency" : "l2_hit_latency", near, near.confidence * l.fit,
      v.method(probe, (split ? "first L2 plateau (near partition)" : "L2 plateau (one level seen)") + from)));
  if (split) {
    const Plateau& far = s.plateaus[*l.far];
    const Knee seg_step = capacity_knee(s, s.knees[*l.segment]);
    out.push_back(size_param("l2_segment_size", seg_step, seg_step.confidence * agree,
                             v.method(probe, "footprint where the near L2 plateau ends" + kCapacityText)));
    out.push_back(level_param(
        "l2_far_hit_latency", far, far.confidence,
        v.method(probe, "L2 plateau ending at about twice the near one's footprint (far partition)")));
  }
  out.push_back(size_param("l2_size", l2_step, l2_step.confidence * l.fit * agree,
                           v.method(probe, "footprint where the last L2 plateau ends" + kCapacityText)));
}

// Past the L2: llc_* for a last-level cache, dram_latency and cache_levels.
void add_past_l2(const Curves& v, const Ladder& l, const std::string& probe, size_t inner,
                 std::vector<Parameter>& out) {
  const Segmentation& s = *l.seg;
  if (l.llc) {
    const Plateau& llc = s.plateaus[*l.llc];
    const Knee llc_step = capacity_knee(s, s.knees[*l.llc]);
    // the level is an LLC only by the DRAM plateau after it (a lone slow point at the sweep's end
    // may be an outlier): no surer than that plateau
    const double named = std::min(llc.confidence, s.plateaus[l.dram].confidence);
    out.push_back(level_param("llc_hit_latency", llc, named * l.fit,
                              v.method(probe, "plateau past the L2 followed by a cache miss's step (>= 1.5x)")));
    out.push_back(size_param("llc_size", llc_step, std::min(llc_step.confidence, named) * l.fit,
                             v.method(probe, "footprint where that plateau ends" + kCapacityText)));
  }
  const Plateau& dram = s.plateaus[l.dram];
  // Points past the last plateau that climb beyond it: the sweep may have ended inside a
  // last-level cache's transition, and the "DRAM" plateau be that cache.
  bool climbs_on = false;
  if (l.dram + 1 == s.plateaus.size())
    for (size_t i = dram.last + 1; i < s.points.size(); ++i)
      climbs_on = climbs_on || s.points[i].y > dram.level * kCacheStep;
  // ... and a wide transition into it may hide a short DRAM plateau before a TLB step
  const double tail = (climbs_on ? 0.5 : 1.0) * transition_doubt(capacity_knee(s, s.knees[l.l2_end]));
  out.push_back(level_param("dram_latency", dram, dram.confidence * l.fit * tail,
                            v.method(probe, "first plateau past the last cache (later, smaller steps: TLB reach)")));
  const size_t levels = inner + 1 + (l.llc ? 1 : 0);
  const double conf = std::min(s.plateaus[l.near].confidence, dram.confidence) * l.fit * tail;
  out.push_back({"cache_levels", double(levels), "levels", double(levels), double(levels), clamp01(conf),
                 v.method(probe, "plateaus below DRAM: L1-class levels of ld.global, the L2 "
                                 "(partitions count once) and any last-level cache"),
                 "latency.csv"});
}

// L2 levels and DRAM: from ld.cg (no L1 in the way), else from ld.global past its L1.
void add_ladder(const Curves& v, size_t inner, std::vector<Parameter>& out) {
  std::optional<Ladder> g_ladder;
  if (v.g) g_ladder = find_ladder(*v.g, inner, v.l2_bytes);
  std::optional<Ladder> ladder = v.cg ? find_ladder(*v.cg, 0, v.l2_bytes) : std::nullopt;
  const std::string probe = ladder ? "ld_cg" : "ld_global";
  if (!ladder) ladder = g_ladder;
  if (!ladder) return;
  double agree = 1.0;
  if (probe == "ld_cg" && g_ladder) {
    const Knee mine = capacity_knee(*ladder->seg, ladder->seg->knees[ladder->l2_end]);
    const Knee other = capacity_knee(*g_ladder->seg, g_ladder->seg->knees[g_ladder->l2_end]);
    agree = std::fabs(std::log(other.x / mine.x)) <= std::log(kStepsAgree) ? 1.0 : kDisagreeLoss;
  }
  add_l2(v, *ladder, probe, agree, out);
  add_past_l2(v, *ladder, probe, inner, out);
}

}  // namespace

std::vector<Parameter> infer_latency(const std::vector<Observation>& obs, const Metadata& meta) {
  const Curves v = segment_probes(obs, meta);
  std::vector<Parameter> out;
  const size_t inner = v.g ? inner_levels(v, *v.g) : 0;
  if (v.g) add_inner_levels(v, inner, out);
  add_ladder(v, inner, out);
  if (v.nc && inner_levels(v, *v.nc) > 0)
    out.push_back(level_param("readonly_hit_latency", v.nc->plateaus[0], v.nc->plateaus[0].confidence,
                              v.method("ld_nc", "first plateau")));
  if (v.sh && !v.sh->plateaus.empty())
    out.push_back(level_param("shared_latency", v.sh->plateaus[0], v.sh->plateaus[0].confidence,
                              v.method("shared", "first plateau")));
  if (v.cn && !v.cn->plateaus.empty())
    out.push_back(level_param("constant_hit_latency", v.cn->plateaus[0], v.cn->plateaus[0].confidence,
                              v.method("constant", "first plateau")));
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
    {"ld_global", "latency::chase_global<latency::LoadDefault>", R"(^ld\.global\.u64 )",
     R"(^LDG\.E\.64(\.SYS)? )"},
    {"ld_cg", "latency::chase_global<latency::LoadCg>", R"(^ld\.global\.cg\.u64 )",
     R"(^LDG\.E\.64\.STRONG\.GPU )"},
    {"ld_nc", "latency::chase_global<latency::LoadNc>", R"(^ld\.global\.nc\.u64 )",
     R"(^LDG\.E\.64\.CONSTANT(\.SYS)? )"},
    {"shared", "latency::chase_shared", R"(^ld\.shared\.u32 )", R"(^LDS(\.U)?(\.32)? )"},
    {"constant", "latency::chase_constant", R"(^ld\.const\.u32 )", R"(^LDC R[0-9]+, c\[0x3\])"},
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
    e.source = "latency";
    e.kernel = c.kernel;
    e.probe = c.probe;
    e.ptx = {{c.ptx, -1, true}};
    e.sass = {{c.sass, -1, true}};
    out.push_back(e);
  }
  CodeExpectation link;
  link.source = "latency";
  link.kernel = kLinkKernel;
  link.probe = "ld_global";
  link.ptx = {{R"(^st\.global\.u64 )", 1, false}};
  link.sass = {{R"(^STG\.E\.64(\.SYS)? )", 1, false}};
  out.push_back(link);
  CodeExpectation sm;
  sm.source = "latency";
  sm.kernel = kLowestSmKernel;
  sm.probe = "ld_global";
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
