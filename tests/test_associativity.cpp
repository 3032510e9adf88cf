// L1 sets, ways and replacement from eviction probabilities of random line sets: the models,
// the rows, and the fit on curves from simulated caches (set-associative LRU with a random
// hash, fully associative LRU, random replacement), swept the way the family sweeps them, with
// the sampling noise of as many trials; and on the curve recorded on the H100.
#include <gtest/gtest.h>

#include "parameter_checks.hpp"
#include "recorded.hpp"

#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include "analysis/analyzer.hpp"
#include "analysis/associativity.hpp"
#include "analysis/common/util.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"

using namespace gpuprobe;
using namespace gpuprobe::associativity;

namespace {

constexpr int kRepeats = 3;
constexpr double kSpacing = 128;

// One set of a cache: `ways` slots, LRU (a recency list threaded through arrays) or random
// victims. Lines are small integers.
class SetSim {
 public:
  SetSim(int ways, bool lru, int lines, std::mt19937_64& rng)
      : ways_(ways), lru_(lru), rng_(rng), slot_of_(lines, -1), slots_(ways, -1),
        newer_(lines, -1), older_(lines, -1) {}

  // True on a hit.
  bool access(int line) {
    if (slot_of_[line] >= 0) {
      if (lru_) {
        unlink(line);
        push_newest(line);
      }
      return true;
    }
    int s;
    if (filled_ < ways_) {
      s = filled_++;
    } else {
      const int victim =
          lru_ ? oldest_ : slots_[std::uniform_int_distribution<int>(0, ways_ - 1)(rng_)];
      if (lru_) unlink(victim);
      s = slot_of_[victim];
      slot_of_[victim] = -1;
    }
    slots_[s] = line;
    slot_of_[line] = s;
    if (lru_) push_newest(line);
    return false;
  }

 private:
  void unlink(int line) {
    (older_[line] >= 0 ? newer_[older_[line]] : oldest_) = newer_[line];
    (newer_[line] >= 0 ? older_[newer_[line]] : newest_) = older_[line];
  }
  void push_newest(int line) {
    older_[line] = newest_;
    newer_[line] = -1;
    (newest_ >= 0 ? newer_[newest_] : oldest_) = line;
    newest_ = line;
  }

  int ways_;
  bool lru_;
  std::mt19937_64& rng_;
  std::vector<int> slot_of_, slots_;
  std::vector<int> newer_, older_;
  int newest_ = -1, oldest_ = -1;
  int filled_ = 0;
};

// A cache of `sets` x `ways` lines whose index spreads random lines evenly (a hash), with LRU
// or random replacement, starting empty (the GPU's L1 at a launch) or full of other lines.
struct CacheConfig {
  int sets = 1, ways = 1;
  bool lru = true;
  bool warm = false;
  double lapse = 5e-4;  // timing glitches: an outcome misread
};

class TrialSim {
 public:
  TrialSim(CacheConfig c, uint64_t seed) : c_(c), rng_(seed) {}

  // One trial and, when `replay`, the same lines once more from the same start; adds to `t`.
  void trial(EvictionTally& t, bool replay) {
    const int n = static_cast<int>(t.lines);
    // Only the target's set matters: K of the N lines fall in it.
    const int k = c_.sets == 1 ? n : std::binomial_distribution<int>(n, 1.0 / c_.sets)(rng_);
    std::vector<bool> gone = run(k);
    bool any = false, all = true;
    for (int r = 0; r < kRepeats; ++r) {
      t.evicted[r] += gone[r];
      any = any || gone[r];
      all = all && gone[r];
    }
    t.trials += 1;
    t.disagreed += any && !all;
    if (replay) {
      t.replayed += 1;
      t.replay_differs += run(k)[0] != gone[0];
    }
  }

