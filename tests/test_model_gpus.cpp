// The model-GPU bench: every model GPU (tests/model_gpu.cpp) x 20 noise seeds, generated as the
// CSVs a run writes and analysed as `gpuprobe analyze` does. Gates: every level found
// and named right (none missing, none invented); latencies within 3 %, sizes within 10 % or
// with an interval that covers the truth; every wrong value with confidence < 0.5. Known
// failures are listed below with their reason and printed; any other failure fails the test.
// With GPUPROBE_CALIBRATION_OUT=DIR set, the calibration table is written there
// (results/model-gpus/ holds the committed one).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "analysis/analyzer.hpp"
#include "analysis/bandwidth.hpp"
#include "analysis/latency.hpp"
#include "analysis/shared_banks.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"
#include "committed_runs.hpp"
#include "model_bench.hpp"
#include "model_gpu.hpp"

using namespace gpuprobe;
using namespace gpuprobe::model;

namespace {

constexpr unsigned kSeeds = 20;
// Seeds past the gated ones, for ModelGpus.DISABLED_ExtraSeeds: rules made on seeds 1-20 are
// checked on others there (not gated).
constexpr unsigned kExtraSeedsEnd = 61;
// A value this confident must be right (the gate).
constexpr double kConfidentWrong = 0.5;

struct Answer {
  std::string model, name;
  unsigned seed = 0;
  double truth = 0, value = NAN, low = NAN, high = NAN, confidence = 0;
  std::string verdict;  // right, wrong, missing, invented
};

bool right(const Truth& t, const Parameter& p) {
  if (t.tolerance == 0) return std::fabs(p.value - t.value) < 0.5;
  if (std::fabs(p.value / t.value - 1) <= t.tolerance) return true;
  return t.interval_ok && p.low <= t.value && t.value <= p.high;
}

std::vector<Answer> bench(const Gpu& g, unsigned seed) {
  const Run run = generate(g, seed);
  auto params = analyze(std::string(latency::kFamily.name), run.latency, run.meta);
  for (const auto& p : analyze(std::string(bandwidth::kFamily.name), run.bandwidth, run.meta))
    params.push_back(p);
  for (const auto& p : analyze(std::string(shared_banks::kFamily.name), run.shared_banks, run.meta))
    params.push_back(p);
  std::map<std::string, Parameter> got;
  for (const auto& p : params) got[p.name] = p;
  std::vector<Answer> out;
  std::set<std::string> expected;
  for (const auto& t : truths(g)) {
    expected.insert(t.name);
    Answer a;
    a.model = g.key;
    a.name = t.name;
    a.seed = seed;
    a.truth = t.value;
    auto it = got.find(t.name);
    if (it == got.end()) {
      a.verdict = "missing";
    } else {
      a.value = it->second.value;
      a.low = it->second.low;
      a.high = it->second.high;
      a.confidence = it->second.confidence;
      a.verdict = right(t, it->second) ? "right" : "wrong";
    }
    out.push_back(a);
  }
  for (const auto& name : ladder_names())
    if (!expected.count(name) && got.count(name)) {
      const Parameter& p = got[name];
      Answer a;
      a.model = g.key;
      a.name = name;
      a.seed = seed;
      a.value = p.value;
      a.low = p.low;
      a.high = p.high;
      a.confidence = p.confidence;
      a.verdict = "invented";
      out.push_back(a);
    }
  return out;
}

// Failures known and not yet fixed (model_bench.hpp: the list is exact and only shrinks).
const std::string kFarShelf = "far L2 shelf's mean off by > 3 % under its wobble";
const std::vector<Known> kKnownFailures = {
    // A shelf's level is the trimmed mean of its flat part (latency.cpp, shelf_levels). The far
    // L2 partition's flat part spans 0.6-0.8 of an octave, 1.2-1.6 swings of its wobble, sampled
    // at about 3 points a swing: the mean may be off by a fifth of the wobble's amplitude, and
    // with the clock's error (up to 1 %) by more than 3 % (GH200 seed 2: 6.6 %, -6.2 %)
    {"gh200", param::l2_far_hit_latency, {2}, kFarShelf},
    // The same on the B200's far half (675 cycles, wobbling 3-8 %): 696, 3.1 % high, at 0.40.
    {"b200", param::l2_far_hit_latency, {20}, kFarShelf},
    // CDNA 3's Infinity Cache holds a TLB reach (456 cycles, 501 past 32 MiB, each wobbling up to
    // 8 %): the wobble's band joins the two into one shelf, read between them (476, 4.4 % high)
    // at 0.45. The truth is the hit before the reach.
    {"cdna3", param::llc_hit_latency, {20}, "LLC shelf read across the TLB reach inside it"},
    // Past RDNA 2's 128 MiB Infinity Cache the sweep's sparse tail holds two points; the last one,
    // at 1 GiB, is an outlier (x1.37): DRAM is read from it at 0.30.
    {"rdna2",
     param::dram_latency,
     {9},
     "the sweep's last point, DRAM's only one past the step, an outlier"},
};

bool failed(const Answer& a) { return a.verdict != "right"; }

// Every model x seed, analysed once for all the tests below.
const std::vector<Answer>& all_answers() {
  static const std::vector<Answer> all = [] {
    std::vector<Answer> v;
    for (const auto& g : model_gpus())
      for (unsigned seed = 1; seed <= kSeeds; ++seed)
        for (const auto& a : bench(g, seed)) v.push_back(a);
    return v;
  }();
  return all;
}

std::string describe(const Answer& a) {
  return a.model + " seed " + std::to_string(a.seed) + ": " + a.name + " " + a.verdict +
         " (truth " + table_number(a.truth) + ", value " + table_number(a.value) + " [" +
         table_number(a.low) + ", " + table_number(a.high) + "], confidence " + format_printf("%.2f", a.confidence) +
         ")";
}

// The calibration files: every answer; answers and fraction right per confidence bin; per
// model, answers right and seeds passing every gate.
std::string calibration_csv(const std::vector<Answer>& all) {
  std::string out = "model,seed,parameter,truth,value,low,high,confidence,verdict\n";
  for (const auto& a : all)
    out += a.model + "," + answer_fields(a.seed, a.name, a.truth, a.value, a.low, a.high, a.confidence, a.verdict) +
           "\n";
  return out;
}

std::string bins_csv(const std::vector<Answer>& all) {
  int right[10] = {}, answers[10] = {};
  for (const auto& a : all) {
    if (a.verdict == "missing") continue;
    const int b = confidence_bin(a.confidence);
    answers[b]++;
    right[b] += a.verdict == "right";
  }
  std::string out = "bin_low,bin_high,answers,right,fraction_right\n";
  for (int i = 0; i < 10; ++i) out += bin_row(i, answers[i], right[i]) + "\n";
  return out;
}

std::string models_csv(const std::vector<Answer>& all) {
  std::map<std::string, std::pair<int, int>> answers;                 // right, all
  std::map<std::string, std::map<unsigned, bool>> seed_pass;         // seed -> every gate
  for (const auto& a : all) {
    answers[a.model].first += !failed(a);
    answers[a.model].second += 1;
    auto& pass = seed_pass[a.model].emplace(a.seed, true).first->second;
    pass = pass && !failed(a);
  }
  std::string out = "model,answers_right,answers,seeds_passing,seeds\n";
  for (const auto& g : model_gpus()) {
    int pass = 0;
    for (const auto& [seed, ok] : seed_pass[g.key]) pass += ok;
    out += g.key + "," + std::to_string(answers[g.key].first) + "," +
           std::to_string(answers[g.key].second) + "," + std::to_string(pass) + "," +
           std::to_string(seed_pass[g.key].size()) + "\n";
  }
  return out;
}

}  // namespace

