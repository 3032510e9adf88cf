// No silent loss: no command writes over a run's measurements or a device, no failed
// write exits 0, and nothing a user may hand gpuprobe (an edited file, a FIFO, a link to
// /dev/zero, a spreadsheet's byte-order mark) is read silently or waited on forever. Each
// door is tried through the binary, as a user would; the files it must not touch are
// compared byte for byte.
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "app/run_analysis.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"
#include "base/run_dir.hpp"
#include "cli_run.hpp"

namespace fs = std::filesystem;
using namespace cli;
using namespace gpuprobe;

namespace {

// Every file of a folder (not below it) with its bytes, to compare before and after.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    out[e.path().filename().string()] =
        e.is_regular_file() ? slurp(e.path()) : "<" + e.path().string() + ">";
  return out;
}

// The one line a refused command prints: exactly one, naming `what`.
void expect_one_line(const Result& r, const std::string& what, const std::string& context) {
  EXPECT_NE(r.code, 0) << context;
  EXPECT_EQ(lines(r.err), 1) << context << ": " << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << context << ": " << r.err;
}

bool is_char_device(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

// Replaces the first line that starts with `prefix` in `file`.
void replace_line(const fs::path& file, const std::string& prefix, const std::string& line) {
  std::string text = "\n" + slurp(file);
  const size_t at = text.find("\n" + prefix);
  ASSERT_NE(at, std::string::npos) << prefix;
  const size_t end = text.find('\n', at + 1);
  text.replace(at + 1, end - at - 1, line);
  text.erase(0, 1);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
}

// `analyze -v` of a copy of the run (`name`) whose parameters.csv row `prefix` is `row`.
Result analyze_with_row(const std::string& name, const std::string& prefix, const std::string& row,
                        fs::path* rd) {
  *rd = copy_run(name);
  replace_line(*rd / "parameters.csv", prefix, row);
  return run("analyze -v " + rd->string());
}

// A parameters.csv read strictly, by name.
std::map<std::string, Parameter> by_name(const fs::path& file) {
  std::map<std::string, Parameter> out;
  for (const auto& p : read_parameters(file.string())) out[p.name] = p;
  return out;
}

// A command with a bound on its time: a wait on a FIFO shows as 124, not as a hung test.
constexpr const char* kBounded = "timeout 30 ";

}  // namespace

// ---- Output paths: written through where they are not regular files ------------------------

TEST(OutputPaths, DevicesAreWrittenThroughAndAFullOneFails) {
  fs::path rd = copy_run("gpuprobe_rel_devices");
  Result ok = run("export " + rd.string() + " --json --out /dev/null");
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(is_char_device("/dev/null"));
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  // Every writer of files, each onto a full device: one line, non-zero, the device left a device.
  fs::path run2 = copy_run("gpuprobe_rel_devices_2"), run3 = copy_run("gpuprobe_rel_devices_3");
  const auto before = snapshot(rd);
  for (const std::string& cmd : {"export " + rd.string() + " --json --out /dev/full",
                                 "spread " + rd.string() + " " + run2.string() + " --out /dev/full",
                                 "compare --fleet " + rd.string() + " " + run2.string() + " " +
                                     run3.string() + " --csv /dev/full > /dev/null"}) {
    expect_one_line(run(cmd), "No space left on device", cmd);
    EXPECT_TRUE(is_char_device("/dev/full")) << cmd;
  }
  EXPECT_EQ(snapshot(rd), before);
}

TEST(OutputPaths, EveryStdoutWriterFailsOnAFullDevice) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  fs::path a = copy_run("gpuprobe_rel_stdout_a"), b = copy_run("gpuprobe_rel_stdout_b"),
           c = copy_run("gpuprobe_rel_stdout_c");
  const auto before = snapshot(a);
  for (const std::string& cmd :
       {"analyze --stdout " + a.string(), "export " + a.string() + " --json",
        "export " + a.string() + " --json --out /dev/stdout",
        "compare --fleet " + a.string() + " " + b.string() + " " + c.string(),
        "compare --table markdown " + a.string(), std::string("list"), std::string("--help"),
        std::string("export --help")})
    expect_one_line(run(cmd + " > /dev/full"), "No space left on device", cmd);
  EXPECT_EQ(snapshot(a), before);
}

