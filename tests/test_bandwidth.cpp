// Bandwidth: the analyzer over observations as the suite writes them (levels, footprints,
// theory, spread), the PTX of the streams, and the recorded H100 runs.
#include <gtest/gtest.h>

#include "observation_rows.hpp"
#include "parameter_checks.hpp"
#include "ptx_dir.hpp"
#include "recorded.hpp"

#include "analysis/analyzer.hpp"
#include "analysis/bandwidth.hpp"
#include "analysis/bytes_in_flight.hpp"
#include "analysis/common/memory_chase.hpp"
#include "analysis/dram_read_order.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"

using namespace gpuprobe;
using namespace gpuprobe::bandwidth;

namespace {

const RowMaker row{0.01};

}  // namespace

// --- analyze_bandwidth -------------------------------------------------------------------

namespace {

Params stream(int width, int ilp, const std::string& op, double l2_fraction) {
  return {{kWidthColumn, std::to_string(width)},
          {kIlpColumn, std::to_string(ilp)},
          {kOpColumn, op},
          {memory_chase::kFootprintColumn, format_number(l2_fraction * 52428800)},
          {kL2FractionColumn, format_number(l2_fraction)}};
}

std::vector<Observation> synthetic_bandwidth(double dram_read = 3150) {
  const std::string f(kFamily.name);
  return {
      row(f, dram_read_order::kTheoreticalProbe,
          {{dram_read_order::kMemoryClockColumn, "2619"},
           {dram_read_order::kBusWidthColumn, "5120"}},
          3352.32, "GB/s", 0),
      row(f, kReadProbe, stream(4, 4, "ld.global.cg", 32), 2900, "GB/s"),
      row(f, kReadProbe, stream(16, 4, "ld.global.cg", 32), dram_read, "GB/s"),
      row(f, kReadProbe, stream(16, 4, "ld.global.nc", 32), dram_read - 20, "GB/s"),
      row(f, kReadProbe, stream(16, 4, "ld.global.cg", 0.125), 7200, "GB/s"),
      row(f, kReadProbe, stream(16, 4, "ld.global.cg", 0.25), 7300, "GB/s"),
      row(f, kReadProbe, stream(16, 4, "ld.global.cg", 0.75), 5100, "GB/s"),
      row(f, kReadProbe, stream(16, 4, "ld.global.cg", 2), 3300, "GB/s"),  // neither L2 nor DRAM
      row(f, kWriteProbe, stream(16, 4, "st.global", 32), 3100, "GB/s"),
      row(f, kWriteProbe, stream(16, 4, "st.global.cs", 32), 3220, "GB/s"),
      row(f, kCopyProbe, stream(16, 4, "st.global", 32), 3050, "GB/s"),
      row(f, kL1ReadProbe,
          {{kWidthColumn, "16"},
           {kIlpColumn, "4"},
           {kOpColumn, "ld.global"},
           {kThreadsPerSmColumn, "2048"}},
          124.5, "B/clk/SM"),
      row(f, kL1ReadProbe,
          {{kWidthColumn, "4"},
           {kIlpColumn, "4"},
           {kOpColumn, "ld.global"},
           {kThreadsPerSmColumn, "2048"}},
          64, "B/clk/SM"),
  };
}

}  // namespace

TEST(AnalyzeBandwidth, PeaksOfEachLevelWithTheirFractionOfTheory) {
  auto ps = analyze(std::string(kFamily.name), synthetic_bandwidth());
  const Parameter* read = find(ps, param::dram_read_bandwidth);
  ASSERT_TRUE(read);
  EXPECT_DOUBLE_EQ(read->value, 3150);
  EXPECT_EQ(read->unit, "GB/s");
  EXPECT_NE(read->method.find("94.0 % of the theoretical 3352 GB/s"), std::string::npos)
      << read->method;
  EXPECT_NE(read->method.find("16 B ld.global.cg"), std::string::npos) << read->method;
  // docs/parameters.md, "Confidence": the rows' 2 % spread gives 1 / (1 + 10 x 0.02)
  EXPECT_NEAR(read->confidence, 1 / 1.2, 1e-12);
  EXPECT_EQ(read->evidence, std::string(kFamily.name) + ".csv");

  const Parameter* write = find(ps, param::dram_write_bandwidth);
  ASSERT_TRUE(write);
  EXPECT_DOUBLE_EQ(write->value, 3220);
  EXPECT_NE(write->method.find("st.global.cs, ILP 4 won (st.global best 3100 GB/s)"),
            std::string::npos)
      << write->method;

  const Parameter* copy = find(ps, param::dram_copy_bandwidth);
  ASSERT_TRUE(copy);
  EXPECT_DOUBLE_EQ(copy->value, 3050);

  const Parameter* l2 = find(ps, param::l2_read_bandwidth);
  ASSERT_TRUE(l2);
  EXPECT_DOUBLE_EQ(l2->value, 7300);  // inside one partition; 2x L2 is neither level
  EXPECT_NE(l2->method.find("across both partitions (0.5-0.9x L2) 5100 GB/s"), std::string::npos)
      << l2->method;

  const Parameter* l1 = find(ps, param::l1_bandwidth_per_sm);
  ASSERT_TRUE(l1);
  EXPECT_DOUBLE_EQ(l1->value, 124.5);
  EXPECT_EQ(l1->unit, "B/clk/SM");
  EXPECT_DOUBLE_EQ(l1->low, 124.5 * 0.99);
  EXPECT_DOUBLE_EQ(l1->high, 124.5 * 1.01);
}