TEST(ModelGpus, AtLeastFourteenModelsWithSourcedFigures) {
  ASSERT_GE(model_gpus().size(), 14u);
  for (const auto& g : model_gpus())
    for (const auto& l : g.levels)
      for (const Figure* f : {&l.size, &l.latency})
        EXPECT_FALSE(f->source.empty()) << g.key << " " << l.name << ": figure without a source";
}

// The known lists are exact both ways: an unlisted failure and a listed case that passes now
// each fail the bench.
TEST(ModelBench, KnownListIsExact) {
  const std::vector<Known> list = {{"volta", param::dram_latency, {11}, "why"}};
  EXPECT_NE(find_known(list, "volta", param::dram_latency, 11), nullptr);
  EXPECT_EQ(find_known(list, "volta", param::dram_latency, 12), nullptr);
  EXPECT_EQ(find_known(list, "volta", param::l2_size, 11), nullptr);
  check_known_failures(list, {{"volta", param::dram_latency, 11, "listed"}});
  EXPECT_NONFATAL_FAILURE(check_known_failures(list, {}), "passes now");
  EXPECT_NONFATAL_FAILURE(check_known_failures(list, {{"volta", param::dram_latency, 11, "listed"},
                                                      {"volta", param::l2_size, 3, "new one"}}),
                          "unexpected failure: new one");
}