TEST(OutputPaths, ALinkIsFollowedAndStays) {
  fs::path rd = copy_run("gpuprobe_rel_link");
  fs::path dir = empty_dir("gpuprobe_rel_link_out");
  std::ofstream(dir / "target.json") << "old\n";
  fs::create_symlink(dir / "target.json", dir / "link.json");
  fs::create_symlink(dir / "new" / "made.json", dir / "dangling.json");
  fs::create_directories(dir / "new");
  for (const char* link : {"link.json", "dangling.json"}) {
    Result r = run("export " + rd.string() + " --json --out " + (dir / link).string());
    EXPECT_EQ(r.code, 0) << link << ": " << r.err;
    EXPECT_TRUE(fs::is_symlink(dir / link)) << link << " replaced";
  }
  EXPECT_NE(slurp(dir / "target.json").find("\"schema\""), std::string::npos);
  EXPECT_NE(slurp(dir / "new" / "made.json").find("\"schema\""), std::string::npos);
  // Only the targets: no temporary left beside link or target.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 4);
}

TEST(OutputPaths, AFifoIsWrittenThroughAndOneWithoutAReaderFailsAtOnce) {
  fs::path rd = copy_run("gpuprobe_rel_fifo");
  fs::path dir = empty_dir("gpuprobe_rel_fifo_out");
  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0600), 0);
  Result r = run("list > /dev/null; cat " + (dir / "pipe").string() + " > " +
                 (dir / "got").string() + " & " + kBounded + GPUPROBE_BINARY + " export " +
                 rd.string() + " --json --out " + (dir / "pipe").string() + "; wait");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(slurp(dir / "got").find("\"schema\""), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat((dir / "pipe").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
  expect_one_line(run("export " + rd.string() + " --json --out " + (dir / "pipe").string()),
                  "a FIFO that no process reads", "no reader");
}

TEST(OutputPaths, StandardOutputNamedIsWrittenToAsItIs) {
  fs::path rd = copy_run("gpuprobe_rel_devstdout");
  Result r = run("export " + rd.string() + " --json --out /dev/stdout");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"schema\""), std::string::npos);
}

// ---- A run's own files: refused as an output of any command but analyze -----------------------

TEST(RunFilesGuard, NoCommandButAnalyzeWritesARunsFiles) {
  fs::path a = copy_run("gpuprobe_rel_guard_a"), b = copy_run("gpuprobe_rel_guard_b"),
           c = copy_run("gpuprobe_rel_guard_c");
  fs::path elsewhere = empty_dir("gpuprobe_rel_guard_link");
  fs::create_symlink(a / "parameters.csv", elsewhere / "innocent.csv");
  const auto before = snapshot(a);
  const std::string runs = a.string() + " " + b.string() + " " + c.string();
  for (const std::string& target :
       {(a / "parameters.csv").string(), (a / "tlb.csv").string(), (a / "families.csv").string(),
        (elsewhere / "innocent.csv").string(),
        a.string() + "/../" + a.filename().string() + "/bandwidth.csv"}) {
    for (const std::string& cmd : {"export " + a.string() + " --json --out " + target,
                                   "spread " + a.string() + " " + b.string() + " --out " + target,
                                   "compare --fleet " + runs + " --csv " + target + " > /dev/null"})
      expect_one_line(run(cmd), "not written over", cmd);
    // run refuses before it looks for a GPU.
    for (const std::string flag : {"--benchmark_out=", "--json-nvbandwidth "}) {
      Result r = run("run --device 99 --out " + elsewhere.string() + " " + flag + target);
      EXPECT_EQ(r.code, 2) << flag << ": " << r.err;
      EXPECT_NE(r.err.find("not written over"), std::string::npos) << r.err;
    }
  }
  EXPECT_EQ(snapshot(a), before);
  EXPECT_TRUE(fs::is_symlink(elsewhere / "innocent.csv"));
}

