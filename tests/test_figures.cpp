// Every figure of the committed H100 run marks what was inferred from it: rendered from a copy
// of the run, each SVG must hold the values of the run's parameters.csv as its script writes
// them (a plateau's value, a knee's size, a rate), so that a mark which disappears fails here.
// Figure-only families (no parameter inferred) must still carry what they mark instead.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "committed_runs.hpp"
#include "analysis/associativity.hpp"
#include "analysis/atomics.hpp"
#include "analysis/bandwidth.hpp"
#include "analysis/carveout.hpp"
#include "analysis/clusters.hpp"
#include "analysis/concurrency.hpp"
#include "analysis/divergence.hpp"
#include "analysis/dual_issue.hpp"
#include "analysis/fine_grained.hpp"
#include "analysis/granularity.hpp"
#include "analysis/ilp_occupancy.hpp"
#include "analysis/host_link.hpp"
#include "analysis/index_chase.hpp"
#include "analysis/latency.hpp"
#include "analysis/l2_topology.hpp"
#include "analysis/loaded_latency.hpp"
#include "analysis/pipes.hpp"
#include "analysis/shared_banks.hpp"
#include "analysis/tlb.hpp"
#include "base/catalog.hpp"
#include "base/data_paths.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"
#include "app/report.hpp"
#include "shared_render.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

template <typename... A>
std::string fmt(const char* f, A... a) {
  char buf[200];
  std::snprintf(buf, sizeof buf, f, a...);
  return buf;
}

// plots/pipes.gp's value_text.
std::string value_text(double v) { return fmt(v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v); }

class FigureMarks : public ::testing::Test {
 protected:
  static inline fs::path dir;
  static inline std::string why;
  static inline std::vector<Parameter> params;

  // One rendering for the whole suite: under ctest the fixture test's, run by hand its own
  // (tests/shared_render.hpp).
  static void SetUpTestSuite() {
    if (resolve_paths().gnuplot.empty()) return;
    dir = shared_h100_render(&why);
    if (!dir.empty()) params = read_parameters((dir / "parameters.csv").string());
  }
  void SetUp() override {
    if (resolve_paths().gnuplot.empty()) GTEST_SKIP() << "gnuplot not on PATH";
    ASSERT_FALSE(dir.empty()) << "report of the committed H100 run failed: " << why;
  }
  // The value of a parameter the run must have.
  double value(const std::string& name) {
    for (const auto& p : params)
      if (p.name == name) return p.value;
    ADD_FAILURE() << "the committed run has no " << name;
    return 0;
  }
  bool has(const std::string& name) {
    for (const auto& p : params)
      if (p.name == name) return true;
    return false;
  }
  // Each mark is the whole text of one label (or one line of it): gnuplot's SVG writes a label
  // as >text</tspan>, so a value that only appears inside a longer text does not count.
  void expect_marks(const std::string& figure, const std::vector<std::string>& marks, bool whole = true) {
    std::string svg = slurp(dir / "figures" / (figure + ".svg"));
    ASSERT_FALSE(svg.empty()) << figure << ".svg not drawn";
    for (const auto& m : marks)
      EXPECT_NE(svg.find(whole ? ">" + m + "<" : m), std::string::npos) << figure << ".svg lacks the label '" << m << "'";
  }
};

// Renders the copy that FigureMarks and ReportLayout.CommittedH100RunReadsAsASummary read, once
// per ctest invocation, into $GPUPROBE_SHARED_RENDER (tests/CMakeLists.txt); outside ctest
// there is nothing to share.
TEST(SharedRender, H100Report) {
  const std::string root = shared_render_root();
  if (root.empty()) GTEST_SKIP() << "not under ctest: each test binary renders its own copy";
  std::string why;
  EXPECT_FALSE(render_h100_copy(root, &why).empty()) << why;
}

TEST_F(FigureMarks, LatencyMarksPlateausKneesAndDocumentedTicks) {
  expect_marks(
      std::string(latency::kFamily.name),
      {fmt("L1 %.0f", value(param::l1_hit_latency)), fmt("DRAM %.0f", value(param::dram_latency)),
       fmt("L1 %.0f KiB", value(param::l1_size) / 1024),
       fmt("L2 %.0f MiB", value(param::l2_size) / 1048576), "K = K80"});
}

TEST_F(FigureMarks, IlpOccupancyMarksKneesAndCeilings) {
  std::vector<std::string> marks;
  for (std::string kind : {"fp32_fma", "dram_load"})
    for (int ilp : {1, 2, 4, 8}) {
      std::string knee = kind + "_warps_90pct_ilp" + std::to_string(ilp), ceiling = kind + "_ceiling_ilp" + std::to_string(ilp);
      if (has(knee)) marks.push_back(fmt("ILP %d: %g warps", ilp, value(knee)));
      if (has(ceiling)) marks.push_back(fmt("ILP %d never 90 %%: best %.2f of peak (ring)", ilp, value(ceiling)));
    }
  EXPECT_GE(marks.size(), 4u);
  expect_marks(std::string(ilp_occupancy::kFamily.name), marks);
}

TEST_F(FigureMarks, PipesWriteEachRateAndLatency) {
  expect_marks(std::string(pipes::kFamily.name),
               {value_text(value(param::fp64_fma_throughput_per_sm)),
                value_text(value(param::sfu_sin_latency)),
                value_text(value(param::tensor_wgmma_f16_latency))});
}

