// The gpuprobe binary itself: every bad input is one line on stderr and a non-zero exit, and
// nothing half-written is left behind. On a machine with a GPU, a quick run end to end.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/catalog.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"
#include "cli_run.hpp"

namespace fs = std::filesystem;

using namespace cli;

TEST(Cli, HelpListsCommands) {
  Result r = run("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* c : {"run", "list", "info", "analyze", "report", "compare"})
    EXPECT_NE(r.out.find(c), std::string::npos) << c;
}

TEST(Cli, VersionIsOneLine) {
  Result r = run("--version");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("gpuprobe ", 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_GT(r.out.size(), std::string("gpuprobe \n").size()) << "a version after the name";
  EXPECT_EQ(r.err, "");
}

TEST(Cli, EveryCommandHasItsOwnHelp) {
  for (const std::string cmd :
       {"run", "info", "analyze", "report", "compare", "compare --fleet", "export", "anchor"}) {
    Result r = run(cmd + " --help");
    EXPECT_EQ(r.code, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.out.find("Usage: gpuprobe " + cmd), std::string::npos) << cmd << ": " << r.out;
    EXPECT_EQ(r.err, "") << cmd;
  }
}

TEST(Cli, BadFlagOfEveryCommandIsOneLineAndExit2) {
  for (const std::string cmd :
       {"run", "list", "info", "analyze d", "report d", "compare a b", "compare --fleet a b c",
        "export d --json", "anchor d --versus d"}) {
    Result r = run(cmd + " --bogus");
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("--bogus"), std::string::npos) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("--help"), std::string::npos) << "says where the options are: " << r.err;
  }
}

TEST(Cli, ListNeedsNoGpuAndNamesEveryFamily) {
  Result r = run("list");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("latency/ld_global"), std::string::npos) << r.out;
}

TEST(Cli, BadFlagIsOneLineAndExit2) {
  Result r = run("run --bogus");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--bogus"), std::string::npos);
}