TEST(RunFilesGuard, SpreadOfRunsNamedWithASlashWritesBesideThem) {
  fs::path parent = empty_dir("gpuprobe_rel_spread_slash");
  fs::path a = parent / "a", b = parent / "b";
  fs::rename(copy_run("gpuprobe_rel_spread_slash_a"), a);
  fs::rename(copy_run("gpuprobe_rel_spread_slash_b"), b);
  const auto before = snapshot(a);
  Result r = run("spread " + a.string() + "/ " + b.string() + "/");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(parent / "spread.csv"));
  EXPECT_EQ(snapshot(a), before);
  EXPECT_NE(slurp(parent / "spread.csv").find("# runs=a b"), std::string::npos)
      << slurp(parent / "spread.csv");
}

TEST(RunFilesGuard, TheGuardInProcess) {
  fs::path a = copy_run("gpuprobe_rel_guard_unit");
  EXPECT_THROW(check_output_path((a / "parameters.csv").string()), std::runtime_error);
  EXPECT_NO_THROW(check_output_path((a / "parameters.csv").string(), RunFileRights::parameters));
  EXPECT_THROW(check_output_path((a / "tlb.csv").string(), RunFileRights::parameters),
               std::runtime_error);
  EXPECT_THROW(check_output_path((a / "benchmark.json").string()), std::runtime_error);
  EXPECT_NO_THROW(check_output_path((a / "report.md").string()));
  EXPECT_NO_THROW(check_output_path((a / "export.json").string()));
  // A folder this process made as a run is its own to write.
  std::string id;
  const std::string made =
      create_run_dir(empty_dir("gpuprobe_rel_guard_made").string(), "gpu", 0, &id);
  write_file_atomic(made + "/latency.csv",
                    "# run_id=" + id + "\nfamily,probe,value,unit,p05,p50,p95,reps\n");
  EXPECT_NO_THROW(write_file_atomic(made + "/latency.csv", "# run_id=" + id + "\n"));
}

// ---- analyze: never overwrites what it could not read -----------------------------------------

TEST(AnalyzeKeeps, AParametersCsvItCannotReadIsNeverOverwritten) {
  fs::path rd = copy_run("gpuprobe_rel_unreadable");
  const std::string good = slurp(rd / "parameters.csv");
  const std::string header = "parameter,value,unit,low,high,confidence,method,evidence";
  const std::string twice = "parameter,value,unit,low,high,confidence,method,evidence,value";
  for (const std::string& text :
       {std::string(), std::string("# gpu=x\n"), "\"unterminated\n" + good,
        good.substr(0, good.find(header)) + twice + "\n"}) {
    std::ofstream(rd / "parameters.csv", std::ios::binary | std::ios::trunc) << text;
    const auto before = snapshot(rd);
    for (const std::string flags : {"", "--stdout "}) {
      Result r = run("analyze " + flags + rd.string());
      expect_one_line(r, "not overwritten", flags + "'" + text.substr(0, 40) + "'");
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(snapshot(rd), before);
    }
  }
  fs::remove(rd / "parameters.csv");
  ASSERT_EQ(::mkfifo((rd / "parameters.csv").c_str(), 0600), 0);
  expect_one_line(run(std::string("list > /dev/null; ") + kBounded + GPUPROBE_BINARY + " analyze " +
                      rd.string()),
                  "a FIFO, not a regular file", "a FIFO in its place");
}

TEST(AnalyzeKeeps, ABadRowIsSaidNotUsedAndInferredAgain) {
  fs::path rd;
  Result r = analyze_with_row(
      "gpuprobe_rel_bad_row", "dram_read_bandwidth,",
      "dram_read_bandwidth,3156.8,GB/s,3153.9,3158.9,1.5,streaming: edited,bandwidth.csv", &rd);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("dram_read_bandwidth: confidence 1.5 outside [0, 1]: row not used"),
            std::string::npos)
      << r.err;
  std::map<std::string, Parameter> by = by_name(rd / "parameters.csv");
  EXPECT_TRUE(by.count(param::sm_clock_measured));
  EXPECT_TRUE(by.count(param::suite_wall_time));
  ASSERT_TRUE(by.count(param::dram_read_bandwidth));
  EXPECT_LE(by[param::dram_read_bandwidth].confidence, 1.0);
}

