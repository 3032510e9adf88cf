#pragma once
// The gpuprobe binary run through the shell, as a user runs it, for the tests of its command
// lines (test_cli.cpp, test_reliability.cpp): exit code, stdout and stderr, and writable
// copies of a committed run to run it on.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "committed_runs.hpp"

namespace cli {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out, err;
};

// `args` after the binary's path, through /bin/sh (redirections and pipes allowed); `env`
// goes before the binary: "env GPUPROBE_RANK=0 ..." sets its environment.
inline Result run(const std::string& args, const std::string& env = "") {
  // ctest runs tests in parallel: each test gets its own stderr file.
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path errfile =
      fs::temp_directory_path() /
      (std::string("gpuprobe_cli_") + info->test_suite_name() + "_" + info->name() + ".stderr");
  std::string cmd =
      env + (env.empty() ? "" : " ") + GPUPROBE_BINARY + " " + args + " 2>" + errfile.string();
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

inline int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

inline bool have_gpu() { return run("info").code == 0; }

inline fs::path empty_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// `gpuprobe run --quick --filter FILTER` into a fresh folder `name` (needs a GPU); the run folder
// it made, empty when the run failed (*r says why).
inline fs::path quick_run(const std::string& filter, const std::string& name, Result* r) {
  fs::path out = empty_dir(name);
  *r = run("run --quick --filter '" + filter + "' --out " + out.string());
  fs::path dir;
  for (auto& slug : fs::directory_iterator(out))
    for (auto& rd : fs::directory_iterator(slug.path())) dir = rd.path();
  return r->code == 0 ? dir : fs::path();
}

// A writable copy of the committed filtered H100 run (its CSV files only), as `name`.
inline fs::path copy_run(const std::string& name) {
  fs::path dst = empty_dir(name);
  for (const auto& e : fs::directory_iterator(gpuprobe::committed_run(gpuprobe::kH100FilteredRun)))
    if (e.path().extension() == ".csv") fs::copy_file(e.path(), dst / e.path().filename());
  return dst;
}

// Names in `dir` that start with `prefix`.
inline int count_prefixed(const fs::path& dir, const std::string& prefix) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir))
    n += e.path().filename().string().rfind(prefix, 0) == 0;
  return n;
}

inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void append(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::app) << text;
}

}  // namespace cli
