// Atomics: the analyzer's choice of the documented cases, and the recorded H100 run.
#include <gtest/gtest.h>

#include "observation_rows.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"

#include <cmath>

#include "analysis/analyzer.hpp"
#include "analysis/atomics.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"

using namespace gpuprobe;

namespace {

const RowMaker row{0.02};
const std::string kFamilyName(atomics::kFamily.name);

}  // namespace

TEST(AtomicsAnalyzer, PicksTheDocumentedCases) {
  std::vector<Observation> obs;
  for (std::string space : {"shared", "global"})
    for (std::string op : {"add", "cas"}) {
      double base = space == "shared" ? 8 : 600;
      for (int lanes : {1, 2, 4, 8, 16, 32}) {
        Params p = {{atomics::kSpaceColumn, space},
                    {atomics::kOpColumn, op},
                    {atomics::kLanesColumn, std::to_string(lanes)},
                    {atomics::kAddressesColumn, "1"}};
        obs.push_back(row(kFamilyName, atomics::kAtomicLatency, p, base + 2.0 * lanes, "cycles"));
        obs.push_back(
            row(kFamilyName, atomics::kAtomicThroughput, p, 32.0 / lanes, atomics::kPerClockPerSm));
      }
      Params p = {{atomics::kSpaceColumn, space},
                  {atomics::kOpColumn, op},
                  {atomics::kLanesColumn, "32"},
                  {atomics::kAddressesColumn, "32"}};
      obs.push_back(row(kFamilyName, atomics::kAtomicLatency, p, base, "cycles"));
      obs.push_back(row(kFamilyName, atomics::kAtomicThroughput, p, space == "shared" ? 30.0 : 4.0,
                        atomics::kPerClockPerSm));
    }
  auto ps = analyze(kFamilyName, obs);
  ASSERT_TRUE(find(ps, param::atomic_shared_latency_nocontention));
  EXPECT_DOUBLE_EQ(find(ps, param::atomic_shared_latency_nocontention)->value, 10);
  EXPECT_DOUBLE_EQ(find(ps, param::atomic_shared_latency_32way)->value, 72);
  EXPECT_DOUBLE_EQ(find(ps, param::atomic_global_latency_nocontention)->value, 602);
  EXPECT_DOUBLE_EQ(find(ps, param::atomic_global_latency_32way)->value, 664);
  EXPECT_DOUBLE_EQ(find(ps, param::atomic_shared_cas_latency_nocontention)->value, 10);
  EXPECT_DOUBLE_EQ(find(ps, param::atomic_shared_throughput_per_sm)->value, 30);
  EXPECT_DOUBLE_EQ(find(ps, param::atomic_global_throughput_per_sm)->value, 4);
  EXPECT_EQ(find(ps, param::atomic_global_throughput_per_sm)->unit, atomics::kPerClockPerSm);
  EXPECT_EQ(find(ps, param::atomic_global_latency_32way)->evidence, kFamilyName + ".csv");
  EXPECT_GT(find(ps, param::atomic_shared_latency_32way)->confidence, 0.6);
  EXPECT_EQ(ps.size(), 8u);
}

TEST(RecordedH100, Atomics) {
  auto obs = recorded_observations(kFamilyName);
  REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_atomics.csv";
  auto ps = analyze(kFamilyName, obs);
  auto get = [&](const std::string& n) {
    const Parameter* p = find(ps, n);
    EXPECT_TRUE(p) << n;
    return p ? p->value : std::nan("");
  };
  double sh = get(param::atomic_shared_latency_nocontention),
         sh32 = get(param::atomic_shared_latency_32way);
  double gl = get(param::atomic_global_latency_nocontention),
         gl32 = get(param::atomic_global_latency_32way);
  EXPECT_GT(sh, 2);
  EXPECT_LT(sh, 300);
  EXPECT_GE(sh32, sh);
  EXPECT_GT(gl, 100);  // performed at L2: hundreds of cycles
  EXPECT_LT(gl, 3000);
  EXPECT_GE(gl32, 0.9 * gl);
  EXPECT_GT(gl, sh);
  EXPECT_GT(get(param::atomic_shared_throughput_per_sm), 1);
  EXPECT_GT(get(param::atomic_global_throughput_per_sm), 0.01);
}
