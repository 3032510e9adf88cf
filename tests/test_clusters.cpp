// Thread-block clusters: distributed shared memory latency and bandwidth and cluster.sync(),
// by place and barrier kind, on synthetic observations and on the recorded H100 run.
#include <gtest/gtest.h>

#include <string>

#include "analysis/analyzer.hpp"
#include "analysis/clusters.hpp"
#include "base/parameter_names.hpp"
#include "observation_rows.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"

namespace gpuprobe {
namespace {

TEST(Clusters, SmallestAndLargestClusterAndOwnSm) {
  std::vector<Observation> obs;
  for (int s = 2; s <= 16; ++s) {
    obs.push_back(make_row(
        std::string(clusters::kFamily.name), clusters::kDsmLatencyProbe,
        {{clusters::kClusterSizeColumn, std::to_string(s)}, {clusters::kTargetColumn, "other_sm"}},
        190 + s, "cycles", 0.01));
    obs.push_back(make_row(
        std::string(clusters::kFamily.name), clusters::kDsmLatencyProbe,
        {{clusters::kClusterSizeColumn, std::to_string(s)}, {clusters::kTargetColumn, "own_sm"}},
        59, "cycles", 0.01));
    obs.push_back(make_row(std::string(clusters::kFamily.name), clusters::kClusterSyncProbe,
                           {{clusters::kClusterSizeColumn, std::to_string(s)}}, 770 + 10 * s,
                           "cycles", 0.01));
  }
  for (int s : {2, 4, 8, 16})
    obs.push_back(make_row(
        std::string(clusters::kFamily.name), clusters::kDsmBandwidthProbe,
        {{clusters::kClusterSizeColumn, std::to_string(s)}, {clusters::kClustersColumn, "8"}},
        s == 4 ? 17 : 14, "B/clk/SM", 0.02));
  obs.push_back(make_row(std::string(clusters::kFamily.name), clusters::kClusterSizeMaxProbe, {},
                         16, "blocks", 0));
  obs.push_back(
      make_row(std::string(clusters::kFamily.name), clusters::kDsmLatencyProbe,
               {{clusters::kClusterSizeColumn, "999"}, {clusters::kTargetColumn, "other_sm"}}, 1,
               "cycles", 0));
  auto ps = analyze(std::string(clusters::kFamily.name), obs);
  expect_well_formed(ps);
  EXPECT_DOUBLE_EQ(find(ps, param::dsm_latency)->value, 192);
  EXPECT_DOUBLE_EQ(find(ps, param::dsm_latency_largest_cluster)->value, 206);
  EXPECT_DOUBLE_EQ(find(ps, param::dsm_latency_own_sm)->value, 59);
  EXPECT_DOUBLE_EQ(find(ps, param::dsm_bandwidth_per_sm)->value, 17);
  EXPECT_DOUBLE_EQ(find(ps, param::cluster_sync_latency)->value, 790);
  EXPECT_DOUBLE_EQ(find(ps, param::cluster_sync_latency_largest_cluster)->value, 930);
  EXPECT_DOUBLE_EQ(find(ps, param::cluster_size_max)->value, 16);
  EXPECT_TRUE(analyze(std::string(clusters::kFamily.name), {}).empty());
}

TEST(Clusters, RecordedH100) {
  SKIP_WITHOUT(clusters::kFamily.name);
  auto ps = recorded_parameters(std::string(clusters::kFamily.name));
  expect_well_formed(ps);
  EXPECT_NEAR(find(ps, param::dsm_latency)->value, 196, 10);  // Jin et al.: about 200 cycles
  EXPECT_GT(find(ps, param::dsm_latency_largest_cluster)->value,
            find(ps, param::dsm_latency)->value);
  EXPECT_LT(find(ps, param::dsm_latency_own_sm)->value, 0.5 * find(ps, param::dsm_latency)->value);
  EXPECT_NEAR(find(ps, param::dsm_bandwidth_per_sm)->value, 16, 2);
  EXPECT_GT(find(ps, param::cluster_sync_latency_largest_cluster)->value,
            find(ps, param::cluster_sync_latency)->value);
  EXPECT_DOUBLE_EQ(find(ps, param::cluster_size_max)->value, 16);
}

TEST(ClusterSync, MedianOverPlacesAndTheRelaxedBarrier) {
  std::vector<Observation> obs;
  for (int s : {2, 4, 16})
    for (const char* b : {"release", "relaxed"}) {
      Observation o = make_row(
          std::string(clusters::kFamily.name), clusters::kClusterSyncProbe,
          {{clusters::kClusterSizeColumn, std::to_string(s)}, {clusters::kBarrierColumn, b}},
          (std::string(b) == "release" ? 780 : 190) + s, "cycles", 0.03);
      o.reps = 66;
      obs.push_back(o);
    }
  auto ps = analyze(std::string(clusters::kFamily.name), obs, {});
  expect_well_formed(ps);
  EXPECT_DOUBLE_EQ(find(ps, param::cluster_sync_latency)->value, 782);
  EXPECT_DOUBLE_EQ(find(ps, param::cluster_sync_latency_largest_cluster)->value, 796);
  EXPECT_DOUBLE_EQ(find(ps, param::cluster_sync_relaxed_latency)->value, 192);
  EXPECT_NE(find(ps, param::cluster_sync_latency)->method.find("66 places"), std::string::npos);
}

TEST(ClusterSync, RunsBeforeTheBarrierKindsReadAsRelease) {
  std::vector<Observation> obs = {
      make_row(std::string(clusters::kFamily.name), clusters::kClusterSyncProbe,
               {{clusters::kClusterSizeColumn, "2"}}, 790, "cycles", 0.001)};
  auto ps = analyze(std::string(clusters::kFamily.name), obs, {});
  EXPECT_DOUBLE_EQ(find(ps, param::cluster_sync_latency)->value, 790);
  EXPECT_EQ(find(ps, param::cluster_sync_relaxed_latency), nullptr);
}

}  // namespace
}  // namespace gpuprobe