 private:
  // Line 0 is the target, 1..k the walk's lines in its set, then other lines of a warm start.
  std::vector<bool> run(int k) {
    SetSim set(c_.ways, c_.lru, k + 1 + c_.ways, rng_);
    if (c_.warm)
      for (int i = 0; i < c_.ways; ++i) set.access(k + 1 + i);
    set.access(0);
    std::vector<bool> gone(kRepeats);
    std::bernoulli_distribution glitch(c_.lapse);
    for (int r = 0; r < kRepeats; ++r) {
      for (int i = 1; i <= k; ++i) set.access(i);
      gone[r] = !set.access(0) != glitch(rng_);
    }
    return gone;
  }

  CacheConfig c_;
  std::mt19937_64 rng_;
};

// The family's sweep: coarse geometric steps up to 1.6x the unified array, then evenly over
// the transition with replays, then between the points where a steep step falls.
std::vector<EvictionTally> sweep(const CacheConfig& c, double unified_lines, int sms,
                                 uint64_t seed = 1) {
  TrialSim sim(c, seed);
  std::map<double, EvictionTally> tallies;
  auto point = [&](double n, int launches, int replays) {
    EvictionTally& t = tallies[n];
    t.lines = n;
    t.evicted.resize(kRepeats, 0.0);
    for (int l = 0; l < launches; ++l)
      for (int s = 0; s < sms; ++s) sim.trial(t, l < replays);
  };
  auto all = [&] {
    std::vector<EvictionTally> v;
    for (const auto& [n, t] : tallies) v.push_back(t);
    return v;
  };
  auto even = [&](double lo, double hi, int points, int launches, int replays) {
    const int steps = hi > lo ? std::min(points - 1, static_cast<int>(hi - lo)) : 0;
    for (int i = 0; i <= steps; ++i)
      point(lo + std::round((hi - lo) * i / std::max(1, steps)), launches, replays);
  };
  const double n_min = std::floor(unified_lines / 16), n_max = std::floor(1.6 * unified_lines);
  for (int i = 0; i < 16; ++i) point(std::round(n_min * std::pow(n_max / n_min, i / 15.0)), 2, 0);
  auto [lo, hi] = transition_bounds(all(), 0.02, 0.98, n_min, n_max);
  even(lo, hi, 32, 12, 4);
  auto [a, b] = transition_bounds(all(), 0.1, 0.9, n_min, n_max);
  int between = 0;
  for (const auto& [n, t] : tallies) between += n > a && n < b;
  if (between < 8 && b > a + 1) even(a + 1, b - 1, 16, 12, 4);
  return all();
}

// Through the rows and the analyzer, as `gpuprobe analyze` sees them.
std::vector<Parameter> analyze_tallies(const std::vector<EvictionTally>& t) {
  return analyze(std::string(kFamily.name), eviction_rows(t, kSpacing));
}

void expect_sane(const std::vector<Parameter>& ps) {
  for (const auto& p : ps) {
    EXPECT_GE(p.confidence, 0.0) << p.name;
    EXPECT_LE(p.confidence, 1.0) << p.name;
    EXPECT_LE(p.low, p.value) << p.name;
    EXPECT_GE(p.high, p.value) << p.name;
    EXPECT_EQ(p.evidence, std::string(kFamily.name) + ".csv") << p.name;
    EXPECT_FALSE(p.method.empty()) << p.name;
  }
}

// ---- Models and rows ----

TEST(AssociativityModel, LruIsABinomialTail) {
  // One set: a step at N = W.
  EXPECT_EQ(eviction_probability(Replacement::lru, 99, 1, 100), 0.0);
  EXPECT_EQ(eviction_probability(Replacement::lru, 100, 1, 100), 1.0);
  // One way: any line in the target's set evicts it.
  EXPECT_NEAR(eviction_probability(Replacement::lru, 50, 64, 1), 1 - std::pow(63.0 / 64, 50), 1e-9);
  // Two ways of 4 sets, N = 3: P(K >= 2), K ~ Binomial(3, 1/4).
  EXPECT_NEAR(eviction_probability(Replacement::lru, 3, 4, 2),
              3 * 0.25 * 0.25 * 0.75 + 0.25 * 0.25 * 0.25, 1e-12);
  // Rises with N, falls with the ways at a fixed capacity.
  double prev = 0;
  for (double n = 100; n <= 3000; n += 100) {
    const double p = eviction_probability(Replacement::lru, n, 128, 16);
    EXPECT_GE(p, prev);
    prev = p;
  }
  EXPECT_GT(eviction_probability(Replacement::lru, 1500, 512, 4),
            eviction_probability(Replacement::lru, 1500, 32, 64));
  EXPECT_LT(eviction_probability(Replacement::lru, 2500, 512, 4),
            eviction_probability(Replacement::lru, 2500, 32, 64));
}

TEST(AssociativityModel, RandomReplacement) {
  // One way: random and LRU agree.
  EXPECT_NEAR(eviction_probability(Replacement::random_cold, 300, 64, 1),
              eviction_probability(Replacement::lru, 300, 64, 1), 1e-9);
  // One set, cold: nothing goes until the set is full, then 1/W per line.
  EXPECT_EQ(eviction_probability(Replacement::random_cold, 15, 1, 16), 0.0);
  EXPECT_NEAR(eviction_probability(Replacement::random_cold, 20, 1, 16),
              1 - std::pow(15.0 / 16, 5), 1e-12);
  // Warm: the capacity alone.
  EXPECT_NEAR(eviction_probability(Replacement::random_warm, 1000, 64, 16),
              1 - std::pow(1 - 1.0 / 1024, 1000), 1e-12);
  EXPECT_NEAR(eviction_probability(Replacement::random_warm, 1000, 16, 64),
              eviction_probability(Replacement::random_warm, 1000, 64, 16), 1e-12);
}

TEST(AssociativityRows, RoundTripThroughCsv) {
  EvictionTally a{512, 264, {10, 11, 12}, 3, 0, 0};
  EvictionTally b{1024, 1584, {800, 801, 799}, 41, 528, 7};
  auto rows = eviction_rows({b, a}, kSpacing);
  const std::string text = format_observations({{"gpu", "test"}}, rows);
  auto back = eviction_tallies(observations_from_table(parse_csv(text, "mem.csv")));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].lines, 512);
  EXPECT_EQ(back[1].lines, 1024);
  EXPECT_EQ(back[1].trials, 1584);
  EXPECT_EQ(back[1].evicted, (std::vector<double>{800, 801, 799}));
  EXPECT_EQ(back[1].disagreed, 41);
  EXPECT_EQ(back[1].replayed, 528);
  EXPECT_EQ(back[1].replay_differs, 7);
  EXPECT_EQ(back[0].replayed, 0);
  EXPECT_EQ(spacing_bytes(rows), kSpacing);
  // Rows of one line count from two phases merge.
  auto twice = eviction_rows({a, a}, kSpacing);
  auto merged = eviction_tallies(twice);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].trials, 528);
  EXPECT_EQ(merged[0].evicted[2], 24);
}

