// Bandwidth, bytes in flight, loaded latency and the coalescing case study: the inference on
// synthetic curves (noise, dips, edge cases), the analyzers over observations as the suite
// writes them, the PTX of the probes, and the recorded H100 runs where they are committed.
#include <gtest/gtest.h>

#include "parameter_checks.hpp"
#include "ptx_dir.hpp"
#include "recorded.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "analysis/analyzer.hpp"
#include "analysis/bandwidth.hpp"
#include "analysis/bytes_in_flight.hpp"
#include "analysis/coalescing.hpp"
#include "analysis/common/util.hpp"
#include "analysis/loaded_latency.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"

using namespace gpuprobe;
using gpuprobe::bytes_in_flight::CurvePoint;
using gpuprobe::bytes_in_flight::littles_law_bytes_per_sm;
using gpuprobe::bytes_in_flight::saturation_point;

namespace {

Observation row(const std::string& family, const std::string& probe, Params params, double v,
                const std::string& unit, double spread = 0.01) {
  return {family, probe, std::move(params), v, unit, v * (1 - spread), v, v * (1 + spread), 11};
}

// A smooth saturation curve whose 90 % point is known: y = peak * x / (x^4 + k^4)^(1/4)
// reaches 0.9 * peak at x = k * (0.9^4 / (1 - 0.9^4))^(1/4).
double knee_curve(double x, double peak, double k) {
  return peak * x / std::pow(std::pow(x, 4) + std::pow(k, 4), 0.25);
}
double knee_at_90(double k) {
  return k * std::pow(std::pow(0.9, 4) / (1 - std::pow(0.9, 4)), 0.25);
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<Observation> recorded(const std::string& family, Metadata* meta = nullptr) {
  const std::string path = std::string(GPUPROBE_TEST_DATA) + "/h100_" + family + ".csv";
  if (!std::filesystem::exists(path)) return {};
  return read_observations(path, meta);
}

}  // namespace

// --- saturation_point --------------------------------------------------------------------

TEST(Saturation, FindsTheNinetyPercentPointOfANoisyCurve) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(0.98, 1.02);
  const double k = 12000, truth = knee_at_90(k);
  std::vector<CurvePoint> curve;
  // Several configurations per x, as warps x ILP x width gives, each a little worse than the best.
  for (double x = 128; x <= 262144; x *= 2)
    for (double worse : {1.0, 0.9, 0.75})
      curve.push_back({x, worse * noise(rng) * knee_curve(x, 3000, k)});
  auto s = saturation_point(curve, 0.9);
  ASSERT_TRUE(s);
  EXPECT_LE(s->low, s->x);
  EXPECT_GE(s->high, s->x);
  EXPECT_NEAR(s->x / truth, 1.0, 0.2) << s->x << " vs " << truth;
  EXPECT_NEAR(s->peak, 3000, 3000 * 0.03);
  EXPECT_TRUE(s->plateau);
  EXPECT_GT(s->confidence, 0.8);
  EXPECT_LE(s->confidence, 1.0);
}

TEST(Saturation, ADipPastTheKneeDoesNotMoveIt) {
  std::vector<CurvePoint> rising = {{1, 100}, {2, 200}, {4, 400}, {8, 800}, {16, 950}, {32, 1000}};
  std::vector<CurvePoint> dipping = rising;
  dipping.push_back({64, 900});  // too much in flight: the curve falls a little
  auto a = saturation_point(rising, 0.9), b = saturation_point(dipping, 0.9);
  ASSERT_TRUE(a && b);
  EXPECT_DOUBLE_EQ(a->x, b->x);
  EXPECT_DOUBLE_EQ(b->peak, 1000);
  EXPECT_DOUBLE_EQ(b->peak_x, 32);
  EXPECT_DOUBLE_EQ(b->low, 8);
  EXPECT_DOUBLE_EQ(b->high, 16);
}

TEST(Saturation, InterpolatesInLogX) {
  // The target, 990 (90 % of 1100), lies 190/300 of the way from 800 to 1100: as far into
  // the octave from 8 in log x.
  auto s = saturation_point({{2, 200}, {4, 400}, {8, 800}, {16, 1100}, {32, 1000}}, 0.9);
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->x, 8 * std::pow(2.0, (990.0 - 800) / 300), 1e-9);
}

