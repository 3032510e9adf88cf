#include "analysis/associativity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <map>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/catalog.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe::associativity {

namespace {


// A trial that misreads its timing (an interrupt on a hit) or loses its target to something
// else: each outcome is flipped with this probability, so that one stray trial cannot rule a
// model out.
constexpr double kLapse = 1e-3;
// Ways whose best fit is within this much log-likelihood of the best are not ruled out
// (a likelihood ratio of e^2: about 95 % for one parameter).
constexpr double kLogLikelihoodSpan = 2.0;
// First-reload eviction fractions within these bounds leave the target's fate uncertain.
constexpr double kUncertainLow = 0.05, kUncertainHigh = 0.95;

// Confidence of l1_ways / l1_sets: kWaysBest / (1 + log2 of the ways' range), times the fit's
// quality and the verdict's clarity, and these factors:
constexpr double kWaysBest = 0.95;       // a fit is never certain
constexpr double kEnoughTrials = 5000;   // fewer trials leave the eviction curve coarse ...
constexpr double kFewTrialsFactor = 0.8;  // ... and take this much
// Another replacement model more likely than the verdict's by this much log-likelihood
// (e^10) contests the verdict, and the fit under it keeps kContestedFactor.
constexpr double kContestedMargin = 10;
constexpr double kContestedFactor = 0.7;
// l1_size from this probe: the carve-out family measures it more directly, so this one stays
// at most kCapacityCap, kCapacityBest x quality x clarity, losing kCapacitySpreadLoss per unit
// of its relative range, at most kCapacitySpreadMostLoss.
constexpr double kCapacityCap = 0.6, kCapacityBest = 0.7;
constexpr double kCapacitySpreadLoss = 4, kCapacitySpreadMostLoss = 0.5;

using analysis::clamp01;
using analysis::kib;
using analysis::num;

std::string pct(double fraction) { return num(100 * fraction, 2) + " %"; }

Observation fraction_row(const std::string& probe, Params params, double k, double n) {
  Observation o;
  o.family = std::string(kFamily.name);
  o.probe = probe;
  o.params = std::move(params);
  o.value = o.p50 = n > 0 ? k / n : 0.0;
  auto [lo, hi] = wilson_interval(k, n);
  o.p05 = lo;
  o.p95 = hi;
  o.unit = "fraction";
  o.reps = static_cast<int>(n);
  return o;
}

double count_of(const Observation& o) { return std::round(o.value * o.reps); }

// Dynamic shared memory the trial's block held; rows that name none held none.
double shared_of(const Observation& o) {
  const double s = o.param(kSharedColumn);
  return std::isfinite(s) ? s : 0.0;
}

double first_fraction(const EvictionTally& t) {
  return t.trials > 0 && !t.evicted.empty() ? t.evicted[0] / t.trials : 0.0;
}

// Sum over k >= kmin of P(K = k) f(k), K ~ Binomial(n, p); terms further than 9 standard
// deviations from the mean (below 1e-18 of the total) are left out.
template <class F>
double binomial_tail_expectation(long long n, double p, long long kmin, F f) {
  if (n <= 0 || p <= 0) return kmin <= 0 ? f(0) : 0.0;
  if (p >= 1) return n >= kmin ? f(n) : 0.0;
  const double nd = static_cast<double>(n);
  const double mean = nd * p, sd = std::sqrt(nd * p * (1 - p));
  const long long lo = std::max(0LL, static_cast<long long>(std::floor(mean - 9 * sd - 1)));
  const long long hi = std::min(n, static_cast<long long>(std::ceil(mean + 9 * sd + 1)));
  const long long k0 = std::max(kmin, lo);
  if (k0 > hi) return 0.0;
  const double kd = static_cast<double>(k0);
  double pmf = std::exp(std::lgamma(nd + 1) - std::lgamma(kd + 1) - std::lgamma(nd - kd + 1) +
                        kd * std::log(p) + (nd - kd) * std::log1p(-p));
  const double ratio = p / (1 - p);
  double sum = 0;
  for (long long k = k0; k <= hi; ++k) {
    sum += pmf * f(k);
    pmf *= static_cast<double>(n - k) / static_cast<double>(k + 1) * ratio;
  }
  return sum;
}

// The probability of seeing the target evicted: the model's, blurred by the lapse.
double observed(const CacheModel& c, double lines) {
  return kLapse + (1 - 2 * kLapse) * eviction_probability(c.model, lines, c.sets, c.ways);
}

double log_likelihood(const std::vector<EvictionTally>& tallies, const CacheModel& c) {
  double ll = 0;
  for (const auto& t : tallies) {
    if (t.trials <= 0 || t.evicted.empty()) continue;
    const double p = observed(c, t.lines);
    ll += t.evicted[0] * std::log(p) + (t.trials - t.evicted[0]) * std::log1p(-p);
  }
  return ll;
}

// 2 x (log-likelihood of the saturated model - the model's): about the degrees of freedom
// when the model describes the data up to sampling noise.
double deviance(const std::vector<EvictionTally>& tallies, const CacheModel& c) {
  double d = 0;
  auto term = [](double k, double expected) { return k > 0 ? k * std::log(k / expected) : 0.0; };
  for (const auto& t : tallies) {
    if (t.trials <= 0 || t.evicted.empty()) continue;
    const double p = observed(c, t.lines);
    d += 2 * (term(t.evicted[0], t.trials * p) + term(t.trials - t.evicted[0], t.trials * (1 - p)));
  }
  return d;
}

// Lines where the first-reload eviction fraction first reaches 0.5, interpolated; NaN when
// it never crosses.
double half_point(const std::vector<EvictionTally>& tallies) {
  for (size_t i = 1; i < tallies.size(); ++i) {
    const double f0 = first_fraction(tallies[i - 1]), f1 = first_fraction(tallies[i]);
    if (f0 < 0.5 && f1 >= 0.5) {
      const double x0 = tallies[i - 1].lines, x1 = tallies[i].lines;
      return x0 + (0.5 - f0) / (f1 - f0) * (x1 - x0);
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// Every integer up to kExactWays, then steps of kWaysStep (a 5 % step in ways moves the
// eviction curve less than the trials resolve).
constexpr double kExactWays = 64, kWaysStep = 1.05;
std::vector<double> ways_grid(double max_ways) {
  std::vector<double> w;
  for (double v = 1; v <= std::min(kExactWays, max_ways); ++v) w.push_back(v);
  for (double v = kExactWays * kWaysStep; v <= max_ways; v *= kWaysStep) {
    const double r = std::round(v);
    if (r > w.back()) w.push_back(r);
  }
  return w;
}

// Best of `model` with `sets` fixed, over whole numbers of ways near `ways`.
CacheModel fit_ways_at(const std::vector<EvictionTally>& tallies, Replacement model, double sets,
                       double ways) {
  CacheModel best;
  best.model = model;
  best.log_likelihood = -std::numeric_limits<double>::infinity();
  for (double w = std::max(1.0, std::round(ways) - 2); w <= std::round(ways) + 2; ++w) {
    const double ll = log_likelihood(tallies, {model, sets, w});
    if (ll > best.log_likelihood) best = {model, sets, w, ll};
  }
  return best;
}

std::string model_formula(Replacement m) {
  switch (m) {
    case Replacement::lru:
      return "set-associative LRU on a balanced (hashed) index, P = P(Binomial(N, 1/S) >= W)";
    case Replacement::random_cold:
      return "set-associative random replacement from an empty L1, P = 1 - E[(1 - 1/W)^max(0, "
             "K - W + 1)], K ~ Binomial(N, 1/S)";
    case Replacement::random_warm:
      return "random replacement in a full cache, P = 1 - (1 - 1/(S W))^N, which no W "
             "changes";
  }
  return "";
}

// A parameter's unit as the catalog gives it (l1_ways' and l1_sets' are the model rows' columns).
std::string unit_of(const std::string& name) {
  const CatalogEntry* e = find_parameter(name);
  return e ? e->unit : "";
}

Parameter make_parameter(const std::string& name, double value, const std::string& unit, double low,
                         double high, double confidence, const std::string& method) {
  return {name,   value,
          unit,   low,
          high,   clamp01(confidence),
          method, std::string(kFamily.name) + ".csv"};
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Rows

std::pair<double, double> wilson_interval(double k, double n, double z) {
  if (!(n > 0)) return {0.0, 1.0};
  const double p = k / n, z2 = z * z;
  const double center = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double half = z * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

std::vector<Observation> eviction_rows(const std::vector<EvictionTally>& tallies,
                                       double spacing, double shared) {
  std::vector<Observation> rows;
  for (const auto& t : tallies) {
    const Params at = {{kLinesColumn, format_number(t.lines)},
                       {kSpacingColumn, format_number(spacing)},
                       {kSharedColumn, format_number(shared)}};
    for (size_t r = 0; r < t.evicted.size(); ++r) {
      Params p = at;
      p.emplace_back(kRepeatColumn, std::to_string(r + 1));
      rows.push_back(fraction_row(kEvictionProbe, p, t.evicted[r], t.trials));
    }
    rows.push_back(fraction_row(kDisagreementProbe, at, t.disagreed, t.trials));
    if (t.replayed > 0)
      rows.push_back(fraction_row(kReplayProbe, at, t.replay_differs, t.replayed));
  }
  return rows;
}

std::vector<EvictionTally> eviction_tallies(const std::vector<Observation>& obs, double shared) {
  std::map<double, EvictionTally> by_lines;
  auto at = [&](const Observation& o) -> EvictionTally* {
    const double n = o.param(kLinesColumn);
    if (!std::isfinite(n) || o.reps <= 0 || !std::isfinite(o.value) || shared_of(o) != shared)
      return nullptr;
    EvictionTally& t = by_lines[n];
    t.lines = n;
    return &t;
  };
  for (const auto& o : select(obs, kEvictionProbe, "fraction")) {
    const double r = o.param(kRepeatColumn);
    EvictionTally* t = at(o);
    if (!t || !(r >= 1)) continue;
    const auto i = static_cast<size_t>(r) - 1;
    if (t->evicted.size() <= i) t->evicted.resize(i + 1, 0.0);
    t->evicted[i] += count_of(o);
    if (i == 0) t->trials += o.reps;
  }
  for (const auto& o : select(obs, kDisagreementProbe, "fraction"))
    if (EvictionTally* t = at(o)) t->disagreed += count_of(o);
  for (const auto& o : select(obs, kReplayProbe, "fraction"))
    if (EvictionTally* t = at(o)) {
      t->replayed += o.reps;
      t->replay_differs += count_of(o);
    }
  std::vector<EvictionTally> out;
  for (auto& [n, t] : by_lines)
    if (t.trials > 0) out.push_back(std::move(t));
  return out;
}

std::vector<double> shared_settings(const std::vector<Observation>& obs) {
  std::vector<double> out;
  for (const auto& o : select(obs, kEvictionProbe, "fraction"))
    if (std::find(out.begin(), out.end(), shared_of(o)) == out.end()) out.push_back(shared_of(o));
  std::sort(out.begin(), out.end());
  return out;
}

double spacing_bytes(const std::vector<Observation>& obs) {
  for (const auto& o : select(obs, kEvictionProbe, "fraction")) {
    const double s = o.param(kSpacingColumn);
    if (std::isfinite(s) && s > 0) return s;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::pair<double, double> transition_bounds(const std::vector<EvictionTally>& tallies, double low,
                                            double high, double n_min, double n_max) {
  double hi = n_max;
  for (const auto& t : tallies)
    if (t.trials > 0 && first_fraction(t) >= high) {
      hi = t.lines;
      break;
    }
  double lo = n_min;
  for (const auto& t : tallies)
    if (t.trials > 0 && t.lines < hi && first_fraction(t) <= low) lo = t.lines;
  return {lo, hi};
}

// ---------------------------------------------------------------------------------------
// Models

const char* replacement_name(Replacement m) {
  switch (m) {
    case Replacement::lru: return "lru";
    case Replacement::random_cold: return "random_cold";
    case Replacement::random_warm: return "random_warm";
  }
  return "";
}

double eviction_probability(Replacement m, double lines, double sets, double ways) {
  if (!(lines > 0) || !(sets >= 1) || !(ways >= 1)) return 0.0;
  const auto n = static_cast<long long>(std::llround(lines));
  const auto w = static_cast<long long>(std::llround(ways));
  switch (m) {
    case Replacement::lru:
      return binomial_tail_expectation(n, 1 / sets, w, [](long long) { return 1.0; });
    case Replacement::random_cold: {
      const double log_keep = std::log1p(-1 / ways);
      return binomial_tail_expectation(n, 1 / sets, w, [&](long long k) {
        return -std::expm1(static_cast<double>(k - w + 1) * log_keep);
      });
    }
    case Replacement::random_warm:
      return -std::expm1(lines * std::log1p(-1 / (sets * ways)));
  }
  return 0.0;
}

// ---------------------------------------------------------------------------------------
// Replacement

std::string ReplacementVerdict::text() const {
  const std::string rep = "repeats in place disagree in " + pct(repeat_disagreement);
  const std::string rpl = replayed > 0 ? ", replays on the same lines from a cold L1 in " +
                                             pct(replay_disagreement)
                                       : ", no replays";
  const std::string where = " of the " + num(trials, 6) +
                            " trials whose outcome was uncertain (eviction fraction 5-95 %)";
  switch (kind) {
    case lru_like:
      return "deterministic per line set: placement-driven, LRU-like (" + rep + rpl + where + ")";
    case history_dependent:
      return "deterministic per line set but not LRU: a replay on the same lines ends alike, "
             "yet the target's own reloads change what stays (FIFO- or PLRU-like; " +
             rep + rpl + where + ")";
    case random:
      return "repeats disagree: random/non-LRU replacement (" + rep + rpl + where + ")";
    case undetermined:
      break;
  }
  return "replacement not observed: no line count left the target's fate uncertain";
}

ReplacementVerdict replacement_verdict(const std::vector<EvictionTally>& tallies) {
  ReplacementVerdict v;
  double disagreed = 0, differs = 0, random_differs = 0;
  for (const auto& t : tallies) {
    const double f = first_fraction(t);
    if (f < kUncertainLow || f > kUncertainHigh) continue;
    // Under random replacement a replay is an independent draw: it ends otherwise with
    // probability 2 f (1 - f).
    random_differs += t.trials * 2 * f * (1 - f);
    v.trials += t.trials;
    disagreed += t.disagreed;
    v.replayed += t.replayed;
    differs += t.replay_differs;
  }
  if (v.trials <= 0) return v;
  v.repeat_disagreement = disagreed / v.trials;
  v.replay_disagreement = v.replayed > 0 ? differs / v.replayed : 0.0;
  // Replays that disagree more than noise but far less than random replacement would make
  // them (as a few percent against some 30 % on the Hopper L1) do not make it random.
  const double random_replay = random_differs / v.trials;
  if (v.replayed > 0 && v.replay_disagreement > std::max(kAgreeLimit, 0.5 * random_replay))
    v.kind = ReplacementVerdict::random;
  else if (v.repeat_disagreement > kAgreeLimit)
    v.kind = v.replayed > 0 ? ReplacementVerdict::history_dependent : ReplacementVerdict::random;
  else
    v.kind = ReplacementVerdict::lru_like;
  return v;
}

// ---------------------------------------------------------------------------------------
// Fit

CacheModel fit_capacity(const std::vector<EvictionTally>& tallies, Replacement model,
                        double ways) {
  CacheModel best;
  best.model = model;
  best.ways = ways;
  best.log_likelihood = -std::numeric_limits<double>::infinity();
  double half = half_point(tallies);
  if (!std::isfinite(half)) return best;
  // Half the targets go between 0.69 C (one way) and 1.7 C (many random ways) lines: the
  // capacity searched from kCapacityBelowHalf to kCapacityAboveHalf times the half point
  // brackets both with room.
  constexpr double kCapacityBelowHalf = 0.25, kCapacityAboveHalf = 3;
  const double lo = std::log(std::max(ways, kCapacityBelowHalf * half)),
               hi = std::log(std::max(ways, kCapacityAboveHalf * half));
  // exp(log(W)) / W may round below one set.
  auto sets_at = [&](double log_c) { return std::max(1.0, std::exp(log_c) / ways); };
  auto ll_at = [&](double log_c) {
    return log_likelihood(tallies, {model, sets_at(log_c), ways});
  };
  if (hi - lo < 1e-9) {
    best.sets = sets_at(lo);
    best.log_likelihood = ll_at(lo);
    return best;
  }
  // A grid finds the hill; golden sections climb it.
  constexpr int kGrid = 16;
  int arg = 0;
  double top = -std::numeric_limits<double>::infinity();
  for (int i = 0; i <= kGrid; ++i) {
    const double ll = ll_at(lo + (hi - lo) * i / kGrid);
    if (ll > top) {
      top = ll;
      arg = i;
    }
  }
  double a = lo + (hi - lo) * std::max(0, arg - 1) / kGrid;
  double b = lo + (hi - lo) * std::min(kGrid, arg + 1) / kGrid;
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = b - g * (b - a), x2 = a + g * (b - a);
  double f1 = ll_at(x1), f2 = ll_at(x2);
  while (b - a > 1e-4) {
    if (f1 < f2) {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + g * (b - a);
      f2 = ll_at(x2);
    } else {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - g * (b - a);
      f1 = ll_at(x1);
    }
  }
  const double fx = std::max(f1, f2);
  const double x = fx >= top ? (f1 > f2 ? x1 : x2) : lo + (hi - lo) * arg / kGrid;
  best.sets = sets_at(x);
  best.log_likelihood = std::max(fx, top);
  return best;
}

namespace {

CacheModel best_of(const std::vector<CacheModel>& p) {
  return *std::max_element(p.begin(), p.end(), [](const CacheModel& a, const CacheModel& b) {
    return a.log_likelihood < b.log_likelihood;
  });
}

// Profile likelihood over the ways, each with its best capacity. Random replacement with one
// way is LRU with one way (and deterministic): from two on.
std::vector<CacheModel> ways_profile(const std::vector<EvictionTally>& tallies, Replacement m,
                                     double max_lines) {
  std::map<double, CacheModel> by_ways;
  // Ways up to kWaysBeyondLines x the most lines walked: more ways than lines would fit any
  // curve alike, and the margin keeps the best fit off the grid's end.
  constexpr double kWaysBeyondLines = 1.5;
  for (double w : ways_grid(kWaysBeyondLines * max_lines))
    if (m == Replacement::lru || w >= 2) by_ways[w] = fit_capacity(tallies, m, w);
  // Above 64 the grid steps by 5 %: every whole number between the best's neighbours (a fully
  // associative cache is a step at exactly its lines).
  auto less = [](const auto& a, const auto& b) {
    return a.second.log_likelihood < b.second.log_likelihood;
  };
  const auto top = std::max_element(by_ways.begin(), by_ways.end(), less);
  const double below = top == by_ways.begin() ? top->first : std::prev(top)->first;
  const double above = std::next(top) == by_ways.end() ? top->first : std::next(top)->first;
  for (double w = below + 1; w < above; ++w)
    if (!by_ways.count(w)) by_ways[w] = fit_capacity(tallies, m, w);
  std::vector<CacheModel> out;
  for (const auto& [w, c] : by_ways) out.push_back(c);
  return out;
}

// The best of the chosen model's profile, and the band of ways and capacities not ruled out.
void pin_ways(const std::vector<EvictionTally>& tallies, const std::vector<CacheModel>& chosen,
              AssociativityFit& f) {
  f.best = best_of(chosen);
  f.ways_low = f.ways_high = f.best.ways;
  f.capacity_low = f.capacity_high = f.best.capacity();
  // Where even the best model misses the points by more than their sampling noise (deviance
  // above its degrees of freedom), the likelihood is overconfident by that factor: the band of
  // ways not ruled out widens with it (quasi-likelihood).
  const double dispersion = std::max(1.0, deviance(tallies, f.best) / std::max(1, f.points - 2));
  f.likelihood_band = kLogLikelihoodSpan * dispersion;
  for (const auto& c : chosen)
    if (c.log_likelihood >= f.best.log_likelihood - f.likelihood_band) {
      f.ways_low = std::min(f.ways_low, c.ways);
      f.ways_high = std::max(f.ways_high, c.ways);
      f.capacity_low = std::min(f.capacity_low, c.capacity());
      f.capacity_high = std::max(f.capacity_high, c.capacity());
    }
  f.pow2.log_likelihood = -std::numeric_limits<double>::infinity();
  for (double s = 1; s <= f.best.capacity(); s *= 2) {
    CacheModel c = fit_ways_at(tallies, f.best.model, s, f.best.capacity() / s);
    if (c.log_likelihood > f.pow2.log_likelihood) f.pow2 = c;
  }
}

}  // namespace

std::optional<AssociativityFit> fit_associativity(const std::vector<EvictionTally>& tallies) {
  AssociativityFit f;
  double max_lines = 0;
  bool mostly_kept = false, mostly_evicted = false;
  for (const auto& t : tallies) {
    f.trials += t.trials;
    ++f.points;
    max_lines = std::max(max_lines, t.lines);
    mostly_kept = mostly_kept || first_fraction(t) < 0.5;
    mostly_evicted = mostly_evicted || first_fraction(t) >= 0.5;
  }
  f.half_point = half_point(tallies);
  // Fewer line counts than a capacity, a shape and their misfit can be told from.
  constexpr int kMinLineCounts = 4;
  if (f.points < kMinLineCounts || !mostly_kept || !mostly_evicted || !std::isfinite(f.half_point))
    return std::nullopt;
  f.verdict = replacement_verdict(tallies);

  const auto lru = ways_profile(tallies, Replacement::lru, max_lines);
  const auto cold = ways_profile(tallies, Replacement::random_cold, max_lines);
  const CacheModel warm = fit_capacity(tallies, Replacement::random_warm, 1);
  f.lru_log_likelihood = best_of(lru).log_likelihood;
  f.random_cold_log_likelihood = best_of(cold).log_likelihood;
  f.random_warm_log_likelihood = warm.log_likelihood;

  // The repeats and replays say whether the outcome is fixed by the line set; among the
  // models that agree with that, the likelihood chooses. Under random replacement, ways are
  // claimed only where the model that has none fits clearly worse.
  if (f.verdict.kind != ReplacementVerdict::random) {
    pin_ways(tallies, lru, f);
  } else if (warm.log_likelihood > f.random_cold_log_likelihood - kLogLikelihoodSpan) {
    f.best = warm;
    f.ways_identified = false;
    f.capacity_low = f.capacity_high = warm.capacity();
  } else {
    pin_ways(tallies, cold, f);
  }
  const int dof = std::max(1, f.points - (f.ways_identified ? 2 : 1));
  f.deviance_per_dof = deviance(tallies, f.best) / dof;
  return f;
}

// ---------------------------------------------------------------------------------------
// Parameters

namespace {

// Goodness of fit as a factor: 1 while the deviance is up to its degrees of freedom, then
// falling by kDevianceLoss per unit of deviance/dof, never below kPoorFitFloor.
constexpr double kDevianceLoss = 0.25;  // deviance/dof 3 (a poor fit) costs half
constexpr double kPoorFitFloor = 0.3;   // a poor fit still pins the capacity roughly
double fit_quality(const AssociativityFit& f) {
  return std::min(1.0, std::max(kPoorFitFloor, 1 + kDevianceLoss - kDevianceLoss * f.deviance_per_dof));
}

// Ways and sets of a cache whose replacement the repeats left undetermined are less certain.
constexpr double kUndeterminedVerdictFactor = 0.85;
double verdict_clarity(const AssociativityFit& f) {
  return f.verdict.kind == ReplacementVerdict::undetermined ? kUndeterminedVerdictFactor : 1.0;
}

// Line spacing of the walk where no eviction row says (the probe's default: one L1 line).
constexpr double kDefaultSpacing = 128;

std::string holding(double shared) {
  return shared > 0 ? "holding " + kib(shared) + " of dynamic shared memory per block"
                    : "holding no shared memory";
}

}  // namespace

namespace {

// What every parameter's method text says: how the curve was measured, and the fit.
struct AssociativityText {
  std::string how, fit, others;
};

// l1_ways and l1_sets, where the fit tells the ways apart. `factor`: the confidence factors
// that are not the ways' own (enough trials, no far better model).
std::vector<Parameter> ways_and_sets(const AssociativityFit& fit, const AssociativityText& text,
                                     double spacing, double factor) {
  const CacheModel& b = fit.best;
  const double capacity = b.capacity();
  const double spread = std::log2(fit.ways_high / fit.ways_low);
  const double conf = kWaysBest / (1 + spread) * fit_quality(fit) * verdict_clarity(fit) * factor;
  const double sets = capacity / b.ways;
  const double sets_low = fit.capacity_low / fit.ways_high;
  const double sets_high = fit.capacity_high / fit.ways_low;
  std::string method = text.how + "; " + text.fit + ": W = " + num(b.ways, 5) + " (" +
                       num(fit.ways_low, 5) + "-" + num(fit.ways_high, 5) + " within " +
                       num(fit.likelihood_band) + " log-likelihood units), S = " + num(sets, 4) +
                       ", S*W = " + num(capacity, 5) + " lines (" + kib(capacity * spacing) + ")";
  constexpr double kOneSet = 1.5;  // below, the set count's range rounds to one set
  if (sets_low < kOneSet) method += "; one set within the resolution: fully associative";
  if (std::isfinite(fit.pow2.log_likelihood))
    method += "; with a power-of-two set count: " + num(fit.pow2.sets, 5) + " sets x " +
              num(fit.pow2.ways, 5) + " ways (log-likelihood " +
              num(fit.pow2.log_likelihood - b.log_likelihood, 3) + " against the best)";
  method += "; deviance/dof " + num(fit.deviance_per_dof, 3) + text.others + "; " + fit.verdict.text();
  // A set count is whole: its interval the whole counts around the fit's range (two H200 runs
  // fitted 312.8-313 and 312-312.2 sets, one count apart, each interval a fifth of one).
  return {make_parameter(param::l1_ways, b.ways, unit_of(param::l1_ways), fit.ways_low,
                         fit.ways_high, conf, method),
          make_parameter(param::l1_sets, std::round(sets), unit_of(param::l1_sets),
                         std::floor(std::min(sets_low, std::round(sets))),
                         std::ceil(std::max(sets_high, std::round(sets))), conf, method)};
}

// The capacity this probe sees, at each shared-memory setting; l1_size is the largest. The
// carve-out family measures it more directly, so this one stays below its confidence and only
// stands where that family did not run.
Parameter l1_size(const std::vector<Observation>& obs, const std::vector<double>& settings,
                  const AssociativityFit& fit, const AssociativityText& text, double spacing) {
  std::string seen;
  const AssociativityFit* largest = &fit;
  std::vector<AssociativityFit> others_fits;
  for (double shared : settings) {
    const auto f = shared == settings.front() ? std::optional<AssociativityFit>(fit)
                                              : fit_associativity(eviction_tallies(obs, shared));
    if (!f) {
      seen += std::string(seen.empty() ? "" : "; ") + holding(shared) + ": no eviction curve";
      continue;
    }
    seen += std::string(seen.empty() ? "" : "; ") + holding(shared) + ": " +
            num(f->best.capacity(), 5) + " lines (" + kib(f->best.capacity() * spacing) + ", " +
            num(f->trials, 6) + " trials)";
    if (shared != settings.front()) others_fits.push_back(*f);
  }
  for (const auto& f : others_fits)
    if (f.best.capacity() > largest->best.capacity()) largest = &f;
  const double cap = largest->best.capacity();
  const double cap_spread = (largest->capacity_high - largest->capacity_low) / cap;
  const double cap_conf =
      std::min(kCapacityCap, kCapacityBest * fit_quality(*largest) * verdict_clarity(*largest) *
                                 (1 - std::min(kCapacitySpreadMostLoss, kCapacitySpreadLoss * cap_spread)));
  std::string cap_method = text.how + "; " + text.fit + ", capacity S*W x " + num(spacing) +
                           " B, the largest over the shared-memory settings (" + seen + ")" +
                           (fit.ways_identified ? "" : "; the ways cannot be told apart here") +
                           "; " + fit.verdict.text();
  return make_parameter(param::l1_size, cap * spacing, "bytes", largest->capacity_low * spacing,
                        largest->capacity_high * spacing, cap_conf, cap_method);
}

}  // namespace

std::vector<Parameter> analyze_associativity(const std::vector<Observation>& obs,
                                             const Metadata&) {
  const auto settings = shared_settings(obs);
  if (settings.empty()) return {};
  const auto fit = fit_associativity(eviction_tallies(obs, settings.front()));
  if (!fit) return {};
  double spacing = spacing_bytes(obs);
  if (!std::isfinite(spacing)) spacing = kDefaultSpacing;
  const CacheModel& b = fit->best;

  AssociativityText text;
  text.how = "one thread per SM (carve-out preference 0, " + holding(settings.front()) +
             ") loads a target line, walks N other lines drawn at random (" + num(spacing) +
             " B apart, each holding the next one's address), reloads the target (clock64: L1 "
             "hit or miss), 3 times in place; " +
             num(fit->trials, 7) + " trials at " + std::to_string(fit->points) +
             " line counts; half the targets evicted at N = " + num(fit->half_point, 4) + " lines";
  text.others = "; best log-likelihood of each model: LRU " + num(fit->lru_log_likelihood, 6) +
                ", random from empty " + num(fit->random_cold_log_likelihood, 6) +
                ", random in a full cache " + num(fit->random_warm_log_likelihood, 6);
  text.fit = "first-reload eviction fraction fitted by likelihood with " + model_formula(b.model);

  // Confidence: how narrowly the ways are pinned, how well the model describes the curve,
  // and whether the replacement verdict is clear.
  const double enough = fit->trials >= kEnoughTrials ? 1.0 : kFewTrialsFactor;
  // Another model that fits far better than the one the verdict chose.
  const double best_other = std::max({fit->lru_log_likelihood, fit->random_cold_log_likelihood,
                                      fit->random_warm_log_likelihood});
  const double contested = best_other > b.log_likelihood + kContestedMargin ? kContestedFactor : 1.0;

  std::vector<Parameter> out;
  if (fit->ways_identified) out = ways_and_sets(*fit, text, spacing, enough * contested);
  out.push_back(l1_size(obs, settings, *fit, text, spacing));
  return out;
}

// ---------------------------------------------------------------------------------------
// Code checks

std::vector<std::string> kernels() {
  return {"associativity::eviction_trials", "associativity::link_chains"};
}

namespace {

std::vector<CodeExpectation> associativity_expectations() {
  CodeExpectation trials;
  trials.source = std::string(kFamily.name);
  trials.kernel = "associativity::eviction_trials";
  trials.probe = kEvictionProbe;
  // Between the clock reads: the default (L1-allocating) 8-byte load, one dependent chain.
  trials.ptx = {{R"(^ld\.global\.u64 )", -1, true}};
  trials.sass = {{R"(^LDG\.E\.64(\.SYS)? )", -1, false}};
  CodeExpectation link;
  link.source = std::string(kFamily.name);
  link.kernel = "associativity::link_chains";
  link.probe = kEvictionProbe;
  link.ptx = {{R"(^st\.global\.u64 )", -1, false}};
  link.sass = {{R"(^STG\.E\.64)", -1, false}};
  return {trials, link};
}

}  // namespace

GPUPROBE_REGISTER_CODE_EXPECTATIONS(associativity_expectations);
GPUPROBE_REGISTER_ANALYZER(associativity::kFamily, analyze_associativity);

}  // namespace gpuprobe::associativity
