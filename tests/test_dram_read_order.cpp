// DRAM read order: every walk order reads each access of the buffer exactly once per pass,
// and the analyzer picks the best kernel and sets it against the theoretical peak, on
// synthetic rows and on the sweep recorded on an H100 (tests/data/h100_dram_read_order.csv).
#include <gtest/gtest.h>

#include <vector>

#include "analysis/analyzer.hpp"
#include "analysis/dram_read_order.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe {
namespace {

using dram_read_order::Order;
using dram_read_order::Walk;

// How often each access of [0, n) is read in one pass, thread by thread as order_read walks.
std::vector<int> reads_per_access(Order o, unsigned long long n, int blocks, int threads, int ilp) {
  Walk w;
  std::vector<int> seen(n, 0);
  if (!dram_read_order::walk_of(o, n, blocks, threads, ilp, &w)) return {};
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) {
      const unsigned long long first = b * w.block_step + static_cast<unsigned long long>(t / 32) * w.warp_step + t % 32;
      for (unsigned long long r = 0; r < w.rounds; ++r)
        for (int u = 0; u < ilp; ++u) {
          const unsigned long long i = first + (r * ilp + u) * w.stride;
          if (i < n) ++seen[i];
        }
    }
  return seen;
}

TEST(DramReadOrder, EveryOrderReadsEachAccessOncePerPass) {
  for (Order o : {Order::grid, Order::block, Order::warp}) {
    SCOPED_TRACE(dram_read_order::order_name(o));
    const std::vector<int> seen = reads_per_access(o, 3 * 64 * 4 * 5, 3, 64, 4);
    ASSERT_EQ(seen.size(), 3u * 64 * 4 * 5);
    for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "access " << i;
  }
}

TEST(DramReadOrder, WalksDifferAsNamed) {
  Walk g, b, w;
  ASSERT_TRUE(dram_read_order::walk_of(Order::grid, 4096, 2, 64, 2, &g));
  ASSERT_TRUE(dram_read_order::walk_of(Order::block, 4096, 2, 64, 2, &b));
  ASSERT_TRUE(dram_read_order::walk_of(Order::warp, 4096, 2, 64, 2, &w));
  EXPECT_EQ(g.stride, 128u);       // the whole grid moves together
  EXPECT_EQ(b.block_step, 2048u);  // each block its half
  EXPECT_EQ(w.warp_step, 1024u);   // each of the 4 warps its quarter
  EXPECT_EQ(g.rounds, 16u);
  EXPECT_EQ(b.rounds, g.rounds);
  EXPECT_EQ(w.rounds, g.rounds);
}

TEST(DramReadOrder, RejectsBuffersThatAreNoWholeNumberOfRounds) {
  Walk w;
  EXPECT_FALSE(dram_read_order::walk_of(Order::grid, 1000, 2, 64, 4, &w));
  EXPECT_FALSE(dram_read_order::walk_of(Order::grid, 0, 2, 64, 4, &w));
  EXPECT_FALSE(dram_read_order::walk_of(Order::warp, 4096, 2, 48, 1, &w));  // not whole warps
  EXPECT_FALSE(dram_read_order::walk_of(Order::block, 4096, 0, 64, 1, &w));
}

Observation read_row(const std::string& order, const std::string& probe, double gbs) {
  return {std::string(dram_read_order::kFamily.name),
          probe,
          {{dram_read_order::kOrderColumn, order},
           {dram_read_order::kWidthColumn, "32"},
           {dram_read_order::kOpColumn, "ld.global.cg"},
           {dram_read_order::kIlpColumn, "4"},
           {dram_read_order::kThreadsColumn, "256"},
           {dram_read_order::kBlocksPerSmColumn, "8"},
           {dram_read_order::kSmsColumn, "132"}},
          gbs,
          "GB/s",
          gbs * 0.998,
          gbs,
          gbs * 1.002,
          9};
}

TEST(DramReadOrder, BestKernelAgainstTheTheoreticalPeak) {
  std::vector<Observation> obs = {read_row("grid", dram_read_order::kReadProbe, 3000),
                                  read_row("block", dram_read_order::kReadProbe, 3100),
                                  read_row("grid", dram_read_order::kReadBulkProbe, 3050)};
  obs.push_back({std::string(dram_read_order::kFamily.name),
                 dram_read_order::kTheoreticalProbe,
                 {},
                 3200,
                 "GB/s",
                 3200,
                 3200,
                 3200,
                 1});
  const auto ps = analyze(std::string(dram_read_order::kFamily.name), obs);
  expect_well_formed(ps, "dram_read_order.csv");
  ASSERT_NE(find(ps, param::dram_read_bandwidth_best), nullptr);
  EXPECT_DOUBLE_EQ(find(ps, param::dram_read_bandwidth_best)->value, 3100);
  EXPECT_NE(find(ps, param::dram_read_bandwidth_best)->method.find("block order"),
            std::string::npos);
  ASSERT_NE(find(ps, param::dram_read_peak_fraction), nullptr);
  EXPECT_DOUBLE_EQ(find(ps, param::dram_read_peak_fraction)->value, 3100.0 / 3200);
}

TEST(DramReadOrder, NoPeakNoFractionAndNoRowsNoParameters) {
  const auto ps = analyze(std::string(dram_read_order::kFamily.name),
                          {read_row("grid", dram_read_order::kReadProbe, 3000)});
  EXPECT_NE(find(ps, param::dram_read_bandwidth_best), nullptr);
  EXPECT_EQ(find(ps, param::dram_read_peak_fraction), nullptr);
  EXPECT_TRUE(analyze(std::string(dram_read_order::kFamily.name), {}).empty());
}

// The H100 sweep (27 kernels): no kernel reaches 95 % of the theoretical 3352 GB/s; the bulk
// engine and the loads top out together near 94 %, and fewer SMs or blocks read slower.
TEST(DramReadOrder, RecordedH100SweepStopsShortOf95Percent) {
  const std::vector<Observation> obs = read_observations(data_file("h100_dram_read_order.csv"));
  REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_dram_read_order.csv";
  const auto ps = analyze(std::string(dram_read_order::kFamily.name), obs);
  expect_well_formed(ps, "dram_read_order.csv");
  const Parameter* f = find(ps, param::dram_read_peak_fraction);
  ASSERT_NE(f, nullptr);
  EXPECT_GT(f->value, 0.92);
  EXPECT_LT(f->value, 0.95);
  EXPECT_NE(find(ps, param::dram_read_bandwidth_best)->method.find("27 DRAM read kernels"),
            std::string::npos);
  double half_sms = 0, all_sms = 0;
  for (const auto& o : select(obs, dram_read_order::kReadProbe, "GB/s")) {
    if (o.param_text(dram_read_order::kThreadsColumn) != "1024") continue;
    if (o.param(dram_read_order::kSmsColumn) == 66) half_sms = o.value;
    if (o.param(dram_read_order::kSmsColumn) == 132) all_sms = o.value;
  }
  EXPECT_GT(half_sms, 0);
  EXPECT_LT(half_sms, 0.8 * all_sms);  // half the SMs cannot draw the whole bandwidth
}

}  // namespace
}  // namespace gpuprobe
