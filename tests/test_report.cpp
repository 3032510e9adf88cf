// `gpuprobe report` and `gpuprobe compare` on the synthetic fixture runs
// (tests/data/fixture_run_*: hand-made, not measurements), on the committed runs under
// results/, and on broken input: every figure is produced, every problem is a message that
// names the file and line, and nothing crashes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "app/compare.hpp"
#include "app/report.hpp"
#include "base/parameter_names.hpp"
#include "base/run_dir.hpp"
#include "committed_runs.hpp"
#include "shared_render.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

// A figure script for the fixture family, written into a scratch plots/ beside the real
// style: the test exercises the report's machinery, not another family's figure.
const char* kFixtureScript = R"gp(# family: fixture
# title: Synthetic fixture curve (tests only)
load 'plots/style.gp'
set logscale x 2
set xlabel "footprint (bytes)"
set ylabel "latency (cycles)"
call 'plots/ref_value.gp' ref_gpu_volta "l1_hit_latency"
volta_l1 = ref_value
do for [ext in "svg png pdf"] {
  eval set_output(ext)
  plot for [i=1:words(files)] word(files, i) \
         using "footprint_bytes":(is_probe("chase") && is_unit("cycles") ? column("value") : NaN) \
         with linespoints ls i title word(labels, i), \
       volta_l1 with lines ls 13 title "Volta V100 L1 (documented)"
}
)gp";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void spit(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

bool have_gnuplot() {
  return !resolve_paths().gnuplot.empty();
}

class ReportTest : public ::testing::Test {
 protected:
  fs::path root, plots;

  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "gpuprobe-report-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root = tmpl;
    plots = root / "plots";
    fs::create_directories(plots);
    for (const char* f : {"style.gp", "ref_value.gp"})
      fs::copy_file(fs::path(GPUPROBE_SOURCE_DIR) / "plots" / f, plots / f);
    spit(plots / "fixture.gp", kFixtureScript);
    for (const char* run : {"fixture_run_h100", "fixture_run_h200"})
      fs::copy(fs::path(GPUPROBE_TEST_DATA) / run, root / run, fs::copy_options::recursive);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root, ec);
  }

  std::string run_dir(const char* name) const { return (root / name).string(); }
  int report(const std::string& dir, std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {dir, "--plots", plots.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return report_main(args);
  }
  std::string report_md(const std::string& dir) const { return slurp(fs::path(dir) / "report.md"); }
};

void expect_figures(const fs::path& dir, const std::string& name) {
  for (const char* ext : {"svg", "png", "pdf"}) {
    fs::path f = dir / (name + "." + ext);
    ASSERT_TRUE(fs::exists(f)) << f;
    EXPECT_GT(fs::file_size(f), 100u) << f;
  }
}

