// The report a person reads: the committed H100 run's report.md within its size, with short
// tables, a headline, relative paths only; figures that cannot be drawn (no gnuplot, a probe
// the run lacks) listed with the reason, never a failure; and no build path in the binary.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "app/compare.hpp"
#include "base/csv.hpp"
#include "base/data_paths.hpp"
#include "app/report.hpp"
#include "committed_runs.hpp"
#include "shared_render.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

constexpr size_t kReportMaxBytes = 25000;  // the issue's budget for a full run's report.md
constexpr size_t kMaxColumns = 6;
constexpr size_t kTitleMax = 80;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gpuprobe-layout-XXXXXX").string();
    if (mkdtemp(tmpl.data())) path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name, old;
  bool had;
  ScopedEnv(const char* n, const std::string& value) : name(n) {
    const char* v = std::getenv(n);
    had = v != nullptr;
    if (had) old = v;
    setenv(n, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had) setenv(name.c_str(), old.c_str(), 1);
    else unsetenv(name.c_str());
  }
};

// Every markdown table's header row: the number of its columns.
std::vector<size_t> table_widths(const std::string& md) {
  std::vector<size_t> widths;
  std::istringstream in(md);
  std::string prev, line;
  while (std::getline(in, line)) {
    if (line.rfind("| ---", 0) == 0) widths.push_back(static_cast<size_t>(std::count(line.begin(), line.end(), '|')) - 1);
    prev = line;
  }
  return widths;
}

// A path that starts at the root of some machine: "/work/...", "/tmp/...", "/root/...".
bool has_absolute_path(const std::string& text, std::string* found) {
  std::smatch m;
  static const std::regex abs(R"((^|[\s(`'"=\[])(/[A-Za-z][A-Za-z0-9._-]*/[A-Za-z0-9._/-]+))");
  if (!std::regex_search(text, m, abs)) return false;
  *found = m[2];
  return true;
}

// Reads the report rendered once for several tests (tests/shared_render.hpp).
TEST(ReportLayout, CommittedH100RunReadsAsASummary) {
  std::string why;
  const fs::path copy = shared_h100_render(&why);
  ASSERT_FALSE(copy.empty()) << why;
  std::string md = slurp(copy / "report.md");
  EXPECT_LE(md.size(), kReportMaxBytes);
  for (size_t w : table_widths(md)) EXPECT_LE(w, kMaxColumns);
  std::string path;
  EXPECT_FALSE(has_absolute_path(md, &path)) << path;
  EXPECT_EQ(md.find(copy.parent_path().string()), std::string::npos);
  // The headline comes first, metadata last.
  size_t headline = md.find("## Headline"), families = md.find("## Parameters by family"),
         metadata = md.find("## Device and run");
  ASSERT_NE(headline, std::string::npos);
  EXPECT_LT(headline, families);
  EXPECT_LT(families, metadata);
  for (const char* row :
       {"| SM clock (measured) (`sm_clock_measured`) | ", "| L1 hit latency (`l1_hit_latency`) | ",
        "| L2 size (`l2_size`) | ", "| DRAM latency (`dram_latency`) | ",
        "| DRAM read bandwidth (`dram_read_bandwidth`) | ",
        "| fp64 FMA rate (`fp64_fma_throughput_per_sm`) | ",
        "| shared memory banks (`shared_bank_count`) | ",
        "| bytes in flight per SM for 90 % of DRAM peak (`dram_bytes_in_flight_90pct`) | "})
    EXPECT_NE(md.find(row), std::string::npos) << row;
  // The full method texts moved to methods.md, one line per parameter.
  std::string methods = slurp(copy / "methods.md");
  EXPECT_NE(methods.find("- `l1_hit_latency`: "), std::string::npos);
  EXPECT_FALSE(has_absolute_path(methods, &path)) << path;
}