TEST(ModelGpus, GenerationIsSeededAndRepeatable) {
  const Gpu& g = model_gpus().front();
  const model::Run a = generate(g, 3), b = generate(g, 3), c = generate(g, 4);
  ASSERT_EQ(a.latency.size(), b.latency.size());
  for (size_t i = 0; i < a.latency.size(); ++i) EXPECT_EQ(a.latency[i].value, b.latency[i].value);
  EXPECT_NE(a.latency[0].value, c.latency[0].value);
}

// No wrong, invented value has a confidence of kConfidentWrong or more, known failure or not.
TEST(ModelGpus, NoConfidentlyWrongValue) {
  int n = 0;
  for (const auto& a : all_answers())
    if (failed(a) && a.verdict != "missing" && a.confidence >= kConfidentWrong) {
      ADD_FAILURE() << describe(a);
      ++n;
    }
  std::cout << "wrong or invented values with confidence >= " << kConfidentWrong << ": " << n << "\n";
}

TEST(ModelGpus, EveryModelTimesTwentySeedsFailsOnlyAsListed) {
  std::vector<Failure> failures;
  for (const auto& a : all_answers())
    if (failed(a)) failures.push_back({a.model, a.name, a.seed, describe(a)});
  check_known_failures(kKnownFailures, failures);
  std::cout << "model-GPU bench per model:\n" << models_csv(all_answers())
            << "confidence bins:\n" << bins_csv(all_answers());
}

// The committed calibration table (results/model-gpus/) is what the bench gives now. With
// GPUPROBE_CALIBRATION_OUT=DIR set, the tables are written there first (to refresh them:
// DIR=results/model-gpus, then gnuplot results/model-gpus/reliability.gp).
TEST(ModelGpus, CommittedCalibrationIsTheBenchs) {
  check_committed_tables({{"calibration.csv", calibration_csv(all_answers())},
                          {"calibration_bins.csv", bins_csv(all_answers())},
                          {"calibration_models.csv", models_csv(all_answers())}},
                         "ModelGpus.Committed*");
}

