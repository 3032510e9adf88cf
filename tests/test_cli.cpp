// The gpuprobe binary itself: every bad input is one line on stderr and a non-zero exit, and
// nothing half-written is left behind. On a machine with a GPU, a quick run end to end.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "core/observation.hpp"

namespace fs = std::filesystem;

namespace {

struct Result {
  int code = -1;
  std::string out, err;
};

Result run(const std::string& args) {
  // ctest runs tests in parallel: each test gets its own stderr file.
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path errfile = fs::temp_directory_path() /
                     (std::string("gpuprobe_cli_") + info->name() + ".stderr");
  std::string cmd = std::string(GPUPROBE_BINARY) + " " + args + " 2>" + errfile.string();
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  FILE* e = fopen(errfile.c_str(), "r");
  if (e) {
    while ((n = fread(buf.data(), 1, buf.size(), e)) > 0) r.err.append(buf.data(), n);
    fclose(e);
  }
  return r;
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

bool have_gpu() { return run("info").code == 0; }

fs::path empty_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

}  // namespace

TEST(Cli, HelpListsCommands) {
  Result r = run("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* c : {"run", "list", "info", "analyze", "report", "compare"})
    EXPECT_NE(r.out.find(c), std::string::npos) << c;
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

TEST(Cli, AnalyzeOfMissingDirectoryIsOneLine) {
  Result r = run("analyze /nonexistent/run");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(lines(r.err), 1) << r.err;
}

TEST(GpuRun, QuickLatencyRunEndToEnd) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU on this machine: the end-to-end run needs one";
  fs::path out = empty_dir("gpuprobe_cli_run");
  Result r = run("run --quick --filter '^latency/' --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  fs::path run_dir;
  for (auto& slug : fs::directory_iterator(out))
    for (auto& rd : fs::directory_iterator(slug.path())) run_dir = rd.path();
  ASSERT_FALSE(run_dir.empty());
  for (const char* f : {"latency.csv", "parameters.csv", "families.csv", "benchmark.json"})
    EXPECT_TRUE(fs::exists(run_dir / f)) << f;
  auto params = gpuprobe::read_parameters((run_dir / "parameters.csv").string());
  bool clock = false;
  for (const auto& p : params) clock = clock || (p.name == "sm_clock_measured" && p.value > 100);
  EXPECT_TRUE(clock);
  Result a = run("analyze " + run_dir.string());
  EXPECT_EQ(a.code, 0) << a.err;
  EXPECT_NE(a.out.find("l1_hit_latency"), std::string::npos) << a.out;
}