TEST(Saturation, TheBestConfigurationAtAnXCounts) {
  auto s = saturation_point({{1, 10}, {2, 20}, {2, 95}, {4, 99}, {8, 100}}, 0.9);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->high, 2);
}

TEST(Saturation, NothingWhenTheKneeIsBelowTheSweepOrPointsAreFew) {
  EXPECT_FALSE(saturation_point({{1, 95}, {2, 99}, {4, 100}}, 0.9));
  EXPECT_FALSE(saturation_point({{1, 10}, {2, 100}}, 0.9));
  EXPECT_FALSE(saturation_point({}, 0.9));
  EXPECT_FALSE(saturation_point({{1, 0}, {2, 0}, {4, 0}}, 0.9));
  // NaN and non-positive x are dropped before counting.
  EXPECT_FALSE(saturation_point({{1, 10}, {0, 50}, {NAN, 70}, {4, 100}}, 0.9));
}

TEST(Saturation, AStillRisingCurveIsLessCertain) {
  std::vector<CurvePoint> line;
  for (double x = 1; x <= 1024; x *= 2) line.push_back({x, x});
  auto s = saturation_point(line, 0.9);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->plateau);
  EXPECT_LT(s->confidence, 0.7);
}

TEST(LittlesLaw, BytesPerSm) {
  // 600 ns x 3000 GB/s = 1.8 MB in flight over the chip, 13.6 KB per SM of 132.
  EXPECT_NEAR(littles_law_bytes_per_sm(600, 3000, 132), 1.8e6 / 132, 1e-6);
  EXPECT_TRUE(std::isnan(littles_law_bytes_per_sm(600, 3000, 0)));
}

// --- analyze_bandwidth -------------------------------------------------------------------

namespace {

Params stream(int width, int ilp, const std::string& op, double l2_fraction) {
  return {{"width_bytes", std::to_string(width)},
          {"ilp", std::to_string(ilp)},
          {"op", op},
          {"footprint_bytes", format_number(l2_fraction * 52428800)},
          {"l2_fraction", format_number(l2_fraction)}};
}

std::vector<Observation> synthetic_bandwidth(double dram_read = 3150) {
  const std::string f = "bandwidth";
  return {
      row(f, "dram_theoretical", {{"memory_clock_mhz", "2619"}, {"bus_width_bits", "5120"}},
          3352.32, "GB/s", 0),
      row(f, "read", stream(4, 4, "ld.global.cg", 32), 2900, "GB/s"),
      row(f, "read", stream(16, 4, "ld.global.cg", 32), dram_read, "GB/s"),
      row(f, "read", stream(16, 4, "ld.global.nc", 32), dram_read - 20, "GB/s"),
      row(f, "read", stream(16, 4, "ld.global.cg", 0.125), 7200, "GB/s"),
      row(f, "read", stream(16, 4, "ld.global.cg", 0.25), 7300, "GB/s"),
      row(f, "read", stream(16, 4, "ld.global.cg", 0.75), 5100, "GB/s"),
      row(f, "read", stream(16, 4, "ld.global.cg", 2), 3300, "GB/s"),  // neither L2 nor DRAM
      row(f, "write", stream(16, 4, "st.global", 32), 3100, "GB/s"),
      row(f, "write", stream(16, 4, "st.global.cs", 32), 3220, "GB/s"),
      row(f, "copy", stream(16, 4, "st.global", 32), 3050, "GB/s"),
      row(f, "l1_read",
          {{"width_bytes", "16"}, {"ilp", "4"}, {"op", "ld.global"}, {"threads_per_sm", "2048"}},
          124.5, "B/clk/SM"),
      row(f, "l1_read",
          {{"width_bytes", "4"}, {"ilp", "4"}, {"op", "ld.global"}, {"threads_per_sm", "2048"}}, 64,
          "B/clk/SM"),
  };
}

}  // namespace