TEST(AssociativityRows, SharedMemorySettingsApart) {
  EvictionTally a{512, 264, {10, 11, 12}, 3, 0, 0};
  EvictionTally b{512, 132, {100, 100, 100}, 0, 0, 0};
  auto rows = eviction_rows({a}, kSpacing, 0);
  for (const auto& o : eviction_rows({b}, kSpacing, 4096)) rows.push_back(o);
  EXPECT_EQ(shared_settings(rows), (std::vector<double>{0, 4096}));
  ASSERT_EQ(eviction_tallies(rows).size(), 1u);
  EXPECT_EQ(eviction_tallies(rows)[0].trials, 264);
  ASSERT_EQ(eviction_tallies(rows, 4096).size(), 1u);
  EXPECT_EQ(eviction_tallies(rows, 4096)[0].evicted[0], 100);
  // Rows that name no setting held no shared memory.
  for (auto& o : rows) o.params.erase(o.params.begin() + 2);
  EXPECT_EQ(shared_settings(rows), (std::vector<double>{0}));
}

TEST(AssociativityRows, WilsonInterval) {
  auto [lo, hi] = wilson_interval(0, 100);
  EXPECT_EQ(lo, 0.0);
  EXPECT_GT(hi, 0.0);
  EXPECT_LT(hi, 0.05);
  auto [lo2, hi2] = wilson_interval(50, 100);
  EXPECT_LT(lo2, 0.5);
  EXPECT_GT(hi2, 0.5);
  EXPECT_NEAR(lo2 + hi2, 1.0, 1e-12);
  EXPECT_EQ(wilson_interval(0, 0), (std::pair<double, double>{0.0, 1.0}));
}

