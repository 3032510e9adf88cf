#include "analysis/common/segmentation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "analysis/common/util.hpp"
#include "base/stats.hpp"

namespace gpuprobe {
namespace segmentation {

namespace {


using analysis::clamp01;

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

// The log latencies of a growing set of points, kept in two sorted halves: the median (as
// median() reads it: the middle one, or the lower middle plus half the gap to the upper), the
// least and the largest in O(log n) per point added or removed. Growing a run point by point
// and sorting it anew each time made the segmentation cubic in a dense curve's points.
class LevelBand {
 public:
  void add(double z) {
    if (lower_.empty() || z <= *lower_.rbegin()) lower_.insert(z);
    else upper_.insert(z);
    balance();
  }
  void remove(double z) {
    if (z <= *lower_.rbegin()) lower_.erase(lower_.find(z));
    else upper_.erase(upper_.find(z));
    balance();
  }
  // Whether every point lies within `tol` of the median (LogCurve::level).
  bool within(double tol) const {
    const double lo = *lower_.rbegin();
    const double m = upper_.size() == lower_.size() ? lo + (*upper_.begin() - lo) * 0.5 : lo;
    const double top = upper_.empty() ? lo : *upper_.rbegin();
    return top - m <= tol && m - *lower_.begin() <= tol;
  }

 private:
  // lower_ holds the smaller half and, for an odd count, the middle point
  void balance() {
    if (lower_.size() > upper_.size() + 1) {
      upper_.insert(*lower_.rbegin());
      lower_.erase(std::prev(lower_.end()));
    } else if (upper_.size() > lower_.size()) {
      lower_.insert(*upper_.begin());
      upper_.erase(upper_.begin());
    }
  }
  std::multiset<double> lower_, upper_;
};

// Grows a run from `start` while every member stays within `tol` of the members' median. A
// lone point off the level is skipped (kept inside the run, left out of the level) when the
// run is established and the two points after it are back on the level.
Run grow_run(const LogCurve& c, size_t start, double tol) {
  const size_t n = c.z.size();
  Run r{start, start, {start}, tol};
  LevelBand band;
  band.add(c.z[start]);
  size_t j = start + 1;
  while (j < n) {
    band.add(c.z[j]);
    if (band.within(tol)) {
      r.members.push_back(j);
      r.last = j++;
      continue;
    }
    band.remove(c.z[j]);
    if (r.members.size() >= 2 && j + 2 < n) {
      band.add(c.z[j + 1]);
      band.add(c.z[j + 2]);
      if (band.within(tol)) {
        r.members.push_back(j + 1);
        r.members.push_back(j + 2);
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
constexpr double kSwingFloor = 0.4, kShortSwing = 0.75, kLeftOutCrest = 0.75;

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
  // A shelf is judged on the members its level is read from: a transition's shoulder that the
  // run took in (the H100's far L2 holds points from 442 cycles up before its 532) is neither
  // the level's range, nor a swing of it, nor a climb across it, and the level rests on the
  // points that are left.
  const std::vector<size_t>& judged = shelf ? kept : r.members;
  std::vector<double> ys;
  for (size_t i : judged) ys.push_back(p[i].y);
  // the range of the members, and the level (a climb's start may lie just below them)
  pl.min = std::min(pl.level, *std::min_element(ys.begin(), ys.end()));
  pl.max = std::max(pl.level, *std::max_element(ys.begin(), ys.end()));
  pl.rise = c.rise(judged);
  const double points =
      std::min(kMembersMost, kMembersBase + kPerMember * static_cast<double>(judged.size()));
  // a level that climbs across its run (cold misses spread over the chase) has no one value:
  // a climb of three times the 3 % a latency is held to halves the confidence; the band the
  // run was grown with no longer sets this (a wide wobble band would excuse any climb)
  const double flat = 1.0 - kClimbLoss * clamp01(pl.rise / (kClimbTolerances * kLevelTolerance));
  // A level whose members swing by more than a latency's 3 % tolerance may have its median off
  // by that much (a wobble over a short shelf does not average out).
  std::vector<double> dev;
  const double mz = std::log(pl.level);
  for (size_t i : judged) dev.push_back(std::fabs(c.z[i] - mz));
  // A shelf's swing is at least half the range of its core (its points away from its ends,
  // where a transition's shoulder may linger): the median absolute deviation passes over a
  // trough that a few of a short shelf's points show, which still moves its mean.
  double half_range = 0;
  if (shelf) {
    const std::vector<size_t> core = inner_members(c, kept);
    const auto [lo, hi] = std::minmax_element(core.begin(), core.end(),
                                              [&](size_t a, size_t b) { return c.z[a] < c.z[b]; });
    half_range = std::expm1(c.z[*hi] - c.z[*lo]) / 2;
  }
  const double sigma = std::max(kMadToSigma * median(dev), half_range);
  double swing = sigma > kLevelTolerance ? std::max(kSwingFloor, kLevelTolerance / sigma) : 1.0;
  // ... the more so over a short shelf, which holds few swings
  const bool short_shelf = c.lx[r.last] - c.lx[r.first] < std::log(kShelfMaxSpan);
  if (sigma > kLevelTolerance / 2 && short_shelf) swing *= kShortSwing;
  // ... and over a short shelf that left a point inside it out as a slow load, which may have
  // been a swing's crest: its mean leans towards the troughs (B200 model seed 51, 5 % low)
  if (shelf && short_shelf && kept.back() - kept.front() + 1 > kept.size()) swing *= kLeftOutCrest;
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
    LevelBand band;
    for (size_t i = j; i < b.first && c.z[i] > za + jump && c.z[i] < zb - jump; ++i) {
      band.add(c.z[i]);
      if (!band.within(t.tol)) break;
      t.members.push_back(i);
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

}  // namespace

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

}  // namespace segmentation
}  // namespace gpuprobe
