// The TLB family on the model-GPU bench: every model GPU x the same 20 noise seeds as the
// ladder's bench, tlb.csv generated as microbench/tlb.cu records it and analysed as `gpuprobe
// analyze` does. Gates as the ladder's: tlb_l1_coverage and tlb_l2_coverage within 10 % or an
// interval covering the truth, tlb_miss_latency within 3 %, every wrong value with confidence
// < 0.5; known failures listed exactly, each with its reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include "analysis/analyzer.hpp"
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

struct Known {
  std::string model, parameter;
  std::vector<unsigned> seeds;
  std::string reason;
};
// Failures known and not yet fixed, with the exact seeds and why. Unlike the ladder's list, some
// of these are confidently wrong (the first three reasons): the analysis takes a later step for
// the L1 TLB's when the first one is not seen, and says so with its knee's confidence.
const std::string kBelowStride =
    "128 KiB L1 TLB entries below the sweep's smallest stride (256 KiB): the step moves with every "
    "stride, the reach is read 2-4x too far (confidently)";
const std::string kL3Taken =
    "the L1 TLB reach read 4x too far (above), so the L2 TLB step is under twice it and the L3's is taken";
const std::string kStepUnresolved =
    "a 9-cycle L1 TLB miss on a 530-cycle L2 hit (1.7 %) is under the TLB segmentation's 2 % jump: the "
    "64 GiB step is read as the L1 TLB's, the 256 GiB one as the L2's (confidently)";
const std::string kStepInJitter =
    "the 9-cycle L1 TLB miss (3.4 % of the L2 hit) lost in this seed's jitter: the next step is taken "
    "for it (confidently on some seeds)";
const std::vector<Known> kKnownTlbFailures = {
    {"kepler", "tlb_l1_coverage", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, kBelowStride},
    {"maxwell", "tlb_l1_coverage", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, kBelowStride},
    {"kepler", "tlb_l2_coverage", {0}, kL3Taken},
    {"b200", "tlb_l1_coverage", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, kStepUnresolved},
    {"b200", "tlb_l2_coverage", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, kStepUnresolved},
    {"b200", "tlb_miss_latency", {5}, kStepUnresolved},
    {"gh200", "tlb_l1_coverage", {0, 1, 2, 5, 11, 13, 17}, kStepInJitter},
    {"gh200", "tlb_l2_coverage", {0, 1, 5, 11, 13}, kStepInJitter},
    {"gh200", "tlb_miss_latency", {0, 5, 13}, kStepInJitter},
    {"h100", "tlb_l1_coverage", {0, 4, 5, 9, 10, 13, 15, 18}, kStepInJitter},
    {"h100", "tlb_l2_coverage", {0, 4, 5, 10, 13, 15}, kStepInJitter},
    {"h100", "tlb_miss_latency", {0, 4, 10, 13, 15}, kStepInJitter},
};

const Known* known(const TlbAnswer& a) {
  for (const auto& k : kKnownTlbFailures)
    if (k.model == a.model && k.parameter == a.name && std::count(k.seeds.begin(), k.seeds.end(), a.seed))
      return &k;
  return nullptr;
}

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

// No wrong value outside the known failures has a confidence of kConfidentWrong or more; the
// known ones that do are counted.
TEST(ModelGpuTlb, NoConfidentlyWrongValueBeyondTheKnown) {
  int listed = 0;
  for (const auto& a : all_tlb_answers())
    if (!a.ok && !a.missing && a.confidence >= kConfidentWrong) {
      if (known(a)) ++listed;
      else ADD_FAILURE() << describe(a);
    }
  std::cout << "known failures with confidence >= " << kConfidentWrong << ": " << listed << "\n";
}

TEST(ModelGpuTlb, EveryModelTimesTwentySeedsFailsOnlyAsListed) {
  std::map<std::pair<std::string, std::string>, std::set<unsigned>> got;
  int right = 0, total = 0;
  for (const auto& a : all_tlb_answers()) {
    ++total;
    if (a.ok) {
      ++right;
      continue;
    }
    got[{a.model, a.name}].insert(a.seed);
    if (const Known* k = known(a))
      std::cout << "  EXPECTED FAILURE " << describe(a) << " -- " << k->reason << "\n";
    else
      ADD_FAILURE() << "unexpected failure: " << describe(a);
  }
  for (const auto& k : kKnownTlbFailures)
    for (unsigned seed : k.seeds)
      EXPECT_TRUE(got[std::make_pair(k.model, k.parameter)].count(seed))
          << k.model << " seed " << seed << " " << k.parameter << " is listed as failing but passes now";
  if (::testing::Test::HasFailure())
    for (const auto& [key, seeds] : got) {
      std::cout << "    {\"" << key.first << "\", \"" << key.second << "\", {";
      for (unsigned s : seeds) std::cout << s << (s == *seeds.rbegin() ? "" : ", ");
      std::cout << "}, ...},\n";
    }
  std::cout << "TLB bench: " << right << " of " << total << " answers right\n";
}
