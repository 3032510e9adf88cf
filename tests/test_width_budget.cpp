// The width budget of docs/repeatability.md ("Floors"): re-analysed today, every committed
// whole-suite run claims no more than its intervals allow. Among its parameters at confidence
// 0.5 or more, the 90th percentile of the relative half-width is at most 10 % and none reaches
// past its tolerance in docs/parameters.md; an interval wider than +-25 % has confidence below
// 0.3 and its method text says what would narrow it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/common/util.hpp"
#include "app/run_analysis.hpp"
#include "base/catalog.hpp"
#include "committed_runs.hpp"

namespace gpuprobe {
namespace {
namespace fs = std::filesystem;

constexpr double kConfident = 0.5;      // the confidence from which the budget holds
constexpr double kP90HalfWidth = 0.10;  // the budget's 90th percentile half-width
constexpr double kSlack = 1e-9;         // a CSV round trip's rounding

double half_width(const Parameter& p) {
  return std::max(p.high - p.value, p.value - p.low) / p.value;
}

// The run-level rows (families.csv: the SM clock's range over the run, the wall time) are
// recorded, not inferred: the clock's interval is where it went, not the median's uncertainty.
bool inferred(const Parameter& p) { return p.evidence != "families.csv" && p.value > 0; }

}  // namespace

TEST(WidthBudget, TheCapFollowsTheTolerance) {
  Parameter p{"x", 100, "cycles", 80, 120, 0.9, "m", "e.csv"};
  analysis::cap_confidence_by_width(p, 0.10);
  EXPECT_NEAR(p.confidence, analysis::kPastToleranceConfidence * 0.10 / 0.20, 1e-12);
  EXPECT_NE(p.method.find(analysis::kCappedByWidthText), std::string::npos) << p.method;
  EXPECT_NE(p.method.find("narrow"), std::string::npos) << p.method;

  Parameter within{"x", 100, "cycles", 98, 102, 0.9, "m", "e.csv"};
  analysis::cap_confidence_by_width(within, 0.03);
  EXPECT_EQ(within.confidence, 0.9);
  EXPECT_EQ(within.method, "m");

  Parameter wide{"x", 100, "us", 70, 130, 0.9, "m", "e.csv"};  // within a 30 % tolerance
  analysis::cap_confidence_by_width(wide, 0.30);
  EXPECT_LT(wide.confidence, 0.3);

  Parameter exact{"x", 8, "count", 8, 12, 0.8, "m", "e.csv"};
  analysis::cap_confidence_by_width(exact, 0);
  EXPECT_LT(exact.confidence, kConfident);

  Parameter low{"x", 8, "count", 8, 9, 0.2, "m", "e.csv"};  // already below the cap: as it was
  analysis::cap_confidence_by_width(low, 0);
  EXPECT_EQ(low.confidence, 0.2);
  EXPECT_EQ(low.method, "m");

  // Wider than +-25 % and already below the cap: the confidence stays, the method says what
  // would narrow it.
  Parameter vague{"x", 8, "count", 8, 12, 0.2, "m", "e.csv"};
  analysis::cap_confidence_by_width(vague, 0);
  EXPECT_EQ(vague.confidence, 0.2);
  EXPECT_NE(vague.method.find("narrow"), std::string::npos) << vague.method;
}

TEST(WidthBudget, EveryCommittedFullRunKeepsIt) {
  // The whole-suite runs, and the repeat runs committed with their observations (the two-card
  // H100 set; the H200 sets keep parameters and families alone).
  auto runs = committed_run_dirs({RunKind::full});
  ASSERT_GE(runs.size(), 2u) << "committed whole-suite runs under results/<gpu>/<run-id>/";
  for (const auto& dir : committed_run_dirs({RunKind::repeat}))
    if (fs::exists(fs::path(dir) / "latency.csv")) runs.push_back(dir);
  for (const auto& dir : runs) {
    SCOPED_TRACE(dir);
    const RunAnalysis a = analyze_run_dir(dir);
    std::vector<double> confident;
    for (const auto& p : a.params) {
      if (!inferred(p)) continue;
      const double half = half_width(p);
      if (half > analysis::kWideInterval) {
        EXPECT_LT(p.confidence, 0.3) << p.name << " +-" << 100 * half << " %";
        EXPECT_NE(p.method.find("narrow"), std::string::npos) << p.name << ": " << p.method;
      }
      if (p.confidence < kConfident) continue;
      confident.push_back(half);
      const CatalogEntry* entry = find_parameter(p.name);
      double tolerance = 0;
      if (entry && tolerance_fraction(entry->tolerance, &tolerance)) {
        EXPECT_LE(half, tolerance + kSlack)
            << p.name << " +-" << 100 * half << " % at confidence " << p.confidence
            << " reaches past its tolerance " << entry->tolerance;
      }
    }
    ASSERT_GE(confident.size(), 20u) << "too few confident parameters to judge a percentile";
    std::sort(confident.begin(), confident.end());
    const double p90 = confident[size_t(0.9 * double(confident.size() - 1))];
    EXPECT_LE(p90, kP90HalfWidth) << "90th percentile half-width of the confident parameters";
  }
}

}  // namespace gpuprobe
