// The pieces the chase families share (analysis/common/memory_chase.hpp): the hit/miss split, the
// boundary search, the first-miss bracket; and the latency levels of a fine-grained trace.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <random>

#include "analysis/fine_grained.hpp"
#include "memory_chase_checks.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"

using namespace gpuprobe;
using namespace gpuprobe::chase_test;

TEST(MemoryChase, SplitThresholdSeparatesHitsFromMisses) {
  std::mt19937 rng(1);
  std::normal_distribution<double> hit(35, 1.5), miss(260, 40);
  std::vector<double> v;
  for (int i = 0; i < 600; ++i) v.push_back(hit(rng));
  for (int i = 0; i < 60; ++i) v.push_back(miss(rng));
  double t = split_threshold(v);
  EXPECT_GT(t, 45);
  EXPECT_LT(t, 180);
  EXPECT_TRUE(std::isnan(split_threshold({5, 5, 5})));
  EXPECT_TRUE(std::isnan(split_threshold({})));
}

TEST(MemoryChase, BoundarySearchPinsAnIntegerBoundary) {
  int calls = 0;
  BoundarySearch s(64, 1, 1 << 16, 2.0, 1, 0.0);
  while (auto x = s.next()) {
    ++calls;
    s.add(*x, *x <= 1234);
  }
  EXPECT_EQ(s.last_fit(), 1234);
  EXPECT_EQ(s.first_miss(), 1235);
  EXPECT_LT(calls, 25);
}

TEST(MemoryChase, BoundarySearchShrinksAndGivesUp) {
  BoundarySearch down(4096, 1, 1e6, 2.0, 1, 0.0);
  search(down, [](double x) { return x <= 100; });
  EXPECT_EQ(down.last_fit(), 100);
  BoundarySearch never(64, 1, 1000, 2.0, 1, 0.0);
  search(never, [](double) { return true; });
  EXPECT_FALSE(never.bracketed());
  EXPECT_EQ(never.last_fit(), 1000);
  BoundarySearch always(64, 8, 1000, 2.0, 1, 0.0);
  search(always, [](double) { return false; });
  EXPECT_TRUE(std::isnan(always.last_fit()));
}

TEST(MemoryChase, FirstMissBracket) {
  auto b = first_miss_bracket({{4, 1}, {1, 1}, {8, 5}, {16, 9}}, 2);
  ASSERT_TRUE(b && b->found());
  EXPECT_EQ(b->fit, 4);
  EXPECT_EQ(b->miss, 8);
  EXPECT_FALSE(first_miss_bracket({{1, 5}}, 2));
  auto none = first_miss_bracket({{1, 1}, {2, 1}}, 2);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->found());
}

// A cold sequential pass at 4 B: L1 constant misses every 64 B, L1.5 misses every 256 B.
TEST(MemoryChase, LatencyLevelsFindTheLinesOfEachLevel) {
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> off, lat;
  for (int i = 0; i < 1024; ++i) {
    off.push_back(4.0 * i);
    double l = i % 64 == 0 ? 240 : i % 16 == 0 ? 90 : 30;
    lat.push_back(l + noise(rng));
  }
  lat[500] = 5000;  // one interruption is not a level
  auto levels = fine_grained::latency_levels(off, lat);
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_NEAR(levels[0].latency, 30, 2);
  EXPECT_EQ(levels[1].period, 64);
  EXPECT_EQ(levels[2].period, 256);
  EXPECT_GT(levels[2].regularity, 0.9);
}