TEST(AssociativityRows, NoCurveNoParameters) {
  // Kept at every line count, or evicted at every one: nothing to fit.
  std::vector<EvictionTally> flat;
  for (double n : {100, 200, 400, 800, 1600}) flat.push_back({n, 264, {0, 0, 0}, 0, 0, 0});
  EXPECT_TRUE(analyze_tallies(flat).empty());
  for (auto& t : flat) t.evicted = {264, 264, 264};
  EXPECT_TRUE(analyze_tallies(flat).empty());
  EXPECT_TRUE(analyze(std::string(kFamily.name), {}).empty());
}

// ---- Fits on simulated caches ----

// 1024 lines of L1 in a unified array of 1200: the family's sweep, with 132 SMs.
constexpr int kLines = 1024;
constexpr double kUnified = 1200;
constexpr int kSms = 132;

struct Expect {
  double ways, sets;
};

void expect_recovers(const std::vector<Parameter>& ps, Expect e, double capacity) {
  expect_sane(ps);
  const Parameter* w = find(ps, param::l1_ways);
  const Parameter* s = find(ps, param::l1_sets);
  const Parameter* c = find(ps, param::l1_size);
  ASSERT_NE(w, nullptr);
  ASSERT_NE(s, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_LE(w->low, e.ways) << w->method;
  EXPECT_GE(w->high, e.ways) << w->method;
  EXPECT_LE(w->high / w->low, 1.35) << w->method;
  EXPECT_NEAR(w->value, e.ways, 0.15 * e.ways) << w->method;
  EXPECT_NEAR(s->value, e.sets, 0.15 * e.sets) << s->method;
  EXPECT_NEAR(c->value, capacity * kSpacing, 0.03 * capacity * kSpacing) << c->method;
  // Ways are exact in the catalog: a range of them is capped below 0.5 (analysis/common).
  if (w->low == w->high) EXPECT_GT(w->confidence, 0.5) << w->method;
  else EXPECT_EQ(w->confidence, analysis::kPastToleranceConfidence) << w->method;
  EXPECT_LE(c->confidence, 0.6);
}

TEST(AssociativityFit, LruFourWays) {
  auto t = sweep({256, 4, true}, kUnified, kSms);
  auto f = fit_associativity(t);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict.kind, ReplacementVerdict::lru_like) << f->verdict.text();
  EXPECT_EQ(f->best.model, Replacement::lru);
  EXPECT_EQ(f->pow2.sets, 256);
  EXPECT_EQ(f->pow2.ways, 4);
  auto ps = analyze_tallies(t);
  expect_recovers(ps, {4, 256}, kLines);
  EXPECT_NE(find(ps, param::l1_ways)->method.find("LRU-like"), std::string::npos);
}

TEST(AssociativityFit, LruSixteenWays) {
  auto t = sweep({64, 16, true}, kUnified, kSms, 2);
  expect_recovers(analyze_tallies(t), {16, 64}, kLines);
}

TEST(AssociativityFit, LruSixtyFourWays) {
  auto t = sweep({16, 64, true}, kUnified, kSms, 3);
  expect_recovers(analyze_tallies(t), {64, 16}, kLines);
}