TEST(AnalyzeBandwidth, OnlyTheLargestFootprintCountsAsDram) {
  auto obs = synthetic_bandwidth();
  // Reread within a repetition, 16x L2 can still hit in L2 and beat DRAM: not a DRAM figure.
  obs.push_back(
      row(std::string(kFamily.name), kReadProbe, stream(16, 4, "ld.global.cg", 16), 3400, "GB/s"));
  const auto ps = analyze(std::string(kFamily.name), obs);
  const Parameter* read = find(ps, param::dram_read_bandwidth);
  ASSERT_TRUE(read);
  EXPECT_DOUBLE_EQ(read->value, 3150);
  // A sweep that never left L2 far behind has no DRAM figure at all.
  std::vector<Observation> small;
  for (const auto& o : obs)
    if (o.param(kL2FractionColumn) < 8) small.push_back(o);
  const auto from_small = analyze(std::string(kFamily.name), small);
  EXPECT_FALSE(find(from_small, param::dram_read_bandwidth));
  EXPECT_TRUE(find(from_small, param::l2_read_bandwidth));
}

TEST(AnalyzeBandwidth, WarpSlicesCountAmongTheDramReads) {
  auto obs = synthetic_bandwidth();
  obs.push_back(row(std::string(kFamily.name), kReadSlicesProbe,
                    stream(16, 4, "ld.global.nc.L1::no_allocate.L2::256B", 32), 3160, "GB/s"));
  const auto ps = analyze(std::string(kFamily.name), obs);
  const Parameter* read = find(ps, param::dram_read_bandwidth);
  ASSERT_TRUE(read);
  EXPECT_DOUBLE_EQ(read->value, 3160);
  EXPECT_NE(read->method.find("best of 4 "), std::string::npos) << read->method;
  EXPECT_NE(read->method.find("16 B ld.global.nc.L1::no_allocate.L2::256B, ILP 4, warp slices"),
            std::string::npos)
      << read->method;
}

TEST(AnalyzeBandwidth, L2FootprintsBelowOneRoundOfTheGridDoNotCount) {
  // Below what one round of the grid reads, threads read the same lines at once and the
  // requests merge: a spike that is not the L2's bandwidth.
  auto obs = synthetic_bandwidth();
  for (auto& o : obs)
    if (o.probe == kReadProbe) o.params.push_back({kRoundColumn, "4325376"});
  Params tiny = stream(16, 4, "ld.global.cg", 0.008);
  tiny.push_back({kRoundColumn, "17301504"});
  obs.push_back(row(std::string(kFamily.name), kReadProbe, tiny, 16000, "GB/s"));
  const auto with_rounds = analyze(std::string(kFamily.name), obs);
  const Parameter* l2 = find(with_rounds, param::l2_read_bandwidth);
  ASSERT_TRUE(l2);
  EXPECT_DOUBLE_EQ(l2->value, 7300);
  // Without round_bytes (older runs) every footprint counts.
  obs.back().params.pop_back();
  const auto without = analyze(std::string(kFamily.name), obs);
  l2 = find(without, param::l2_read_bandwidth);
  ASSERT_TRUE(l2);
  EXPECT_DOUBLE_EQ(l2->value, 16000);
}

TEST(AnalyzeBandwidth, AboveTheTheoreticalPeakIsFlagged) {
  auto ps = analyze(std::string(kFamily.name), synthetic_bandwidth(4000));
  const Parameter* read = find(ps, param::dram_read_bandwidth);
  ASSERT_TRUE(read);
  EXPECT_LE(read->confidence, 0.3);
  EXPECT_NE(read->method.find("ABOVE the theoretical peak"), std::string::npos);
}

TEST(AnalyzeBandwidth, WideSpreadLowersConfidence) {
  auto obs = synthetic_bandwidth();
  for (auto& o : obs)
    if (o.probe == kL1ReadProbe) {
      o.p05 = o.p50 * 0.8;
      o.p95 = o.p50 * 1.2;
    }
  const auto ps = analyze(std::string(kFamily.name), obs);
  const Parameter* l1 = find(ps, param::l1_bandwidth_per_sm);
  ASSERT_TRUE(l1);
  EXPECT_LE(l1->confidence, 0.6 + 1e-12);
}

TEST(AnalyzeBandwidth, NothingMeasuredNothingInferred) {
  EXPECT_TRUE(analyze(std::string(kFamily.name), {}).empty());
  // Without the theoretical row the DRAM figures still come, without a fraction.
  auto obs = synthetic_bandwidth();
  obs.erase(obs.begin());
  const auto ps = analyze(std::string(kFamily.name), obs);
  const Parameter* read = find(ps, param::dram_read_bandwidth);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->method.find("theoretical"), std::string::npos);
}