// Sizes the 20261122 runs read at 10 % of the step, the rule the ladder replaced with the
// midpoint; the later runs read them at the midpoint already. Both readings lie inside the
// L2's gradual step (about 24.6-29 MiB for the near partition, 49.9-55.7 MiB for the whole
// H100 L2, 56.6-65 MiB on the H200), within 6 % of the runtime's size either way:
//   H100 l2_segment_size 24.76 -> 26.23 MiB, l2_size 49.39 -> 51.11 MiB (50 MiB reported);
//   H200 l2_segment_size 28.70 -> 30.80 MiB, l2_size 56.86 -> 60.90 MiB (60 MiB reported).
// The midpoint is the reading that holds where a step is gradual (the 10 % rule
// put L2 sizes 18-41 % low there), and its interval spans the step. The list is exact: a
// listed size that no longer moves fails the test.
const std::map<std::pair<std::string, std::string>, std::string> kSizesReadAnew = {
    {{"nvidia-h100-80gb-hbm3/20261122T082310Z", param::l2_segment_size},
     "10 % of the step -> half"},
    {{"nvidia-h100-80gb-hbm3/20261122T082310Z", param::l2_size}, "10 % of the step -> half"},
    {{"nvidia-h200/20261122T081642Z", param::l2_segment_size}, "10 % of the step -> half"},
    {{"nvidia-h200/20261122T081642Z", param::l2_size}, "10 % of the step -> half"}};

// The reworked inference must not move what the committed Hopper runs measured: every
// parameter the latency and bandwidth families write that a committed run's parameters.csv
// holds from the same evidence file comes out within 1 % of it, but for the sizes listed
// above. (A committed l1_size from carveout.csv is that family's, now l1_size_no_miss.)
TEST(ModelGpus, CommittedHopperRunsReanalyseWithinOnePercent) {
  int compared = 0;
  std::set<std::pair<std::string, std::string>> moved_as_listed;
  for (const auto& r : kCommittedRuns) {
    const std::string run = r.dir;
    if (r.kind == RunKind::repeat) continue;
    if (run.rfind("nvidia-h100-80gb-hbm3/", 0) != 0 && run.rfind("nvidia-h200/", 0) != 0) continue;
    const std::string d = committed_run(run);
    std::map<std::string, Parameter> committed;
    for (const auto& p : read_parameters(d + "/parameters.csv")) committed[p.name] = p;
    for (const std::string& family :
         {std::string(latency::kFamily.name), std::string(bandwidth::kFamily.name)}) {
      if (!std::filesystem::exists(d + "/" + family + ".csv")) continue;
      Metadata meta;
      const auto obs = read_observations(d + "/" + family + ".csv", &meta);
      for (const auto& p : analyze(family, obs, meta)) {
        auto it = committed.find(p.name);
        if (it == committed.end() || it->second.evidence != family + ".csv") continue;
        ++compared;
        const bool moved = std::fabs(p.value / it->second.value - 1) > 0.01;
        const auto listed = kSizesReadAnew.find({run, p.name});
        if (listed != kSizesReadAnew.end()) {
          std::cout << "EXPECTED DEVIATION: " << run << " " << p.name << " " << it->second.value
                    << " -> " << p.value << ": " << listed->second << "\n";
          if (moved) moved_as_listed.insert(listed->first);
          continue;
        }
        EXPECT_FALSE(moved) << run << " " << p.name << " " << it->second.value << " -> " << p.value;
      }
    }
  }
  EXPECT_GT(compared, 0) << "no committed Hopper run with parameters.csv";
  for (const auto& [key, why] : kSizesReadAnew)
    EXPECT_TRUE(moved_as_listed.count(key))
        << key.first << " " << key.second << " is listed as moving but agrees now: remove it";
  std::cout << compared << " committed parameters compared\n";
}