TEST(AssociativityFit, FullyAssociativeIsOneSet) {
  auto t = sweep({1, 512, true}, 600, kSms, 4);
  auto ps = analyze_tallies(t);
  expect_sane(ps);
  const Parameter* w = find(ps, param::l1_ways);
  const Parameter* s = find(ps, param::l1_sets);
  ASSERT_NE(w, nullptr);
  ASSERT_NE(s, nullptr);
  // A step at exactly 512 lines: one set of 512 ways.
  EXPECT_EQ(s->value, 1) << s->method;
  EXPECT_LE(s->high, 1.1) << s->method;
  EXPECT_NEAR(w->value, 512, 5) << w->method;
  EXPECT_LE(w->high, 512) << w->method;
  EXPECT_NE(w->method.find("fully associative"), std::string::npos) << w->method;
  EXPECT_NEAR(find(ps, param::l1_size)->value, 512 * kSpacing, 0.01 * 512 * kSpacing);
}

TEST(AssociativityFit, CapacityAtEachSharedMemorySetting) {
  // The main sweep holds no shared memory; the second holds 4 KiB and sees a larger L1 (more
  // ways here), over fewer points: l1_size is the larger, the ways the main sweep's.
  auto rows = eviction_rows(sweep({64, 16, true}, kUnified, kSms, 9), kSpacing, 0);
  for (const auto& o : eviction_rows(sweep({64, 18, true}, kUnified, 33, 10), kSpacing, 4096))
    rows.push_back(o);
  auto ps = analyze(std::string(kFamily.name), rows);
  expect_sane(ps);
  ASSERT_NE(find(ps, param::l1_ways), nullptr);
  EXPECT_EQ(find(ps, param::l1_ways)->value, 16);
  const Parameter* c = find(ps, param::l1_size);
  ASSERT_NE(c, nullptr);
  EXPECT_NEAR(c->value, 1152 * kSpacing, 0.03 * 1152 * kSpacing) << c->method;
  EXPECT_NE(c->method.find("holding no shared memory: 10"), std::string::npos) << c->method;
  EXPECT_NE(c->method.find("holding 4 KiB of dynamic shared memory per block: 11"),
            std::string::npos)
      << c->method;
}

TEST(AssociativityFit, FewTrialsGiveARange) {
  // Sixteen SMs instead of 132: the ways are pinned less narrowly, and said so.
  auto few = analyze_tallies(sweep({16, 64, true}, kUnified, 16, 8));
  auto many = analyze_tallies(sweep({16, 64, true}, kUnified, kSms, 8));
  expect_sane(few);
  const Parameter* w = find(few, param::l1_ways);
  ASSERT_NE(w, nullptr);
  EXPECT_LE(w->low, 64) << w->method;
  EXPECT_GE(w->high, 64) << w->method;
  EXPECT_GT(w->high - w->low, find(many, param::l1_ways)->high - find(many, param::l1_ways)->low);
  EXPECT_LE(w->confidence, find(many, param::l1_ways)->confidence);
}

TEST(AssociativityFit, RandomReplacementFromAnEmptyCache) {
  auto t = sweep({64, 16, false}, kUnified, kSms, 5);
  auto f = fit_associativity(t);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict.kind, ReplacementVerdict::random) << f->verdict.text();
  EXPECT_GT(f->verdict.replay_disagreement, 0.1);
  EXPECT_EQ(f->best.model, Replacement::random_cold);
  auto ps = analyze_tallies(t);
  const Parameter* w = find(ps, param::l1_ways);
  ASSERT_NE(w, nullptr);
  EXPECT_LE(w->low, 16) << w->method;
  EXPECT_GE(w->high, 16) << w->method;
  EXPECT_NE(w->method.find("random/non-LRU"), std::string::npos) << w->method;
  EXPECT_NEAR(find(ps, param::l1_size)->value, kLines * kSpacing, 0.05 * kLines * kSpacing);
}

