// granularity: fetch and allocation granularity on synthetic cold walks with a known unit, and
// on the H100 curve.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <random>

#include "analysis/granularity.hpp"
#include "memory_chase_checks.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"
#include "base/parameter_names.hpp"

using namespace gpuprobe;
using namespace gpuprobe::chase_test;
using namespace gpuprobe::granularity;

namespace {

// Cold walk: base + penalty * min(1, stride / g), with noise.
std::vector<Observation> stride_rows(const std::string& path, double g, double base,
                                     double penalty, std::mt19937& rng,
                                     const std::vector<int>& widths = {4, 8, 16},
                                     double limit = 0) {
  std::normal_distribution<double> noise(0, 2);
  std::vector<Observation> out;
  for (int w : widths)
    for (double s = w; s <= 1024; s *= 2)
      for (const char* res : {"cold", "resident"}) {
        Params p = {
            {kPathColumn, path}, {kWidthColumn, std::to_string(w)}, {kStrideColumn, num(s)}};
        if (limit) p.emplace_back(kFetchLimitColumn, num(limit));
        p.emplace_back(kResidencyColumn, res);
        double y = std::string(res) == "cold" ? base + penalty * std::min(1.0, s / g) : base;
        out.push_back(row(std::string(kFamily.name), kStrideProbe, p, y + noise(rng), "cycles"));
      }
  return out;
}

// Many chains over a footprint at a stride: L2 hits while the lines fit, DRAM beyond.
double l2_cycles(double footprint, double stride, double line, double capacity) {
  double used = stride < line ? footprint : footprint / stride * line;  // bytes of lines held
  double miss = std::clamp((used / capacity - 1.0) * 3, 0.0, 1.0);
  return 280 + 320 * miss;
}

std::vector<Observation> l2_capacity_rows(double line, double capacity) {
  std::vector<Observation> out;
  double limit = 0;
  for (double stride : {32.0, 96.0, 160.0, 224.0, 352.0}) {
    const double q = stride * 1056, lo = std::ceil(capacity / 4 / q) * q;
    const double hi = std::floor(4 * capacity * stride / 32 / q) * q;
    auto at = [&](double f) {
      double y = l2_cycles(f, stride, line, capacity);
      out.push_back(row(std::string(kFamily.name), kL2CapacityProbe,
                        {{kStrideColumn, num(stride)}, {memory_chase::kFootprintColumn, num(f)}}, y,
                        "cycles"));
      return y;
    };
    double ylo = at(lo), yhi = at(hi);
    if (limit == 0) limit = 0.5 * (ylo + yhi);
    BoundarySearch s(lo, lo, hi, 2.0, q, 0.03);
    s.add(lo, true);
    s.add(hi, false);
    search(s, [&](double f) { return at(f) < limit; });
  }
  return out;
}

}  // namespace

TEST(Granularity, FitFindsTheFetchUnit) {
  for (double g : {32.0, 64.0, 128.0}) {
    std::mt19937 rng(static_cast<unsigned>(g));
    std::vector<std::pair<double, double>> pts;
    for (const auto& o : stride_rows("l1", g, 40, 230, rng, {4}))
      if (o.param_text(kResidencyColumn) == "cold")
        pts.emplace_back(o.param(kStrideColumn), o.value);
    auto f = fit_fetch_granularity(pts);
    ASSERT_TRUE(f) << g;
    EXPECT_EQ(f->granularity, g);
    EXPECT_NEAR(f->penalty, 230, 10);
    EXPECT_GT(f->separation, 0.5);
  }
}

TEST(Granularity, FlatOrStillRisingCurvesPinNothing) {
  std::vector<std::pair<double, double>> flat, rising;
  for (double s = 4; s <= 1024; s *= 2) {
    flat.emplace_back(s, 300);
    rising.emplace_back(s, 40 + 250 * s / 2048);
  }
  EXPECT_FALSE(fit_fetch_granularity(flat));
  EXPECT_FALSE(fit_fetch_granularity(rising));
  EXPECT_FALSE(fit_fetch_granularity({{4, 1}, {8, 2}}));
}