TEST(ReportLayout, MethodLabelsAreShort) {
  const std::string run = committed_run(kH100Run);
  Diagnostics quiet;
  quiet.prefix = "test";
  for (const auto& p : load_run(run, known_families({}), quiet).params) {
    EXPECT_FALSE(method_label(p).empty()) << p.name;
    EXPECT_LE(method_label(p).size(), kMethodLabelMax) << p.name;
  }
}

TEST(ReportLayout, FigureTitlesAreShortWithALineToRead) {
  Diagnostics quiet;
  auto scripts = figure_scripts((fs::path(GPUPROBE_SOURCE_DIR) / "plots").string(), quiet);
  ASSERT_FALSE(scripts.empty());
  for (const auto& s : scripts) {
    EXPECT_LE(s.title.size(), kTitleMax) << s.name;
    EXPECT_FALSE(s.read.empty()) << s.name << ": no '# read:' line";
  }
}

TEST(ReportLayout, RelativeTextHidesMachinePaths) {
  EXPECT_EQ(relative_text("/a/run/x.csv:3: bad", "/a/run"), "x.csv:3: bad");
  EXPECT_EQ(relative_text("cannot open '/home/me/ref.csv'", "/a/run"), "cannot open '.../ref.csv'");
  EXPECT_EQ(relative_text("./build/gpuprobe run --out /root/out/results", ""),
            "./build/gpuprobe run --out .../results");
  EXPECT_EQ(relative_text("32 results/clk/SM, 1/2 rate", ""), "32 results/clk/SM, 1/2 rate");
}

// A message repeated (a gnuplot warning, once per output format and series) is listed once,
// with its count; errors come first, and distinct messages keep their order.
TEST(ReportLayout, RepeatedMessagesAreListedOnceWithTheirCount) {
  Diagnostics d;
  for (int i = 0; i < 3; ++i) d.warn("/a/run/plots/x.gp: no valid points");
  d.warn("pipes not drawn: no data");
  d.error("bad.csv: malformed");
  EXPECT_EQ(messages_markdown(d, "/a/run"),
            "## Messages\n\n- error: bad.csv: malformed\n"
            "- warning (3 times): plots/x.gp: no valid points\n"
            "- warning: pipes not drawn: no data\n\n");
}

// A run gpuprobe never saw the like of: another vendor's compute capability, a figure whose
// probe is missing, and no gnuplot at all. The report is written and the exit code is 0.
class UnusualRun : public ::testing::Test {
 protected:
  TempDir tmp;
  fs::path plots, run;
  void SetUp() override {
    plots = tmp.path / "plots";
    fs::create_directories(plots);
    for (const char* f : {"style.gp", "ref_value.gp", "param_value.gp"})
      fs::copy_file(fs::path(GPUPROBE_SOURCE_DIR) / "plots" / f, plots / f);
    // A figure of the fixture family that needs a probe the run does not have.
    std::ofstream(plots / "fixture.gp") << "# family: fixture\n# title: needs probe 'absent'\n"
                                           "# read: nothing\nload 'plots/style.gp'\n"
                                           "do for [ext in \"svg png pdf\"] {\n  eval set_output(ext)\n"
                                           "  plot word(files, 1) using \"footprint_bytes\":(is_probe(\"absent\") ? "
                                           "column(\"value\") : NaN) with lines\n}\n";
    run = tmp.path / "fixture_run_h100";
    fs::copy(fs::path(GPUPROBE_TEST_DATA) / "fixture_run_h100", run, fs::copy_options::recursive);
    for (const char* f : {"fixture.csv", "parameters.csv", "families.csv"}) {
      std::string text = slurp(run / f);
      size_t at = text.find("# compute_capability=9.0");
      ASSERT_NE(at, std::string::npos) << f;
      text.replace(at, 24, "# compute_capability=gfx90a");
      std::ofstream(run / f) << text;
    }
  }
};