TEST(Cli, UnknownCommandIsOneLine) {
  Result r = run("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

TEST(Cli, UnknownFilterFailsBeforeWritingAnything) {
  fs::path out = empty_dir("gpuprobe_cli_filter");
  Result r = run("run --filter '^no_such_family/' --out " + out.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("selects no probe"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(out));
}

TEST(Cli, MissingDeviceFailsBeforeWritingAnything) {
  // On a machine without a GPU every ordinal is missing; with one, ordinal 99 is.
  fs::path out = empty_dir("gpuprobe_cli_device");
  Result r = run("run --device 99 --out " + out.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("device"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(out));
}

// One rank of a job: its environment and its filter are checked before any GPU is opened, so
// that a mistake in a job script is one line, not a rank waiting for the others.
TEST(Cli, RanksFromEnvChecksItsEnvironmentFirst) {
  const std::string no_rank =
      "env -u GPUPROBE_RANK -u OMPI_COMM_WORLD_RANK -u SLURM_PROCID -u PMI_RANK -u NCCL_COMM_ID";
  const std::string rank0 = no_rank + " GPUPROBE_RANK=0 GPUPROBE_NRANKS=2";
  fs::path out = empty_dir("gpuprobe_cli_ranks");
  const std::string id = " --nccl-id-file " + (out / "id").string() + " --out " + out.string();
  struct Case {
    std::string env, args, says;
  };
  for (const Case& c :
       {Case{no_rank, "run --ranks-from-env" + id, "no rank in the environment"},
        Case{rank0, "run --ranks-from-env --filter '^latency/'" + id, "also selects latency"},
        Case{rank0, "run --ranks-from-env --out " + out.string(), "--nccl-id-file"},
        Case{rank0 + " GPUPROBE_RANK=x", "run --ranks-from-env" + id, "GPUPROBE_RANK='x'"},
        Case{"", "run" + id, "--nccl-id-file needs --ranks-from-env"}}) {
    Result r = run(c.args, c.env);
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
  EXPECT_TRUE(fs::is_empty(out));
}

TEST(Cli, AnalyzeOfMissingDirectoryIsOneLine) {
  Result r = run("analyze /nonexistent/run");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

TEST(GpuRun, QuickLatencyRunEndToEnd) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU on this machine: the end-to-end run needs one";
  Result r;
  const fs::path run_dir = quick_run("^latency/", "gpuprobe_cli_run", &r);
  ASSERT_FALSE(run_dir.empty()) << r.err;
  for (const char* f : {"latency.csv", "parameters.csv", "families.csv", "benchmark.json"})
    EXPECT_TRUE(fs::exists(run_dir / f)) << f;
  auto params = gpuprobe::read_parameters((run_dir / "parameters.csv").string());
  bool clock = false;
  for (const auto& p : params)
    clock = clock || (p.name == gpuprobe::param::sm_clock_measured && p.value > 100);
  EXPECT_TRUE(clock);
  Result a = run("analyze --stdout " + run_dir.string());
  EXPECT_EQ(a.code, 0) << a.err;
  EXPECT_NE(a.out.find(gpuprobe::param::l1_hit_latency), std::string::npos) << a.out;
}

TEST(Cli, AnalyzeWritesParametersItselfAndSaysWhatItDid) {
  fs::path dir = copy_run("gpuprobe_cli_analyze_writes");
  fs::remove(dir / "parameters.csv");
  Result r = run("analyze " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("parameters.csv written"), std::string::npos) << r.out;
  std::string csv = slurp(dir / "parameters.csv");
  EXPECT_NE(csv.find("# analyzed=associativity; bandwidth; tlb"), std::string::npos) << csv;
  EXPECT_NE(csv.find("# skipped=none"), std::string::npos) << csv;
  EXPECT_NE(csv.find("dram_read_bandwidth,"), std::string::npos) << csv;
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
}

TEST(Cli, AnalyzeKeepsTheRunLevelParameters) {
  fs::path dir = copy_run("gpuprobe_cli_analyze_keeps");
  ASSERT_NE(slurp(dir / "parameters.csv").find("sm_clock_measured,"), std::string::npos);
  ASSERT_EQ(run("analyze " + dir.string()).code, 0);
  EXPECT_NE(slurp(dir / "parameters.csv").find("sm_clock_measured,"), std::string::npos);
}

TEST(Cli, AnalyzeListsABrokenFamilyFileItNeedsWithItsLine) {
  fs::path dir = copy_run("gpuprobe_cli_analyze_broken");
  append(dir / "bandwidth.csv", "bandwidth,x,\"unterminated\n");
  Result r = run("analyze " + dir.string());
  // The family's file no longer holds what families.csv records: its rows are kept, said, and
  // the exit is 1 (run_analysis.cpp, keep_lost_families).
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("bandwidth.csv:136: unterminated"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kept from parameters.csv"), std::string::npos) << r.err;
  std::string csv = slurp(dir / "parameters.csv");
  EXPECT_NE(csv.find("# skipped=bandwidth.csv ("), std::string::npos) << csv;
  EXPECT_NE(csv.find("# warning="), std::string::npos) << csv;
  EXPECT_NE(csv.find("dram_read_bandwidth,"), std::string::npos) << csv;
}

TEST(Cli, AnalyzeDoesNotAbortOnABrokenFileNoAnalyzerReads) {
  fs::path dir = copy_run("gpuprobe_cli_analyze_unused");
  std::ofstream(dir / "notes.csv") << "\"broken\n";
  Result r = run("analyze " + dir.string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(slurp(dir / "parameters.csv").find("notes.csv ("), std::string::npos);
}

TEST(Cli, AnalyzeCollapsesWarningsUnlessVerbose) {
  fs::path dir = copy_run("gpuprobe_cli_analyze_warnings");
  append(dir / "bandwidth.csv", "\"x\n");
  append(dir / "tlb.csv", "\"x\n");
  // Warnings collapse to one line; the two errors (each file's rows kept) are listed each.
  Result quiet = run("analyze " + dir.string());
  EXPECT_EQ(lines(quiet.err), 3) << quiet.err;
  EXPECT_NE(quiet.err.find("2 warning(s)"), std::string::npos) << quiet.err;
  Result loud = run("analyze -v " + dir.string());
  EXPECT_EQ(lines(loud.err), 4) << loud.err;
  EXPECT_NE(loud.err.find("warning: " + (dir / "tlb.csv").string()), std::string::npos) << loud.err;
}

TEST(Cli, NoRunFolderIsAnErrorAndNothingIsWritten) {
  fs::path empty = empty_dir("gpuprobe_cli_norun_empty");
  fs::path foreign = empty_dir("gpuprobe_cli_norun_foreign");
  std::ofstream(foreign / "thesis.tex") << "precious\n";
  for (const fs::path& d : {empty, foreign}) {
    for (const std::string cmd : {"analyze ", "report ", "compare "}) {
      std::string extra = cmd == "compare " ? " " + d.string() : "";
      Result r = run(cmd + d.string() + extra);
      EXPECT_NE(r.code, 0) << cmd << d;
      EXPECT_EQ(r.err.back(), '\n');
    }
  }
  EXPECT_TRUE(fs::is_empty(empty));
  EXPECT_EQ(std::distance(fs::directory_iterator(foreign), fs::directory_iterator()), 1);
}

TEST(Cli, BadOutputsFailBeforeAnyMeasurement) {
  fs::path out = empty_dir("gpuprobe_cli_outputs");
  std::ofstream(out / "file") << "x";
  for (const std::string& bad : {"--out " + (out / "file" / "sub").string(),
                                "--out " + out.string() + " --benchmark_out=" + out.string(),
                                "--out " + out.string() + " --benchmark_out=/nonexistent/b.json"}) {
    Result r = run("run --device 99 " + bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.find("device"), std::string::npos) << "checked before the GPU: " << r.err;
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 1);
}

namespace {

bool have_gnuplot() { return std::system("gnuplot --version > /dev/null 2>&1") == 0; }

// A shell command printing how many gnuplot processes run in a folder under `tmp`.
std::string gnuplots_in(const fs::path& tmp) {
  return "for q in $(pgrep gnuplot); do readlink /proc/$q/cwd; done | grep -c '" + tmp.string() +
         "' || true";
}

// Every number gnuplot wrote as a tick label (the <tspan> texts).
std::vector<double> tick_numbers(const std::string& svg) {
  std::vector<double> out;
  for (size_t at = svg.find("<tspan"); at != std::string::npos; at = svg.find("<tspan", at + 1)) {
    size_t b = svg.find('>', at), e = svg.find('<', b);
    if (b == std::string::npos || e == std::string::npos) break;
    std::string t = svg.substr(b + 1, e - b - 1);
    char* end = nullptr;
    double v = std::strtod(t.c_str(), &end);
    if (end != t.c_str() && *end == '\0') out.push_back(v);
  }
  return out;
}

}  // namespace

TEST(Figures, ReRenderReplacesFiguresWholeAndLeavesNoStaleOnes) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not on PATH";
  fs::path dir = copy_run("gpuprobe_cli_rerender");
  fs::create_directories(dir / "figures");
  // p2p.gp draws p2p.svg; this one-GPU run has no p2p.csv, so an old p2p.svg is stale. A file
  // no script draws is the user's and stays.
  std::ofstream(dir / "figures" / "p2p.svg") << "<svg/>";
  std::ofstream(dir / "figures" / "mine.svg") << "<svg/>";
  Result r = run("report " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir / "figures" / "p2p.svg"));
  EXPECT_TRUE(fs::exists(dir / "figures" / "mine.svg"));
  EXPECT_TRUE(fs::exists(dir / "figures" / "tlb.svg"));
  EXPECT_EQ(count_prefixed(dir, ".figures.tmp-"), 0);
}

TEST(Figures, SvgHoldsTheSeriesTheAxesAndTheMeasuredRange) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not on PATH";
  fs::path dir = copy_run("gpuprobe_cli_svg");
  ASSERT_EQ(run("report " + dir.string()).code, 0);
  const std::string svg = slurp(dir / "figures" / "bandwidth.svg");
  for (const char* s : {"H100 16 B", "H100 theoretical DRAM", "read bandwidth (GB/s)",
                        "footprint (MiB, whole chip)", "gnuplot_plot_1"})
    EXPECT_NE(svg.find(s), std::string::npos) << s;
  // The axes span the measured DRAM bandwidth (GB/s) and the L2's size (MiB).
  double dram = 0;
  for (const auto& p : gpuprobe::read_parameters((dir / "parameters.csv").string()))
    if (p.name == gpuprobe::param::dram_read_bandwidth) dram = p.value;
  ASSERT_GT(dram, 0);
  auto ticks = tick_numbers(svg);
  ASSERT_GE(ticks.size(), 4u) << svg.substr(0, 2000);
  const double lo = *std::min_element(ticks.begin(), ticks.end());
  const double hi = *std::max_element(ticks.begin(), ticks.end());
  EXPECT_LE(lo, 50);
  EXPECT_GE(hi, dram);
}

TEST(Figures, ConcurrentReportsOnOneRunDoNotCollide) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not on PATH";
  fs::path dir = copy_run("gpuprobe_cli_concurrent");
  const std::string one = std::string(GPUPROBE_BINARY) + " report " + dir.string() + " > /dev/null 2>&1";
  Result r = run("list > /dev/null; (" + one + " & a=$!; " + one + " & b=$!; " + one +
                 " & c=$!; wait $a && wait $b && wait $c) && echo all-ok");
  EXPECT_NE(r.out.find("all-ok"), std::string::npos) << r.out;
  EXPECT_EQ(count_prefixed(dir, ".figures.tmp-"), 0);
  EXPECT_TRUE(fs::exists(dir / "figures" / "tlb.svg"));
}

TEST(Figures, AStoppedReportLeavesNoTemporariesAndNoGnuplot) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not on PATH";
  fs::path dir = copy_run("gpuprobe_cli_stopped");
  fs::path tmp = empty_dir("gpuprobe_cli_stopped_tmp");
  Result r = run("list > /dev/null; TMPDIR=" + tmp.string() + " " + GPUPROBE_BINARY + " report " +
                 dir.string() + " > /dev/null 2>&1 & p=$!; sleep 0.4; kill -TERM $p; wait $p; echo rc=$?");
  EXPECT_TRUE(r.out.find("rc=143") != std::string::npos || r.out.find("rc=0") != std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(tmp)) << "a render folder left in " << tmp;
  EXPECT_EQ(count_prefixed(dir, ".figures.tmp-"), 0);
  EXPECT_EQ(run("list > /dev/null; " + gnuplots_in(tmp)).out, "0\n");
}

TEST(Figures, AKilledReportTakesItsGnuplotWithIt) {
  if (!have_gnuplot()) GTEST_SKIP() << "gnuplot not on PATH";
  fs::path dir = copy_run("gpuprobe_cli_killed");
  fs::path tmp = empty_dir("gpuprobe_cli_killed_tmp");
  // SIGKILL leaves no chance to clean up; PR_SET_PDEATHSIG still ends gnuplot.
  Result r = run("list > /dev/null; TMPDIR=" + tmp.string() + " " + GPUPROBE_BINARY + " report " +
                 dir.string() + " > /dev/null 2>&1 & p=$!; sleep 0.6; " + gnuplots_in(tmp) +
                 "; kill -KILL $p; wait $p; sleep 0.3; " + gnuplots_in(tmp));
  // (Whether one ran at the very moment of the kill depends on timing; none may run after.)
  ASSERT_GE(r.out.size(), 2u);
  EXPECT_EQ(r.out.substr(r.out.size() - 2), "0\n") << r.out;
  fs::remove_all(tmp);
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(".figures.tmp-", 0) == 0) fs::remove_all(e.path());
}

// Only the markdown is read: no figures drawn (the committed runs' figures are drawn by
// CommittedRuns in test_report.cpp).
TEST(Figures, AnInterruptedRunIsReportedAsIncomplete) {
  struct NoGnuplot {
    const char* was = std::getenv("GNUPLOT");
    std::string old = was ? was : "";
    NoGnuplot() { setenv("GNUPLOT", "/nonexistent/gnuplot", 1); }
    ~NoGnuplot() { was ? setenv("GNUPLOT", old.c_str(), 1) : unsetenv("GNUPLOT"); }
  } no_gnuplot;
  fs::path dir = copy_run("gpuprobe_cli_incomplete");
  std::string params = slurp(dir / "parameters.csv");
  std::ofstream(dir / "parameters.csv") << "# run_status=interrupted\n# interrupted=SIGINT during tlb\n" << params;
  run("report " + dir.string());
  std::string md = slurp(dir / "report.md");
  EXPECT_NE(md.find("**Incomplete run** (run_status=interrupted, SIGINT during tlb)"), std::string::npos)
      << md.substr(0, 600);
  fs::path out = fs::temp_directory_path() / "gpuprobe_cli_incomplete_compare";
  fs::remove_all(out);
  run("compare " + dir.string() + " " + gpuprobe::committed_run(gpuprobe::kH200Run) + " --out " +
      out.string());
  md = slurp(out / "compare.md");
  EXPECT_NE(md.find("(run_status=interrupted, SIGINT during tlb)"), std::string::npos) << md.substr(0, 800);
}

TEST(Cli, ReportPutsItsErrorLastAndCountsTheWarnings) {
  fs::path dir = copy_run("gpuprobe_cli_errors_last");
  append(dir / "tlb.csv", "\"x\n");  // an error: a broken observations file
  Result r = run("report " + dir.string());
  EXPECT_EQ(r.code, 1);
  ASSERT_EQ(lines(r.err), 2) << r.err;  // the warnings in one line, then the error
  EXPECT_NE(r.err.find("warning(s)"), std::string::npos) << r.err;
  const std::string last = r.err.substr(r.err.find('\n') + 1);
  EXPECT_NE(last.find("tlb.csv:"), std::string::npos) << r.err;
}
