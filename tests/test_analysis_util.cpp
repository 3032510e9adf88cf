// The helpers every analyzer shares (harness/analysis/common/util.hpp): one behaviour each.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "analysis/common/util.hpp"

using namespace gpuprobe;
using namespace gpuprobe::analysis;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST(AnalysisUtil, Clamp01NeverPassesNaN) {
  EXPECT_EQ(clamp01(0.4), 0.4);
  EXPECT_EQ(clamp01(-2), 0.0);
  EXPECT_EQ(clamp01(7), 1.0);
  EXPECT_EQ(clamp01(kNaN), 0.0);
  EXPECT_EQ(clamp01(kInf), 0.0);
  EXPECT_EQ(clamp01(-kInf), 0.0);
}

TEST(AnalysisUtil, MetaNumberIsNaNWhenMissingOrNotANumber) {
  const Metadata meta = {{"sm_count", "132"},
                         {"memory_clock_mhz", "2619 (cudaDevAttrMemoryClockRate, peak)"},
                         {"gpu", "NVIDIA H100"}};
  EXPECT_EQ(meta_number(meta, "sm_count"), 132);
  EXPECT_EQ(meta_number(meta, "memory_clock_mhz"), 2619);
  EXPECT_TRUE(std::isnan(meta_number(meta, "gpu")));
  EXPECT_TRUE(std::isnan(meta_number(meta, "l2_bytes")));
  EXPECT_TRUE(std::isnan(leading_number("")));
}

// The scale docs/parameters.md ("Confidence") writes down.
TEST(AnalysisUtil, SpreadConfidenceFollowsTheDocumentedScale) {
  EXPECT_DOUBLE_EQ(spread_confidence(10, 10, 10), 1.0);
  EXPECT_NEAR(spread_confidence(9.5, 10, 10.5), 0.5, 1e-12);  // 10 % spread halves it
  EXPECT_NEAR(spread_confidence(9.85, 10, 10.15), 1 / 1.3, 1e-12);
  EXPECT_LT(spread_confidence(1, 10, 30), 0.1);
  EXPECT_DOUBLE_EQ(spread_confidence(0, 1, 1000), kSpreadFloor);
  EXPECT_DOUBLE_EQ(spread_confidence(0, 0, 0), kUnknownSpreadConfidence);
  EXPECT_DOUBLE_EQ(spread_confidence(kNaN, 10, 11), kUnknownSpreadConfidence);
  Observation o;
  o.p05 = 9.5, o.p50 = 10, o.p95 = 10.5;
  EXPECT_DOUBLE_EQ(spread_confidence(o), spread_confidence(9.5, 10, 10.5));
}

TEST(AnalysisUtil, NumberTexts) {
  EXPECT_EQ(num(1234.5), "1.23e+03");
  EXPECT_EQ(num(0.126, 2), "0.13");
  EXPECT_EQ(kib(256 * 1024), "256 KiB");
}
