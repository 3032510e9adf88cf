// carveout: L1 capacity per shared-memory carve-out preference, synthetic and on the H100.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <random>

#include "analysis/carveout.hpp"
#include "memory_chase_checks.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"
#include "base/parameter_names.hpp"

using namespace gpuprobe;
using namespace gpuprobe::chase_test;
using namespace gpuprobe::carveout;

namespace {

const std::string kFamilyName(carveout::kFamily.name);

std::vector<Observation> carveout_rows(const std::map<int, double>& l1_by_percent) {
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(0, 0.3);
  std::vector<Observation> out;
  for (const auto& [pct, cap] : l1_by_percent) {
    auto at = [&](double f) {
      // Random replacement: misses grow gradually past the capacity.
      double miss = f <= cap ? 0 : std::min(1.0, (f - cap) / cap * 2);
      double y = 38 + 230 * miss + noise(rng);
      out.push_back(row(kFamilyName, kChaseProbe,
                        {{kPercentColumn, std::to_string(pct)},
                         {kRequestColumn, num(std::ceil(pct * 228 * kKiB / 100))},
                         {memory_chase::kFootprintColumn, num(f)}},
                        y, "cycles"));
      return y;
    };
    double hit = at(4 * kKiB);
    BoundarySearch s(4 * kKiB, 4 * kKiB, 2 * (228 + 64) * kKiB, 2.0, kKiB, 0.01);
    s.add(4 * kKiB, true);
    search(s, [&](double f) { return at(f) <= kL1FitFactor * hit; });
  }
  return out;
}

}  // namespace

TEST(Carveout, CapacityPerPreferenceAndTheLargest) {
  const std::map<int, double> l1 = {
      {0, 256 * kKiB}, {25, 192 * kKiB}, {50, 124 * kKiB}, {100, 28 * kKiB}};
  auto obs = carveout_rows(l1);
  auto caps = l1_capacity_by_carveout(obs);
  ASSERT_EQ(caps.size(), l1.size());
  for (const auto& c : caps) {
    double truth = l1.at(static_cast<int>(c.percent));
    EXPECT_LE(c.l1_bytes, truth * 1.06) << c.percent;
    EXPECT_GE(c.l1_bytes, truth * 0.97) << c.percent;
    EXPECT_GT(c.miss_bytes, c.l1_bytes);
  }
  auto ps = analyze(kFamilyName, obs);
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].name, param::l1_size_no_miss);
  EXPECT_NEAR(ps[0].value, 256 * kKiB, 0.06 * 256 * kKiB);
  EXPECT_GT(ps[0].confidence, 0.7);
  expect_sane(ps[0]);
}

TEST(H100, Carveout) {
  REQUIRE_RECORDED(have(kFamilyName)) << "tests/data/h100_carveout.csv";
  auto ps = h100(kFamilyName);
  const Parameter* l1 = find(ps, param::l1_size_no_miss);
  ASSERT_TRUE(l1);
  EXPECT_GE(l1->value, 128 * kKiB);  // H100: 256 KiB of L1 and shared memory per SM
  EXPECT_LE(l1->value, 256 * kKiB);
  Metadata meta;
  auto obs = read_observations(std::string(GPUPROBE_TEST_DATA) + "/h100_carveout.csv", &meta);
  auto caps = l1_capacity_by_carveout(obs);
  ASSERT_GE(caps.size(), 2u);
  // More shared memory never leaves more L1.
  std::sort(caps.begin(), caps.end(),
            [](const auto& a, const auto& b) { return a.shared_request < b.shared_request; });
  EXPECT_GT(caps.front().l1_bytes, caps.back().l1_bytes);
}
