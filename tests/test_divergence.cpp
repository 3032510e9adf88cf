// The divergence family: the fit against paying every path, per mode, and the recorded
// H100 run in tests/data.
#include <gtest/gtest.h>

#include <cmath>

#include "observation_rows.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"
#include "analysis/analyzer.hpp"
#include "analysis/divergence.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe {
namespace {

const std::string kFamilyName(divergence::kFamily.name);

Observation row(const std::string& family, const std::string& probe, Params params, double value,
                const std::string& unit, double spread = 0.002) {
  return make_row(family, probe, std::move(params), value, unit, spread);
}

std::vector<Observation> divergence_rows(const std::string& probe, double t1, double cost) {
  std::vector<Observation> out;
  for (int p : divergence::path_counts(false)) {
    out.push_back(row(kFamilyName, probe, {{divergence::kPathsColumn, std::to_string(p)}},
                      t1 * (1 + cost * (p - 1)), "cycles"));
    out.push_back(row(kFamilyName, probe, {{divergence::kPathsColumn, std::to_string(p)}},
                      t1 * (1 + cost * (p - 1)) / 1.8, "ns"));
  }
  return out;
}

TEST(Divergence, FitAgainstPayingEveryPath) {
  divergence::Fit f;
  ASSERT_TRUE(divergence::fit_paths({1, 2, 4, 32}, {100, 200, 400, 3200}, &f));
  EXPECT_NEAR(f.cost_per_path, 1.0, 1e-12);
  EXPECT_NEAR(f.slowdown_max, 32, 1e-12);
  EXPECT_EQ(f.paths_max, 32);
  ASSERT_TRUE(divergence::fit_paths({1, 2, 4}, {100, 100, 100}, &f));
  EXPECT_NEAR(f.cost_per_path, 0.0, 1e-12);
  EXPECT_FALSE(divergence::fit_paths({2, 4}, {200, 400}, &f));  // no P = 1
  EXPECT_FALSE(divergence::fit_paths({1}, {100}, &f));
}

TEST(Divergence, ParametersPerMode) {
  auto obs = divergence_rows(divergence::kFullSmProbe, 5000, 1.0);
  auto one = divergence_rows(divergence::kOneWarpProbe, 300, 0.6);
  obs.insert(obs.end(), one.begin(), one.end());
  auto ps = analyze(kFamilyName, obs);
  expect_well_formed(ps, "divergence.csv");
  EXPECT_NEAR(find(ps, param::divergence_cost_per_path)->value, 1.0, 1e-9);
  EXPECT_GT(find(ps, param::divergence_cost_per_path)->confidence, 0.9);
  EXPECT_NEAR(find(ps, param::divergence_cost_per_path_one_warp)->value, 0.6, 1e-9);
  EXPECT_NEAR(find(ps, "divergence_slowdown_32_paths")->value, 32, 1e-9);
  EXPECT_NEAR(find(ps, "divergence_slowdown_32_paths_one_warp")->value, 1 + 0.6 * 31, 1e-9);
}

// Regression: the analyzer once kept pointers into the temporary that select() returns (a
// use after free that ASan reports), and converted a huge path count with int() (undefined).
TEST(Divergence, HugeOrNegativePathCountsAreIgnored) {
  auto obs = divergence_rows(divergence::kFullSmProbe, 5000, 1.0);
  obs.push_back(row(kFamilyName, divergence::kFullSmProbe, {{divergence::kPathsColumn, "1e300"}}, 7,
                    "cycles"));
  obs.push_back(
      row(kFamilyName, divergence::kFullSmProbe, {{divergence::kPathsColumn, "-5"}}, 7, "cycles"));
  auto ps = analyze(kFamilyName, obs);
  expect_well_formed(ps, "divergence.csv");
  EXPECT_NEAR(find(ps, param::divergence_cost_per_path)->value, 1.0, 1e-9);
  EXPECT_NEAR(find(ps, "divergence_slowdown_32_paths")->value, 32, 1e-9);
}

TEST(RecordedH100, DivergencePaysForPaths) {
  SKIP_WITHOUT(kFamilyName);
  auto ps = recorded_parameters(kFamilyName);
  expect_well_formed(ps, "divergence.csv");
  const Parameter* c = find(ps, param::divergence_cost_per_path);
  ASSERT_NE(c, nullptr);
  EXPECT_GT(c->value, 0.5);
  EXPECT_LT(c->value, 1.3);
}

}  // namespace
}  // namespace gpuprobe