TEST(AnalyzeKeeps, AnUnreadableRunLevelRowIsRecoveredOrRefused) {
  // The clock is in families.csv's metadata: recovered.
  fs::path rd;
  Result r =
      analyze_with_row("gpuprobe_rel_run_level", "sm_clock_measured,",
                       "sm_clock_measured,-1995,MHz,1994.99,1995.0,0.99,edited,families.csv", &rd);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("recovered from"), std::string::npos) << r.err;
  const Parameter clock = by_name(rd / "parameters.csv")[param::sm_clock_measured];
  EXPECT_EQ(clock.value, 1995.0) << slurp(rd / "parameters.csv");
  EXPECT_EQ(clock.evidence, "families.csv");
  // The wall time of a run whose families.csv does not record it: nothing to recover it from.
  replace_line(rd / "parameters.csv", "suite_wall_time,",
               "suite_wall_time,35.4,s,35.4,35.4,1.5,edited,families.csv");
  const auto before = snapshot(rd);
  expect_one_line(run("analyze " + rd.string()), "suite_wall_time: unreadable", "wall time");
  EXPECT_EQ(snapshot(rd), before);
}

TEST(AnalyzeKeeps, RedirectedIntoItsOwnParametersCsv) {
  fs::path rd = copy_run("gpuprobe_rel_redirect");
  fs::path p = rd / "parameters.csv";
  // The shell empties the file first; the clock comes back from families.csv, the wall time of
  // this (older) run cannot: said, and the rest kept.
  Result r = run("analyze --stdout " + rd.string() + " > " + p.string());
  expect_one_line(r, "suite_wall_time lost", "redirected, older run");
  EXPECT_NE(slurp(p).find("\nsm_clock_measured,1995,"), std::string::npos) << slurp(p);
  EXPECT_NE(slurp(p).find("\ndram_read_bandwidth,"), std::string::npos);
  // A run that records its wall time in families.csv (as the runner now does) loses nothing.
  fs::path run2 = copy_run("gpuprobe_rel_redirect_2");
  replace_line(run2 / "families.csv", "# throttle_reasons_seen=",
               "# throttle_reasons_seen=none\n# suite_wall_time_s=35.408412058");
  Result ok = run("analyze --stdout " + run2.string() + " > " + (run2 / "parameters.csv").string());
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(slurp(run2 / "parameters.csv")
                .find("\nsuite_wall_time,35.408412058,s,35.408412058,35.408412058,1,"),
            std::string::npos);
  // Appended to (>>): refused, the file as it was.
  const auto before = snapshot(run2);
  expect_one_line(
      run("analyze --stdout " + run2.string() + " >> " + (run2 / "parameters.csv").string()),
      "not appended to", "appended");
  EXPECT_EQ(snapshot(run2), before);
}

// ---- report: a broken figure toolchain keeps the figures there are ----------------------------

TEST(ReportFigures, NothingDrawnKeepsTheFiguresAndFails) {
  fs::path rd = copy_run("gpuprobe_rel_figures");
  fs::create_directories(rd / "figures");
  std::ofstream(rd / "figures" / "tlb.svg") << "<svg>an earlier report's</svg>\n";
  fs::path empty = empty_dir("gpuprobe_rel_figures_noplots");
  for (const std::string& how :
       {"GNUPLOT=/bin/false " + std::string(GPUPROBE_BINARY) + " report " + rd.string(),
        std::string(GPUPROBE_BINARY) + " report --plots " + empty.string() + " " + rd.string(),
        std::string(GPUPROBE_BINARY) + " report --plots /nonexistent " + rd.string()}) {
    Result r = run("list > /dev/null; " + how);
    EXPECT_NE(r.code, 0) << how;
    ASSERT_FALSE(r.err.empty()) << how;
    // The error is the last line, after the warnings' one line.
    const std::string last = r.err.substr(r.err.rfind('\n', r.err.size() - 2) + 1);
    EXPECT_TRUE(last.find("no figure") != std::string::npos ||
                last.find("plots directory") != std::string::npos)
        << how << ": " << r.err;
    EXPECT_LE(lines(r.err), 2) << how << ": " << r.err;
    EXPECT_EQ(slurp(rd / "figures" / "tlb.svg"), "<svg>an earlier report's</svg>\n") << how;
    EXPECT_EQ(std::distance(fs::directory_iterator(rd / "figures"), fs::directory_iterator()), 1)
        << how;
  }
}

