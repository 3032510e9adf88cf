// What is made of a collectives run without a GPU: the table beside nccl-tests' output (`gpuprobe
// anchor`, read from nccl-tests' stdout as it prints it) and the figure with the link's rate.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "analysis/collectives.hpp"
#include "app/anchor.hpp"
#include "app/report.hpp"
#include "base/parameter_names.hpp"
#include "base/run_dir.hpp"
#include "observation_rows.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
using collectives::Collective;

// nccl-tests' stdout as its src/util.cu prints it (values made up): two tests, 4 ranks.
const char* kLog = R"(# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 4 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0
#
# Using devices
#  Rank  0 Group  0 Pid  12345 on       host device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  12345 on       host device  1 [0000:2a:00] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  12345 on       host device  2 [0000:3a:00] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid  12345 on       host device  3 [0000:5d:00] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    18.20    0.00    0.00      0    17.91    0.00    0.00      0
  1073741824     268435456     float     sum      -1   4520.1  237.55  356.32      0   4515.0  237.82  356.72      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 178.16
#
# Collective test starting: alltoall_perf
# nThread 1 nGpus 4 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0
# Using devices
#  Rank  0 Group  0 Pid  12346 on       host device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  12346 on       host device  1 [0000:2a:00] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  12346 on       host device  2 [0000:3a:00] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid  12346 on       host device  3 [0000:5d:00] NVIDIA H100 80GB HBM3
           0             0     float    none      -1     0.21    0.00    0.00    N/A     0.20    0.00    0.00    N/A
  1073741824      67108864     float    none      -1   3100.0  346.37  259.78      0   3120.0  344.15  258.11    N/A
)";

TEST(Anchor, NcclTestsStdoutIsRead) {
  const auto rows = parse_nccl_tests(kLog);
  ASSERT_EQ(rows.size(), 3u)
      << "nccl-tests' 0 B row (a rank's share rounds to nothing) is left out, as the run leaves it";
  EXPECT_EQ(rows[0].collective, collectives::kAllReduceProbe);
  EXPECT_EQ(rows[0].ranks, 4);
  EXPECT_EQ(rows[0].bytes, 8);
  EXPECT_DOUBLE_EQ(rows[0].time_us, 18.20);
  EXPECT_EQ(rows[1].bytes, 1073741824);
  EXPECT_DOUBLE_EQ(rows[1].busbw, 356.32);
  EXPECT_EQ(rows[2].collective, collectives::kAllToAllProbe);
  EXPECT_EQ(rows[2].ranks, 4) << "the second test's ranks are its own";
  EXPECT_DOUBLE_EQ(rows[2].time_us, 3100.0) << "out of place, not in place";
  // nccl-tests' busbw is gpuprobe's formula of its own size and time (to its print rounding).
  EXPECT_NEAR(collectives::busbw(Collective::all_reduce, 4, rows[1].bytes, rows[1].time_us * 1e-6),
              rows[1].busbw, 0.01);
}

TEST(Anchor, AResultRowWithoutACollectiveIsAnError) {
  const std::string row = "  1024  256  float  sum  -1  20.1  0.05  0.08  0  20.0  0.05  0.08  0\n";
  EXPECT_EQ(parse_nccl_tests(row, "broadcast_perf").at(0).collective, collectives::kBroadcastProbe)
      << "named by its file";
  try {
    parse_nccl_tests("# header\n" + row);
    ADD_FAILURE() << "a row of no collective";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(
      parse_nccl_tests("# Collective test starting: all_reduce_perf\n 8 2 float sum -1 x 0 0 0\n"),
      std::runtime_error);
}

// A run's time rows for all-reduce and all-to-all at 4 ranks, at 8 B and 1 GiB.
std::vector<Observation> run_rows(double ar_1g_us, double a2a_1g_us) {
  auto row = [](const char* c, double bytes, double us) {
    return make_row(std::string(collectives::kFamily.name), c,
                    {{collectives::kBytesColumn, std::to_string(static_cast<long long>(bytes))},
                     {collectives::kRanksColumn, "4"},
                     {collectives::kModeColumn, collectives::kOneProcess}},
                    us, "us", 0.01);
  };
  return {row(collectives::kAllReduceProbe, 8, 18.0),
          row(collectives::kAllReduceProbe, 1073741824, ar_1g_us),
          row(collectives::kAllToAllProbe, 64, 21.0),
          row(collectives::kAllToAllProbe, 1073741824, a2a_1g_us)};
}

TEST(Anchor, TableSetsTheRunBesideNcclTests) {
  AnchorSource run{"gpuprobe one_process", collective_rows(run_rows(4600, 3500))};
  ASSERT_EQ(run.rows.size(), 4u);
  EXPECT_NEAR(run.rows[1].busbw, collectives::busbw(Collective::all_reduce, 4, 1073741824, 4600e-6),
              1e-9);
  const std::string table = anchor_table(run, {{"nccl-tests", parse_nccl_tests(kLog)}}, 4, false);
  // busbw nccl-tests / gpuprobe = 4600 / 4520.1 = 1.018; all-to-all 3500 / 3100 = 1.129.
  EXPECT_NE(table.find("1.018 (within 5 %)"), std::string::npos) << table;
  EXPECT_NE(table.find("1.129 (apart)"), std::string::npos) << table;
  EXPECT_NE(table.find("| all_reduce | 1 GiB | 4 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| all_to_all | 64 B | 4 |"), std::string::npos) << table;
  EXPECT_NE(table.find("nccl-tests / gpuprobe one_process (busbw)"), std::string::npos) << table;
  // nccl-tests has no 64 B all-to-all row (a rank's share rounds to 0 there): a dash.
  EXPECT_NE(table.find("| - | - | - |"), std::string::npos) << table;
}

class AnchorCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("gpuprobe_anchor_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "run");
    write_file_atomic((dir_ / "run/collectives.csv").string(),
                      format_observations({{"gpu", "test"}, {"run_id", "20260101T000000Z"}},
                                          run_rows(4600, 3500)));
    write_file_atomic((dir_ / "all_reduce_perf.log").string(), kLog);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(AnchorCommand, PrintsTheTableAndSaysWhatIsMissing) {
  ::testing::internal::CaptureStdout();
  const int code = anchor_main(
      {(dir_ / "run").string(), "--nccl-tests", (dir_ / "all_reduce_perf.log").string()});
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0);
  EXPECT_NE(out.find("1.018 (within 5 %)"), std::string::npos) << out;
  EXPECT_EQ(anchor_main({(dir_ / "run").string()}), 2) << "nothing to compare with";
  EXPECT_EQ(anchor_main({dir_.string(), "--nccl-tests", (dir_ / "all_reduce_perf.log").string()}),
            1)
      << "no csv";
  EXPECT_EQ(anchor_main({(dir_ / "run").string(), "--nccl-tests", (dir_ / "none.log").string()}),
            1);
}

TEST_F(AnchorCommand, TwoRunsOfTheSameModeAreToldApart) {
  ::testing::internal::CaptureStdout();
  const int code =
      anchor_main({(dir_ / "run").string(), "--versus", (dir_ / "run").string(), "--all-sizes"});
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0);
  EXPECT_NE(out.find("gpuprobe one_process (run) busbw"), std::string::npos) << out;
  EXPECT_NE(out.find("1.000 (within 5 %)"), std::string::npos) << out;
}

