// The TLB family on the model-GPU bench: every model GPU x the same 20 noise seeds as the
// ladder's bench, tlb.csv generated as microbench/tlb.cu records it and analysed as `gpuprobe
// analyze` does. Gates as the ladder's: tlb_l1_coverage and tlb_l2_coverage within 10 % or an
// interval covering the truth, tlb_miss_latency within 3 %, every wrong value with confidence
// < 0.5 (no exception); known failures (wrong with low confidence, or missing) listed exactly,
// each with its reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include "analysis/analyzer.hpp"
#include "analysis/tlb.hpp"
#include "model_bench.hpp"
#include "model_gpu.hpp"
#include "base/parameter_names.hpp"

using namespace gpuprobe;
using namespace gpuprobe::model;

namespace {

constexpr unsigned kSeeds = 20;
// Seeds past the gated ones, for DISABLED_ExtraSeeds: rules are checked on seeds they were not
// made on.
constexpr unsigned kExtraSeedsEnd = 80;
constexpr double kConfidentWrong = 0.5;  // a value this confident must be right

struct TlbAnswer {
  std::string model, name;
  unsigned seed = 0;
  double truth = 0, value = NAN, low = NAN, high = NAN, confidence = 0;
  bool ok = false, missing = false;
};

std::string describe(const TlbAnswer& a) {
  return a.model + " seed " + std::to_string(a.seed) + " " + a.name + ": truth " + std::to_string(a.truth) +
         (a.missing ? ", missing"
                    : ", got " + std::to_string(a.value) + " [" + std::to_string(a.low) + ", " +
                          std::to_string(a.high) + "] confidence " + std::to_string(a.confidence));
}

std::vector<TlbAnswer> tlb_answers(unsigned first_seed, unsigned end_seed) {
  std::vector<TlbAnswer> v;
  for (const auto& g : model_gpus())
    for (unsigned seed = first_seed; seed < end_seed; ++seed) {
      Metadata meta;
      const auto rows = generate_tlb(g, seed, &meta);
      std::map<std::string, Parameter> got;
      for (const auto& p : analyze(std::string(tlb::kFamily.name), rows, meta)) got[p.name] = p;
      for (const auto& t : tlb_truths(g)) {
        TlbAnswer a{g.key, t.name, seed, t.value};
        auto it = got.find(t.name);
        a.missing = it == got.end();
        if (!a.missing) {
          const Parameter& p = it->second;
          a.value = p.value, a.low = p.low, a.high = p.high, a.confidence = p.confidence;
          a.ok = std::fabs(p.value / t.value - 1) <= t.tolerance ||
                 (t.interval_ok && p.low <= t.value && t.value <= p.high);
        }
        v.push_back(a);
      }
    }
  return v;
}

const std::vector<TlbAnswer>& all_tlb_answers() {
  static const std::vector<TlbAnswer> out = tlb_answers(0, kSeeds);
  return out;
}

// Failures known and not yet fixed, with the exact seeds and why. None is confidently wrong:
// where the first step is not seen, the analysis says the step it read instead is in doubt.
// (Kepler's and Maxwell's 128 KiB L1 TLB entries, below the sweep's smallest stride until it
// started at 64 KiB, read the reach 2-4x too far, confidently: fixed. The 9-cycle L1 TLB miss
// of the Hopper and Blackwell models, lost in jitter on a base that was the mean of the near
// and far L2 partitions (1.7-2.4 %), is 3-3.4 % of the near one the chase really sees: fixed.)
// The B200 model's L1 TLB miss is the H100's 9 cycles (assumed) on its ~330-cycle L2 hit (issue
// 25's figure; 300 before): a step of 2.7 %, at the edge of what the first step's reading finds
// under the ladder's jitter. Missed, the L2 TLB's step is read as the L1's (seed 11), all below
// 0.5.
const std::string kSmallStep = "a 9-cycle L1 TLB miss on a 330-cycle base: 2.7 %";
const std::vector<Known> kKnownTlbFailures = {
    {"b200", param::tlb_l1_coverage, {9, 11, 16}, kSmallStep},
    {"b200", param::tlb_l2_coverage, {11}, kSmallStep},
};

}  // namespace

TEST(ModelGpuTlb, EveryModelHasSourcedTlbLevels) {
  for (const auto& g : model_gpus()) {
    ASSERT_FALSE(g.tlb_levels.empty()) << g.key;
    EXPECT_GT(g.memory_bytes.value, 0) << g.key;
    for (const auto& t : g.tlb_levels)
      for (const Figure* f : {&t.reach, &t.entry, &t.miss})
        EXPECT_FALSE(f->source.empty()) << g.key << ": TLB figure without a source";
  }
}