TEST(ReportFigures, AKilledReportsStagingIsRemovedByTheNext) {
  fs::path rd = copy_run("gpuprobe_rel_stale");
  fs::create_directories(rd / ".figures.tmp-KILLED" / "x");
  std::ofstream(rd / ".figures.tmp-KILLED" / "x" / "tlb.svg") << "half\n";
  // One in use by a report that is running holds its lock: left alone.
  fs::create_directories(rd / ".figures.tmp-LIVE");
  const int fd = ::open((rd / ".figures.tmp-LIVE").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  run("list > /dev/null; GNUPLOT=/nonexistent/gnuplot " + std::string(GPUPROBE_BINARY) +
      " report " + rd.string());
  EXPECT_FALSE(fs::exists(rd / ".figures.tmp-KILLED"));
  EXPECT_TRUE(fs::exists(rd / ".figures.tmp-LIVE"));
  ::close(fd);
}

// A family file far larger than any run writes is not handed to gnuplot, which reads it once per
// curve and format (a 60 MB tlb.csv ran into the two-minute timeout): said, at once.
TEST(ReportFigures, AFileTooLargeToDrawIsSaidNotWaitedOn) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not on PATH";
  fs::path rd = copy_run("gpuprobe_rel_huge_figure");
  std::string text = slurp(rd / "tlb.csv");
  const std::string row = text.substr(text.rfind('\n', text.size() - 2) + 1);
  text.reserve(text.size() + 200000 * row.size());
  for (int i = 0; i < 200000; ++i) text += row;
  std::ofstream(rd / "tlb.csv", std::ios::binary | std::ios::trunc) << text;
  Result r = run(std::string("list > /dev/null; ") + kBounded + GPUPROBE_BINARY + " report " +
                 rd.string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(slurp(rd / "report.md").find("rows, more than a figure is drawn from"),
            std::string::npos);
  EXPECT_TRUE(fs::exists(rd / "figures" / "bandwidth.svg"));
}

// ---- Inputs: checked row by row, refused when not files ---------------------------------------

TEST(InputChecks, ParameterRowsAreCheckedOneByOne) {
  const std::string text =
      "parameter,value,unit,low,high,confidence,method,evidence\n"
      "l1_hit_latency,33,cycles,32,34,0.9,m,latency.csv\n"    // 2: good
      "l1_ways,-5,ways,-5,-5,0.9,m,associativity.csv\n"       // 3: a count <= 0
      "l2_size,5e7,bytes,6e7,7e7,0.9,m,latency.csv\n"         // 4: outside its interval
      "dram_latency,600,cycles,700,500,0.9,m,latency.csv\n"   // 5: inverted
      "shared_banks,32,banks,32,32,1.5,m,shared_banks.csv\n"  // 6: confidence (an old name)
      "l1_size,nan,bytes,1,2,0.5,m,latency.csv\n"             // 7: not a number
      "l1_hit_latency,34,cycles,33,35,0.9,m,latency.csv\n"    // 8: given again
      "someones_difference,-3,cycles,-4,-2,0.5,m,x.csv\n";    // 9: not in the catalog
  CsvTable t = parse_csv(text, "p.csv");
  std::vector<std::string> rejected;
  std::vector<int> lines_kept;
  const auto kept = parameters_from_table(t, &rejected, &lines_kept);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].name, param::l1_hit_latency);
  EXPECT_EQ(lines_kept, (std::vector<int>{2}));
  ASSERT_EQ(rejected.size(), 7u);
  const char* expected[] = {"p.csv:3: l1_ways: value -5 <= 0",
                            "p.csv:4: l2_size: value 5e+07 outside",
                            "p.csv:5: dram_latency: high 500 < low 700",
                            "p.csv:6: shared_bank_count: confidence 1.5",
                            "p.csv:7: l1_size: value nan",
                            "p.csv:8: l1_hit_latency: given again",
                            "p.csv:9: someones_difference: not a parameter"};
  for (size_t i = 0; i < rejected.size(); ++i)
    EXPECT_EQ(rejected[i].rfind(expected[i], 0), 0u) << rejected[i];
  EXPECT_THROW(parameters_from_table(t), CsvError);  // strict without a list of rejects
}