TEST_F(UnusualRun, MissingProbeAndOddComputeCapabilityStillReport) {
  ASSERT_EQ(report_main({run.string(), "--plots", plots.string()}), 0);
  std::string md = slurp(run / "report.md");
  EXPECT_NE(md.find("### Figures not drawn"), std::string::npos) << md;
  EXPECT_NE(md.find("| fixture | "), std::string::npos);
  EXPECT_NE(md.find("| compute_capability | gfx90a |"), std::string::npos);
  TempDir out;
  fs::path other = tmp.path / "fixture_run_h200";
  fs::copy(fs::path(GPUPROBE_TEST_DATA) / "fixture_run_h200", other, fs::copy_options::recursive);
  EXPECT_EQ(compare_main({run.string(), other.string(), "--plots", plots.string(), "--out",
                          (out.path / "cmp").string()}),
            0);
}

TEST_F(UnusualRun, WithoutGnuplotTheReportIsStillWritten) {
  ScopedEnv no_gnuplot("GNUPLOT", (tmp.path / "no-gnuplot-here").string());
  ASSERT_EQ(report_main({run.string(), "--plots", plots.string()}), 0);
  std::string md = slurp(run / "report.md");
  EXPECT_NE(md.find("| fixture | gnuplot not found |"), std::string::npos) << md;
  EXPECT_NE(md.find("install gnuplot"), std::string::npos);
  EXPECT_NE(md.find("## Headline"), std::string::npos);
}

// A headline quantity without a value says why: its family was not in this run (a filtered
// run), a quick run leaves it out, its family failed, or the family ran and did not give it.
TEST_F(UnusualRun, HeadlineTellsAFamilyNotRunFromOneThatRanWithoutAValue) {
  std::string params = slurp(run / "parameters.csv");
  params.replace(params.find("# quick=0"), 9, "# quick=1");
  std::ofstream(run / "parameters.csv") << params;
  std::ofstream(run / "families.csv", std::ios::app) << "pipes,failed,0.10,1755.0,0,cudaErrorLaunchFailure\n"
                                                        "shared_banks,ok,0.10,1755.0,0,\n"
                                                        "bytes_in_flight,ok,0.10,1755.0,0,\n";
  ScopedEnv no_gnuplot("GNUPLOT", (tmp.path / "no-gnuplot-here").string());
  ASSERT_EQ(report_main({run.string(), "--plots", plots.string()}), 0);
  const std::string md = slurp(run / "report.md");
  for (const char* row : {"| L1 size | not in this run |", "| DRAM read bandwidth | not in this run |",
                          "| fp64 FMA rate | not measured (pipes failed) |",
                          "| shared memory bank width | not measured |",
                          "| bytes in flight per SM for 90 % of DRAM peak | not measured by a quick run |",
                          "| L1 hit latency (`l1_hit_latency`) | 33 cycles |"})
    EXPECT_NE(md.find(row), std::string::npos) << row << "\n" << md.substr(0, md.find("## Parameters by family"));
}

// The committed runs filtered to some families (--filter) say "not in this run" for the
// headline quantities of the families they left out, never "not measured".
TEST(ReportLayout, CommittedFilteredRunsSayWhatWasNotInTheRun) {
  int filtered = 0;
  for (const auto& dir : committed_run_dirs()) {
    const CsvTable t = read_csv(dir + "/parameters.csv");
    if (fs::exists(fs::path(dir) / "latency.csv") || t.meta_value("filter").empty()) continue;
    SCOPED_TRACE(dir);
    ++filtered;
    TempDir tmp;
    fs::path copy = tmp.path / fs::path(dir).filename();
    fs::create_directories(copy);
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".csv") fs::copy_file(e.path(), copy / e.path().filename());
    ScopedEnv no_gnuplot("GNUPLOT", (tmp.path / "no-gnuplot-here").string());
    ASSERT_EQ(report_main({copy.string()}), 0);
    const std::string md = slurp(copy / "report.md");
    EXPECT_NE(md.find("| L1 hit latency | not in this run |"), std::string::npos);
    EXPECT_NE(md.find("| SM clock (measured) (`sm_clock_measured`) | "), std::string::npos);
    EXPECT_EQ(md.find("| not measured |"), std::string::npos) << md.substr(0, md.find("## Parameters by family"));
    // The families the filter left out, in one warning line.
    const std::string missing = "families missing from this run (--filter ";
    const size_t at = md.find(missing);
    EXPECT_NE(at, std::string::npos);
    EXPECT_EQ(md.find("missing from this run", at + missing.size()), std::string::npos)
        << "one line, not one per family";
  }
  EXPECT_GE(filtered, 1) << "no committed run filtered to families without latency";
}