// An H100 latency family run with the sweep's tail past 4.5x L2 (450 and 900 MiB, this
// session's build, which stepped 2x): the tail's DRAM points make no level of their own, and
// the ladder is the H100's.
TEST(ModelGpus, RecordedH100RunWithTheTailKeepsItsLadder) {
  const std::string path = std::string(GPUPROBE_TEST_DATA) + "/h100_latency_tail.csv";
  // Committed data: missing is a failure, not a skip.
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is absent";
  Metadata meta;
  const auto obs = read_observations(path, &meta);
  std::map<std::string, Parameter> p;
  for (const auto& q : analyze(std::string(latency::kFamily.name), obs, meta)) p[q.name] = q;
  for (const char* name : {param::llc_hit_latency, param::llc_size, param::mid_cache_hit_latency,
                           param::l2_hit_latency})
    EXPECT_EQ(p.count(name), 0u) << name;
  ASSERT_EQ(p.count(param::l2_size), 1u);
  EXPECT_NEAR(p[param::l2_size].value, 50.0 * 1024 * 1024, 0.1 * 50 * 1024 * 1024);
  EXPECT_NEAR(p[param::l2_segment_size].value, 25.0 * 1024 * 1024, 0.1 * 25 * 1024 * 1024);
  EXPECT_EQ(p[param::cache_levels].value, 2);
  EXPECT_GT(p[param::dram_latency].value, p[param::l2_far_hit_latency].value);
  // The ladder's latencies as this run measured them (2026-11-28), within their 3 % tolerance
  // (docs/parameters.md): the file's values scaled or replaced fail here.
  constexpr double kLatencyTolerance = 0.03;
  const std::pair<const char*, double> pinned[] = {{param::l1_hit_latency, 32.02},
                                                   {param::l2_near_hit_latency, 284.43},
                                                   {param::l2_far_hit_latency, 531.33},
                                                   {param::dram_latency, 689.28}};
  for (const auto& [name, cycles] : pinned) {
    ASSERT_EQ(p.count(name), 1u) << name;
    EXPECT_NEAR(p[name].value, cycles, kLatencyTolerance * cycles) << name;
  }
}

// The gates on seeds kSeeds+1..kExtraSeedsEnd-1, printed, not enforced: how the rules made on the
// gated seeds hold on others (run with --gtest_also_run_disabled_tests; about 15 s).
TEST(ModelGpus, DISABLED_ExtraSeeds) {
  int seeds = 0, passing = 0, confident_wrong = 0;
  for (const auto& g : model_gpus())
    for (unsigned seed = kSeeds + 1; seed < kExtraSeedsEnd; ++seed, ++seeds) {
      bool pass = true;
      for (const auto& a : bench(g, seed)) {
        if (!failed(a)) continue;
        pass = false;
        const bool confident = a.verdict != "missing" && a.confidence >= kConfidentWrong;
        confident_wrong += confident;
        std::cout << (confident ? "  CONFIDENTLY WRONG " : "  failed ") << describe(a) << "\n";
      }
      passing += pass;
    }
  std::cout << "ladder bench, seeds " << kSeeds + 1 << "-" << kExtraSeedsEnd - 1 << ": " << passing << " of " << seeds
            << " seeds pass every gate, " << confident_wrong << " answers wrong with confidence >= "
            << kConfidentWrong << "\n";
}