TEST(InputChecks, EveryCommittedParametersRowReads) {
  const auto dirs =
      committed_run_dirs({RunKind::full, RunKind::quick, RunKind::filtered, RunKind::repeat});
  for (const auto& dir : dirs) EXPECT_NO_THROW(read_parameters(dir + "/parameters.csv")) << dir;
  EXPECT_GE(dirs.size(), 10u);
}

TEST(InputChecks, ADuplicatedColumnIsRefusedWithItsLine) {
  try {
    parse_csv("# gpu=x\nparameter,value,unit,value\na,1,b,2\n", "d.csv");
    FAIL();
  } catch (const CsvError& e) {
    EXPECT_EQ(std::string(e.what()), "d.csv:2: column 'value' appears twice (columns 2 and 4)");
  }
  fs::path rd = copy_run("gpuprobe_rel_dup_column");
  replace_line(rd / "parameters.csv", "parameter,value,",
               "parameter,value,unit,low,high,confidence,method,value");
  Result r = run("export " + rd.string() + " --json");
  expect_one_line(r, "column 'value' appears twice", "export");
  EXPECT_EQ(r.out, "");
}

TEST(InputChecks, AByteOrderMarkIsReadAsIfAbsent) {
  EXPECT_EQ(parse_csv("\xEF\xBB\xBF# gpu=x\na,b\n1,2\n", "bom.csv").meta_value("gpu"), "x");
  EXPECT_EQ(parse_csv("\xEF\xBB\xBF"
                      "a,b\n1,2\n",
                      "bom.csv")
                .header[0],
            "a");
  fs::path rd = copy_run("gpuprobe_rel_bom");
  for (const auto& e : fs::directory_iterator(rd)) {
    const std::string text = slurp(e.path());
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << "\xEF\xBB\xBF" << text;
  }
  EXPECT_EQ(folder_kind(rd.string()), FolderKind::run);
  Result r = run("analyze " + rd.string());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(slurp(rd / "parameters.csv").find("\ntlb_miss_latency,"), std::string::npos);
}

TEST(InputChecks, FilesOfTwoGpusInOneRunAreRefused) {
  EXPECT_EQ(identity_conflict(
                {{"a.csv", {{"gpu", "X"}, {"sm_count", "132"}}}, {"b.csv", {{"gpu", "X"}}}}),
            "");
  for (const char* key : {"gpu", "compute_capability", "sm_count", "l2_bytes"}) {
    const std::string c = identity_conflict(
        {{"a.csv", {{key, "1"}}}, {"b.csv", {{"x", "y"}}}, {"c.csv", {{key, "2"}}}});
    EXPECT_EQ(c, std::string("a.csv names ") + key + "=1, c.csv " + key +
                     "=2: files of two GPUs in one run");
  }
  fs::path rd = copy_run("gpuprobe_rel_two_gpus");
  replace_line(rd / "tlb.csv", "# gpu=", "# gpu=NVIDIA H200");
  const auto before = snapshot(rd);
  expect_one_line(run("analyze " + rd.string()), "files of two GPUs", "analyze");
  expect_one_line(run("export " + rd.string() + " --json"), "files of two GPUs", "export");
  Result r = run("report " + rd.string());
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("files of two GPUs"), std::string::npos) << r.err;
  EXPECT_EQ(snapshot(rd), before);
}