TEST_F(FigureMarks, DivergenceWritesSlowdownAndCostPerPath) {
  expect_marks(std::string(divergence::kFamily.name),
               {fmt("SMs full: %.1fx at 32 paths, each path %.2f of one",
                    value("divergence_slowdown_32_paths"), value(param::divergence_cost_per_path)),
                fmt("one warp: %.1fx at 32 paths, each path %.2f of one",
                    value("divergence_slowdown_32_paths_one_warp"),
                    value(param::divergence_cost_per_path_one_warp))});
}

TEST_F(FigureMarks, DualIssueLabelsAreTheInferredRatios) {
  expect_marks(std::string(dual_issue::kFamily.name),
               {fmt("x%.2f", value(param::dual_issue_fp32_sfu)),
                fmt("x%.2f", value(param::dual_issue_fp32_ldst))});
}

TEST_F(FigureMarks, AtomicsWriteLatenciesAndRates) {
  expect_marks(std::string(atomics::kFamily.name),
               {fmt("%.0f (CAS %.0f)", value(param::atomic_global_latency_nocontention),
                    value(param::atomic_global_cas_latency_nocontention)),
                fmt("%.0f", value(param::atomic_shared_latency_32way)),
                fmt("%.3g", value(param::atomic_shared_throughput_per_sm))});
}

TEST_F(FigureMarks, GranularityListsFetchUnits) {
  expect_marks(std::string(granularity::kFamily.name),
               {fmt("L2 sector %g B, L2 line %g B,", value(param::l2_sector_size),
                    value(param::l2_line_size)),
                fmt("const line %g B", value(param::constant_line_size))});
}

TEST_F(FigureMarks, SharedBanksWritesTheGeometry) {
  expect_marks(std::string(shared_banks::kFamily.name),
               {fmt("H100: %d banks x %d B", int(value(param::shared_bank_count)),
                    int(value(param::shared_bank_width)))});
  expect_marks("shared_conflicts",
               {fmt("%.2f cycles per extra way", value(param::shared_conflict_penalty_per_way)),
                fmt("%.0f B/clk/SM without conflicts", value(param::shared_bandwidth_per_sm))});
}

TEST_F(FigureMarks, CacheGeometryFromTheFineGrainedFamilies) {
  expect_marks(std::string(fine_grained::kFamily.name),
               {fmt("L1 line %g B", value(param::l1_line_size)),
                fmt("constant L1.5 line %g B", value(param::constant_l15_line_size))});
  if (has(param::l1_sets) && has(param::l1_ways))
    expect_marks(
        std::string(associativity::kFamily.name),
        {fmt("fitted: %.0f sets x %.0f ways", value(param::l1_sets), value(param::l1_ways))},
        false);
}

TEST_F(FigureMarks, ClustersHostLinkAndL2Topology) {
  expect_marks(std::string(clusters::kFamily.name),
               {fmt("%.0f", value(param::dsm_latency)),
                fmt("%.0f", value(param::cluster_sync_latency_largest_cluster))});
  expect_marks(std::string(host_link::kFamily.name),
               {fmt("pinned H2D %.1f, D2H %.1f, both %.1f GB/s", value(param::h2d_bandwidth_pinned),
                    value(param::d2h_bandwidth_pinned), value(param::bidir_bandwidth_pinned))});
  expect_marks(std::string(l2_topology::kFamily.name),
               {fmt("H100: %.0f L2 partitions, ", value(param::l2_partitions))}, false);
}

// plots/style.gp's size_text.
std::string size_text(double b) {
  return b >= 1073741824 ? fmt("%.3g GiB", b / 1073741824) : b >= 1048576 ? fmt("%.3g MiB", b / 1048576)
         : b >= 1024     ? fmt("%.3g KiB", b / 1024)
                         : fmt("%g B", b);
}

TEST_F(FigureMarks, FiguresMarkedBeforeThisSessionKeepTheirMarks) {
  expect_marks(std::string(bandwidth::kFamily.name),
               {fmt("DRAM %.0f GB/s", value(param::dram_read_bandwidth)),
                fmt("L2 %.0f GB/s", value(param::l2_read_bandwidth))});
  expect_marks(std::string(concurrency::kFamily.name),
               {fmt("at most %.0f kernels at once", value(param::max_concurrent_kernels))});
  expect_marks("littles_law",
               {"90 % of DRAM peak: " + size_text(value(param::dram_bytes_in_flight_90pct))});
  expect_marks(std::string(tlb::kFamily.name),
               {"L1 TLB " + size_text(value(param::tlb_l1_coverage))});
  expect_marks(std::string(index_chase::kFamily.name),
               {fmt("%.1f", value(param::dram_latency_index_chase))});
  if (has(param::l1_size_no_miss))  // runs analysed before the carve-out's own name have none
    expect_marks(std::string(carveout::kFamily.name), {fmt("largest L1 without misses: %.0f KiB",
                                                           value(param::l1_size_no_miss) / 1024)});
}

TEST_F(FigureMarks, FigureOnlyFamiliesMarkWhatTheyStartFrom) {
  expect_marks("waves", {"block time: "}, false);
  expect_marks(std::string(loaded_latency::kFamily.name), {"idle: "}, false);
}

}  // namespace
}  // namespace gpuprobe
