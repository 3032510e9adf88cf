#pragma once
// L1 sets, ways and replacement from how often random line sets evict a target, for caches
// whose set index is hashed (or fully associative), where no stride conflicts on purpose.
//
// A trial loads a target line x, walks N other lines drawn at random, and reloads x. With S
// sets of W ways and a balanced index, the number K of the N lines that fall in x's set is
// Binomial(N, 1/S) whatever the index function is; under LRU, x is evicted iff K >= W. Random
// replacement instead evicts x with probability 1/W per line that misses into its full set,
// which gives a smoother curve and, for the same lines, outcomes that vary from run to run.
// The family (microbench/associativity.cu) repeats each trial in place and replays some on
// the same lines, so that the replacement policy shows apart from the placement.
#include <optional>
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::associativity {

// The names of associativity.csv, written by the driver and read by the analyzer and the
// tests; the hit/miss calibration rows are memory_chase::kCalibrationProbe's.
constexpr const char* kEvictionProbe = "eviction";  // trials whose r-th reload missed, a fraction
constexpr const char* kDisagreementProbe = "disagreement";  // trials whose repeats ended unlike
constexpr const char* kReplayProbe = "replay";  // trials ending otherwise when run again
constexpr const char* kModelProbe = "model";    // the best fit's eviction probability (derived)
constexpr const char* kLinesColumn = "lines";   // N: random lines walked between the loads
constexpr const char* kSpacingColumn = "spacing_bytes";  // bytes between the lines
constexpr const char* kSharedColumn = "shared_bytes";    // dynamic shared memory the block held
constexpr const char* kRepeatColumn = "repeat";          // which reload in place: 1, 2, ...
constexpr const char* kModelColumn = "model";            // the fit's replacement model
constexpr const char* kSetsColumn = "sets";              // the fit's sets
constexpr const char* kWaysColumn = "ways";              // the fit's ways

// What the trials at one line count came to.
struct EvictionTally {
  double lines = 0;             // N: random lines walked between the loads of the target
  double trials = 0;
  std::vector<double> evicted;  // per repeat r: trials whose r-th reload of the target missed
  double disagreed = 0;         // trials whose repeats did not all end alike
  double replayed = 0;          // trials run a second time on the same lines, from a cold L1
  double replay_differs = 0;    //   whose first reload ended otherwise the second time
};

// The observation rows of the tallies (probes eviction, disagreement, replay: fractions with
// the trial count as reps and a 90 % Wilson interval as p05/p95), and back. `shared_bytes` is
// the dynamic shared memory each trial's block held, which may change the carve-out the
// driver picks: the main sweep holds none, a shorter one holds a little.
std::vector<Observation> eviction_rows(const std::vector<EvictionTally>& tallies,
                                       double spacing_bytes, double shared_bytes = 0);
// The rows of one shared-memory setting (rows that name none hold none); rows of one line
// count are merged; tallies come sorted by lines.
std::vector<EvictionTally> eviction_tallies(const std::vector<Observation>& obs,
                                            double shared_bytes = 0);
std::vector<double> shared_settings(const std::vector<Observation>& obs);  // ascending
double spacing_bytes(const std::vector<Observation>& obs);  // NaN when no eviction row says

// Where the first-reload eviction fraction rises: the smallest N with at least `high` of the
// targets evicted (n_max when none) and the largest N below it with at most `low` (n_min when
// none). The family sweeps between them.
std::pair<double, double> transition_bounds(const std::vector<EvictionTally>& tallies, double low,
                                            double high, double n_min, double n_max);

// Wilson score interval of k successes in n trials at normal quantile z.
std::pair<double, double> wilson_interval(double k, double n, double z = 1.645);

enum class Replacement { lru, random_cold, random_warm };
const char* replacement_name(Replacement m);

// P(target evicted) after `lines` random lines, for `sets` sets of `ways` ways (sets may be
// fractional: a hashed index balances lines over the sets). lru: K >= W (FIFO gives the same,
// as the walk has no hits); random_cold: the set starts empty, the first W - 1 lines after x
// fill it, every later one evicts x with probability 1/W; random_warm: the cache starts full,
// so every line evicts x with probability 1/(S W) and the ways cannot be told apart.
double eviction_probability(Replacement m, double lines, double sets, double ways);

// How the trials' own repeats and replays agree where the outcome is uncertain (first-reload
// eviction fraction in [0.05, 0.95]).
struct ReplacementVerdict {
  enum Kind { lru_like, history_dependent, random, undetermined } kind = undetermined;
  double repeat_disagreement = 0;  // fraction of those trials whose repeats disagreed
  double replay_disagreement = 0;  // fraction of their replays that ended otherwise
  double trials = 0, replayed = 0;
  std::string text() const;
};
// Disagreement at or below this is what timing noise gives: the outcome is fixed.
constexpr double kAgreeLimit = 0.03;
ReplacementVerdict replacement_verdict(const std::vector<EvictionTally>& tallies);

struct CacheModel {
  Replacement model = Replacement::lru;
  double sets = 0, ways = 0;
  double log_likelihood = 0;
  double capacity() const { return sets * ways; }  // lines
};

struct AssociativityFit {
  CacheModel best;             // of the model chosen (by the verdict, then the likelihood)
  double ways_low = 0, ways_high = 0;  // ways whose best fit is within 2 log-likelihood units
  double capacity_low = 0, capacity_high = 0;  // lines, over that range of ways
  bool ways_identified = true;  // false for random_warm: every W fits alike
  CacheModel pow2;              // best fit of the chosen model with a power-of-two set count
  double lru_log_likelihood = 0, random_cold_log_likelihood = 0, random_warm_log_likelihood = 0;
  double deviance_per_dof = 0;  // goodness of fit of `best` (about 1 when the model holds)
  double likelihood_band = 0;    // log-likelihood below the best within which ways stay possible
  double half_point = 0;        // lines where the eviction fraction crosses 0.5
  double trials = 0;
  int points = 0;
  ReplacementVerdict verdict;
};

// Best capacity (lines) for `ways` under `model`, by likelihood of the first reloads.
CacheModel fit_capacity(const std::vector<EvictionTally>& tallies, Replacement model, double ways);
// Nothing when the curve holds no information: fewer than 4 line counts, or the target
// evicted (or kept) at every line count.
std::optional<AssociativityFit> fit_associativity(const std::vector<EvictionTally>& tallies);

std::vector<Parameter> analyze_associativity(const std::vector<Observation>& obs,
                                             const Metadata& meta);

// Kernels of microbench/associativity.cu as the code checks name them.
std::vector<std::string> kernels();

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"associativity", "associativity.gp"};

}  // namespace gpuprobe::associativity
