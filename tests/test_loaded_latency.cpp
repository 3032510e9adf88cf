// Loaded latency: the recorded H100 chase rises with the streaming load beside it.
#include <gtest/gtest.h>

#include "recorded.hpp"

#include "analysis/loaded_latency.hpp"
#include "base/observation.hpp"

using namespace gpuprobe;

TEST(RecordedH100, LatencyRisesWithLoad) {
  auto obs = recorded_observations(std::string(loaded_latency::kFamily.name));
  REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_loaded_latency.csv";
  auto chase = select(obs, loaded_latency::kChaseProbe, "ns");
  ASSERT_GE(chase.size(), 3u);
  const Observation* idle = nullptr;
  const Observation* busiest = nullptr;
  for (const auto& o : chase) {
    if (o.param(loaded_latency::kStreamingBlocksColumn) == 0) idle = &o;
    if (!busiest ||
        o.param(loaded_latency::kLoadColumn) > busiest->param(loaded_latency::kLoadColumn))
      busiest = &o;
  }
  ASSERT_TRUE(idle && busiest);
  EXPECT_GT(idle->value, 200);
  EXPECT_LT(idle->value, 2000);
  EXPECT_GT(busiest->param(loaded_latency::kLoadColumn), 500);
  EXPECT_GT(busiest->value, idle->value);
}