TEST(AnalyzeBandwidth, PeaksOfEachLevelWithTheirFractionOfTheory) {
  auto ps = analyze("bandwidth", synthetic_bandwidth());
  const Parameter* read = find(ps, param::dram_read_bandwidth);
  ASSERT_TRUE(read);
  EXPECT_DOUBLE_EQ(read->value, 3150);
  EXPECT_EQ(read->unit, "GB/s");
  EXPECT_NE(read->method.find("94.0 % of the theoretical 3352 GB/s"), std::string::npos)
      << read->method;
  EXPECT_NE(read->method.find("16 B ld.global.cg"), std::string::npos) << read->method;
  // docs/parameters.md, "Confidence": the rows' 2 % spread gives 1 / (1 + 10 x 0.02)
  EXPECT_NEAR(read->confidence, 1 / 1.2, 1e-12);
  EXPECT_EQ(read->evidence, "bandwidth.csv");

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
  obs.push_back(row("bandwidth", "read", stream(16, 4, "ld.global.cg", 16), 3400, "GB/s"));
  const auto ps = analyze("bandwidth", obs);
  const Parameter* read = find(ps, param::dram_read_bandwidth);
  ASSERT_TRUE(read);
  EXPECT_DOUBLE_EQ(read->value, 3150);
  // A sweep that never left L2 far behind has no DRAM figure at all.
  std::vector<Observation> small;
  for (const auto& o : obs)
    if (o.param("l2_fraction") < 8) small.push_back(o);
  const auto from_small = analyze("bandwidth", small);
  EXPECT_FALSE(find(from_small, param::dram_read_bandwidth));
  EXPECT_TRUE(find(from_small, param::l2_read_bandwidth));
}

TEST(AnalyzeBandwidth, WarpSlicesCountAmongTheDramReads) {
  auto obs = synthetic_bandwidth();
  obs.push_back(row("bandwidth", "read_slices",
                    stream(16, 4, "ld.global.nc.L1::no_allocate.L2::256B", 32), 3160, "GB/s"));
  const auto ps = analyze("bandwidth", obs);
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
    if (o.probe == "read") o.params.push_back({"round_bytes", "4325376"});
  Params tiny = stream(16, 4, "ld.global.cg", 0.008);
  tiny.push_back({"round_bytes", "17301504"});
  obs.push_back(row("bandwidth", "read", tiny, 16000, "GB/s"));
  const auto with_rounds = analyze("bandwidth", obs);
  const Parameter* l2 = find(with_rounds, param::l2_read_bandwidth);
  ASSERT_TRUE(l2);
  EXPECT_DOUBLE_EQ(l2->value, 7300);
  // Without round_bytes (older runs) every footprint counts.
  obs.back().params.pop_back();
  const auto without = analyze("bandwidth", obs);
  l2 = find(without, param::l2_read_bandwidth);
  ASSERT_TRUE(l2);
  EXPECT_DOUBLE_EQ(l2->value, 16000);
}

TEST(AnalyzeBandwidth, AboveTheTheoreticalPeakIsFlagged) {
  auto ps = analyze("bandwidth", synthetic_bandwidth(4000));
  const Parameter* read = find(ps, param::dram_read_bandwidth);
  ASSERT_TRUE(read);
  EXPECT_LE(read->confidence, 0.3);
  EXPECT_NE(read->method.find("ABOVE the theoretical peak"), std::string::npos);
}

TEST(AnalyzeBandwidth, WideSpreadLowersConfidence) {
  auto obs = synthetic_bandwidth();
  for (auto& o : obs)
    if (o.probe == "l1_read") {
      o.p05 = o.p50 * 0.8;
      o.p95 = o.p50 * 1.2;
    }
  const auto ps = analyze("bandwidth", obs);
  const Parameter* l1 = find(ps, param::l1_bandwidth_per_sm);
  ASSERT_TRUE(l1);
  EXPECT_LE(l1->confidence, 0.6 + 1e-12);
}

TEST(AnalyzeBandwidth, NothingMeasuredNothingInferred) {
  EXPECT_TRUE(analyze("bandwidth", {}).empty());
  // Without the theoretical row the DRAM figures still come, without a fraction.
  auto obs = synthetic_bandwidth();
  obs.erase(obs.begin());
  const auto ps = analyze("bandwidth", obs);
  const Parameter* read = find(ps, param::dram_read_bandwidth);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->method.find("theoretical"), std::string::npos);
}

