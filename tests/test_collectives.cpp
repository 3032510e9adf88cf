// The collectives family's arithmetic and analysis without a GPU: nccl-tests' busbw factors and
// counts, the sizes swept, and the analyzer on synthetic sweeps of known bus bandwidth and
// latency (a plateau, a sweep still rising, missing sizes, several communicators).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "analysis/collectives.hpp"
#include "base/parameter_names.hpp"
#include "observation_rows.hpp"
#include "parameter_checks.hpp"

namespace gpuprobe {
namespace {

using collectives::Collective;

// nccl-tests' busbw factors (doc/PERFORMANCE.md, "Summary"), written out for 2, 4 and 8 ranks.
TEST(Collectives, BusFactorsAreNcclTests) {
  const std::map<int, std::map<Collective, double>> want = {
      {2,
       {{Collective::all_reduce, 1.0},
        {Collective::all_gather, 0.5},
        {Collective::reduce_scatter, 0.5},
        {Collective::broadcast, 1.0},
        {Collective::all_to_all, 0.5}}},
      {4,
       {{Collective::all_reduce, 1.5},
        {Collective::all_gather, 0.75},
        {Collective::reduce_scatter, 0.75},
        {Collective::broadcast, 1.0},
        {Collective::all_to_all, 0.75}}},
      {8,
       {{Collective::all_reduce, 1.75},
        {Collective::all_gather, 0.875},
        {Collective::reduce_scatter, 0.875},
        {Collective::broadcast, 1.0},
        {Collective::all_to_all, 0.875}}},
  };
  for (const auto& [n, factors] : want)
    for (const auto& [c, f] : factors) {
      EXPECT_DOUBLE_EQ(collectives::bus_factor(c, n), f) << collectives::name(c) << " n=" << n;
      // busbw = S / t x factor, algbw = S / t, in 1e9 B/s.
      EXPECT_DOUBLE_EQ(collectives::busbw(c, n, 1e9, 0.5), 2 * f);
    }
  EXPECT_DOUBLE_EQ(collectives::algbw(1073741824, 1e-3), 1073.741824);
}

// nccl-tests' *GetCollByteCount for float: each rank's share in whole 16 B.
TEST(Collectives, CountsAreNcclTests) {
  const size_t gib = size_t(1) << 30;
  auto k = collectives::counts(Collective::all_reduce, gib, 4);
  EXPECT_EQ(k.count, gib / 4);
  EXPECT_EQ(k.bytes, gib);
  k = collectives::counts(Collective::all_gather, gib, 3);
  EXPECT_EQ(k.count, 89478484u);  // (268435456 / 3) & ~3
  EXPECT_EQ(k.send, 89478484u);
  EXPECT_EQ(k.recv, 3 * 89478484u);
  EXPECT_EQ(k.bytes, 1073741808u);
  k = collectives::counts(Collective::reduce_scatter, gib, 8);
  EXPECT_EQ(k.send, gib / 4);
  EXPECT_EQ(k.recv, gib / 32);
  k = collectives::counts(Collective::all_to_all, 1024, 4);
  EXPECT_EQ(k.count, 64u);
  EXPECT_EQ(k.send, 256u);
  EXPECT_EQ(k.recv, 256u);
  // Below 16 B a rank, nothing: nccl-tests prints these rows with 0 B; the probe skips them.
  EXPECT_EQ(collectives::counts(Collective::all_gather, 32, 4).bytes, 0u);
  EXPECT_EQ(collectives::counts(Collective::all_gather, 64, 4).bytes, 64u);
  EXPECT_EQ(collectives::counts(Collective::broadcast, 8, 8).bytes, 8u);
  EXPECT_EQ(collectives::counts(Collective::all_reduce, 8, 0).bytes, 0u);
}

TEST(Collectives, SizesRanksAndNames) {
  const auto full = collectives::sizes(false), quick = collectives::sizes(true);
  ASSERT_EQ(full.size(), 28u);
  EXPECT_EQ(full.front(), 8u);
  EXPECT_EQ(full.back(), size_t(1) << 30);
  ASSERT_EQ(quick.size(), 10u);
  EXPECT_EQ(quick[1], 64u);
  EXPECT_EQ(quick.back(), size_t(1) << 30);
  EXPECT_EQ(collectives::rank_counts(1), std::vector<int>{});
  EXPECT_EQ(collectives::rank_counts(2), std::vector<int>({2}));
  EXPECT_EQ(collectives::rank_counts(3), std::vector<int>({2, 3}));
  EXPECT_EQ(collectives::rank_counts(8), std::vector<int>({2, 4, 8}));
  Collective c;
  ASSERT_TRUE(collectives::parse("alltoall_perf", &c));
  EXPECT_EQ(c, Collective::all_to_all);
  ASSERT_TRUE(collectives::parse(collectives::kReduceScatterProbe, &c));
  EXPECT_EQ(c, Collective::reduce_scatter);
  EXPECT_FALSE(collectives::parse("sendrecv_perf", &c));
  EXPECT_FALSE(collectives::parse("", &c));
}

TEST(Collectives, BandwidthRowTurnsTheTimesQuantilesAround) {
  Observation t =
      make_row(std::string(collectives::kFamily.name), collectives::kAllReduceProbe,
               {{collectives::kBytesColumn, "1000000000"}, {collectives::kRanksColumn, "4"}}, 1000,
               "us", 0.1);
  const Observation bus = collectives::bandwidth_row(t, Collective::all_reduce, 4, true);
  EXPECT_EQ(bus.unit, "GB/s");
  EXPECT_EQ(bus.param_text(collectives::kBwColumn), "bus");
  EXPECT_DOUBLE_EQ(bus.value, 1500);
  EXPECT_DOUBLE_EQ(bus.p05, 1500 / 1.1);  // from the slowest batch
  EXPECT_DOUBLE_EQ(bus.p95, 1500 / 0.9);
  EXPECT_DOUBLE_EQ(collectives::bandwidth_row(t, Collective::all_reduce, 4, false).value, 1000);
}

// A collective sweep of time rows: t(S) = latency + S / algbw at the plateau, with busbw B.
std::vector<Observation> sweep(Collective c, int ranks, double bus_gbs, double latency_us,
                               const std::vector<size_t>& sizes,
                               const std::string& mode = collectives::kOneProcess,
                               double spread = 0.01) {
  std::vector<Observation> out;
  for (size_t nominal : sizes) {
    const auto k = collectives::counts(c, nominal, ranks);
    if (k.bytes == 0) continue;
    const double alg = bus_gbs / collectives::bus_factor(c, ranks);
    const double t = latency_us + double(k.bytes) / (alg * 1e9) * 1e6;
    out.push_back(make_row(std::string(collectives::kFamily.name), collectives::name(c),
                           {{collectives::kBytesColumn, std::to_string(k.bytes)},
                            {collectives::kRanksColumn, std::to_string(ranks)},
                            {collectives::kModeColumn, mode}},
                           t, "us", spread));
  }
  return out;
}

std::vector<Observation> every_collective(int ranks, double bus_gbs, double latency_us,
                                          bool quick = false) {
  std::vector<Observation> obs;
  for (Collective c : collectives::all()) {
    auto s = sweep(c, ranks, bus_gbs, latency_us, collectives::sizes(quick));
    obs.insert(obs.end(), s.begin(), s.end());
  }
  return obs;
}

TEST(Collectives, BusbwIsTheLargestSizesAndLatencyTheSmallest) {
  for (int n : {2, 4, 8}) {
    const auto obs = every_collective(n, 360, 18);
    const auto ps = analyze(std::string(collectives::kFamily.name), obs);
    expect_well_formed(ps, std::string(collectives::kFamily.name) + ".csv");
    for (Collective c : collectives::all()) {
      const std::string name = collectives::name(c);
      const Parameter* bw = find(ps, name + "_busbw");
      ASSERT_NE(bw, nullptr) << name << " n=" << n;
      // Exactly nccl-tests' busbw of the 1 GiB row, and within 2 % of the plateau (the 18 us
      // latency is 0.3-1.2 % of a 1 GiB call).
      const auto k = collectives::counts(c, collectives::kMaxBytes, n);
      const double alg = 360 / collectives::bus_factor(c, n);
      const double t = 18e-6 + double(k.bytes) / (alg * 1e9);
      EXPECT_NEAR(bw->value, collectives::busbw(c, n, double(k.bytes), t), 1e-9) << name;
      EXPECT_NEAR(bw->value, 360, 7.2) << name;
      EXPECT_LE(bw->low, bw->value);
      EXPECT_GE(bw->high, bw->value);
      // A plateau of several sizes: sure, unless its batches spread past the 5 % tolerance,
      // when the width cap (analysis/common/util.hpp) holds it below 0.5.
      const double half = std::max(bw->high - bw->value, bw->value - bw->low) / bw->value;
      if (half <= 0.05) EXPECT_GT(bw->confidence, 0.8) << name << ": " << bw->method;
      else EXPECT_LT(bw->confidence, 0.5) << name << ": " << bw->method;
      EXPECT_NE(bw->method.find("1 GiB"), std::string::npos) << bw->method;
      EXPECT_NE(bw->method.find("plateau"), std::string::npos) << bw->method;
      const Parameter* lat = find(ps, name + "_latency");
      ASSERT_NE(lat, nullptr) << name;
      EXPECT_NEAR(lat->value, 18, 0.1) << name;
      EXPECT_EQ(lat->unit, "us");
      // The host's launch path moves it between runs: a rough figure at most, +-30 %, wider
      // than +-25 %, so below 0.3 (analysis/common/util.hpp).
      EXPECT_LT(lat->confidence, 0.3);
      EXPECT_GT(lat->confidence, 0.1);
      EXPECT_LE(lat->low, 0.7 * lat->value + 1e-9);
      EXPECT_GE(lat->high, 1.3 * lat->value - 1e-9);
    }
    const Parameter* r = find(ps, param::collective_ranks);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->value, n);
  }
}

TEST(Collectives, QuickSweepGivesTheSameFigures) {
  const auto full = analyze(std::string(collectives::kFamily.name), every_collective(4, 355, 20));
  const auto quick =
      analyze(std::string(collectives::kFamily.name), every_collective(4, 355, 20, true));
  for (const char* name : {param::all_reduce_busbw, param::all_to_all_busbw}) {
    ASSERT_NE(find(quick, name), nullptr) << name;
    EXPECT_NEAR(find(quick, name)->value, find(full, name)->value, 1e-9)
        << name << ": the same 1 GiB row";
  }
  // The smallest sizes differ (8, 64, 512 B against 8, 16, 32 B), their times hardly.
  ASSERT_NE(find(quick, param::broadcast_latency), nullptr);
  EXPECT_NEAR(find(quick, param::broadcast_latency)->value,
              find(full, param::broadcast_latency)->value, 0.01);
}

TEST(Collectives, MissingSizesAreReadFromWhatWasMeasured) {
  // Stopped at 256 MiB (too little memory for 1 GiB): the busbw of the largest size measured.
  std::vector<size_t> upto;
  for (size_t b : collectives::sizes(false))
    if (b <= (size_t(256) << 20)) upto.push_back(b);
  auto ps = analyze(std::string(collectives::kFamily.name),
                    sweep(Collective::all_reduce, 4, 350, 15, upto));
  const Parameter* bw = find(ps, param::all_reduce_busbw);
  ASSERT_NE(bw, nullptr);
  EXPECT_NE(bw->method.find("256 MiB"), std::string::npos) << bw->method;
  EXPECT_EQ(find(ps, param::all_gather_busbw), nullptr) << "no rows, no parameter";

  // Only large sizes: a busbw, no latency (the smallest size is no latency).
  ps = analyze(std::string(collectives::kFamily.name),
               sweep(Collective::broadcast, 2, 300, 15, {size_t(64) << 20, size_t(1) << 30}));
  EXPECT_NE(find(ps, param::broadcast_busbw), nullptr);
  EXPECT_EQ(find(ps, param::broadcast_latency), nullptr);

  // One size alone: no plateau to stand on.
  ps = analyze(std::string(collectives::kFamily.name),
               sweep(Collective::all_gather, 2, 300, 15, {size_t(1) << 30}));
  ASSERT_NE(find(ps, param::all_gather_busbw), nullptr);
  EXPECT_LE(find(ps, param::all_gather_busbw)->confidence, 0.6);
}

TEST(Collectives, StillRisingAtTheLargestSizeIsNoPlateau) {
  // A latency so large that the bandwidth still climbs 2x per step at 1 GiB's neighbours.
  const auto ps = analyze(std::string(collectives::kFamily.name),
                          sweep(Collective::all_reduce, 4, 350, 50000, collectives::sizes(false)));
  const Parameter* bw = find(ps, param::all_reduce_busbw);
  ASSERT_NE(bw, nullptr);
  EXPECT_LE(bw->confidence, 0.6);
  EXPECT_NE(bw->method.find("no plateau"), std::string::npos) << bw->method;
  // The smallest sizes are flat: a latency at the most confidence a host-bound time of
  // +-30 % gets.
  const Parameter* lat = find(ps, param::all_reduce_latency);
  ASSERT_NE(lat, nullptr);
  const auto flat = analyze(std::string(collectives::kFamily.name), every_collective(4, 360, 18));
  EXPECT_DOUBLE_EQ(lat->confidence, find(flat, param::all_reduce_latency)->confidence);
}

TEST(Collectives, LatencyOfSizesThatAreNotFlatIsDoubted) {
  auto obs = sweep(Collective::all_reduce, 2, 300, 10, collectives::sizes(false));
  obs[2].value = obs[2].p50 = obs[2].p05 = obs[2].p95 = 30;  // the third size 3x the first
  const auto ps = analyze(std::string(collectives::kFamily.name), obs);
  const Parameter* lat = find(ps, param::all_reduce_latency);
  ASSERT_NE(lat, nullptr);
  EXPECT_LE(lat->confidence, 0.5);
  EXPECT_NE(lat->method.find("not yet size-independent"), std::string::npos);
}

TEST(Collectives, ParametersAreReadAtTheLargestCommunicator) {
  auto obs = every_collective(2, 330, 12);
  const auto four = every_collective(4, 355, 20);
  obs.insert(obs.end(), four.begin(), four.end());
  const auto ps = analyze(std::string(collectives::kFamily.name), obs);
  EXPECT_EQ(find(ps, param::collective_ranks)->value, 4);
  EXPECT_NEAR(find(ps, param::all_reduce_busbw)->value, 355, 3.6);
  EXPECT_NEAR(find(ps, param::all_reduce_latency)->value, 20, 0.1);
}

TEST(Collectives, BadRowsAreLeftOut) {
  auto obs = every_collective(2, 330, 12);
  auto bad = [&](const char* bytes, const char* ranks, double us) {
    obs.push_back(make_row(std::string(collectives::kFamily.name), collectives::kAllReduceProbe,
                           {{collectives::kBytesColumn, bytes},
                            {collectives::kRanksColumn, ranks},
                            {collectives::kModeColumn, collectives::kOneProcess}},
                           us, "us", 0));
  };
  bad("nan", "2", 5);
  bad("-8", "2", 5);
  bad("8", "1e300", 5);
  bad("16", "2", -1);
  obs.push_back(make_row(std::string(collectives::kFamily.name), collectives::kNcclProbe,
                         {{collectives::kVersionColumn, "2.28.3"}, {collectives::kNvlsColumn, "0"}},
                         22803, collectives::kVersionUnit, 0));
  const auto ps = analyze(std::string(collectives::kFamily.name), obs);
  expect_well_formed(ps, std::string(collectives::kFamily.name) + ".csv");
  EXPECT_NE(find(ps, param::all_reduce_busbw)->method.find("; NCCL 2.28.3, NCCL_NVLS_ENABLE=0"),
            std::string::npos);
  EXPECT_EQ(find(ps, param::collective_ranks)->value, 2);
  EXPECT_NEAR(find(ps, param::all_reduce_latency)->value, 12, 0.1);
  EXPECT_TRUE(analyze(std::string(collectives::kFamily.name), {}).empty());
}

}  // namespace
}  // namespace gpuprobe
