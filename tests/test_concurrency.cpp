// Concurrency limits: overlap counting, the step where kernels stop running at once, launch
// overhead, and the recorded H100 run (priorities, the tail effect) where it is committed.
#include <gtest/gtest.h>

#include "parameter_checks.hpp"
#include "recorded.hpp"

#include <filesystem>
#include <random>

#include "analysis/analyzer.hpp"
#include "analysis/concurrency.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"

using namespace gpuprobe;
using namespace gpuprobe::concurrency;

namespace {

Observation count_row(int streams, double running, const std::string& connections = "32") {
  return {std::string(kFamily.name),
          kConcurrentKernelsProbe,
          {{kStreamsColumn, std::to_string(streams)}, {kConnectionsColumn, connections}},
          running,
          kKernelsUnit,
          running,
          running,
          running,
          5};
}

// Kernels launched against kernels seen running at once for a machine of `limit` slots,
// with a launch that sometimes loses one kernel to timing past the limit.
std::vector<Observation> step_counts(int limit, const std::string& connections, int lost_at = -1) {
  std::vector<Observation> rows;
  for (int n : {1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 192, 256}) {
    double running = std::min(n, limit);
    if (n == lost_at) running -= 1;
    rows.push_back(count_row(n, running, connections));
  }
  return rows;
}

}  // namespace

TEST(MaxOverlap, CountsIntervalsHoldingOneInstant) {
  EXPECT_EQ(max_overlap({}), 0);
  EXPECT_EQ(max_overlap({{0, 1}, {2, 3}, {4, 5}}), 1);
  EXPECT_EQ(max_overlap({{0, 10}, {1, 9}, {2, 8}, {3, 7}}), 4);
  EXPECT_EQ(max_overlap({{0, 1}, {1, 2}, {2, 3}}), 1);          // touching is not overlapping
  EXPECT_EQ(max_overlap({{0, 5}, {4, 9}, {8, 12}}), 2);         // a chain: two at a time
  EXPECT_EQ(max_overlap({{0, 5}, {3, 3}, {0, 0}, {4, 2}}), 1);  // never ran: counts for none
}

TEST(MaxOverlap, ManyRandomIntervalsAgreeWithBruteForce) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> t(0, 100), len(0, 30);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<Interval> spans;
    for (int i = 0; i < 40; ++i) {
      double a = t(rng);
      spans.push_back({a, a + len(rng)});
    }
    int brute = 0;
    for (const auto& s : spans) {  // the maximum is reached at some interval's start
      int here = 0;
      for (const auto& o : spans) here += o.start <= s.start && s.start < o.stop;
      brute = std::max(brute, here);
    }
    EXPECT_EQ(max_overlap(spans), brute);
  }
}

TEST(ConcurrencyLimit, FindsTheStep) {
  auto c = concurrency_limit(step_counts(128, "32"));
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->value, 128);
  EXPECT_EQ(c->saturated_points, 3);  // 160, 192, 256
  EXPECT_GT(c->confidence, 0.9);
}

TEST(ConcurrencyLimit, ToleratesALostKernelPastTheStep) {
  auto c = concurrency_limit(step_counts(32, "32", 64));
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->value, 32);
  EXPECT_DOUBLE_EQ(c->low, 31);
  EXPECT_GT(c->confidence, 0.9);  // 31 of 32 is within tolerance
}

TEST(ConcurrencyLimit, DisagreementPastTheStepLowersConfidence) {
  std::vector<Observation> rows = {count_row(8, 8),   count_row(16, 16),  count_row(32, 32),
                                   count_row(64, 20), count_row(128, 12), count_row(256, 10)};
  auto c = concurrency_limit(rows);
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->value, 32);
  EXPECT_LT(c->confidence, 0.6);
}

TEST(ConcurrencyLimit, NoStepWhenEverythingRanAtOnce) {
  EXPECT_FALSE(concurrency_limit(step_counts(1000, "32")));
  EXPECT_FALSE(concurrency_limit({}));
  // One launch past the level is evidence, if weaker.
  auto c = concurrency_limit({count_row(4, 4), count_row(8, 8), count_row(16, 8)});
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->confidence, 0.7);
}