TEST(AnalyzeBandwidth, SameResultAfterACsvRoundTrip) {
  auto obs = synthetic_bandwidth();
  const std::string text = format_observations({{"gpu", "synthetic"}}, obs);
  auto back = observations_from_table(parse_csv(text, "bandwidth.csv"));
  auto a = analyze("bandwidth", obs), b = analyze("bandwidth", back);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_DOUBLE_EQ(a[i].value, b[i].value);
    EXPECT_EQ(a[i].method, b[i].method);
  }
}

// --- analyze_bytes_in_flight -------------------------------------------------------------

namespace {

std::vector<Observation> synthetic_bytes_in_flight(double k_dram, double k_l2,
                                                   bool narrow_fall_short = true) {
  std::vector<Observation> obs;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> noise(0.985, 1.015);
  for (const std::string level : {"dram", "l2"})
    for (int width : {4, 8, 16})
      for (int ilp : {1, 2, 4, 8})
        for (int warps = 1; warps <= 64; warps *= 2) {
          const double x = 32.0 * warps * ilp * width;
          const double peak = level == "dram" ? 3000 : 7000;
          // Narrow accesses fall short of the peak: requests, not bytes, are what is in flight.
          const double eff = !narrow_fall_short || width == 16 ? 1.0 : width == 8 ? 0.95 : 0.8;
          const double y = eff * noise(rng) * knee_curve(x, peak, level == "dram" ? k_dram : k_l2);
          obs.push_back(row("bytes_in_flight", level,
                            {{"warps_per_sm", std::to_string(warps)},
                             {"ilp", std::to_string(ilp)},
                             {"width_bytes", std::to_string(width)},
                             {"bytes_in_flight_per_sm", format_number(x)}},
                            y, "GB/s"));
        }
  obs.push_back(row("bytes_in_flight", "littles_law",
                    {{"level", "dram"}, {"latency_ns", "620"}, {"peak_gbs", "3000"}},
                    620 * 3000 / 132.0, "B/SM", 0));
  return obs;
}

}  // namespace

TEST(AnalyzeBytesInFlight, NinetyPercentPointsOfBothLevels) {
  auto ps = analyze("bytes_in_flight", synthetic_bytes_in_flight(14000, 9000));
  const Parameter* dram = find(ps, param::dram_bytes_in_flight_90pct);
  const Parameter* l2 = find(ps, param::l2_bytes_in_flight_90pct);
  ASSERT_TRUE(dram && l2);
  EXPECT_NEAR(dram->value / knee_at_90(14000), 1.0, 0.2);
  EXPECT_NEAR(l2->value / knee_at_90(9000), 1.0, 0.2);
  EXPECT_EQ(dram->unit, "bytes");
  EXPECT_LE(dram->low, dram->value);
  EXPECT_GE(dram->high, dram->value);
  EXPECT_LE(dram->low, knee_at_90(14000)) << dram->method;
  EXPECT_GE(dram->high, knee_at_90(14000)) << dram->method;
  // The sweep steps by 2x: the 90 % point is pinned only to its bracket, wider than the
  // catalog's tolerance, and the confidence says so.
  EXPECT_LT(dram->confidence, 0.3) << dram->method;
  EXPECT_NE(dram->method.find(analysis::kCappedByWidthText), std::string::npos) << dram->method;
  EXPECT_NE(dram->method.find("Little's law: 620 ns unloaded x 3000 GB/s = 14091 B/SM"),
            std::string::npos)
      << dram->method;
  EXPECT_EQ(l2->method.find("Little's law"), std::string::npos);  // no L2 chase recorded
  EXPECT_EQ(dram->evidence, "bytes_in_flight.csv");
}

TEST(AnalyzeBytesInFlight, AKneeBelowTheSweepIsLeftOut) {
  // Saturated from the first point: no bracket, so no parameter (never a guess).
  auto ps = analyze("bytes_in_flight", synthetic_bytes_in_flight(10, 9000, false));
  EXPECT_FALSE(find(ps, param::dram_bytes_in_flight_90pct));
  EXPECT_TRUE(find(ps, param::l2_bytes_in_flight_90pct));
}

// --- code: the probes hold the accesses they claim -----------------------------------------

namespace {

std::string ptx(const std::string& source) {
  const std::string path = test::newest_ptx_path(source);
  return path.empty() ? std::string() : text_of(path);
}

}  // namespace

