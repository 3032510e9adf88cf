#include "analysis/tlb.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/catalog.hpp"
#include "base/code_check.hpp"
#include "base/stats.hpp"

namespace gpuprobe::tlb {

namespace {

using namespace memory_chase;
using analysis::bytes_text;
using analysis::num;

// The heuristics of the TLB analysis, each with its reason.
struct TlbRules {
  // Strides whose first step lies within this factor of the smallest stride's see the same
  // reach (the stride is below the entry size); a step beyond it has moved with the stride.
  double same_reach = 1.5;
  // A stride's first step agrees with the median reach within 10 %.
  double reach_agrees = 0.1;
  // The page entry size is pinned by strides on both sides of it; with one side seen once,
  // it rests on a single sweep.
  double entry_confident = 0.85, entry_one_sided = 0.6;
  // The L1 reach from the median over strides: its confidence grows with the fraction of
  // strides that agree, from a floor that a single sweep's knee may beat.
  double reach_floor = 0.4, reach_per_agreement = 0.5;
  // An aliased step is the L2 TLB's only past twice the L1 reach (a wandering L1 step is not).
  double beyond_l1_factor = 2;
  // The last point on the lower level before an aliased ramp: under this fraction of the way
  // up the step, and within this fraction of the level.
  double ramp_step_fraction = 0.15, ramp_level_fraction = 0.05;
  // A median of this many steps or fewer is pulled by one misread step (of two: their mean).
  int median_of_few = 2;
  // Two strides' steps "move with the stride" when their ratio matches the strides' to 25 %.
  double moves_with_stride = 0.25;
  // A miss cost seen without a step beyond the L1 TLB is only the L1 miss's: less certain.
  double shallow_miss_factor = 0.7;
  // Which step is the L1 TLB's is in doubt (a confidence under 0.5) when:
  // - only the smallest stride saw the step stay put (the entry may be smaller still, the
  //   reach less); the reach then lies down to entries x the smallest page a GPU maps;
  double upper_bound_only = 0.3, smallest_page = 4096;
  // - the step lies past this many entries: L1 TLBs hold 16-32 (Jia et al. 2018; the H100
  //   run: 16), L2 TLBs thousands (the H100's 2048): a smaller first step lost in the noise is
  //   likelier than an L1 TLB that large;
  double most_l1_entries = 512, beyond_l1_size = 0.3;
  // - the plain chase shows no step at all (the aliased chase's first step may be the L1's);
  double no_first_step = 0.3;
  // - few of the strides that went past it see it (support: the strides whose step is at the
  //   reach, over those and the ones whose sweep went past it without a step there or whose
  //   step fits nothing): the confidence is at most the support, and where as many strides
  //   contradict the fit as bear it out (support 0.5 or less), a guess between hypotheses:
  double contested = 0.3;
  // - the reach is the mean of two steps (median_of_few), either of which may be misread, and
  //   at most this share of the strides swept saw any step to check them: about even odds (on
  //   the bench such reaches, a 9-cycle H100 step in the noise, were right 7 times in 11):
  double few_strides_share = 1.0 / 3, two_step_reach = 0.45;
};
constexpr TlbRules kRules{};

}  // namespace

segmentation::SegmentOptions tlb_segment_options() {
  segmentation::SegmentOptions o;
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
std::vector<segmentation::CurvePoint> medians_of_groups(const std::vector<segmentation::CurvePoint>& pts,
                                                  size_t per, bool same_x) {
  std::vector<segmentation::CurvePoint> out;
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
// analysis stays linear in the rows however many a file holds; points of more than
// `max_accesses` accesses (their data past the L2) left out.
std::map<double, std::vector<segmentation::CurvePoint>> tlb_curves(
    const std::vector<Observation>& obs, const std::string& probe,
    double max_accesses = std::numeric_limits<double>::infinity()) {
  std::map<double, std::vector<segmentation::CurvePoint>> out;
  for (const auto& o : obs) {
    if (o.probe != probe || o.unit != "cycles") continue;
    const double stride = o.param(kStrideColumn), x = o.param(kFootprintColumn);
    if (std::isfinite(stride) && std::isfinite(x) && std::isfinite(o.value) && x <= max_accesses * stride)
      out[stride].push_back({x, o.value});
  }
  for (auto& [stride, pts] : out) {
    std::stable_sort(pts.begin(), pts.end(),
                     [](const segmentation::CurvePoint& a, const segmentation::CurvePoint& b) { return a.x < b.x; });
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
    const std::map<double, std::vector<segmentation::CurvePoint>>& chase) {
  XY out;
  for (const auto& [stride, pts] : chase) {
    auto seg = segmentation::segment_curve(pts, tlb_segment_options());
    if (!seg.knees.empty()) out.emplace_back(stride, seg.knees.front().low);
  }
  return out;
}

}  // namespace

double max_accesses_in_l2(double l2_bytes) {
  return std::isfinite(l2_bytes) && l2_bytes > 0 ? std::floor(kL2ShareForData * l2_bytes / kChaseLine)
                                                 : std::numeric_limits<double>::infinity();
}

std::vector<segmentation::CurvePoint> tlb_curve(const std::vector<Observation>& obs, double stride,
                                          const std::string& probe) {
  auto curves = tlb_curves(obs, probe);
  auto it = curves.find(stride);
  return it == curves.end() ? std::vector<segmentation::CurvePoint>{} : it->second;
}

std::vector<std::pair<double, double>> first_tlb_steps(const std::vector<Observation>& obs) {
  return first_tlb_steps_of(tlb_curves(obs, kChaseProbe));
}

std::vector<double> entry_strides(bool quick) {
  constexpr double KiB = 1024, MiB = 1024 * KiB;
  if (quick) return {1 * MiB, 2 * MiB, 4 * MiB};
  std::vector<double> out;
  for (double s = 64 * KiB; s <= 128 * MiB; s *= 2) out.push_back(s);
  return out;
}

namespace {

bool same_reach(double a, double b) {
  return a <= kRules.same_reach * b && a >= b / kRules.same_reach;
}

// The reach the fit is anchored at: the step that most other strides' steps agree with (within
// reach_agrees), the smallest stride's among equals. Below the entry size every stride sees the
// same reach, so a step read wrong at one stride (a ramp, noise) has the fewest others at it.
double anchor_reach(const XY& sorted_steps) {
  auto agreeing = [&](double r) {
    return std::count_if(sorted_steps.begin(), sorted_steps.end(),
                         [&](const auto& st) { return std::fabs(st.second / r - 1) <= kRules.reach_agrees; });
  };
  double best = sorted_steps.front().second;
  for (const auto& st : sorted_steps)
    if (agreeing(st.second) > agreeing(best)) best = st.second;
  return best;
}

// The fit anchored at reach k0: the steps within `within` of it are below the entry size.
PageEntryFit fit_at(const XY& steps, double k0, double within) {
  PageEntryFit f;
  std::vector<double> below, entries;
  for (const auto& [stride, reach] : steps)
    if (reach <= within * k0 && reach >= k0 / within) {
      below.push_back(reach);
      f.sweep_stride = stride;
    }
  // Above the entry size: a larger stride than every one at the reach, and a step beyond it of
  // no more entries than an L1 TLB holds (one further out is a later level's step, the first one
  // lost in the noise at that stride).
  for (const auto& [stride, reach] : steps)
    if (stride > f.sweep_stride && reach > within * k0 && reach / stride <= kRules.most_l1_entries)
      entries.push_back(reach / stride);
  f.strides_astray = static_cast<int>(steps.size() - below.size() - entries.size());
  f.entry_at_or_below_smallest =
      below.size() == 1 && f.sweep_stride == steps.front().first && !entries.empty();
  f.strides_below = static_cast<int>(below.size());
  f.strides_above = static_cast<int>(entries.size());
  f.reach = median(below);
  f.reach_low = *std::min_element(below.begin(), below.end());
  f.reach_high = *std::max_element(below.begin(), below.end());
  f.agree = static_cast<double>(std::count_if(below.begin(), below.end(), [&](double r) {
              return std::fabs(r / f.reach - 1) <= kRules.reach_agrees;
            })) /
            static_cast<double>(below.size());
  if (!entries.empty()) {
    f.entries = std::round(median(entries));
    if (f.entries >= 1) f.entry_size = round_pow2(f.reach / f.entries);
    f.above_agree = static_cast<double>(std::count_if(entries.begin(), entries.end(), [&](double e) {
                      return std::fabs(e / f.entries - 1) <= kRules.moves_with_stride;
                    })) /
                    static_cast<double>(entries.size());
  }
  return f;
}

}  // namespace

std::optional<PageEntryFit> fit_page_entry(const XY& in) {
  XY steps = in;
  std::sort(steps.begin(), steps.end());
  if (steps.empty()) return std::nullopt;
  PageEntryFit f = fit_at(steps, anchor_reach(steps), kRules.same_reach);
  // Strides above the entry size count the entries, and entries are a power of two in size:
  // where the median of the few steps below (of two: their mean, which one misread step pulls
  // halfway) disagrees with entries x entry size, those that agree with it are the reach.
  if (f.entry_size > 0 && f.strides_above >= 2 && f.strides_below <= kRules.median_of_few) {
    const double predicted = f.entries * f.entry_size;
    const bool some_agree = std::any_of(steps.begin(), steps.end(), [&](const auto& st) {
      return st.first <= f.sweep_stride && std::fabs(st.second / predicted - 1) <= kRules.reach_agrees;
    });
    if (std::fabs(f.reach / predicted - 1) > kRules.reach_agrees && some_agree)
      f = fit_at(steps, predicted, 1 + kRules.reach_agrees);
  }
  return f;
}

namespace {


std::string steps_text(const segmentation::Segmentation& sg, size_t from) {
  std::string t;
  for (size_t k = from; k < sg.knees.size(); ++k)
    t += std::string(t.empty() ? "" : ", then ") + num(sg.plateaus[sg.knees[k].lower].level) +
         " -> " + num(sg.plateaus[sg.knees[k].lower + 1].level) + " cycles at " +
         bytes_text(sg.knees[k].low);
  return t;
}

// Whether a stride's curve shows no rise across where the fit puts the step (median level
// past it against before it, each within kStepWindow of it): a sweep that went past the step
// and did not see it there. A rise that the segmentation cut no knee into (a ramp through noisy
// points) is no such miss; a rise well before it (another step) does not bear it out.
constexpr double kStepWindow = 4;
bool misses_step(const std::vector<segmentation::CurvePoint>& pts, double expected) {
  std::vector<double> before, past;
  for (const auto& p : pts) {
    if (p.x * kRules.same_reach <= expected && p.x * kStepWindow >= expected) before.push_back(p.y);
    if (p.x >= kRules.same_reach * expected && p.x <= kStepWindow * expected) past.push_back(p.y);
  }
  return !before.empty() && !past.empty() &&
         median(past) <= (1 + tlb_segment_options().min_jump) * median(before);
}

// Whether a stride's curve rises before where the fit puts its first step (the level within
// kStepWindow before it above the level further back): its first step is earlier, whether or not
// the segmentation cut a knee into it.
bool rises_before(const std::vector<segmentation::CurvePoint>& pts, double expected) {
  std::vector<double> back, near;
  for (const auto& p : pts) {
    if (p.x * kStepWindow <= expected) back.push_back(p.y);
    else if (p.x * kRules.same_reach <= expected) near.push_back(p.y);
  }
  return !back.empty() && !near.empty() && median(near) > (1 + tlb_segment_options().min_jump) * median(back);
}

// How far the strides bear the fit out: those whose first step is at the reach, over those and
// the ones whose sweep went past where the fit puts the step (its reach below the entry size,
// entries x stride above) without a rise there or rose before it, and those whose step fits
// neither.
double fit_support(const std::map<double, std::vector<segmentation::CurvePoint>>& curves, const XY& steps,
                   const PageEntryFit& pe) {
  int missed = 0;
  for (const auto& [key, pts] : curves) {
    const double stride = key;  // a copy: lambdas capture no structured binding before C++20 in clang 14
    const bool has_step = std::any_of(steps.begin(), steps.end(), [&](const auto& st) { return st.first == stride; });
    const bool above = pe.entry_size > 0 && stride > pe.entry_size;
    if (has_step || (!above && stride > pe.sweep_stride && pe.entry_size <= 0)) continue;
    const double expected = above ? pe.entries * stride : pe.reach;
    if (misses_step(pts, expected) || rises_before(pts, expected)) ++missed;
  }
  const int against = missed + pe.strides_astray;
  return static_cast<double>(pe.strides_below) / static_cast<double>(pe.strides_below + against);
}

// The most confidence the strides' support allows.
double support_cap(double support) {
  return support > 0.5 ? support : std::min(support, kRules.contested);
}

std::optional<Parameter> page_entry_size(const std::optional<PageEntryFit>& pe, double support,
                                         const std::string& ev) {
  if (!pe || pe->entry_size <= 0 || pe->strides_below <= 0) return std::nullopt;
  double conf = pe->strides_above >= 2 && pe->strides_below >= 2 ? kRules.entry_confident
                                                                 : kRules.entry_one_sided;
  // the strides above must agree on the entry count, and those below bear out the reach
  conf = std::min({conf, support_cap(support), pe->above_agree});
  if (pe->entry_at_or_below_smallest) conf = std::min(conf, kRules.upper_bound_only);
  return make_parameter(
      param::tlb_page_entry_size, pe->entry_size, "bytes",
      pe->entry_at_or_below_smallest ? kRules.smallest_page : pe->entry_size, pe->entry_size, conf,
      "first TLB step of ld.global.cg chases at " +
          std::to_string(pe->strides_below + pe->strides_above) + " strides: reach stays at " +
          bytes_text(pe->reach) + " below the entry size and grows as " + num(pe->entries) +
          " entries * stride above",
      ev);
}

// The plain sweep to read coverage from: the longest with a step whose stride is not above the
// entry size (a longer one may show no step where the noise hides it), and whose first step is
// at the fit's reach where one is (a sweep whose first step lies elsewhere missed the L1 TLB's);
// else the longest with a step.
struct Sweep {
  double stride = 0, longest = 0;
  segmentation::Segmentation seg;
};
std::optional<Sweep> coverage_sweep(const std::map<double, std::vector<segmentation::CurvePoint>>& curves,
                                    const std::optional<PageEntryFit>& pe) {
  std::vector<std::pair<double, double>> by_length;  // (longest footprint, stride)
  for (const auto& [stride, pts] : curves)
    if (!pe || pe->entry_size <= 0 || stride <= pe->entry_size) by_length.emplace_back(pts.back().x, stride);
  std::sort(by_length.begin(), by_length.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  std::optional<Sweep> any_step;
  for (const auto& [longest, stride] : by_length) {
    auto seg = segmentation::segment_curve(curves.at(stride), tlb_segment_options());
    if (seg.knees.empty()) continue;
    if (!pe || same_reach(seg.knees.front().low, pe->reach)) return Sweep{stride, longest, std::move(seg)};
    if (!any_step) any_step = Sweep{stride, longest, std::move(seg)};
  }
  if (any_step) return any_step;
  // none shows a step: the longest, for the level of L1 TLB hits
  if (by_length.empty()) return std::nullopt;
  const double stride = by_length.front().second;
  return Sweep{stride, by_length.front().first, segmentation::segment_curve(curves.at(stride), tlb_segment_options())};
}

// How sure it is that the step read as the L1 TLB's is that (1: no doubt), and why not:
// `which` doubts that it is the first level's step at all (and so that the next one is the
// L2's), `cap` adds the doubt about where it lies (the strides' support).
struct Identity {
  double cap = 1, which = 1;
  std::string why;
};
Identity l1_identity(double reach, double stride, const std::optional<PageEntryFit>& pe, double support,
                     size_t strides_swept) {
  Identity id;
  auto doubt = [&](double cap, const std::string& why) {
    id.cap = std::min(id.cap, cap);
    id.why += "; " + why;
  };
  auto other_step = [&](double cap, const std::string& why) {
    id.which = std::min(id.which, cap);
    doubt(cap, why);
  };
  const double entry = pe && pe->entry_size > 0 ? std::max(stride, pe->entry_size) : stride;
  if (reach / entry > kRules.most_l1_entries)
    other_step(kRules.beyond_l1_size,
          "in doubt: the step lies at " + num(std::round(reach / entry)) + " entries, more than an L1 TLB holds; "
          "a smaller first step may be lost in the noise");
  if (pe && pe->entry_at_or_below_smallest)
    other_step(kRules.upper_bound_only, "an upper bound: the step moves with every stride above the smallest (" +
                                       bytes_text(pe->sweep_stride) + "), so the entry may be smaller still");
  // above the entry size every stride's step should count the same entries: where they do
  // not, what stayed put below may be something other than the L1 TLB's reach
  if (pe && pe->strides_above >= 2 && pe->above_agree < 1)
    doubt(pe->above_agree, num(pe->above_agree) + " of the strides above the entry size agree on " + num(pe->entries) +
                               " entries");
  if (pe && pe->strides_below <= kRules.median_of_few &&
      pe->strides_below + pe->strides_above <= kRules.few_strides_share * static_cast<double>(strides_swept))
    doubt(kRules.two_step_reach, "the reach rests on " + std::to_string(pe->strides_below) + " steps; only " +
                                     std::to_string(pe->strides_below + pe->strides_above) + " of " +
                                     std::to_string(strides_swept) + " strides saw a step");
  if (pe && support < 1)
    doubt(support_cap(support), num(pe->strides_below) + " of the strides that went past the reach see the step there (support " +
                       num(support) + (support > 0.5 ? ")" : ": contested)"));
  return id;
}

Parameter l1_coverage(const segmentation::Segmentation& seg, const std::optional<PageEntryFit>& pe,
                      const Identity& id, const std::string& how, const std::string& ev) {
  if (pe && pe->strides_below >= 2)
    // The first step at every stride below the entry size: one sweep's transition points
    // may sit on either side of the level, the median over strides does not.
    return make_parameter(
        param::tlb_l1_coverage, pe->reach, "bytes", pe->reach_low, pe->reach_high,
        std::min(id.cap, std::max(seg.knees.front().confidence,
                                  kRules.reach_floor + kRules.reach_per_agreement * pe->agree)),
        how + "; steps: " + steps_text(seg, 0) + "; reach " + bytes_text(pe->reach) +
            " = median of the first steps at " + std::to_string(pe->strides_below) +
            " strides up to the entry size (" + bytes_text(pe->reach_low) + " to " +
            bytes_text(pe->reach_high) + ")" + id.why,
        ev);
  const auto& kn = seg.knees.front();
  const double low = pe && pe->entry_at_or_below_smallest ? pe->entries * kRules.smallest_page : kn.low;
  return make_parameter(param::tlb_l1_coverage, kn.low, "bytes", low, kn.high,
                        std::min(id.cap, kn.confidence),
                        how + "; steps: " + steps_text(seg, 0) + id.why, ev);
}

// One aliased stride's first step past the L1 reach.
struct Beyond {
  double stride = 0, longest = 0;
  segmentation::Segmentation seg;
  size_t first = 0;  // index of the first knee past the L1 reach
  double reach = 0, above = 0;  // the last footprint below that step, the first above
};

std::optional<Beyond> step_beyond(double stride, const std::vector<segmentation::CurvePoint>& pts,
                                  double l1_reach) {
  Beyond bd{stride, pts.back().x, segmentation::segment_curve(pts, tlb_segment_options())};
  // A knee past the L1 reach that climbs (a plateau may also split on a 1 % dip).
  auto climbs = [&](size_t k) {
    const auto& kn = bd.seg.knees[k];
    return bd.seg.plateaus[kn.lower + 1].level >
           (1 + tlb_segment_options().min_jump) * bd.seg.plateaus[kn.lower].level;
  };
  while (bd.first < bd.seg.knees.size() &&
         (bd.seg.knees[bd.first].low < kRules.beyond_l1_factor * l1_reach || !climbs(bd.first)))
    ++bd.first;
  if (bd.first == bd.seg.knees.size()) return std::nullopt;
  // The knee's bracket may open early where the lower plateau wanders by a few cycles, and the
  // step is a ramp (misses grow over some GiB): the reach is the last point before the ramp,
  // near the level (where the sweep did not resolve a level between, the step may be far
  // larger than this one); the bracket's top is the first point above.
  const auto& kn = bd.seg.knees[bd.first];
  const double lower = bd.seg.plateaus[kn.lower].level;
  const double on_level =
      lower + std::min(kRules.ramp_step_fraction * (bd.seg.plateaus[kn.lower + 1].level - lower),
                       kRules.ramp_level_fraction * lower);
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
  return bd;
}

// Strides in increasing order: the first that moves the step with it (by the strides' ratio)
// is above the L2 TLB's entry size, the ones before within it, where the step is the L2 TLB's
// reach in bytes. Returns how many are within, and says so in `text`.
size_t strides_within_entry(const std::vector<Beyond>& aliased, std::string* text) {
  for (size_t i = 0; i + 1 < aliased.size(); ++i) {
    const double r0 = aliased[i].reach, r1 = aliased[i + 1].reach;
    const double grow = (r1 / r0) / (aliased[i + 1].stride / aliased[i].stride);
    if (std::fabs(grow - 1) > kRules.moves_with_stride) continue;
    const double entries = std::round(r1 / aliased[i + 1].stride);
    *text = "; the step moves with strides above " + bytes_text(aliased[i].stride) + ": " +
            std::to_string(static_cast<long long>(entries)) + " entries of " + bytes_text(r0 / entries);
    return i + 1;
  }
  return aliased.size();
}

// The levels beyond the L1 TLB, from the aliased space where it was measured (it reaches far
// past device memory): of its strides within the L2 TLB's entry, the one whose first step past
// the L1 reach is clearest. Its first such step is the L2 TLB's reach; any later one a further
// level. `others` says where the step lies at the other strides.
// `deepest`: a sweep of those strides whose last step lies past where the clearest one ended
// (the data limit stops the smaller strides' sweeps first), the longest such; the clearest's
// deepest plateau cannot be the last level's. Empty where none is.
std::optional<Beyond> clearest_step_beyond(const std::vector<Observation>& obs, double max_accesses,
                                           double l1_reach, std::string* others,
                                           std::optional<Beyond>* deepest, std::vector<Beyond>* within_sweeps) {
  std::vector<Beyond> aliased;
  for (const auto& [stride, pts] : tlb_curves(obs, kChaseAliasedProbe, max_accesses))
    if (auto bd = step_beyond(stride, pts, l1_reach)) aliased.push_back(std::move(*bd));
  std::string entries_text;
  const size_t within = strides_within_entry(aliased, &entries_text);
  std::optional<Beyond> beyond;
  for (size_t i = 0; i < within; ++i)
    if (!beyond || aliased[i].seg.knees[aliased[i].first].confidence >
                       beyond->seg.knees[beyond->first].confidence)
      beyond = aliased[i];
  within_sweeps->assign(aliased.begin(), aliased.begin() + static_cast<std::ptrdiff_t>(within));
  for (size_t i = 0; beyond && i < within; ++i)
    if (aliased[i].seg.knees.back().low > beyond->longest &&
        (!*deepest || aliased[i].longest > (*deepest)->longest))
      *deepest = aliased[i];
  // At the same footprint whatever the stride, the level covers a range of addresses; at a
  // footprint growing with the stride, it holds a count of entries of one stride each.
  if (beyond)
    for (const auto& o : aliased)
      if (o.stride != beyond->stride)
        *others += "; at " + bytes_text(o.stride) + " the step lies at " + bytes_text(o.reach);
  *others += entries_text;
  return beyond;
}

std::string aliased_how(const Beyond& b) {
  return "the same chase, one access per " + bytes_text(b.stride) + ", over " + bytes_text(b.longest) +
         " of virtual addresses mapped onto one physical chunk again and again";
}

// A plateau's level is the median of its members: off by about sqrt(pi / 2) sigma / sqrt(n),
// sigma the curve's point-to-point noise (relative).
constexpr double kMedianError = 1.2533;

double level_error(const segmentation::Segmentation& sg, const segmentation::Plateau& p) {
  return kMedianError * sg.noise * p.level / std::sqrt(static_cast<double>(std::max<size_t>(1, p.members)));
}

// How likely a difference of two plateaus' levels is within `tolerance` of itself, from its
// error `sd` (the levels' errors combined; normal): a small miss cost between noisy plateaus is
// not known to 3 %.
double difference_confidence(double diff, double sd, double tolerance) {
  return sd > 0 ? std::erf(tolerance * std::fabs(diff) / (sd * std::sqrt(2.0))) : 1.0;
}

// The miss cost's interval: the two levels' errors (above) at about 95 % (normal).
constexpr double kMissInterval = 2;
// The page walk's cost follows the machine (driver, page-table placement): 817-863 cycles over
// H200 runs on three hosts, 5 % within three runs in a row on one (docs/repeatability.md).
constexpr double kWalkRunToRun = 0.03;

double miss_tolerance() {
  double t = 0;
  const CatalogEntry* e = find_parameter(param::tlb_miss_latency);
  return e && tolerance_fraction(e->tolerance, &t) ? t : 0;
}

// The cost of the deepest miss seen: the last plateau over the L1 TLB hits.
// The deepest level where several strides' sweeps show it (the same steps past the L1 reach, the
// last at the same footprint): their levels' mean weighted by each one's inverse variance, and
// its error; else the one sweep's.
struct Level {
  double level = 0, error = 0;
  int sweeps = 0;
};
Level deepest_level(const segmentation::Segmentation& last, const std::optional<Beyond>& beyond,
                    const std::vector<Beyond>& within) {
  const segmentation::Plateau& p = last.plateaus.back();
  Level one{p.level, level_error(last, p), 1};
  if (!beyond || one.error <= 0) return one;
  const size_t steps = beyond->seg.knees.size() - beyond->first;
  double sum = 0, weight = 0;
  int n = 0;
  for (const auto& w : within) {
    const segmentation::Plateau& q = w.seg.plateaus.back();
    const double e = level_error(w.seg, q);
    const bool same_steps = w.seg.knees.size() - w.first == steps &&
                            same_reach(w.seg.knees.back().low, beyond->seg.knees.back().low);
    if (!same_steps || !(e > 0)) continue;
    sum += q.level / (e * e), weight += 1 / (e * e), ++n;
  }
  if (n < 2) return one;
  return {sum / weight, 1 / std::sqrt(weight), n};
}

Parameter miss_latency(const segmentation::Segmentation& seg, const std::optional<Beyond>& beyond,
                       const std::vector<Beyond>& within, const std::string& how, double longest,
                       const std::string& ev) {
  const auto& last = beyond ? beyond->seg : seg;
  const bool deep = beyond || seg.knees.size() >= 2;
  const Level lv = deepest_level(last, beyond, within);
  const segmentation::Plateau& base = seg.plateaus.front();
  const double penalty = lv.level - base.level;
  double conf = 0;
  for (const auto& kn : last.knees) conf = std::max(conf, kn.confidence);
  const double sd = std::hypot(level_error(seg, base), lv.error);
  conf = std::min(conf, difference_confidence(penalty, sd, miss_tolerance()));
  std::string what =
      deep ? "cycles added per access beyond the last TLB level's reach (" +
                 bytes_text(last.knees.back().high) + "): a page walk"
           : "cycles added per access by an L1 TLB miss; no further step up to " + bytes_text(longest);
  if (lv.sweeps > 1)
    what += "; its level the mean of " + std::to_string(lv.sweeps) + " strides' (weighed by their noise)";
  Parameter p =
      make_parameter(param::tlb_miss_latency, penalty, "cycles", penalty - kMissInterval * sd,
                     penalty + kMissInterval * sd, conf * (deep ? 1.0 : kRules.shallow_miss_factor),
                     (beyond ? aliased_how(*beyond) : how) + "; " + what, ev);
  // The walk's cost is the machine's as much as the GPU's (see kWalkRunToRun).
  analysis::widen_to_repeat(p, kWalkRunToRun, "what runs in a row and other hosts moved the walk");
  return p;
}

}  // namespace

std::vector<Parameter> analyze_tlb(const std::vector<Observation>& obs, const Metadata& meta) {
  std::vector<Parameter> out;
  const std::string ev = "tlb.csv";
  const double max_accesses = max_accesses_in_l2(analysis::meta_number(meta, "l2_bytes"));
  const auto curves = tlb_curves(obs, kChaseProbe, max_accesses);
  if (curves.empty()) return out;
  const XY steps = first_tlb_steps_of(curves);
  auto pe = fit_page_entry(steps);
  const double support = pe ? fit_support(curves, steps, *pe) : 0;
  if (auto p = page_entry_size(pe, support, ev)) out.push_back(*p);
  const auto cov = coverage_sweep(curves, pe);
  if (!cov || cov->seg.plateaus.empty()) return out;
  const Sweep& sw = *cov;
  const auto& seg = sw.seg;
  const std::string how = "one-thread ld.global.cg chase, one access per " + bytes_text(sw.stride) +
                          " (TLB and L2 warmed by a first pass), footprint swept to " +
                          bytes_text(sw.longest);
  double l1_reach = 0;
  Identity id;
  if (seg.knees.empty()) {
    // No step in the plain chase (the first one lost in the noise): the aliased chase's first
    // step may be the L2 TLB's or the L1's; its miss cost is what it is either way.
    id.cap = id.which = kRules.no_first_step;
    id.why = "; in doubt: no TLB step in the plain chase up to " + bytes_text(sw.longest) +
             ", so the first step of the aliased chase is taken for the L2 TLB's";
  } else {
    l1_reach = pe && pe->strides_below >= 2 ? pe->reach : seg.knees.front().low;
    id = l1_identity(l1_reach, sw.stride, pe, support, curves.size());
    out.push_back(l1_coverage(seg, pe, id, how, ev));
  }
  std::string others;
  std::optional<Beyond> deepest;
  std::vector<Beyond> within;
  const auto beyond = clearest_step_beyond(obs, max_accesses, l1_reach, &others, &deepest, &within);
  if (beyond) {
    const auto& kn = beyond->seg.knees[beyond->first];
    // the step past the L1 TLB's reach is the L2 TLB's only as surely as that reach is the L1's
    out.push_back(make_parameter(param::tlb_l2_coverage, beyond->reach, "bytes", beyond->reach,
                                 beyond->above, std::min(id.which, kn.confidence),
                                 aliased_how(*beyond) + "; steps past the L1 TLB's reach: " +
                                     steps_text(beyond->seg, beyond->first) + others + id.why,
                                 ev));
  } else if (seg.knees.size() >= 2) {
    const auto& kn = seg.knees[1];
    out.push_back(make_parameter(param::tlb_l2_coverage, kn.low, "bytes", kn.low, kn.high,
                                 std::min(id.which, kn.confidence),
                                 how + "; steps: " + steps_text(seg, 0) + id.why, ev));
  }
  if (beyond || !seg.knees.empty())
    out.push_back(miss_latency(seg, deepest ? deepest : beyond, within, how, sw.longest, ev));
  return out;
}

// ---------------------------------------------------------------------------------------
// Code checks

namespace {

std::vector<CodeExpectation> expectations() {
  std::vector<CodeExpectation> out;
  out.push_back(expectation(std::string(kFamily.name), chase_kernel(false, loader(kL2, 8)),
                            kChaseProbe, ptx_load(kL2, 8, true), sass_load(kL2)));
  return out;
}

}  // namespace

std::vector<std::string> kernels(const std::string& probe) {
  if (probe == kChaseProbe) return {chase_kernel(false, loader(kL2, 8)), kWriteChain64};
  return {};
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(expectations);
GPUPROBE_REGISTER_ANALYZER(tlb::kFamily, analyze_tlb);

}  // namespace gpuprobe::tlb