TEST(AnalyzeConcurrency, ParametersAndTheirMethods) {
  auto obs = step_counts(8, "8 (default)");
  obs.push_back({std::string(kFamily.name),
                 kLaunchProbe,
                 {{kModeColumn, "stream"}, {kKernelsColumn, "1000"}},
                 2.1,
                 "us",
                 2.0,
                 2.1,
                 2.3,
                 11});
  obs.push_back({std::string(kFamily.name),
                 kLaunchProbe,
                 {{kModeColumn, "graph"}, {kKernelsColumn, "1000"}},
                 0.9,
                 "us",
                 0.85,
                 0.9,
                 0.95,
                 11});
  obs.push_back({std::string(kFamily.name),
                 kLaunchLatencyProbe,
                 {{kModeColumn, "stream"}},
                 6.5,
                 "us",
                 6,
                 6.5,
                 9,
                 101});
  auto ps = analyze(std::string(kFamily.name), obs);
  const Parameter* k = find(ps, param::max_concurrent_kernels);
  ASSERT_TRUE(k);
  EXPECT_DOUBLE_EQ(k->value, 8);
  EXPECT_EQ(k->unit, kKernelsUnit);
  EXPECT_NE(k->method.find("CUDA_DEVICE_MAX_CONNECTIONS 8 (default) (the limit seen is the number "
                           "of hardware queues"),
            std::string::npos)
      << k->method;
  const Parameter* l = find(ps, param::kernel_launch_overhead);
  ASSERT_TRUE(l);
  EXPECT_DOUBLE_EQ(l->value, 2.1);
  EXPECT_EQ(l->unit, "us");
  // p05..p95 (2.0..2.3), widened to +-15 % of 2.1: what the host's enqueue moved between runs.
  EXPECT_DOUBLE_EQ(l->low, 2.1 * 0.85);
  EXPECT_DOUBLE_EQ(l->high, 2.1 * 1.15);
  EXPECT_NE(l->method.find("CUDA graph: 0.90 us each"), std::string::npos) << l->method;
  EXPECT_NE(l->method.find("round trip: 6.5 us"), std::string::npos) << l->method;
  EXPECT_EQ(l->evidence, "concurrency.csv");
}

TEST(AnalyzeConcurrency, AboveTheConnectionCountNoQueueNote) {
  auto ps = analyze(std::string(kFamily.name), step_counts(128, "32"));
  const Parameter* k = find(ps, param::max_concurrent_kernels);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->method.find("hardware queues"), std::string::npos);
  EXPECT_FALSE(find(ps, param::kernel_launch_overhead));
}

TEST(RecordedH100, ConcurrencyIsPhysicallySensible) {
  const std::string path = std::string(GPUPROBE_TEST_DATA) + "/h100_concurrency.csv";
  REQUIRE_RECORDED(std::filesystem::exists(path)) << "tests/data/h100_concurrency.csv";
  Metadata meta;
  auto obs = read_observations(path, &meta);
  auto ps = analyze(std::string(kFamily.name), obs, meta);
  const Parameter* k = find(ps, param::max_concurrent_kernels);
  ASSERT_TRUE(k);
  EXPECT_GE(k->value, 4);
  EXPECT_LE(k->value, 256);
  const Parameter* l = find(ps, param::kernel_launch_overhead);
  ASSERT_TRUE(l);
  EXPECT_GT(l->value, 0.2);
  EXPECT_LT(l->value, 50);

  // Priorities: a higher-priority kernel overtakes at least as many waiting blocks.
  double higher = -1, same = -1;
  for (const auto& o : select(obs, kPriorityProbe, "fraction")) {
    EXPECT_GE(o.value, 0);
    EXPECT_LE(o.value, 1);
    (o.param_text(kSecondColumn) == "higher_priority" ? higher : same) = o.value;
  }
  if (higher >= 0 && same >= 0) {
    EXPECT_GE(higher, same);
  }

  // The tail effect: one block past a whole wave costs about one more block time.
  double one_wave = 0, one_wave_and_a_block = 0, block_us = 0;
  for (const auto& o : select(obs, kWavesProbe, "us")) {
    const double blocks = o.param(kBlocksColumn), wave = o.param(kWaveBlocksColumn);
    if (blocks == wave) one_wave = o.value;
    if (blocks == wave + 1) one_wave_and_a_block = o.value;
    block_us = o.param(kBlockUsColumn);
  }
  ASSERT_GT(one_wave, 0);
  ASSERT_GT(one_wave_and_a_block, 0);
  EXPECT_GT(one_wave_and_a_block - one_wave, 0.5 * block_us);
}