TEST(AssociativityFit, RandomReplacementInAFullCacheHidesTheWays) {
  auto t = sweep({64, 16, false, true}, kUnified, kSms, 6);
  auto f = fit_associativity(t);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->verdict.kind, ReplacementVerdict::random);
  EXPECT_EQ(f->best.model, Replacement::random_warm);
  EXPECT_FALSE(f->ways_identified);
  auto ps = analyze_tallies(t);
  expect_sane(ps);
  EXPECT_EQ(find(ps, param::l1_ways), nullptr);
  EXPECT_EQ(find(ps, param::l1_sets), nullptr);
  ASSERT_NE(find(ps, param::l1_size), nullptr);
  EXPECT_NEAR(find(ps, param::l1_size)->value, kLines * kSpacing, 0.05 * kLines * kSpacing);
}

TEST(AssociativityFit, VerdictFromRepeatsAndReplays) {
  std::vector<EvictionTally> t = {{1000, 1000, {500, 500, 500}, 5, 300, 1}};
  EXPECT_EQ(replacement_verdict(t).kind, ReplacementVerdict::lru_like);
  t[0].disagreed = 200;
  EXPECT_EQ(replacement_verdict(t).kind, ReplacementVerdict::history_dependent);
  t[0].replay_differs = 90;
  EXPECT_EQ(replacement_verdict(t).kind, ReplacementVerdict::random);
  t[0].replayed = t[0].replay_differs = 0;
  EXPECT_EQ(replacement_verdict(t).kind, ReplacementVerdict::random);
  // Certain outcomes say nothing about the replacement.
  t[0].evicted = {1000, 1000, 1000};
  EXPECT_EQ(replacement_verdict(t).kind, ReplacementVerdict::undetermined);
}

// ---- The H100 (tests/data/h100_associativity.csv, committed from a run) ----

TEST(AssociativityH100, SensibleSetsWaysAndCapacity) {
  const std::string path = std::string(GPUPROBE_TEST_DATA) + "/h100_associativity.csv";
  REQUIRE_RECORDED(std::filesystem::exists(path)) << "tests/data/h100_associativity.csv";
  Metadata meta;
  auto obs = read_observations(path, &meta);
  auto tallies = eviction_tallies(obs);
  ASSERT_GE(tallies.size(), 8u);
  auto ps = analyze(std::string(kFamily.name), obs, meta);
  expect_sane(ps);
  const Parameter* c = find(ps, param::l1_size);
  ASSERT_NE(c, nullptr);
  // The H100's L1 at the smallest carve-out: 200-256 KiB (carve-out and latency families).
  EXPECT_GE(c->value, 200 * 1024.0) << c->method;
  EXPECT_LE(c->value, 256 * 1024.0) << c->method;
  EXPECT_LT(c->confidence, 0.65);
  if (const Parameter* w = find(ps, param::l1_ways)) {
    const Parameter* s = find(ps, param::l1_sets);
    ASSERT_NE(s, nullptr);
    EXPECT_GE(w->value, 1);
    EXPECT_GE(s->value, 1);
    EXPECT_NEAR(w->value * s->value * 128, c->value, 0.1 * c->value) << w->method;
  }
}

// Two runs a minute apart fit the same sets and ways (the fit once flipped between models
// on a 3 % disagreement threshold; it must not depend on such noise).
TEST(AssociativityH100, RepeatedRunsAgree) {
  const std::string dir = std::string(GPUPROBE_TEST_DATA);
  REQUIRE_RECORDED(std::filesystem::exists(dir + "/h100_associativity.csv") &&
                   std::filesystem::exists(dir + "/h100_associativity_repeat.csv"))
      << "the repeated H100 associativity run";
  std::vector<std::vector<Parameter>> fits;
  for (const char* f : {"/h100_associativity.csv", "/h100_associativity_repeat.csv"}) {
    Metadata meta;
    auto obs = read_observations(dir + f, &meta);
    fits.push_back(analyze(std::string(kFamily.name), obs, meta));
  }
  for (const char* name : {param::l1_ways, param::l1_sets, param::l1_size}) {
    const Parameter* a = find(fits[0], name);
    const Parameter* b = find(fits[1], name);
    ASSERT_TRUE(a && b) << name;
    EXPECT_NEAR(a->value / b->value, 1, 0.1) << name << ": " << a->method;
  }
}

}  // namespace