TEST(AnalyzeBandwidth, SameResultAfterACsvRoundTrip) {
  auto obs = synthetic_bandwidth();
  const std::string text = format_observations({{"gpu", "synthetic"}}, obs);
  auto back = observations_from_table(parse_csv(text, std::string(kFamily.name) + ".csv"));
  auto a = analyze(std::string(kFamily.name), obs), b = analyze(std::string(kFamily.name), back);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_DOUBLE_EQ(a[i].value, b[i].value);
    EXPECT_EQ(a[i].method, b[i].method);
  }
}

// --- code: the probes hold the accesses they claim -----------------------------------------

TEST(BandwidthPtx, StreamsUseTheCacheOperatorsAndWidthsTheyName) {
  const std::string bw = test::newest_ptx_text(std::string(kFamily.name)),
                    bif = test::newest_ptx_text(std::string(bytes_in_flight::kFamily.name));
  if (bw.empty() || bif.empty()) FAIL() << "no PTX in " << GPUPROBE_PTX_DIR << "/sm_<arch>: the gpuprobe_ptx_files target writes it";
  for (const char* op :
       {"ld.global.cg.u32 ", "ld.global.cg.v2.u32 ", "ld.global.cg.v4.u32 ", "ld.global.cs.v4.u32 ",
        "ld.global.nc.v4.u32 ", "ld.global.v4.u32 ", "ld.global.ca.v4.u32 ", "st.global.v4.u32 ",
        "st.global.cs.v4.u32 ", "st.global.cs.u32 ", "ld.global.L1::no_allocate.v4.u32 ",
        "ld.global.cg.L2::256B.v4.u32 ", "ld.global.nc.L1::no_allocate.L2::256B.v4.u32 ",
        "ld.global.L1::no_allocate.L2::cache_hint.v4.u32 ", "st.global.L1::no_allocate.v4.u32 ",
        "st.global.L2::cache_hint.v4.u32 ", "createpolicy.fractional.L2::evict_first"})
    EXPECT_NE(bw.find(op), std::string::npos) << op;
  for (const char* op : {"ld.global.cg.u32 ", "ld.global.cg.v2.u32 ", "ld.global.cg.v4.u32 "})
    EXPECT_NE(bif.find(op), std::string::npos) << op;
}

// --- recorded H100 runs ------------------------------------------------------------------

TEST(RecordedH100, BandwidthIsPhysicallySensible) {
  Metadata meta;
  auto obs = recorded_observations(std::string(kFamily.name), &meta);
  REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_bandwidth.csv";
  auto ps = analyze(std::string(kFamily.name), obs, meta);
  auto theory = select(obs, dram_read_order::kTheoreticalProbe, "GB/s");
  ASSERT_FALSE(theory.empty());
  const double peak = theory.front().value;
  EXPECT_GT(peak, 1500);
  EXPECT_LT(peak, 5000);
  const Parameter* read = find(ps, param::dram_read_bandwidth);
  const Parameter* write = find(ps, param::dram_write_bandwidth);
  const Parameter* copy = find(ps, param::dram_copy_bandwidth);
  const Parameter* l2 = find(ps, param::l2_read_bandwidth);
  const Parameter* l1 = find(ps, param::l1_bandwidth_per_sm);
  ASSERT_TRUE(read && write && copy && l2 && l1);
  for (const Parameter* p : {read, write, copy}) {
    EXPECT_GT(p->value, 0.7 * peak) << p->name;
    EXPECT_LT(p->value, 1.02 * peak) << p->name;
  }
  EXPECT_GT(l2->value, 1.3 * read->value);  // L2 out-runs DRAM
  EXPECT_LT(l2->value, 30000);
  EXPECT_GT(l1->value, 32);  // B/clk/SM: at least a quarter of 128
  EXPECT_LE(l1->value, 256);
}

// The targets of the bandwidth issue, met in the recorded runs (two, a minute apart): DRAM
// read at least 93 % and write at least 95 % of the theoretical peak, and the two runs
// within 1 % of each other.
TEST(RecordedH100, DramTargetsMetInBothRuns) {
  std::vector<std::vector<Parameter>> runs;
  double peak = 0;
  for (const std::string& f : {std::string(kFamily.name), std::string(kFamily.name) + "_repeat"}) {
    Metadata meta;
    auto obs = recorded_observations(f, &meta);
    REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_" << f << ".csv";
    peak = select(obs, dram_read_order::kTheoreticalProbe, "GB/s").at(0).value;
    runs.push_back(analyze(std::string(kFamily.name), obs, meta));
  }
  for (const auto& ps : runs) {
    const Parameter* read = find(ps, param::dram_read_bandwidth);
    const Parameter* write = find(ps, param::dram_write_bandwidth);
    ASSERT_TRUE(read && write);
    EXPECT_GE(read->value, 0.93 * peak) << read->method;
    EXPECT_GE(write->value, 0.95 * peak) << write->method;
  }
  for (const char* name : {param::dram_read_bandwidth, param::dram_write_bandwidth})
    EXPECT_NEAR(find(runs[0], name)->value / find(runs[1], name)->value, 1, 0.01) << name;
}
