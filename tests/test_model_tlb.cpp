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
#include "model_bench.hpp"
#include "model_gpu.hpp"

using namespace gpuprobe;
using namespace gpuprobe::model;

namespace {

constexpr unsigned kSeeds = 20;
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

const std::vector<TlbAnswer>& all_tlb_answers() {
  static const std::vector<TlbAnswer> out = [] {
    std::vector<TlbAnswer> v;
    for (const auto& g : model_gpus())
      for (unsigned seed = 0; seed < kSeeds; ++seed) {
        Metadata meta;
        const auto rows = generate_tlb(g, seed, &meta);
        std::map<std::string, Parameter> got;
        for (const auto& p : analyze("tlb", rows, meta)) got[p.name] = p;
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
  }();
  return out;
}

// Failures known and not yet fixed, with the exact seeds and why. None is confidently wrong:
// where the first step is not seen, the analysis says the step it read instead is in doubt.
// (Kepler's and Maxwell's 128 KiB L1 TLB entries, below the sweep's smallest stride until it
// started at 64 KiB, read the reach 2-4x too far, confidently: fixed. The 9-cycle L1 TLB miss
// of the Hopper and Blackwell models, lost in jitter on a base that was the mean of the near
// and far L2 partitions (1.7-2.4 %), is 3-3.4 % of the near one the chase really sees: fixed.)
const std::vector<Known> kKnownTlbFailures = {};

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
    EXPECT_TRUE(std::isfinite(o.param("stride_bytes")) && std::isfinite(o.param("footprint_bytes")));
  }
  EXPECT_EQ(probes, (std::set<std::string>{"chase", "chase_aliased"}));
  const auto again = generate_tlb(g, 0, nullptr);
  ASSERT_EQ(rows.size(), again.size());
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].value, again[i].value);
}

// Issue 14's gate: no wrong value, known failure or not, has a confidence of kConfidentWrong
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