bool have_gnuplot() {
  return !resolve_paths().gnuplot.empty();
}

// --style paper: vector PDFs at a paper's column (3.5 in = 252 pt) or double column (7 in =
// 504 pt, figures of panels side by side), with their fonts embedded.
TEST(ReportLayout, PaperStyleDrawsColumnWidthPdfsWithEmbeddedFonts) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not on PATH";
  const fs::path run = committed_run(kH100Run);
  TempDir tmp;
  fs::path copy = tmp.path / "run";
  fs::create_directories(copy);
  for (const char* f : {"parameters.csv", "latency.csv", "shared_banks.csv"}) fs::copy_file(run / f, copy / f);
  ASSERT_EQ(report_main({copy.string(), "--style", "paper"}), 0);
  std::string single = slurp(copy / "figures/paper/latency.pdf"), wide = slurp(copy / "figures/paper/shared_banks.pdf");
  EXPECT_NE(single.find("/MediaBox [ 0 0 252 "), std::string::npos);
  EXPECT_NE(wide.find("/MediaBox [ 0 0 504 "), std::string::npos);
  EXPECT_NE(single.find("/FontFile"), std::string::npos) << "fonts not embedded";
  EXPECT_NE(slurp(copy / "report.md").find("](figures/paper/latency.svg)"), std::string::npos);
  EXPECT_EQ(report_main({copy.string(), "--style", "poster"}), 2);
}

TEST(DataPaths, FoundBesideInstalledOrFromTheBuildDirectory) {
  TempDir tmp;
  // Install tree: P/bin/gpuprobe, P/share/gpuprobe/{plots,reference}.
  fs::path prefix = tmp.path / "prefix";
  fs::create_directories(prefix / "bin");
  fs::create_directories(prefix / "share/gpuprobe/plots");
  fs::create_directories(prefix / "share/gpuprobe/reference");
  std::ofstream(prefix / "share/gpuprobe/plots/style.gp") << "\n";
  std::ofstream(prefix / "share/gpuprobe/reference/documented_figures.csv") << "\n";
  DataPaths installed = find_data_paths((prefix / "bin").string());
  EXPECT_EQ(fs::path(installed.plots_dir), (prefix / "share/gpuprobe/plots").lexically_normal());
  EXPECT_EQ(fs::path(installed.reference),
            (prefix / "share/gpuprobe/reference/documented_figures.csv").lexically_normal());
  // A build directory names its source tree in a file CMake writes.
  DataPaths built = find_data_paths(GPUPROBE_BUILD_DIR);
  EXPECT_EQ(fs::path(built.plots_dir), (fs::path(GPUPROBE_SOURCE_DIR) / "plots").lexically_normal());
  EXPECT_TRUE(fs::exists(built.reference)) << built.reference;
  // Nothing anywhere: empty, and the caller says so.
  fs::create_directories(tmp.path / "empty");
  EXPECT_TRUE(find_data_paths((tmp.path / "empty").string()).plots_dir.empty());
}

TEST(DataPaths, TheBinaryHoldsNoBuildPath) {
#ifdef GPUPROBE_SANITIZED
  GTEST_SKIP() << "a sanitized build names its sources in AddressSanitizer's metadata: checked in the plain build";
#endif
  std::string bin = slurp(GPUPROBE_BINARY);
  ASSERT_FALSE(bin.empty()) << GPUPROBE_BINARY;
  EXPECT_EQ(bin.find(GPUPROBE_SOURCE_DIR), std::string::npos)
      << "the source directory " << GPUPROBE_SOURCE_DIR << " is in " << GPUPROBE_BINARY;
}

}  // namespace
}  // namespace gpuprobe
