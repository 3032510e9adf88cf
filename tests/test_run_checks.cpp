// Every file of a run checked before it is trusted, and nothing dropped in silence: a family's
// rows kept where its file is lost, parameters.csv held to the catalog, families.csv's columns
// checked, files of another run or card refused, impossible observations giving no parameter,
// and the catalog's own output checked. Through the binary where a user meets it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "analysis/bandwidth.hpp"
#include "analysis/fine_grained.hpp"
#include "app/run_analysis.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/observation.hpp"
#include "base/run_dir.hpp"
#include "cli_run.hpp"
#include "committed_runs.hpp"

namespace fs = std::filesystem;
using namespace cli;
using namespace gpuprobe;

namespace {

// `text` with its first line that starts with `prefix` replaced by `line`.
void replace_line(const fs::path& file, const std::string& prefix, const std::string& line) {
  std::string text = "\n" + slurp(file);
  const size_t at = text.find("\n" + prefix);
  ASSERT_NE(at, std::string::npos) << prefix;
  const size_t end = text.find('\n', at + 1);
  text.replace(at + 1, end - at - 1, line);
  text.erase(0, 1);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
}

// The rows of a parameters.csv whose evidence is `file`, by name, as text.
std::map<std::string, std::string> rows_of(const fs::path& params, const std::string& file) {
  std::map<std::string, std::string> out;
  for (const auto& p : read_parameters(params.string()))
    if (evidence_path(p.evidence) == file)
      out[p.name] = format_number(p.value) + " " + p.unit + " " + format_number(p.confidence);
  return out;
}

// `file` cut after its first `keep` lines (at a line boundary).
void cut_after(const fs::path& file, int keep) {
  const std::string text = slurp(file);
  size_t at = 0;
  for (int i = 0; i < keep; ++i) at = text.find('\n', at) + 1;
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text.substr(0, at);
}

}  // namespace

// ---- A family whose file is lost keeps its rows -----------------------------------------------