TEST(Granularity, AnalyzerReportsEveryPath) {
  std::mt19937 rng(7);
  std::vector<Observation> obs;
  auto add = [&](const std::vector<Observation>& v) { obs.insert(obs.end(), v.begin(), v.end()); };
  add(stride_rows("l1", 32, 40, 230, rng));
  add(stride_rows("readonly", 32, 45, 230, rng));
  add(stride_rows("l2", 64, 280, 350, rng, {4, 8, 16}, 64));  // default limit: 64 B fills
  add(stride_rows("l2", 32, 280, 350, rng, {4, 8, 16}, 32));  // smallest limit: the sector
  add(stride_rows("constant", 64, 30, 60, rng, {4}));
  add(l2_capacity_rows(128, 50 * kMiB));
  auto ps = analyze(std::string(kFamily.name), obs);
  const std::map<std::string, double> want = {{param::l1_sector_size, 32},
                                              {param::readonly_line_size, 32},
                                              {param::l2_sector_size, 32},
                                              {param::constant_line_size, 64},
                                              {param::l2_line_size, 128}};
  for (const auto& [name, v] : want) {
    const Parameter* p = find(ps, name);
    ASSERT_TRUE(p) << name;
    EXPECT_EQ(p->value, v) << name;
    EXPECT_EQ(p->unit, "bytes");
    EXPECT_EQ(p->evidence, "granularity.csv");
    EXPECT_GT(p->confidence, 0.5) << name;
    expect_sane(*p);
  }
  EXPECT_NE(find(ps, param::l2_sector_size)->method.find("32 B"), std::string::npos);
}

TEST(Granularity, LineFitFromCapacityAtStrides) {
  for (double line : {64.0, 128.0, 256.0}) {
    std::vector<std::pair<double, double>> pts;
    for (double s : {32.0, 96.0, 160.0, 224.0, 288.0, 352.0, 480.0, 736.0})
      pts.emplace_back(s, 256 * kKiB * std::max(1.0, s / line) * (1 + 0.01 * std::sin(s)));
    auto f = fit_line_size(pts);
    ASSERT_TRUE(f) << line;
    EXPECT_EQ(f->line, line);
    EXPECT_NEAR(f->low, line, 0.05 * line);
    EXPECT_NEAR(f->high, line, 0.05 * line);
  }
  std::vector<std::pair<double, double>> flat = {{32, 1}, {64, 1}, {96, 1}, {160, 1}};
  EXPECT_FALSE(fit_line_size(flat));
}

TEST(Granularity, BytesPerRequest) {
  EXPECT_DOUBLE_EQ(bytes_per_request(2000, 2000), 128);
  EXPECT_DOUBLE_EQ(bytes_per_request(2000, 250), 1024);
  EXPECT_TRUE(std::isnan(bytes_per_request(0, 10)));
}

TEST(H100, Granularity) {
  REQUIRE_RECORDED(have(std::string(kFamily.name))) << "tests/data/h100_granularity.csv";
  auto ps = h100(std::string(kFamily.name));
  for (const char* name :
       {param::l1_sector_size, param::l2_sector_size, param::readonly_line_size}) {
    const Parameter* p = find(ps, name);
    ASSERT_TRUE(p) << name;
    EXPECT_TRUE(pow2(p->value)) << name;
    EXPECT_GE(p->value, 32) << name;
    EXPECT_LE(p->value, 128) << name;
    expect_sane(*p);
  }
  if (const Parameter* p = find(ps, param::l2_line_size)) {
    EXPECT_GE(p->value, 32);
    EXPECT_LE(p->value, 256);
  }
  if (const Parameter* p = find(ps, param::constant_line_size)) {
    EXPECT_GE(p->value, 16);
    EXPECT_LE(p->value, 256);
  }
}