TEST(ModelGpuTlb, RowsAreTheFamilysShape) {
  const auto& g = model_gpus().front();
  Metadata meta;
  const auto rows = generate_tlb(g, 0, &meta);
  std::set<std::string> probes;
  for (const auto& o : rows) {
    probes.insert(o.probe);
    EXPECT_EQ(o.unit, "cycles");
    EXPECT_TRUE(std::isfinite(o.param(tlb::kStrideColumn)) &&
                std::isfinite(o.param(memory_chase::kFootprintColumn)));
  }
  EXPECT_EQ(probes, (std::set<std::string>{tlb::kChaseProbe, tlb::kChaseAliasedProbe}));
  const auto again = generate_tlb(g, 0, nullptr);
  ASSERT_EQ(rows.size(), again.size());
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].value, again[i].value);
}

// The ladder's gate: no wrong value, known failure or not, has a confidence of kConfidentWrong
// or more.
TEST(ModelGpuTlb, NoConfidentlyWrongValue) {
  int wrong = 0;
  for (const auto& a : all_tlb_answers())
    if (!a.ok && !a.missing) {
      ++wrong;
      if (a.confidence >= kConfidentWrong) ADD_FAILURE() << describe(a);
    }
  std::cout << "wrong values, each with confidence < " << kConfidentWrong << ": " << wrong << "\n";
}

TEST(ModelGpuTlb, EveryModelTimesTwentySeedsFailsOnlyAsListed) {
  std::vector<Failure> failures;
  int right = 0, total = 0;
  for (const auto& a : all_tlb_answers()) {
    ++total;
    if (a.ok) ++right;
    else failures.push_back({a.model, a.name, a.seed, describe(a)});
  }
  check_known_failures(kKnownTlbFailures, failures);
  std::cout << "TLB bench: " << right << " of " << total << " answers right\n";
}

namespace {

// Every answer of the TLB bench (seeds 0-19), and the answers and fraction right in each
// confidence bin (results/model-gpus/, beside the ladder's and the families' calibration).
std::string tlb_calibration_csv(const std::vector<TlbAnswer>& all) {
  std::string out = "model,seed,parameter,truth,value,low,high,confidence,verdict\n";
  for (const auto& a : all)
    out += a.model + "," +
           answer_fields(a.seed, a.name, a.truth, a.value, a.low, a.high, a.confidence,
                         a.missing ? "missing" : a.ok ? "right" : "wrong") +
           "\n";
  return out;
}

std::string tlb_bins_csv(const std::vector<TlbAnswer>& all) {
  std::vector<int> answers(10), right(10);
  for (const auto& a : all) {
    if (a.missing) continue;
    const int b = confidence_bin(a.confidence);
    ++answers[b];
    right[b] += a.ok;
  }
  std::string out = "bin_low,bin_high,answers,right,fraction_right\n";
  for (int b = 0; b < 10; ++b) out += bin_row(b, answers[b], right[b]) + "\n";
  return out;
}

}  // namespace

// results/model-gpus/calibration_tlb*.csv are what the bench gives now. Regenerate:
// GPUPROBE_CALIBRATION_OUT=results/model-gpus build/tests/gpuprobe_tests
//   --gtest_filter='ModelGpuTlb.Committed*'
TEST(ModelGpuTlb, CommittedCalibrationIsTheBenchs) {
  check_committed_tables({{"calibration_tlb.csv", tlb_calibration_csv(all_tlb_answers())},
                          {"calibration_tlb_bins.csv", tlb_bins_csv(all_tlb_answers())}},
                         "ModelGpuTlb.Committed*");
}

// The gates on seeds kSeeds..kExtraSeedsEnd, printed, not enforced: how the rules made on the
// gated seeds hold on others (run with --gtest_also_run_disabled_tests).
TEST(ModelGpuTlb, DISABLED_ExtraSeeds) {
  int right = 0, total = 0, confident_wrong = 0;
  for (const auto& a : tlb_answers(kSeeds, kExtraSeedsEnd)) {
    ++total;
    if (a.ok) ++right;
    else if (!a.missing && a.confidence >= kConfidentWrong) {
      ++confident_wrong;
      std::cout << "  CONFIDENTLY WRONG " << describe(a) << "\n";
    } else std::cout << "  wrong " << describe(a) << "\n";
  }
  std::cout << "TLB bench, seeds " << kSeeds << "-" << kExtraSeedsEnd - 1 << ": " << right << " of " << total
            << " answers right, " << confident_wrong << " wrong with confidence >= " << kConfidentWrong << "\n";
}