TEST_F(ReportTest, ReportWritesMarkdownAndEveryFigure) {
  std::string dir = run_dir("fixture_run_h100");
  int rc = report(dir);
  std::string md = report_md(dir);
  EXPECT_NE(md.find("# gpuprobe report: NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_NE(md.find("| compute_capability | 9.0 |"), std::string::npos);
  // Documented beside measured: this GPU (the H100 SXM5's L2) and the Volta V100's L1.
  EXPECT_NE(md.find("| l2_size | 50 MiB |"), std::string::npos);
  // The documented figure beside it, with the ratio or the other method it was found by.
  EXPECT_NE(md.find("| 50 MiB (x1.00) [") == std::string::npos ? md.find("| 50 MiB (other method: ")
                                                               : md.find("| 50 MiB (x1.00) ["),
            std::string::npos) << md;
  // The older architectures' figures, their sources and the full methods are in methods.md.
  std::string methods = slurp(fs::path(dir) / "methods.md");
  EXPECT_NE(methods.find("28 cycles"), std::string::npos) << methods;
  EXPECT_NE(methods.find("Jia et al. 2018"), std::string::npos);
  EXPECT_EQ(rc, 0);
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not on PATH: figures not checked";
  expect_figures(fs::path(dir) / "figures", "fixture");
  EXPECT_NE(md.find("### Synthetic fixture curve (tests only)\n\n![fixture](figures/fixture.svg)"), std::string::npos);
}

TEST_F(ReportTest, CompareWritesTableAndEveryFigure) {
  fs::path out = root / "cmp";
  int rc = compare_main({run_dir("fixture_run_h100"), run_dir("fixture_run_h200"), "--plots",
                         plots.string(), "--out", out.string()});
  std::string csv = slurp(out / "parameters.csv");
  EXPECT_NE(csv.find("parameter,unit,H100,H100_confidence,H200,H200_confidence,ratio_H200_to_H100,"
                     "kepler_k80,kepler_k80_reference_line"),
            std::string::npos);
  EXPECT_NE(csv.find("dram_latency,cycles,620,0.9,700,0.9,1.129,200-400,"), std::string::npos);
  std::string md = slurp(out / "compare.md");
  EXPECT_NE(md.find("| parameter | H100 | H200 | H200 / H100 | Kepler K80 (documented) |"), std::string::npos);
  EXPECT_NE(md.find("- dram_latency: H200 / H100 = 1.129"), std::string::npos);
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not on PATH: figures not checked";
  EXPECT_EQ(rc, 0);
  expect_figures(out / "figures", "fixture");
}

// The committed runs and their comparison, with the real figure scripts: what CI renders.
// ctest runs each test in a process of its own: the reports are split into kCommittedShards
// tests (run i in shard i % kCommittedShards) and the comparison is one more, so that they run
// side by side instead of one after another in one long test.
constexpr int kCommittedShards = 4;

// The committed runs of tests/committed_runs.hpp's table (a missing one fails the test).
std::vector<fs::path> committed_runs() {
  std::vector<fs::path> runs;
  for (const auto& dir : committed_run_dirs()) runs.emplace_back(dir);
  return runs;
}

// A scratch folder, removed with its contents at the end of the scope.
struct Scratch {
  fs::path path;
  explicit Scratch(const char* name) {
    std::string tmpl = (fs::temp_directory_path() / (std::string(name) + "-XXXXXX")).string();
    if (mkdtemp(tmpl.data())) path = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

// A copy of a committed run's CSV files in `tmp`, named <gpu>-<run-id>.
fs::path copy_of(const fs::path& run, const fs::path& tmp) {
  fs::path copy = tmp / (run.parent_path().filename().string() + "-" + run.filename().string());
  fs::create_directories(copy);
  for (const auto& e : fs::directory_iterator(run))
    if (e.path().extension() == ".csv") fs::copy_file(e.path(), copy / e.path().filename());
  return copy;
}

class CommittedRunReports : public ::testing::TestWithParam<int> {};

TEST_P(CommittedRunReports, RenderEveryFigure) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not on PATH";
  const std::vector<fs::path> runs = committed_runs();
  Scratch tmp("gpuprobe-committed");
  ASSERT_FALSE(tmp.path.empty());
  Diagnostics quiet;
  const std::vector<FigureScript> scripts = figure_scripts((fs::path(GPUPROBE_SOURCE_DIR) / "plots").string(), quiet);
  // The H100 run is rendered once for several tests (tests/shared_render.hpp).
  const fs::path shared = committed_run(kH100Run);
  for (size_t i = static_cast<size_t>(GetParam()); i < runs.size(); i += kCommittedShards) {
    std::string why;
    const fs::path copy = runs[i] == shared ? fs::path(shared_h100_render(&why)) : copy_of(runs[i], tmp.path);
    if (runs[i] == shared) ASSERT_FALSE(copy.empty()) << why;
    else EXPECT_EQ(report_main({copy.string()}), 0) << runs[i];
    for (const auto& s : scripts)
      if (fs::exists(copy / (s.family + ".csv"))) expect_figures(copy / "figures", s.name);
  }
}

INSTANTIATE_TEST_SUITE_P(CommittedRuns, CommittedRunReports, ::testing::Range(0, kCommittedShards));

TEST(CommittedRuns, CompareRendersEveryFigure) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not on PATH";
  const std::vector<fs::path> runs = committed_runs();
  Scratch tmp("gpuprobe-committed-compare");
  ASSERT_FALSE(tmp.path.empty());
  Diagnostics quiet;
  const std::vector<FigureScript> scripts = figure_scripts((fs::path(GPUPROBE_SOURCE_DIR) / "plots").string(), quiet);
  std::vector<std::string> args;
  for (const auto& run : runs) args.push_back(copy_of(run, tmp.path).string());
  const std::vector<std::string> copies = args;
  args.insert(args.end(), {"--out", (tmp.path / "cmp").string()});
  EXPECT_EQ(compare_main(args), 0);
  for (const auto& s : scripts)
    for (const auto& c : copies)
      if (fs::exists(fs::path(c) / (s.family + ".csv"))) expect_figures(tmp.path / "cmp" / "figures", s.name);
}

TEST_F(ReportTest, MissingColumnNamesFileAndHeaderLine) {
  std::string dir = run_dir("fixture_run_h100");
  fs::path csv = fs::path(dir) / "fixture.csv";
  std::string text = slurp(csv);
  size_t at = text.find(",reps\n");
  ASSERT_NE(at, std::string::npos);
  text.erase(at, 5);
  spit(csv, text);  // every data row now has one field too many
  EXPECT_EQ(report(dir), 1);
  std::string md = report_md(dir);
  EXPECT_NE(md.find("- error: fixture.csv:11: expected 8 fields, found 9"), std::string::npos) << md;

  // The same header with the rows cut to match: the header itself is wrong.
  std::string fixed;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    fixed += (line[0] == '#' || line.rfind("family", 0) == 0 ? line : line.substr(0, line.rfind(','))) + "\n";
  spit(csv, fixed);
  EXPECT_EQ(report(dir), 1);
  EXPECT_NE(report_md(dir).find("fixture.csv:10: not an observations file"), std::string::npos);
}

TEST_F(ReportTest, TruncatedFileNamesTheLastLine) {
  std::string dir = run_dir("fixture_run_h100");
  fs::path csv = fs::path(dir) / "fixture.csv";
  std::string text = slurp(csv);
  text.resize(text.find("\n", text.find("fixture,chase,4096")) - 12);  // mid-row
  spit(csv, text);
  EXPECT_EQ(report(dir), 1);
  std::string md = report_md(dir);
  EXPECT_NE(md.find("fixture.csv:15: expected 9 fields, found"), std::string::npos) << md;
  EXPECT_NE(md.find("fixture.csv:15: last line does not end in a newline"), std::string::npos);

  spit(csv, "");
  EXPECT_EQ(report(dir), 1);
  EXPECT_NE(report_md(dir).find("fixture.csv: no header row"), std::string::npos);
}

TEST_F(ReportTest, UnknownFamilyIsKeptAndNamed) {
  std::string dir = run_dir("fixture_run_h100");
  spit(fs::path(dir) / "mystery.csv",
       "# note=x\nfamily,probe,n,value,unit,p05,p50,p95,reps\nmystery,a,1,2,cycles,2,2,2,3\n");
  spit(fs::path(dir) / "misfiled.csv",
       "family,probe,n,value,unit,p05,p50,p95,reps\nmisfiled,a,1,2,cycles,2,2,2,3\nother,a,1,2,cycles,2,2,2,3\n");
  EXPECT_EQ(report(dir), 1);
  std::string md = report_md(dir);
  EXPECT_NE(md.find("mystery.csv: unknown family 'mystery'"), std::string::npos) << md;
  EXPECT_NE(md.find("misfiled.csv:3: family 'other' in a file named misfiled.csv"), std::string::npos);
}

TEST_F(ReportTest, ARowInAnotherUnitThanTheCatalogsIsNotUsed) {
  std::string dir = run_dir("fixture_run_h200");
  fs::path params = fs::path(dir) / "parameters.csv";
  std::string text = slurp(params);
  const std::string was = "l1_hit_latency,33.0,cycles,32.8,33.3";
  size_t at = text.find(was);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, was.size(), "l1_hit_latency,18.0,ns,17.9,18.1");
  spit(params, text);
  // The catalog says cycles: the row is refused with its line, not reported as "18 ns".
  EXPECT_EQ(report(dir), 1);
  std::string md = report_md(dir);
  EXPECT_NE(md.find("- error: parameters.csv:10: l1_hit_latency: unit 'ns', where the "
                    "catalog's is 'cycles': row not used"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("18 ns"), std::string::npos) << md;

  fs::path out = root / "cmp";
  compare_main({run_dir("fixture_run_h100"), dir, "--plots", plots.string(), "--out", out.string()});
  std::string cmp = slurp(out / "compare.md");
  // The file by its last part: compare.md holds no machine's paths.
  EXPECT_NE(cmp.find("parameters.csv:10: l1_hit_latency: unit 'ns'"), std::string::npos) << cmp;
  EXPECT_EQ(cmp.find(params.string()), std::string::npos) << cmp;
  EXPECT_EQ(slurp(out / "parameters.csv").find("18 ns"), std::string::npos);
}

TEST_F(ReportTest, OlderRunWithoutParametersOrVersionStillReports) {
  std::string dir = run_dir("fixture_run_h100");
  fs::remove(fs::path(dir) / "parameters.csv");
  fs::remove(fs::path(dir) / "families.csv");
  fs::path csv = fs::path(dir) / "fixture.csv";
  std::string text = slurp(csv), kept;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("# gpuprobe_version=", 0) != 0) kept += line + "\n";
  spit(csv, kept);
  EXPECT_EQ(report(dir), 0);
  std::string md = report_md(dir);
  EXPECT_NE(md.find("parameters.csv: missing (an older or interrupted run)"), std::string::npos) << md;
  EXPECT_NE(md.find("no '# gpuprobe_version=' metadata"), std::string::npos);
  EXPECT_NE(md.find("Card: not recorded"), std::string::npos);
  EXPECT_NE(md.find("# gpuprobe report: NVIDIA H100 80GB HBM3"), std::string::npos);
}

TEST_F(ReportTest, BrokenScriptAndMissingReferenceAreReportedNotFatal) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not on PATH";
  spit(plots / "broken.gp", "# family: fixture\nload 'plots/style.gp'\nthis is not gnuplot\n");
  std::string dir = run_dir("fixture_run_h100");
  EXPECT_EQ(report(dir, {"--reference", (root / "nope.csv").string()}), 1);
  std::string md = report_md(dir);
  // The broken figure is listed as not drawn, with gnuplot's reason; no absolute path is shown.
  EXPECT_NE(md.find("| broken | .../broken.gp: gnuplot exited with status"), std::string::npos) << md;
  EXPECT_NE(md.find(".../nope.csv: cannot open file"), std::string::npos);
  EXPECT_EQ(md.find(root.string()), std::string::npos);
  expect_figures(fs::path(dir) / "figures", "fixture");  // the good figure is still drawn
}

