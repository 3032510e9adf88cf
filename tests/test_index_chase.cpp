// The index-chase family's analysis: a parameter per chase, the atomic pairs less their load,
// the SASS of one step in the method text; and one_step on a parsed SASS region.
#include <gtest/gtest.h>

#include "parameter_checks.hpp"
#include "analysis/analyzer.hpp"
#include "analysis/index_chase.hpp"
#include "base/catalog.hpp"

namespace gpuprobe {
namespace {

Observation cycles_row(const std::string& probe, double p05, double p50, double p95) {
  Observation o;
  o.family = std::string(index_chase::kFamily.name);
  o.probe = probe;
  o.value = o.p50 = p50;
  o.p05 = p05;
  o.p95 = p95;
  o.unit = "cycles";
  o.reps = 11;
  return o;
}

TEST(IndexChase, ParametersFromObservations) {
  std::vector<Observation> obs = {cycles_row(index_chase::kSharedProbe, 28.5, 28.6, 28.7),
                                  cycles_row(index_chase::kL1Probe, 39.5, 39.6, 39.7),
                                  cycles_row(index_chase::kL2Probe, 288, 290, 292),
                                  cycles_row(index_chase::kDramProbe, 650, 660, 674),
                                  cycles_row(index_chase::kAtomicSharedPairProbe, 62.9, 63, 63.1),
                                  cycles_row(index_chase::kAtomicGlobalPairProbe, 520, 525, 530)};
  Observation sass;
  sass.probe = index_chase::kSassProbe;
  sass.params = {{index_chase::kOfColumn, index_chase::kSharedProbe},
                 {index_chase::kStepColumn, "IMAD.SHL.U32 R3, R2, 0x4, RZ; LDS R2, [R3]"}};
  sass.value = 2;
  sass.unit = "instructions";
  obs.push_back(sass);
  auto ps = analyze(std::string(index_chase::kFamily.name), obs);
  ASSERT_EQ(ps.size(), 6u);
  for (const auto& p : ps) {
    ASSERT_TRUE(catalog().params.count(p.name)) << p.name;
    EXPECT_EQ(p.method.rfind(catalog().params.at(p.name).method + ": includes ", 0), 0u) << p.method;
    EXPECT_LE(p.low, p.value);
    EXPECT_GE(p.high, p.value);
  }
  EXPECT_DOUBLE_EQ(find(ps, param::shared_latency_index_chase)->value, 28.6);
  EXPECT_NE(find(ps, param::shared_latency_index_chase)
                ->method.find("SASS of one step: IMAD.SHL.U32 R3, R2, 0x4, RZ; LDS R2, [R3]"),
            std::string::npos);
  const Parameter* sh = find(ps, param::atomic_shared_latency_result_pair);
  EXPECT_NEAR(sh->value, 63 - 28.6, 1e-9);
  EXPECT_NEAR(sh->low, 62.9 - 28.7, 1e-9);
  EXPECT_NEAR(sh->high, 63.1 - 28.5, 1e-9);
  EXPECT_NEAR(find(ps, param::atomic_global_latency_result_pair)->value, 525 - 39.6, 1e-9);
  EXPECT_LE(find(ps, param::atomic_global_latency_result_pair)->confidence,
            0.5);  // one placement of SM and slice
}

// Every variant's step is documented (docs/parameters.md, "Method variants"), and named there.
TEST(IndexChase, EveryVariantSaysWhatItIncludes) {
  for (const auto& v : index_chase::variants()) {
    ASSERT_TRUE(catalog().includes.count(v.parameter)) << v.parameter;
    EXPECT_FALSE(catalog().includes.at(v.parameter).empty());
  }
}

TEST(IndexChase, PairWithoutItsLoadIsNotReported) {
  auto ps = analyze(std::string(index_chase::kFamily.name),
                    {cycles_row(index_chase::kAtomicSharedPairProbe, 62, 63, 64)});
  EXPECT_TRUE(ps.empty());
  // A pair no slower than its load alone gives no atomic latency.
  ps = analyze(std::string(index_chase::kFamily.name),
               {cycles_row(index_chase::kSharedProbe, 28, 29, 30),
                cycles_row(index_chase::kAtomicSharedPairProbe, 27, 28, 29)});
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].name, param::shared_latency_index_chase);
}

TEST(IndexChase, OneStepOfATimedRegion) {
  const char* sass =
      "\t\tFunction : _ZN8gpuprobe11index_chase12shared_chaseEjjjPxPji\n"
      "        /*0100*/                   CS2R R4, SR_CLOCKLO ;\n"
      "        /*0110*/                   IMAD.SHL.U32 R3, R2, 0x4, RZ ;\n"
      "        /*0120*/                   LDS R2, [R3] ;\n"
      "        /*0130*/                   IMAD.SHL.U32 R3, R2, 0x4, RZ ;\n"
      "        /*0140*/                   LDS R2, [R3] ;\n"
      "        /*0150*/                   IMAD.SHL.U32 R3, R2, 0x4, RZ ;\n"
      "        /*0160*/                   LDS R2, [R3] ;\n"
      "        /*0170*/                   CS2R R6, SR_CLOCKLO ;\n"
      "        /*0180*/                   EXIT ;\n";
  auto kernels = parse_sass(sass);
  ASSERT_EQ(kernels.size(), 1u);
  auto region = timed_region(kernels[0], CodeDialect::sass);
  EXPECT_EQ(index_chase::one_step(region, "^LDS"), "IMAD.SHL.U32 R3, R2, 0x4, RZ; LDS R2, [R3]");
  EXPECT_EQ(index_chase::one_step(region, "^ATOMS"), "");
}

}  // namespace
}  // namespace gpuprobe