// Coarse and gappy curves (issue: "Coarse and gappy curves"): public latency sweeps step by
// 1.375x, which puts about two points on a split L2's far level (the H100's 25-50 MiB), and a
// sweep with gaps around a two-die L2's transitions (the B200's 63 and 126 MiB) does the same.
// The far level makes no plateau there; before, the ladder read the near segment as l2_size
// (and left l2_segment_size and l2_far_hit_latency out). Gates per seed: l2_size right, or below
// kSparseDoubt with an interval that covers the truth; never within kNearShare of the near
// segment (that is l2_segment_size's, under its own name); l2_segment_size given, right or
// below kSparseDoubt and covering; l2_far_hit_latency, where given, right or below
// kConfidentWrong.
constexpr double kSparseDoubt = 0.3;
constexpr double kNearShare = 0.15;
struct SparseCase {
  std::string model;
  Grid grid;
};
std::vector<SparseCase> sparse_cases() {
  const double MiB = 1024.0 * 1024;
  Grid coarse;  // 1 KiB to 4 GiB in steps of 1.375x, ld_global alone
  Grid gappy;   // the family's 2^(1/6) steps, unrefined, without 68-100 and 130-190 MiB
  gappy.ratio = 1.122462048;
  gappy.gaps = {{68 * MiB, 100 * MiB}, {130 * MiB, 190 * MiB}};
  return {{"h100", coarse}, {"gh200", coarse}, {"b200", gappy}};
}
const Gpu& model_named(const std::string& key) {
  for (const auto& g : model_gpus())
    if (g.key == key) return g;
  throw std::runtime_error("no model " + key);
}
// What fails the gates above for one seed's parameters (empty: none).
std::vector<std::pair<std::string, std::string>> sparse_failures(const Gpu& g,
                                                                 const std::vector<Parameter>& ps) {
  std::map<std::string, Parameter> p;
  for (const auto& q : ps) p[q.name] = q;
  std::map<std::string, Truth> t;
  for (const auto& q : truths(g)) t[q.name] = q;
  std::vector<std::pair<std::string, std::string>> out;
  auto fmt = [](const Parameter& q) {
    return table_number(q.value) + " [" + table_number(q.low) + ", " + table_number(q.high) +
           "] at " + format_printf("%.2f", q.confidence);
  };
  auto size_ok = [&](const std::string& name) {
    if (!p.count(name)) return out.push_back({name, "missing"});
    const Parameter& q = p[name];
    const double truth = t[name].value;
    const bool right = std::fabs(q.value / truth - 1) <= t[name].tolerance;
    const bool doubt = q.confidence < kSparseDoubt && q.low <= truth && truth <= q.high;
    if (!right && !doubt) out.push_back({name, "wrong: " + fmt(q)});
  };
  size_ok(param::l2_size);
  size_ok(param::l2_segment_size);
  if (p.count(param::l2_size) &&
      std::fabs(p[param::l2_size].value / t[param::l2_segment_size].value - 1) <= kNearShare)
    out.push_back({param::l2_size, "reads the near segment: " + fmt(p[param::l2_size])});
  if (p.count(param::l2_far_hit_latency)) {
    const Parameter& q = p[param::l2_far_hit_latency];
    const Truth& tr = t[param::l2_far_hit_latency];
    if (std::fabs(q.value / tr.value - 1) > tr.tolerance && q.confidence >= kConfidentWrong)
      out.push_back({param::l2_far_hit_latency, "wrong: " + fmt(q)});
  }
  return out;
}
// The seeds that fail, each with its reason (model_bench.hpp: the list is exact).
const std::string kFarUnseen =
    "the far level's few points hold a transition's or a slow one and climb past kHiddenRise "
    "(latency.cpp): no far level; l2_size read across the whole step below 0.1, its interval "
    "covering the truth";
const std::vector<Known> kSparseKnown = {
    // a step at 17 MiB inside the near level (its wobble) read as the near segment's end, at 0.09
    {"gh200", param::l2_segment_size, {2}, "a wobble's step inside the near level read as its end"},
    {"gh200", param::l2_segment_size, {12, 19}, kFarUnseen},
    {"gh200", param::l2_size, {12, 19}, kFarUnseen},
    {"b200", param::l2_segment_size, {2, 7}, kFarUnseen},
    {"b200", param::l2_size, {7}, kFarUnseen},
};

TEST(ModelGpus, CoarseAndGappySweepsNameTheNearSegmentAndNeverAConfidentWrongSize) {
  std::vector<Failure> failures;
  for (const auto& c : sparse_cases()) {
    const Gpu& g = model_named(c.model);
    for (unsigned seed = 1; seed <= kSeeds; ++seed) {
      const model::Run run = generate_on_grid(g, seed, c.grid);
      const auto ps = analyze(std::string(latency::kFamily.name), run.latency, run.meta);
      for (const auto& [name, why] : sparse_failures(g, ps))
        failures.push_back({c.model, name, seed,
                            c.model + " seed " + std::to_string(seed) + ": " + name + " " + why});
    }
  }
  check_known_failures(kSparseKnown, failures);
}