TEST_F(ReportTest, BadCommandLinesAreUsageErrors) {
  EXPECT_EQ(report_main({}), 2);
  EXPECT_EQ(report_main({"a", "b"}), 2);
  EXPECT_EQ(report_main({run_dir("fixture_run_h100"), "--bogus"}), 2);
  EXPECT_EQ(report_main({run_dir("fixture_run_h100"), "--plots"}), 2);
  EXPECT_EQ(report_main({(root / "no-such-run").string()}), 1);
  EXPECT_EQ(compare_main({run_dir("fixture_run_h100")}), 2);
  EXPECT_EQ(compare_main({run_dir("fixture_run_h100"), run_dir("fixture_run_h200"), "--out"}), 2);
  EXPECT_EQ(compare_main({run_dir("fixture_run_h100"), (root / "no-such-run").string(), "--out",
                          (root / "x").string()}),
            1);
}

// Regression: `compare A B --out A` replaced run A's parameters.csv with the comparison table,
// and `report` wrote report.md into any folder it was given.
TEST_F(ReportTest, NeverWritesIntoAFolderItDidNotMake) {
  const std::string a = run_dir("fixture_run_h100"), b = run_dir("fixture_run_h200");
  const std::string params_before = slurp(fs::path(a) / "parameters.csv");
  EXPECT_EQ(compare_main({a, b, "--plots", plots.string(), "--out", a}), 1);
  EXPECT_EQ(slurp(fs::path(a) / "parameters.csv"), params_before);
  EXPECT_FALSE(fs::exists(fs::path(a) / "compare.md"));

  fs::path foreign = root / "notes";
  fs::create_directories(foreign);
  spit(foreign / "report.md", "mine");
  EXPECT_EQ(compare_main({a, b, "--plots", plots.string(), "--out", foreign.string()}), 1);
  EXPECT_EQ(report(foreign.string()), 1);
  EXPECT_EQ(slurp(foreign / "report.md"), "mine");
  fs::path empty = root / "empty";
  fs::create_directories(empty);
  EXPECT_EQ(report(empty.string()), 1);
  EXPECT_FALSE(fs::exists(empty / "report.md"));

  // A comparison folder may be written again; a run folder may not be compared into.
  fs::path cmp = root / "cmp";
  compare_main({a, b, "--plots", plots.string(), "--out", cmp.string()});
  EXPECT_EQ(folder_kind(cmp.string()), FolderKind::compare);
  EXPECT_EQ(folder_kind(a), FolderKind::run);
  EXPECT_EQ(report(cmp.string()), 1);
  EXPECT_TRUE(fs::exists(cmp / "compare.md"));
}

TEST(RunLabels, ShortUniqueAndSafeForGnuplot) {
  RunData a, b, c;
  a.gpu = "NVIDIA H100 80GB HBM3";
  b.gpu = "NVIDIA H200";
  c.gpu = "NVIDIA H100 80GB HBM3";
  c.meta = {{"run_id", "20250101T000000Z"}};
  EXPECT_EQ(run_labels({a, b}), (std::vector<std::string>{"H100", "H200"}));
  auto same = run_labels({a, c});
  EXPECT_NE(same[0], same[1]);
  for (const auto& l : same) EXPECT_EQ(l.find_first_of(" _^'"), std::string::npos) << l;
}

}  // namespace
}  // namespace gpuprobe