TEST(RunChecks, AFamilyWhoseFileIsMissingKeepsItsRows) {
  fs::path rd = copy_run("gpuprobe_checks_missing");
  const auto before = rows_of(rd / "parameters.csv", "bandwidth.csv");
  ASSERT_GE(before.size(), 4u);
  fs::remove(rd / "bandwidth.csv");
  Result r = run("analyze " + rd.string());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find(rd.string() + "/bandwidth.csv: missing"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kept"), std::string::npos) << r.err;
  EXPECT_EQ(rows_of(rd / "parameters.csv", "bandwidth.csv"), before);
  // On purpose: dropped, said.
  Result d = run("analyze --drop-missing " + rd.string());
  EXPECT_EQ(d.code, 0) << d.err;
  EXPECT_NE(d.err.find("bandwidth.csv: missing"), std::string::npos) << d.err;
  EXPECT_TRUE(rows_of(rd / "parameters.csv", "bandwidth.csv").empty());
}

TEST(RunChecks, AFamilyWhoseFileIsCutOrEmptiedKeepsItsRows) {
  for (int keep : {0, 40}) {
    fs::path rd = copy_run("gpuprobe_checks_cut_" + std::to_string(keep));
    const auto before = rows_of(rd / "parameters.csv", "bandwidth.csv");
    cut_after(rd / "bandwidth.csv", keep);
    Result r = run("analyze " + rd.string());
    EXPECT_NE(r.code, 0) << keep;
    EXPECT_NE(r.err.find(rd.string() + "/bandwidth.csv: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("families.csv records 104"), std::string::npos) << r.err;
    EXPECT_EQ(rows_of(rd / "parameters.csv", "bandwidth.csv"), before) << keep;
  }
}

// ---- parameters.csv against the catalog -------------------------------------------------------

TEST(RunChecks, ParametersAreHeldToTheCatalog) {
  const std::string head = "parameter,value,unit,low,high,confidence,method,evidence\n";
  const CsvTable t =
      parse_csv(head +
                    "l1_ways,6,bytes,6,6,0.5,m,a.csv\nl1_wayz,6,ways,6,6,0.5,m,a.csv\n"
                    "l1_ways,6,ways,6,6,0.5,m,a.csv\nshared_banks,32,banks,32,32,0.9,m,s.csv\n",
                "p.csv");
  std::vector<std::string> rejected;
  const auto params = parameters_from_table(t, &rejected);
  ASSERT_EQ(rejected.size(), 2u);
  EXPECT_NE(rejected[0].find("p.csv:2: l1_ways: unit 'bytes', where the catalog's is 'ways'"),
            std::string::npos)
      << rejected[0];
  EXPECT_NE(rejected[1].find("p.csv:3: l1_wayz: not a parameter"), std::string::npos)
      << rejected[1];
  ASSERT_EQ(params.size(), 2u);
  EXPECT_EQ(params[1].name, "shared_bank_count");  // an old name reads through the aliases
  // Through the binary: the row is named, and not reported as it stands.
  fs::path rd = copy_run("gpuprobe_checks_unit");
  replace_line(rd / "parameters.csv", "l1_ways,", "l1_ways,6,bytes,6,6,0.285,m,associativity.csv");
  Result r = run("export " + rd.string() + " --json");
  EXPECT_NE(r.err.find("l1_ways: unit 'bytes'"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("\"l1_ways\""), std::string::npos);
}

// ---- families.csv: every column -----------------------------------------------------------------

TEST(RunChecks, FamiliesCsvColumnsAreChecked) {
  for (const std::string bad : {"-1", "nan", "1e400x"}) {
    fs::path rd = copy_run("gpuprobe_checks_families");
    replace_line(rd / "families.csv", "bandwidth,ok,", "bandwidth,ok," + bad + ",1995.0,104,");
    const std::string where = rd.string() + "/families.csv:";
    Result a = run("analyze -v " + rd.string());
    EXPECT_NE(a.err.find(where), std::string::npos) << bad << ": " << a.err;
    EXPECT_NE(a.err.find("'wall_time_s' is '" + bad + "'"), std::string::npos) << a.err;
    Result e = run("export " + rd.string() + " --json");
    EXPECT_NE(e.code, 0) << bad;
    EXPECT_EQ(lines(e.err), 1) << e.err;
    EXPECT_NE(e.err.find(where), std::string::npos) << e.err;
  }
  // report names it among its warnings (all listed in report.md).
  fs::path rd = copy_run("gpuprobe_checks_families_report");
  replace_line(rd / "families.csv", "bandwidth,ok,", "bandwidth,ok,-1,1995.0,104,");
  Result p = run("report " + rd.string());
  EXPECT_NE(slurp(rd / "report.md").find("families.csv:"), std::string::npos) << p.err;
  EXPECT_NE(slurp(rd / "report.md").find("'wall_time_s' is '-1'"), std::string::npos) << p.err;
  const CsvTable t = parse_csv(
      "family,status,wall_time_s,sm_clock_mhz,observations,message\n"
      "a,ok,1,1,3,\n,ok,1,1,3,\nb,ok,1,1,2.5,\nc,ok,1,-5,1,x\nd,unsupported,,,0,why\n",
      "f.csv");
  const auto faults = families_faults(t);
  ASSERT_EQ(faults.size(), 3u);
  EXPECT_EQ(faults[0], "f.csv:3: a row without its family");
  EXPECT_NE(faults[1].find("f.csv:4: column 'observations' is '2.5'"), std::string::npos);
  EXPECT_NE(faults[2].find("f.csv:5: column 'sm_clock_mhz' is '-5'"), std::string::npos);
  EXPECT_EQ(sound_family_rows(t), (std::vector<size_t>{0, 4}));
}

// ---- Files of another run or card ---------------------------------------------------------------

TEST(RunChecks, FilesOfAnotherRunOrCardAreRefused) {
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"# run_id=", "# run_id=20261122T090000Z"}, {"# pci_bus_id=", "# pci_bus_id=0000:00:07.0"}};
  for (const auto& [prefix, line] : edits) {
    fs::path rd = copy_run("gpuprobe_checks_other_run");
    replace_line(rd / "tlb.csv", prefix, line);
    for (const std::string cmd : {"analyze ", "export --json "}) {
      Result r = run(cmd + rd.string());
      EXPECT_NE(r.code, 0) << cmd << prefix;
      EXPECT_EQ(lines(r.err), 1) << r.err;
      EXPECT_NE(r.err.find("tlb.csv " + line.substr(2)), std::string::npos) << r.err;
    }
  }
  EXPECT_NE(identity_conflict({{"a.csv", {{"run_id", "1"}}}, {"b.csv", {{"run_id", "2"}}}})
                .find("files of two runs in one folder"),
            std::string::npos);
  // The card's UUID, where both files record it (older runs lack it).
  fs::path rd = copy_run("gpuprobe_checks_uuid");
  append(rd / "tlb.csv", "");
  std::string text = slurp(rd / "tlb.csv");
  std::ofstream(rd / "tlb.csv", std::ios::trunc) << "# gpu_uuid=GPU-aaaa\n" << text;
  EXPECT_EQ(run("analyze " + rd.string()).code, 0) << "one file carries it";
  text = slurp(rd / "bandwidth.csv");
  std::ofstream(rd / "bandwidth.csv", std::ios::trunc) << "# gpu_uuid=GPU-bbbb\n" << text;
  Result r = run("analyze " + rd.string());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("gpu_uuid=GPU-"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("files of two GPUs"), std::string::npos) << r.err;
}

// ---- Impossible observations give no parameter ----------------------------------------------------

// Every registered analyzer, fed rows of its own family's shape (a committed run's file) whose
// every figure is zero, then negative: no parameter comes out.
TEST(RunChecks, NoAnalyzerInfersFromZeroOrNegativeValues) {
  const std::vector<std::string> runs = {committed_run(kH100Run), committed_run(kH200Run),
                                         committed_run("nvidia-h200/20261128T110751Z")};
  std::vector<std::string> untried;
  int tried = 0;
  for (const auto& [family, fn] : analyzers()) {
    std::string file;
    for (const auto& r : runs)
      if (file.empty() && fs::exists(fs::path(r) / (family + ".csv")))
        file = (fs::path(r) / (family + ".csv")).string();
    if (file.empty()) {
      untried.push_back(family);
      continue;
    }
    Metadata meta;
    const std::vector<Observation> obs = read_observations(file, &meta);
    for (double v : {0.0, -1.0}) {
      std::vector<Observation> bad = obs;
      for (auto& o : bad) o.value = o.p05 = o.p50 = o.p95 = v;
      const Analysis a = analyze_checked(family, bad, meta);
      for (const auto& p : a.params)
        ADD_FAILURE() << family << " with every value " << v << " gives " << p.name << " = "
                      << p.value << " " << p.unit;
    }
    ++tried;
  }
  std::string names;
  for (const auto& u : untried) names += " " + u;
  RecordProperty("untried", names);
  EXPECT_GE(tried, 20) << "analyzers without a committed file:" << names;
}

// ---- The catalog's output -------------------------------------------------------------------------

TEST(RunChecks, CatalogFailsWhenItsOutputCannotBeWritten) {
  if (fs::exists("/dev/full")) {
    Result r = run("catalog > /dev/full");
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  }
  Result closed = run("catalog >&-");
  EXPECT_NE(closed.code, 0) << closed.err;
  EXPECT_EQ(run("catalog > /dev/null").code, 0);
}

// ---- Smaller doors --------------------------------------------------------------------------------

TEST(RunChecks, SpreadOfARunAgainstItselfIsRefused) {
  fs::path a = copy_run("gpuprobe_checks_spread_self");
  for (const std::string& second :
       {a.string(), a.string() + "/", a.string() + "/../" + a.filename().string()}) {
    Result r = run("spread " + a.string() + " " + second);
    EXPECT_NE(r.code, 0) << second;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("is given twice"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(a.parent_path() / "spread.csv"));
}

TEST(RunChecks, RunChecksItsNvbandwidthFileBeforeTheGpu) {
  fs::path out = empty_dir("gpuprobe_checks_nvb_out");
  Result r =
      run("run --device 99 --out " + out.string() + " --json-nvbandwidth /nonexistent/x.json");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--json-nvbandwidth: no folder /nonexistent"), std::string::npos) << r.err;
}

// ---- Observation rows that no analysis may use --------------------------------------------------

TEST(RunChecks, RowsGivenTwiceOrWithPercentilesOutOfOrderAreCountedAndNamed) {
  const CsvTable t = parse_csv(
      "family,probe,n,value,unit,p05,p50,p95,reps\n"
      "x,p,1,5,cycles,4,5,6,3\nx,p,1,5,cycles,4,5,6,3\nx,p,2,5,cycles,7,5,6,3\nx,p,3,5,cycles,4,5,6,3\n",
      "x.csv");
  std::vector<Observation> obs = observations_from_table(t);
  const std::string w = drop_unusable_rows(t, obs);
  EXPECT_EQ(obs.size(), 2u);
  EXPECT_EQ(w.rfind("x.csv:3: 2 of 4 observation rows not used", 0), 0u) << w;
  // Through analyze: the warning, and the evidence of what was inferred from the rest.
  fs::path rd = copy_run("gpuprobe_checks_dup_rows");
  std::string text = slurp(rd / "bandwidth.csv");
  const size_t header = text.find("\nfamily,probe");
  const size_t row = text.find('\n', header + 1) + 1;
  const std::string first = text.substr(row, text.find('\n', row) + 1 - row);
  text.insert(row, first);
  std::ofstream(rd / "bandwidth.csv", std::ios::trunc) << text;
  Result r = run("analyze -v " + rd.string());
  EXPECT_NE(r.err.find("bandwidth.csv:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 of 105 observation rows not used"), std::string::npos) << r.err;
  EXPECT_NE(slurp(rd / "parameters.csv").find("of the 105 rows of bandwidth.csv"),
            std::string::npos);
}

// `gpuprobe run` analyses each family file as it writes it, through the step `analyze` and
// `report` take: the same rows dropped and said, the same parameters, the same evidence.
TEST(RunChecks, TheRunAnalysesAFamilyFileAsAnalyzeDoes) {
  fs::path rd = copy_run("gpuprobe_checks_one_path");
  std::string text = slurp(rd / "bandwidth.csv");
  const size_t header = text.find("\nfamily,probe");
  const size_t row = text.find('\n', header + 1) + 1;
  text.insert(row, text.substr(row, text.find('\n', row) + 1 - row));
  std::ofstream(rd / "bandwidth.csv", std::ios::trunc) << text;
  const std::string path = (rd / "bandwidth.csv").string();
  const Analysis run_side = analyze_family_text(path, text, std::string(bandwidth::kFamily.name));
  ASSERT_TRUE(run_side.error.empty()) << run_side.error;
  ASSERT_FALSE(run_side.params.empty());
  ASSERT_FALSE(run_side.warnings.empty());
  EXPECT_EQ(run_side.warnings.front().rfind(path + ":", 0), 0u) << run_side.warnings.front();
  const RunAnalysis analyze_side = analyze_run_dir(rd.string());
  for (const auto& w : run_side.warnings)
    EXPECT_NE(std::find(analyze_side.warnings.begin(), analyze_side.warnings.end(), w),
              analyze_side.warnings.end())
        << w;
  for (const auto& p : run_side.params) {
    auto it = std::find_if(analyze_side.params.begin(), analyze_side.params.end(),
                           [&](const Parameter& q) { return q.name == p.name; });
    ASSERT_NE(it, analyze_side.params.end()) << p.name;
    EXPECT_EQ(it->value, p.value) << p.name;
    EXPECT_EQ(it->low, p.low) << p.name;
    EXPECT_EQ(it->high, p.high) << p.name;
    EXPECT_EQ(it->confidence, p.confidence) << p.name;
    EXPECT_EQ(it->evidence, p.evidence) << p.name;
  }
  // A text that is no observations file is the family's error, naming the file.
  const Analysis broken =
      analyze_family_text(path, "not,a\n", std::string(bandwidth::kFamily.name));
  EXPECT_TRUE(broken.params.empty());
  EXPECT_NE(broken.error.find("bandwidth.csv"), std::string::npos) << broken.error;
}

TEST(RunChecks, AFailedWriteNamesTheUsersFileNotATemporaryOne) {
  fs::path rd = copy_run("gpuprobe_checks_tmp_name");
  Result r = run("export " + rd.string() + " --json --out /nonexistent_gpuprobe_dir/x.json");
  EXPECT_NE(r.code, 0);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("/nonexistent_gpuprobe_dir/x.json:"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(".tmp."), std::string::npos) << r.err;
}

TEST(RunChecks, Utf16AndNulBytesAreNamedForWhatTheyAre) {
  EXPECT_THROW(
      {
        try {
          parse_csv(std::string("\xFF\xFE"
                                "f\0a\0m\0",
                                8),
                    "u.csv");
        } catch (const CsvError& e) {
          EXPECT_STREQ(e.what(), "u.csv:1: UTF-16 text: not read (save it as UTF-8)");
          throw;
        }
      },
      CsvError);
  fs::path rd = copy_run("gpuprobe_checks_nul");
  std::string text = slurp(rd / "tlb.csv");
  text.insert(text.find("\ntlb,") + 5, std::string(1, '\0'));
  std::ofstream(rd / "tlb.csv", std::ios::binary | std::ios::trunc) << text;
  Result r = run("analyze -v " + rd.string());
  EXPECT_NE(r.err.find("tlb.csv:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": a NUL byte: not a text file"), std::string::npos) << r.err;
}

TEST(RunChecks, HeadersNoGpuCanHaveRefuseTheRun) {
  for (const std::string line : {"# l2_bytes=-1", "# sm_count=1e308", "# sm_count=13.5"}) {
    fs::path rd = copy_run("gpuprobe_checks_absurd_meta");
    replace_line(rd / "tlb.csv", line.substr(0, line.find('=') + 1), line);
    for (const std::string cmd : {"analyze ", "export --json "}) {
      Result r = run(cmd + rd.string());
      EXPECT_NE(r.code, 0) << cmd << line;
      EXPECT_EQ(lines(r.err), 1) << r.err;
      EXPECT_NE(r.err.find("tlb.csv: " + line + ": not a value any GPU has"), std::string::npos)
          << r.err;
    }
  }
  fs::path rd = copy_run("gpuprobe_checks_clock_zero");
  replace_line(rd / "families.csv", "# sm_clock_mhz=", "# sm_clock_mhz=0");
  Result r = run("analyze " + rd.string());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("families.csv: # sm_clock_mhz=0"), std::string::npos) << r.err;
}

TEST(RunChecks, ExportAndCompareDoNotWriteIntoARun) {
  fs::path a = copy_run("gpuprobe_checks_into_a"), b = copy_run("gpuprobe_checks_into_b");
  std::ofstream(a / "report.md") << "the report\n";
  for (const char* name : {"report.md", "methods.md"}) {
    Result r = run("export " + a.string() + " --json --out " + (a / name).string());
    EXPECT_NE(r.code, 0) << name;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("not written over"), std::string::npos) << r.err;
  }
  EXPECT_EQ(slurp(a / "report.md"), "the report\n");
  EXPECT_FALSE(fs::exists(a / "methods.md"));
  Result c = run("compare " + a.string() + " " + b.string() + " --out " + (a / "sub").string());
  EXPECT_NE(c.code, 0);
  EXPECT_NE(c.err.find("inside the run folder"), std::string::npos) << c.err;
  EXPECT_FALSE(fs::exists(a / "sub"));
}

TEST(RunChecks, AWebReportKeepsThePaperFiguresAndTheUsersFiles) {
  if (run("report --help").code != 0) GTEST_SKIP() << "no report";
  fs::path rd = copy_run("gpuprobe_checks_figures_kept");
  fs::create_directories(rd / "figures" / "paper");
  std::ofstream(rd / "figures" / "paper" / "tlb.pdf") << "a paper figure\n";
  std::ofstream(rd / "figures" / "notes.txt") << "mine\n";
  Result r = run("report " + rd.string());
  if (!fs::exists(rd / "figures" / "tlb.svg")) GTEST_SKIP() << "gnuplot drew nothing: " << r.err;
  EXPECT_EQ(slurp(rd / "figures" / "paper" / "tlb.pdf"), "a paper figure\n");
  EXPECT_EQ(slurp(rd / "figures" / "notes.txt"), "mine\n");
}

// A folder of notes that holds one run file: its own report.md is no gpuprobe report to replace.
TEST(RunChecks, AReportLeavesAReportMdItDidNotWrite) {
  fs::path notes = empty_dir("gpuprobe_checks_notes");
  fs::copy_file(fs::path(committed_run(kH100Run)) / "latency.csv", notes / "latency.csv");
  std::ofstream(notes / "report.md") << "# My notes on the H100\n";
  Result r = run("report " + notes.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find((notes / "report.md").string() + ": not written by gpuprobe"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(slurp(notes / "report.md"), "# My notes on the H100\n");
  EXPECT_FALSE(fs::exists(notes / "methods.md"));
  // A report gpuprobe wrote is replaced, as before.
  fs::path rd = copy_run("gpuprobe_checks_report_again");
  ASSERT_EQ(run("report " + rd.string()).code, 0);
  EXPECT_EQ(run("report " + rd.string()).code, 0);
}

// A read-only figures/ (mode 555): the figures stay as they were, no staging folder is left
// behind, and the report says so and exits 1. Root writes anywhere, so as root the report runs
// as nobody (setpriv), as a user would.
TEST(RunChecks, AReadOnlyFigureFolderIsLeftAsItWas) {
  if (run("report --help").code != 0) GTEST_SKIP() << "no report";
  fs::path rd = copy_run("gpuprobe_checks_figures_readonly");
  fs::create_directories(rd / "figures");
  std::ofstream(rd / "figures" / "tlb.svg") << "<svg>old</svg>\n";
  std::string as_user;
  if (::geteuid() == 0) {
    if (std::system("command -v setpriv > /dev/null") != 0) GTEST_SKIP() << "root without setpriv";
    as_user = "setpriv --reuid=65534 --regid=65534 --clear-groups";
    // A checkout under a folder only root may enter (/root) keeps nobody from the binary.
    if (run("--version", as_user).code != 0)
      GTEST_SKIP() << "nobody cannot run " << GPUPROBE_BINARY << " from this checkout";
    fs::permissions(rd, fs::perms::all);
    for (const auto& e : fs::directory_iterator(rd))
      if (e.is_regular_file()) fs::permissions(e.path(), fs::perms::all);
  }
  fs::permissions(rd / "figures", fs::perms::owner_read | fs::perms::owner_exec |
                                      fs::perms::group_read | fs::perms::group_exec |
                                      fs::perms::others_read | fs::perms::others_exec);
  Result r = run("report " + rd.string(), as_user);
  fs::permissions(rd / "figures", fs::perms::owner_all, fs::perm_options::add);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find((rd / "figures").string() + ": not writable"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(rd / "figures" / "tlb.svg"), "<svg>old</svg>\n");
  EXPECT_EQ(count_prefixed(rd, ".figures.tmp-"), 0);
}

TEST(RunChecks, AReportCleansWhatAKilledOneLeftInTheTemporaryFolder) {
  fs::path tmp = empty_dir("gpuprobe_checks_tmpdir");
  fs::create_directories(tmp / "gpuprobe-render-killed" / "x");
  fs::path rd = copy_run("gpuprobe_checks_render_left");
  Result r = run("report " + rd.string(), "env TMPDIR=" + tmp.string());
  EXPECT_FALSE(fs::exists(tmp / "gpuprobe-render-killed")) << r.err;
}

// The audit's case: every fine-grained latency 0 (or -1), the miss counts left as they were:
// the latencies are dropped, said, and no line size comes from them (the H100's is 128 B).
TEST(RunChecks, FineGrainedLatenciesOfZeroGiveNoLineSize) {
  Metadata meta;
  const auto obs = read_observations(
      (fs::path(committed_run(kH100Run)) / (std::string(fine_grained::kFamily.name) + ".csv"))
          .string(),
      &meta);
  for (double v : {0.0, -1.0}) {
    std::vector<Observation> bad = obs;
    for (auto& o : bad)
      if (o.unit == "cycles" || o.unit == "ns") o.value = o.p05 = o.p50 = o.p95 = v;
    // The impossible rows are dropped and said; what the real miss counts give stands.
    const Analysis a = analyze_checked(std::string(fine_grained::kFamily.name), bad, meta);
    bool said = false;
    for (const auto& w : a.warnings)
      said = said || w.find("no GPU can produce") != std::string::npos;
    EXPECT_TRUE(said) << v;
    for (const auto& p : a.params) {
      if (p.name == "l1_line_size") {
        EXPECT_EQ(p.value, 128) << v << ": not from the zeros";
      }
    }
  }
}
