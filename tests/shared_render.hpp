#pragma once
// The report of the committed full H100 run (kH100Run) (figures, report.md, methods.md), rendered
// from a copy of its CSV files: 10-20 s of gnuplot, which several tests read. ctest runs every
// test in a process of its own, so a suite-level setup would render it once per test; instead
// the fixture test SharedRender.H100Report renders it once per ctest invocation into
// $GPUPROBE_SHARED_RENDER (tests/CMakeLists.txt: FIXTURES_SETUP), and the tests that read it
// require that fixture. A test binary run by hand, without the variable, renders into a
// temporary folder of its own, so that every test still runs (and can fail) alone.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "committed_runs.hpp"
#include "app/report.hpp"

namespace gpuprobe {

// The folder a fixture test renders into: $GPUPROBE_SHARED_RENDER, "" when not under ctest.
inline std::string shared_render_root() {
  const char* v = std::getenv("GPUPROBE_SHARED_RENDER");
  return v ? v : "";
}

// Copies the CSV files of `run` into `root`/run and reports it there; the rendered folder, or
// "" (with `why`) when the report failed. A marker file says the rendering completed.
inline std::string render_h100_copy(const std::filesystem::path& root, std::string* why) {
  namespace fs = std::filesystem;
  const std::string run = committed_run(kH100Run);
  if (!fs::exists(fs::path(run) / "parameters.csv")) {
    *why = "the committed run results/" + std::string(kH100Run) + " is missing";
    return "";
  }
  std::error_code ec;
  fs::remove_all(root, ec);
  const fs::path dir = root / "run";
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(run))
    if (e.path().extension() == ".csv") fs::copy_file(e.path(), dir / e.path().filename());
  if (report_main({dir.string()}) != 0) {
    *why = "gpuprobe report of a copy of " + run + " failed";
    return "";
  }
  std::ofstream(root / "rendered") << run << "\n";
  return dir.string();
}

// The rendered copy of the H100 run: the fixture's (ctest) or one rendered now into a
// temporary folder (removed at exit); "" with `why` when there is none.
inline std::string shared_h100_render(std::string* why) {
  namespace fs = std::filesystem;
  if (const std::string root = shared_render_root(); !root.empty()) {
    if (fs::exists(fs::path(root) / "rendered")) return (fs::path(root) / "run").string();
    *why = "the fixture test SharedRender.H100Report left no rendering in " + root;
    return "";
  }
  struct Temp {
    fs::path path;
    ~Temp() {
      std::error_code ec;
      if (!path.empty()) fs::remove_all(path, ec);
    }
  };
  static Temp temp;  // one rendering per process
  static std::string dir, failure;
  if (temp.path.empty()) {
    // Not "gpuprobe-render-": a report removes such folders that no report holds (a killed
    // one's), and would remove this one under the run it renders.
    std::string tmpl = (fs::temp_directory_path() / "gpuprobe-test-render-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      *why = "no temporary folder";
      return "";
    }
    temp.path = tmpl;
    dir = render_h100_copy(temp.path / "render", &failure);
  }
  *why = failure;
  return dir;
}

}  // namespace gpuprobe
