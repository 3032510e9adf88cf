// Bytes in flight: the 90 % point of a saturation curve (noise, dips, edge cases), Little's
// law, the analyzer over observations as the suite writes them, and the recorded H100 run.
#include <gtest/gtest.h>

#include "observation_rows.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"

#include <cmath>
#include <random>

#include "analysis/analyzer.hpp"
#include "analysis/bytes_in_flight.hpp"
#include "analysis/common/util.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"

using namespace gpuprobe;
using namespace gpuprobe::bytes_in_flight;

namespace {

const RowMaker row{0.01};

// A smooth saturation curve whose 90 % point is known: y = peak * x / (x^4 + k^4)^(1/4)
// reaches 0.9 * peak at x = k * (0.9^4 / (1 - 0.9^4))^(1/4).
double knee_curve(double x, double peak, double k) {
  return peak * x / std::pow(std::pow(x, 4) + std::pow(k, 4), 0.25);
}
double knee_at_90(double k) {
  return k * std::pow(std::pow(0.9, 4) / (1 - std::pow(0.9, 4)), 0.25);
}

}  // namespace

// --- saturation_point --------------------------------------------------------------------

TEST(Saturation, FindsTheNinetyPercentPointOfANoisyCurve) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(0.98, 1.02);
  const double k = 12000, truth = knee_at_90(k);
  std::vector<CurvePoint> curve;
  // Several configurations per x, as warps x ILP x width gives, each a little worse than the best.
  for (double x = 128; x <= 262144; x *= 2)
    for (double worse : {1.0, 0.9, 0.75})
      curve.push_back({x, worse * noise(rng) * knee_curve(x, 3000, k)});
  auto s = saturation_point(curve, 0.9);
  ASSERT_TRUE(s);
  EXPECT_LE(s->low, s->x);
  EXPECT_GE(s->high, s->x);
  EXPECT_NEAR(s->x / truth, 1.0, 0.2) << s->x << " vs " << truth;
  EXPECT_NEAR(s->peak, 3000, 3000 * 0.03);
  EXPECT_TRUE(s->plateau);
  EXPECT_GT(s->confidence, 0.8);
  EXPECT_LE(s->confidence, 1.0);
}

TEST(Saturation, ADipPastTheKneeDoesNotMoveIt) {
  std::vector<CurvePoint> rising = {{1, 100}, {2, 200}, {4, 400}, {8, 800}, {16, 950}, {32, 1000}};
  std::vector<CurvePoint> dipping = rising;
  dipping.push_back({64, 900});  // too much in flight: the curve falls a little
  auto a = saturation_point(rising, 0.9), b = saturation_point(dipping, 0.9);
  ASSERT_TRUE(a && b);
  EXPECT_DOUBLE_EQ(a->x, b->x);
  EXPECT_DOUBLE_EQ(b->peak, 1000);
  EXPECT_DOUBLE_EQ(b->peak_x, 32);
  EXPECT_DOUBLE_EQ(b->low, 8);
  EXPECT_DOUBLE_EQ(b->high, 16);
}

TEST(Saturation, InterpolatesInLogX) {
  // The target, 990 (90 % of 1100), lies 190/300 of the way from 800 to 1100: as far into
  // the octave from 8 in log x.
  auto s = saturation_point({{2, 200}, {4, 400}, {8, 800}, {16, 1100}, {32, 1000}}, 0.9);
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->x, 8 * std::pow(2.0, (990.0 - 800) / 300), 1e-9);
}

TEST(Saturation, TheBestConfigurationAtAnXCounts) {
  auto s = saturation_point({{1, 10}, {2, 20}, {2, 95}, {4, 99}, {8, 100}}, 0.9);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->high, 2);
}

TEST(Saturation, NothingWhenTheKneeIsBelowTheSweepOrPointsAreFew) {
  EXPECT_FALSE(saturation_point({{1, 95}, {2, 99}, {4, 100}}, 0.9));
  EXPECT_FALSE(saturation_point({{1, 10}, {2, 100}}, 0.9));
  EXPECT_FALSE(saturation_point({}, 0.9));
  EXPECT_FALSE(saturation_point({{1, 0}, {2, 0}, {4, 0}}, 0.9));
  // NaN and non-positive x are dropped before counting.
  EXPECT_FALSE(saturation_point({{1, 10}, {0, 50}, {NAN, 70}, {4, 100}}, 0.9));
}

TEST(Saturation, AStillRisingCurveIsLessCertain) {
  std::vector<CurvePoint> line;
  for (double x = 1; x <= 1024; x *= 2) line.push_back({x, x});
  auto s = saturation_point(line, 0.9);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->plateau);
  EXPECT_LT(s->confidence, 0.7);
}

TEST(LittlesLaw, BytesPerSm) {
  // 600 ns x 3000 GB/s = 1.8 MB in flight over the chip, 13.6 KB per SM of 132.
  EXPECT_NEAR(littles_law_bytes_per_sm(600, 3000, 132), 1.8e6 / 132, 1e-6);
  EXPECT_TRUE(std::isnan(littles_law_bytes_per_sm(600, 3000, 0)));
}

// --- analyze_bytes_in_flight -------------------------------------------------------------

namespace {

std::vector<Observation> synthetic_bytes_in_flight(double k_dram, double k_l2,
                                                   bool narrow_fall_short = true) {
  std::vector<Observation> obs;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> noise(0.985, 1.015);
  for (const std::string level : {kDramProbe, kL2Probe})
    for (int width : {4, 8, 16})
      for (int ilp : {1, 2, 4, 8})
        for (int warps = 1; warps <= 64; warps *= 2) {
          const double x = 32.0 * warps * ilp * width;
          const double peak = level == kDramProbe ? 3000 : 7000;
          // Narrow accesses fall short of the peak: requests, not bytes, are what is in flight.
          const double eff = !narrow_fall_short || width == 16 ? 1.0 : width == 8 ? 0.95 : 0.8;
          const double y =
              eff * noise(rng) * knee_curve(x, peak, level == kDramProbe ? k_dram : k_l2);
          obs.push_back(row(std::string(kFamily.name), level,
                            {{kWarpsPerSmColumn, std::to_string(warps)},
                             {kIlpColumn, std::to_string(ilp)},
                             {kWidthColumn, std::to_string(width)},
                             {kInFlightColumn, format_number(x)}},
                            y, "GB/s"));
        }
  obs.push_back(row(std::string(kFamily.name), kLittlesLawProbe,
                    {{kLevelColumn, kDramProbe}, {kLatencyColumn, "620"}, {kPeakColumn, "3000"}},
                    620 * 3000 / 132.0, "B/SM", 0));
  return obs;
}

}  // namespace

TEST(AnalyzeBytesInFlight, NinetyPercentPointsOfBothLevels) {
  auto ps = analyze(std::string(kFamily.name), synthetic_bytes_in_flight(14000, 9000));
  const Parameter* dram = find(ps, param::dram_bytes_in_flight_90pct);
  const Parameter* l2 = find(ps, param::l2_bytes_in_flight_90pct);
  ASSERT_TRUE(dram && l2);
  EXPECT_NEAR(dram->value / knee_at_90(14000), 1.0, 0.2);
  EXPECT_NEAR(l2->value / knee_at_90(9000), 1.0, 0.2);
  EXPECT_EQ(dram->unit, "bytes");
  EXPECT_LE(dram->low, dram->value);
  EXPECT_GE(dram->high, dram->value);
  EXPECT_LE(dram->low, knee_at_90(14000)) << dram->method;
  EXPECT_GE(dram->high, knee_at_90(14000)) << dram->method;
  // The sweep steps by 2x: the 90 % point is pinned only to its bracket, wider than the
  // catalog's tolerance, and the confidence says so.
  EXPECT_LT(dram->confidence, 0.3) << dram->method;
  EXPECT_NE(dram->method.find(analysis::kCappedByWidthText), std::string::npos) << dram->method;
  EXPECT_NE(dram->method.find("Little's law: 620 ns unloaded x 3000 GB/s = 14091 B/SM"),
            std::string::npos)
      << dram->method;
  EXPECT_EQ(l2->method.find("Little's law"), std::string::npos);  // no L2 chase recorded
  EXPECT_EQ(dram->evidence, std::string(kFamily.name) + ".csv");
}

TEST(AnalyzeBytesInFlight, AKneeBelowTheSweepIsLeftOut) {
  // Saturated from the first point: no bracket, so no parameter (never a guess).
  auto ps = analyze(std::string(kFamily.name), synthetic_bytes_in_flight(10, 9000, false));
  EXPECT_FALSE(find(ps, param::dram_bytes_in_flight_90pct));
  EXPECT_TRUE(find(ps, param::l2_bytes_in_flight_90pct));
}

// --- recorded H100 run -------------------------------------------------------------------

TEST(RecordedH100, BytesInFlightAgreeWithLittlesLaw) {
  Metadata meta;
  auto obs = recorded_observations(std::string(kFamily.name), &meta);
  REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_bytes_in_flight.csv";
  auto ps = analyze(std::string(kFamily.name), obs, meta);
  const Parameter* dram = find(ps, param::dram_bytes_in_flight_90pct);
  ASSERT_TRUE(dram);
  EXPECT_GT(dram->value, 1024);
  EXPECT_LT(dram->value, 256 * 1024);
  if (const Parameter* l2 = find(ps, param::l2_bytes_in_flight_90pct)) {
    EXPECT_GT(l2->value, 512);
    EXPECT_LT(l2->value, 256 * 1024);
  }
  for (const auto& o : select(obs, kChaseProbe, "ns")) {
    if (o.param_text(kLevelColumn) == kDramProbe) {
      EXPECT_GT(o.value, 200);
      EXPECT_LT(o.value, 2000);
    } else {
      EXPECT_GT(o.value, 50);
      EXPECT_LT(o.value, 800);
    }
  }
  // Little's law within a factor of three of the measured knee.
  for (const auto& l : select(obs, kLittlesLawProbe, "B/SM"))
    if (l.param_text(kLevelColumn) == kDramProbe) {
      EXPECT_GT(dram->value / l.value, 1.0 / 3);
      EXPECT_LT(dram->value / l.value, 3.0);
    }
}
