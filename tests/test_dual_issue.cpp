// The dual_issue family: verdicts from the time model, parameters from synthetic
// observations, and the recorded H100 run in tests/data.
#include <gtest/gtest.h>

#include <cmath>

#include "observation_rows.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"
#include "analysis/analyzer.hpp"
#include "analysis/dual_issue.hpp"
#include "analysis/pipes.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe {
namespace {

Observation row(const std::string& family, const std::string& probe, Params params, double value,
                const std::string& unit, double spread = 0.002) {
  return make_row(family, probe, std::move(params), value, unit, spread);
}

TEST(DualIssue, VerdictsFromTheTimeModel) {
  // A alone: 4 inst/clk, B alone: 2, issue rate 4; the pair runs 8 of A and 4 of B per round,
  // so each stream alone takes 2 clocks per round, both in turn 4, and one pipe at a time 3.
  auto dual = dual_issue::judge(4, 2, 8, 4, 6, 4);  // 12 instructions in 2 clocks
  EXPECT_NEAR(dual.ratio, 1.5, 1e-12);
  EXPECT_EQ(dual.verdict, "beyond the fastest stream");
  auto in_turn = dual_issue::judge(4, 2, 8, 4, 3, 4);  // 12 instructions in 4 clocks
  EXPECT_NEAR(in_turn.overlap, 0.0, 1e-12);
  EXPECT_EQ(in_turn.verdict, "shared pipe");
  auto side_by_side = dual_issue::judge(4, 2, 8, 4, 4, 4);  // at the issue rate: 12 in 3 clocks
  EXPECT_NEAR(side_by_side.overlap, 1.0, 1e-12);
  EXPECT_EQ(side_by_side.verdict, "separate pipes");
  auto partial = dual_issue::judge(4, 2, 8, 4, 12 / 3.5, 4);  // 12 in 3.5 clocks
  EXPECT_NEAR(partial.overlap, 0.5, 1e-12);
  EXPECT_EQ(partial.verdict, "partial");
  // Two streams that each fill the issue slot: in turn or side by side, 16 in 4 clocks.
  auto full = dual_issue::judge(4, 4, 8, 8, 4, 4);
  EXPECT_EQ(full.verdict, "issue-bound");
  EXPECT_TRUE(std::isnan(full.overlap));
  EXPECT_TRUE(std::isnan(dual_issue::judge(0, 2, 8, 4, 3, 4).overlap));
  EXPECT_TRUE(dual_issue::judge(4, 2, 8, 4, 3, 0).verdict.empty());
  EXPECT_EQ(dual_issue::verdict_for(0.8), "separate pipes");
  EXPECT_EQ(dual_issue::verdict_for(0.2), "shared pipe");
  EXPECT_EQ(dual_issue::verdict_for(std::nan("")), "");
}

TEST(DualIssue, BalancedMixMatchesTheSoloRates) {
  auto mix = [](double ra, double rb, int sa, int sb) {
    auto m = dual_issue::kMixes[dual_issue::balanced_mix(ra, rb, sa, sb)];
    return std::pair<int, int>{m.a, m.b};
  };
  EXPECT_EQ(mix(4, 4, 1, 1), (std::pair<int, int>{8, 8}));
  EXPECT_EQ(mix(4, 2, 1, 1), (std::pair<int, int>{8, 4}));
  EXPECT_EQ(mix(4, 0.5, 1, 1), (std::pair<int, int>{8, 1}));
  EXPECT_EQ(mix(0.25, 4, 1, 1), (std::pair<int, int>{1, 8}));
  EXPECT_EQ(mix(4, 4, 1, 2), (std::pair<int, int>{8, 4}));  // B's step is two instructions
}

std::vector<Observation> dual_rows(const std::string& pair, double ra, double rb, int na, int nb,
                                   double rp, double spread = 0.003) {
  auto p = [&](const char* s, int a, int b, double v) {
    return row(std::string(dual_issue::kFamily.name), pair,
               {{dual_issue::kStreamColumn, s},
                {dual_issue::kAPerRoundColumn, std::to_string(a)},
                {dual_issue::kBPerRoundColumn, std::to_string(b)}},
               v, "inst/clk/SM", spread);
  };
  return {p("a", 8, 0, ra), p("b", 0, 8, rb), p("pair", na, nb, rp)};
}

TEST(DualIssue, ParametersAndVerdictsFromObservations) {
  auto obs = dual_rows(dual_issue::kFp32Int32Pair, 4, 2, 8, 4, 4);
  auto more = dual_rows(dual_issue::kFp32Fp64Pair, 4, 2, 8, 4, 5.9);
  obs.insert(obs.end(), more.begin(), more.end());
  auto shared = dual_rows(dual_issue::kFp16Fp32Pair, 4, 4, 8, 8, 4.02);
  obs.insert(obs.end(), shared.begin(), shared.end());
  auto ps = analyze(std::string(dual_issue::kFamily.name), obs);
  expect_well_formed(ps, std::string(dual_issue::kFamily.name) + ".csv");
  ASSERT_EQ(ps.size(), 4u);
  // The issue rate is the fastest solo stream, 4 inst/clk/SM; the fastest pair beats it by 5.9 / 4.
  EXPECT_NEAR(find(ps, param::dual_issue_gain)->value, 5.9 / 4, 1e-12);
  EXPECT_NEAR(find(ps, param::dual_issue_gain)->low, 5.9 * (1 - 0.003) / (4 * 1.003), 1e-12);
  EXPECT_NE(find(ps, param::dual_issue_gain)->method.find(dual_issue::kFp32Fp64Pair),
            std::string::npos);
  EXPECT_NE(find(ps, param::dual_issue_gain)->method.find("above 1"), std::string::npos);
  EXPECT_NEAR(find(ps, param::dual_issue_fp32_int32)->value, 1.0, 1e-12);
  EXPECT_EQ(
      find(ps, param::dual_issue_fp32_int32)->method.rfind("dual_issue_pair: separate pipes", 0),
      0u);
  EXPECT_NE(find(ps, param::dual_issue_fp32_int32)->method.find("overlap 1.00"), std::string::npos);
  EXPECT_EQ(find(ps, param::dual_issue_fp32_fp64)
                ->method.rfind("dual_issue_pair: beyond the fastest stream", 0),
            0u);
  EXPECT_EQ(find(ps, param::dual_issue_fp16_fp32)->method.rfind("dual_issue_pair: issue-bound", 0),
            0u);
  EXPECT_EQ(find(ps, param::dual_issue_fp16_fp32)->method.find("overlap"), std::string::npos);
  EXPECT_NEAR(find(ps, param::dual_issue_fp16_fp32)->value, 1.005, 1e-12);
}

TEST(DualIssue, IncompletePairsAreLeftOut) {
  auto obs = dual_rows(dual_issue::kFp32SfuPair, 4, 0.5, 8, 1, 4.4);
  obs.pop_back();
  EXPECT_TRUE(dual_issue::analyze_dual_issue(obs, {}).empty());
}

TEST(DualIssue, EveryPairAndMixHasAnExpectation) {
  for (const auto& p : dual_issue::pairs()) {
    ASSERT_NE(pipes::find_op(p.a), nullptr) << p.a;
    ASSERT_NE(pipes::find_op(p.b), nullptr) << p.b;
    for (const auto& m : dual_issue::kMixes)
      EXPECT_NE(find_expectation(dual_issue::kernel_name(pipes::find_op(p.a)->type,
                                                         pipes::find_op(p.b)->type, m.a, m.b)),
                nullptr);
  }
}

TEST(RecordedH100, DualIssueVerdicts) {
  SKIP_WITHOUT(dual_issue::kFamily.name);
  auto ps = recorded_parameters(std::string(dual_issue::kFamily.name));
  expect_well_formed(ps, std::string(dual_issue::kFamily.name) + ".csv");
  EXPECT_FALSE(ps.empty());
  for (const auto& p : ps) {
    SCOPED_TRACE(p.name);
    if (p.name ==
        param::dual_issue_gain) {  // fastest pair over fastest solo: FP32 fills the H100's slot
      EXPECT_NEAR(p.value, 1.0, 0.03) << p.method;
      EXPECT_NE(p.method.find("about 1: the fastest stream already fills the issue slot"),
                std::string::npos);
      continue;
    }
    EXPECT_GT(p.value, 0.3);
    EXPECT_LT(p.value, 2.2);
    bool verdict = false;
    for (const char* v : {"separate pipes", "partial", "shared pipe", "issue-bound"})
      verdict = verdict || p.method.rfind(std::string("dual_issue_pair: ") + v, 0) == 0;
    EXPECT_TRUE(verdict)
        << p.method;  // and never co-issued: one instruction per clock per scheduler
  }
  // fp32 + int32 logic and fp32 + fp64 overlap up to the issue rate; fp16x2 and fp32 FMAs each
  // fill the issue slot alone.
  for (const char* name : {param::dual_issue_fp32_int32, param::dual_issue_fp32_fp64}) {
    const Parameter* p = find(ps, name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->method.rfind("dual_issue_pair: separate pipes", 0), 0u) << p->method;
  }
  const Parameter* fp16 = find(ps, param::dual_issue_fp16_fp32);
  ASSERT_NE(fp16, nullptr);
  EXPECT_EQ(fp16->method.rfind("dual_issue_pair: issue-bound", 0), 0u) << fp16->method;
}

}  // namespace
}  // namespace gpuprobe