TEST(BandwidthPtx, StreamsUseTheCacheOperatorsAndWidthsTheyName) {
  const std::string bw = ptx("bandwidth"), bif = ptx("bytes_in_flight");
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

TEST(BandwidthPtx, CaseStudyLayoutsCompileToTheirAccesses) {
  const std::string co = ptx(std::string(coalescing::kFamily.name));
  if (co.empty()) FAIL() << "no PTX in " << GPUPROBE_PTX_DIR << "/sm_<arch>: the gpuprobe_ptx_files target writes it";
  // AoS: three 4-byte loads per structure (no wider load is legal at 4-byte alignment);
  // the read-only path; L2-only; the shared-memory staging.
  EXPECT_NE(co.find("ld.global.f32 "), std::string::npos);
  EXPECT_NE(co.find("ld.global.nc.f32 "), std::string::npos);
  EXPECT_NE(co.find("ld.global.cg.f32 "), std::string::npos);
  EXPECT_NE(co.find("ld.shared.f32 "), std::string::npos);
  EXPECT_EQ(co.find("ld.global.v2.f32 "), std::string::npos);
}

// --- recorded H100 runs ------------------------------------------------------------------

TEST(RecordedH100, BandwidthIsPhysicallySensible) {
  Metadata meta;
  auto obs = recorded("bandwidth", &meta);
  REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_bandwidth.csv";
  auto ps = analyze("bandwidth", obs, meta);
  auto theory = select(obs, "dram_theoretical", "GB/s");
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
  for (const char* f : {"bandwidth", "bandwidth_repeat"}) {
    Metadata meta;
    auto obs = recorded(f, &meta);
    REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_" << f << ".csv";
    peak = select(obs, "dram_theoretical", "GB/s").at(0).value;
    runs.push_back(analyze("bandwidth", obs, meta));
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

TEST(RecordedH100, BytesInFlightAgreeWithLittlesLaw) {
  Metadata meta;
  auto obs = recorded("bytes_in_flight", &meta);
  REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_bytes_in_flight.csv";
  auto ps = analyze("bytes_in_flight", obs, meta);
  const Parameter* dram = find(ps, param::dram_bytes_in_flight_90pct);
  ASSERT_TRUE(dram);
  EXPECT_GT(dram->value, 1024);
  EXPECT_LT(dram->value, 256 * 1024);
  if (const Parameter* l2 = find(ps, param::l2_bytes_in_flight_90pct)) {
    EXPECT_GT(l2->value, 512);
    EXPECT_LT(l2->value, 256 * 1024);
  }
  for (const auto& o : select(obs, "chase", "ns")) {
    if (o.param_text("level") == "dram") {
      EXPECT_GT(o.value, 200);
      EXPECT_LT(o.value, 2000);
    } else {
      EXPECT_GT(o.value, 50);
      EXPECT_LT(o.value, 800);
    }
  }
  // Little's law within a factor of three of the measured knee.
  for (const auto& l : select(obs, "littles_law", "B/SM"))
    if (l.param_text("level") == "dram") {
      EXPECT_GT(dram->value / l.value, 1.0 / 3);
      EXPECT_LT(dram->value / l.value, 3.0);
    }
}

TEST(RecordedH100, LatencyRisesWithLoad) {
  auto obs = recorded(std::string(loaded_latency::kFamily.name));
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

TEST(RecordedH100, CaseStudySpeedupsAreSensible) {
  auto obs = recorded(std::string(coalescing::kFamily.name));
  REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_coalescing.csv";
  auto speedups =
      select(obs, std::string(coalescing::kReadProbe) + coalescing::kSpeedupSuffix, "x");
  auto writes = select(obs, std::string(coalescing::kWriteProbe) + coalescing::kSpeedupSuffix, "x");
  speedups.insert(speedups.end(), writes.begin(), writes.end());
  ASSERT_FALSE(speedups.empty());
  for (const auto& o : speedups) {
    EXPECT_GT(o.value, 0.3) << o.probe << " " << o.param_text(coalescing::kLayoutColumn);
    EXPECT_LT(o.value, 5) << o.probe << " " << o.param_text(coalescing::kLayoutColumn);
  }
  for (const auto& o : select(obs, coalescing::kReadProbe, "GB/s")) {
    EXPECT_GT(o.value, 100);
    EXPECT_LT(o.value, 10000);
  }
}