TEST(InputChecks, FifosDevicesAndLoopsAreRefusedWithoutWaiting) {
  fs::path rd = copy_run("gpuprobe_rel_fifo_in");
  ASSERT_EQ(::mkfifo((rd / "fifo.csv").c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", rd / "zero.csv");
  fs::create_symlink("loop.csv", rd / "loop.csv");
  const std::string bin = kBounded + std::string(GPUPROBE_BINARY);
  // A family file an analyzer needs: a warning; the others are listed as skipped, with why.
  fs::remove(rd / "tlb.csv");
  ASSERT_EQ(::mkfifo((rd / "tlb.csv").c_str(), 0600), 0);
  // Its rows of parameters.csv are then the only record: kept, and the exit says so.
  Result a = run("list > /dev/null; " + bin + " analyze -v " + rd.string());
  EXPECT_EQ(a.code, 1) << a.err;
  EXPECT_NE(a.err.find("tlb.csv: cannot be read, though families.csv records"), std::string::npos)
      << a.err;
  EXPECT_NE(a.err.find("tlb.csv: a FIFO, not a regular file: refused as input"), std::string::npos)
      << a.err;
  const std::string skipped = read_csv((rd / "parameters.csv").string()).meta_value("skipped");
  for (const char* why : {"fifo.csv: a FIFO, not a regular file", "zero.csv: a character device",
                          "loop.csv: cannot open file (a loop of symbolic links)"})
    EXPECT_NE(skipped.find(why), std::string::npos) << why << ": " << skipped;
  Result rep =
      run("list > /dev/null; GNUPLOT=/nonexistent/gnuplot " + bin + " report " + rd.string());
  EXPECT_EQ(rep.code, 1) << rep.err;
  for (const char* f : {"fifo.csv", "zero.csv", "tlb.csv"}) fs::remove(rd / f);
  expect_one_line(run("list > /dev/null; " + bin + " export " + rd.string() + " --json"),
                  "loop.csv", "export");
}

TEST(InputChecks, ExportOfAnEmptyParametersCsvSaysWhy) {
  fs::path rd = copy_run("gpuprobe_rel_export_empty");
  std::ofstream(rd / "parameters.csv", std::ios::trunc);
  Result r = run("export " + rd.string() + " --json");
  expect_one_line(r, "parameters.csv: no header row", "export");
  EXPECT_EQ(r.out, "");
}

TEST(InputChecks, AFileLargerThanAnyRunWritesIsNotRead) {
  fs::path dir = empty_dir("gpuprobe_rel_huge");
  const fs::path f = dir / "huge.csv";
  std::ofstream(f) << "a\n";
  fs::resize_file(f, static_cast<uintmax_t>(kMaxInputBytes) + 1);  // sparse: no disk used
  try {
    read_csv(f.string());
    FAIL();
  } catch (const CsvError& e) {
    EXPECT_NE(std::string(e.what()).find("more than any run writes"), std::string::npos)
        << e.what();
  }
  fs::remove(f);
}

// ---- Analyzers: rows in, never silence out ----------------------------------------------------

TEST(SilentAnalyzers, AllZeroOrNegativeInputIsSaid) {
  int checked = 0;
  for (const auto& [family, fn] : analyzers()) {
    const fs::path seed =
        fs::path(GPUPROBE_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / ("seed_" + family + ".csv");
    const fs::path recorded = fs::path(GPUPROBE_TEST_DATA) / ("h100_" + family + ".csv");
    const fs::path file = fs::exists(seed) ? seed : recorded;
    if (!fs::exists(file)) continue;
    Metadata meta;
    const auto obs = read_observations(file.string(), &meta);
    for (double factor : {0.0, -1.0}) {
      std::vector<Observation> scaled;
      for (const auto& o : obs) scaled.push_back(o.scaled(factor, o.unit));
      const Analysis a = analyze_checked(family, scaled, meta);
      EXPECT_TRUE(!a.params.empty() || !a.warnings.empty() || !a.error.empty())
          << family << " x" << factor << ": " << scaled.size() << " rows in, not a word out";
      ++checked;
    }
  }
  EXPECT_GE(checked, 40);
}

// ---- Run-level parameters --------------------------------------------------------------------

TEST(GpuRun, SuiteWallTimeIsOneReadingInsideItsInterval) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU on this machine: the run needs one";
  Result r;
  const fs::path dir = quick_run("^divergence/", "gpuprobe_rel_wall", &r);
  ASSERT_FALSE(dir.empty()) << r.err;
  bool found = false;
  for (const auto& p : read_parameters((dir / "parameters.csv").string()))
    if (p.name == param::suite_wall_time) {
      found = true;
      EXPECT_EQ(p.low, p.value);
      EXPECT_EQ(p.high, p.value);
      EXPECT_EQ(read_csv((dir / "families.csv").string()).meta_value("suite_wall_time_s"),
                format_number(p.value));
    }
  EXPECT_TRUE(found);
}