// The figure: every collective's busbw mark and the link's rate where the run has it.
TEST(CollectivesFigure, MarksEachBusbwAndTheLinkRate) {
  const ReportPaths paths = resolve_paths();
  if (paths.gnuplot.empty()) GTEST_SKIP() << "gnuplot not on PATH";
  const fs::path dir =
      fs::temp_directory_path() / ("gpuprobe_collectives_figure_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<Observation> obs;
  for (Collective c : collectives::all())
    for (size_t nominal : collectives::sizes(true)) {
      const auto k = collectives::counts(c, nominal, 4);
      if (k.bytes == 0) continue;
      const double us = 20 + double(k.bytes) / (350e9 / collectives::bus_factor(c, 4)) * 1e6;
      Observation t = make_row(std::string(collectives::kFamily.name), collectives::name(c),
                               {{collectives::kBytesColumn, std::to_string(k.bytes)},
                                {collectives::kRanksColumn, "4"},
                                {collectives::kModeColumn, collectives::kOneProcess}},
                               us, "us", 0.01);
      obs.push_back(t);
      obs.push_back(collectives::bandwidth_row(t, c, 4, false));
      obs.push_back(collectives::bandwidth_row(t, c, 4, true));
    }
  const Metadata meta = {{"gpu", "test"}, {"run_id", "20260101T000000Z"}};
  // As the runner writes them (base/run_dir.hpp: RunFileRights::run).
  write_file_atomic((dir / "collectives.csv").string(), format_observations(meta, obs),
                    RunFileRights::run);
  std::vector<Parameter> params = analyze(std::string(collectives::kFamily.name), obs);
  params.push_back({param::nvlink_links, 18, "links", 18, 18, 1, "nvml", "p2p.csv"});
  params.push_back({param::nvlink_link_bandwidth, 25, "GB/s", 25, 25, 1, "nvml", "p2p.csv"});
  write_file_atomic((dir / "parameters.csv").string(), format_parameters(meta, params),
                    RunFileRights::run);
  Diagnostics diag;
  const FigureScript* script = nullptr;
  const auto scripts = figure_scripts(paths.plots_dir, diag);
  for (const auto& s : scripts)
    if (s.name == collectives::kFamily.name) script = &s;
  ASSERT_NE(script, nullptr);
  const auto files = render_figure(paths, *script, {(dir / "collectives.csv").string()}, {"H100"},
                                   dir.string(), diag);
  ASSERT_FALSE(files.empty()) << (diag.errors.empty() ? "" : diag.errors.front());
  std::ifstream in(dir / "collectives.svg");
  std::stringstream svg;
  svg << in.rdbuf();
  for (const auto& p : params) {
    if (p.name.size() < 6 || p.name.compare(p.name.size() - 6, 6, "_busbw") != 0) continue;
    char label[64];
    std::snprintf(label, sizeof label, ": %.0f GB/s<", p.value);
    EXPECT_NE(svg.str().find(label), std::string::npos) << p.name << " unmarked";
  }
  EXPECT_NE(svg.str().find(">NVLink one way: 450 GB/s<"), std::string::npos);
  EXPECT_NE(svg.str().find(">4 ranks<"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuprobe
