// The ilp_occupancy family: knees and ceilings of Little's law on synthetic sweeps, and the
// recorded H100 run in tests/data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "observation_rows.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"
#include "analysis/analyzer.hpp"
#include "analysis/ilp_occupancy.hpp"
#include "analysis/common/util.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe {
namespace {

const std::string kFamilyName(ilp_occupancy::kFamily.name);

Observation row(const std::string& family, const std::string& probe, Params params, double value,
                const std::string& unit, double spread = 0.002) {
  return make_row(family, probe, std::move(params), value, unit, spread);
}

// Little's law with a ceiling: rate = min(peak, warps * ilp * per_op / latency), with noise.
std::vector<Observation> ilp_rows(const std::string& probe, double peak, double latency,
                                  double per_op, const std::string& unit, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(1.0, 0.005);
  std::vector<Observation> out;
  for (int ilp : ilp_occupancy::kIlps)
    for (int w : ilp_occupancy::warp_counts(64)) {
      double rate = std::min(peak, w * ilp * per_op / latency) * noise(rng);
      out.push_back(row(kFamilyName, probe,
                        {{ilp_occupancy::kIlpColumn, std::to_string(ilp)},
                         {ilp_occupancy::kWarpsColumn, std::to_string(w)}},
                        rate, unit, 0.01));
    }
  return out;
}

TEST(IlpOccupancy, WarpCountsCoverTheSm) {
  auto w = ilp_occupancy::warp_counts(64);
  EXPECT_EQ(w.front(), 1);
  EXPECT_EQ(w.back(), 64);
  EXPECT_TRUE(std::is_sorted(w.begin(), w.end()));
  auto w48 = ilp_occupancy::warp_counts(48);
  EXPECT_EQ(w48.back(), 48);
  for (int x : w48) EXPECT_LE(x, 48);
}

TEST(IlpOccupancy, KneeBetweenSweepPoints) {
  auto k = ilp_occupancy::knee({1, 2, 4, 8, 16}, {10, 20, 40, 80, 100}, 100);
  EXPECT_TRUE(k.found);
  EXPECT_EQ(k.warps, 16);
  EXPECT_EQ(k.warps_below, 8);
  EXPECT_FALSE(ilp_occupancy::knee({1, 2}, {10, 20}, 100).found);
  auto first = ilp_occupancy::knee({1, 2}, {95, 100}, 100);
  EXPECT_EQ(first.warps, 1);
  EXPECT_EQ(first.warps_below, 1);
}

TEST(IlpOccupancy, IlpStandsInForWarps) {
  // fp32 FMA: 4-cycle latency, 128 results/clk/SM; DRAM: 32 bytes/clk/SM over ~900 cycles.
  auto obs = ilp_rows(ilp_occupancy::kFmaProbe, 128, 4, 32, "results/clk/SM", 1);
  auto mem = ilp_rows(ilp_occupancy::kLoadProbe, 24, 900, 128, "B/clk/SM", 2);
  obs.insert(obs.end(), mem.begin(), mem.end());
  auto ps = analyze(kFamilyName, obs);
  expect_well_formed(ps, "ilp_occupancy.csv");
  // 90 % of 128 needs 14.4 FMAs in flight: 16 warps at ILP 1 ... 2 warps at ILP 8.
  EXPECT_EQ(find(ps, "fp32_fma_warps_90pct_ilp1")->value, 16);
  EXPECT_EQ(find(ps, "fp32_fma_warps_90pct_ilp1")->low, 12);
  EXPECT_EQ(find(ps, "fp32_fma_warps_90pct_ilp2")->value, 8);
  EXPECT_EQ(find(ps, "fp32_fma_warps_90pct_ilp4")->value, 4);
  EXPECT_EQ(find(ps, "fp32_fma_warps_90pct_ilp8")->value, 2);
  const Parameter* f = find(ps, param::fp32_fma_in_flight_90pct);
  EXPECT_EQ(f->value, 16);
  // The same product at every ILP (agreement 1.0), so the width cap alone sets the confidence:
  // the knees are placed only between sweep points 2x apart, wider than the 10 % tolerance.
  const double half = std::max(f->high - f->value, f->value - f->low) / f->value;
  EXPECT_DOUBLE_EQ(f->confidence, std::min(analysis::kWideConfidence,
                                           analysis::kPastToleranceConfidence * 0.10 / half));
  // DRAM: 90 % of 24 B/clk needs 151 loads in flight; ILP 1 never gets there with 64 warps.
  EXPECT_EQ(find(ps, "dram_load_warps_90pct_ilp1"), nullptr);
  const Parameter* c = find(ps, "dram_load_ceiling_ilp1");
  ASSERT_NE(c, nullptr);
  EXPECT_NEAR(c->value, 64 * 128 / 900.0 / 24, 0.03);
  EXPECT_NE(c->method.find("still rising"), std::string::npos) << c->method;
  EXPECT_EQ(find(ps, "fp32_fma_ceiling_ilp1"), nullptr);  // reached 90 %: a knee, no ceiling
  EXPECT_EQ(find(ps, "dram_load_warps_90pct_ilp4")->value, 40);
  EXPECT_EQ(find(ps, "dram_load_warps_90pct_ilp8")->value, 20);
  EXPECT_NE(find(ps, param::dram_load_in_flight_90pct), nullptr);
}

TEST(IlpOccupancy, FlatCeilingBelowThePeak) {
  // As recorded on the H100: at ILP 1 and 2 the rate levels off at 1/2 and 2/3 of the peak
  // however many warps, and a lone spike stands above the plateau.
  auto obs = ilp_rows(ilp_occupancy::kFmaProbe, 128, 4, 32, "results/clk/SM", 3);
  for (auto& o : obs) {
    double cap = o.param(ilp_occupancy::kIlpColumn) == 1   ? 64
                 : o.param(ilp_occupancy::kIlpColumn) == 2 ? 85.3
                                                           : 1e9;
    double scale = std::min(1.0, cap / o.value);
    o.value *= scale;
    o.p05 *= scale;
    o.p50 *= scale;
    o.p95 *= scale;
  }
  obs.back().value = obs.back().p50 = 160;  // ILP 8, 64 warps
  auto ps = analyze(kFamilyName, obs);
  expect_well_formed(ps, "ilp_occupancy.csv");
  EXPECT_EQ(find(ps, "fp32_fma_warps_90pct_ilp1"), nullptr);
  const Parameter* c1 = find(ps, "fp32_fma_ceiling_ilp1");
  ASSERT_NE(c1, nullptr);
  EXPECT_NEAR(c1->value, 0.5, 0.02);
  EXPECT_NE(c1->method.find("flat"), std::string::npos) << c1->method;
  EXPECT_NE(c1->method.find("lone points set aside"), std::string::npos) << c1->method;
  ASSERT_NE(find(ps, "fp32_fma_ceiling_ilp2"), nullptr);
  EXPECT_NEAR(find(ps, "fp32_fma_ceiling_ilp2")->value, 2.0 / 3, 0.02);
  EXPECT_EQ(find(ps, "fp32_fma_warps_90pct_ilp4")->value, 4);
  EXPECT_EQ(find(ps, "fp32_fma_warps_90pct_ilp8")->value, 2);
}

TEST(IlpOccupancy, ConfirmedPeak) {
  EXPECT_DOUBLE_EQ(ilp_occupancy::confirmed_peak({12.0, 15.5, 12.1, 12.6, 9}), 12.1);
  EXPECT_DOUBLE_EQ(ilp_occupancy::confirmed_peak({5, 7}), 7);  // nothing confirms: the maximum
  EXPECT_DOUBLE_EQ(ilp_occupancy::confirmed_peak({}), 0);
}

TEST(IlpOccupancy, ExclusiveSharedMemory) {
  // H100: 228 KiB per SM, 1 KiB reserved per block, 227 KiB per block at most.
  const long long sm = 233472, reserved = 1024, max = 232448;
  for (int blocks : {1, 2, 3, 4}) {
    long long dyn = ilp_occupancy::exclusive_shared_bytes(sm, reserved, max, blocks);
    SCOPED_TRACE(blocks);
    ASSERT_GT(dyn, 0);
    EXPECT_LE(blocks * (dyn + reserved), sm);
    EXPECT_GT((blocks + 1) * (dyn + reserved), sm);
    EXPECT_LE(dyn, max);
  }
  // A per-block cap too small to exclude a second block: no size works.
  EXPECT_EQ(ilp_occupancy::exclusive_shared_bytes(sm, reserved, 48 * 1024, 1), -1);
  EXPECT_EQ(ilp_occupancy::exclusive_shared_bytes(sm, reserved, max, 0), -1);
}

TEST(RecordedH100, IlpReplacesOccupancy) {
  SKIP_WITHOUT(kFamilyName);
  auto ps = recorded_parameters(kFamilyName);
  expect_well_formed(ps, "ilp_occupancy.csv");
  // With 8 chains a thread needs no more than one warp per scheduler, 2 per scheduler at most.
  const Parameter* ilp8 = find(ps, "fp32_fma_warps_90pct_ilp8");
  ASSERT_NE(ilp8, nullptr);
  EXPECT_GE(ilp8->value, 1);
  EXPECT_LE(ilp8->value, 8);
  // ILP 1 either reaches 90 % with more warps than ILP 8 needs, or is reported as a ceiling:
  // on the H100 it levels off at half the peak however many warps (each FFMA R0, R0, R4, R5
  // comes from another warp than the last, so the operand reuse cache never helps).
  const Parameter* ilp1 = find(ps, "fp32_fma_warps_90pct_ilp1");
  const Parameter* ceiling1 = find(ps, "fp32_fma_ceiling_ilp1");
  ASSERT_TRUE(ilp1 || ceiling1);
  if (ilp1) {
    EXPECT_GE(ilp1->value, ilp8->value);
    EXPECT_LE(ilp1->value, 64);
  } else {
    EXPECT_GT(ceiling1->value, 0.3);
    EXPECT_LT(ceiling1->value, 0.9);
  }
  EXPECT_NE(find(ps, param::dram_load_in_flight_90pct), nullptr);
}

}  // namespace
}  // namespace gpuprobe
