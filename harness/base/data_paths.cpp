#include "base/data_paths.hpp"

#include <filesystem>
#include <fstream>
#include <vector>

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

// The file CMake writes into the build directory, naming the source tree (one line).
constexpr const char* kSourceDirFile = "gpuprobe-source-dir";

std::string source_dir_named_in(const fs::path& dir) {
  std::ifstream f(dir / kSourceDirFile);
  std::string line;
  std::getline(f, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

}  // namespace

DataPaths find_data_paths(const std::string& exe_dir_in) {
  std::error_code ec;
  fs::path exe_dir = exe_dir_in;
  if (exe_dir.empty()) exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  // (root, reference relative to it), in order of preference.
  std::vector<std::pair<fs::path, fs::path>> roots = {
      {exe_dir, "reference/documented_figures.csv"},
      {exe_dir / ".." / "share" / "gpuprobe", "reference/documented_figures.csv"}};
  // The build directory is the executable's (gpuprobe) or its parent (build/tests/...).
  for (const fs::path& d : {exe_dir, exe_dir.parent_path()}) {
    std::string src = source_dir_named_in(d);
    if (!src.empty()) roots.push_back({src, "results/reference/documented_figures.csv"});
  }
  for (const auto& [root, ref] : roots) {
    if (!fs::exists(root / "plots" / "style.gp", ec)) continue;
    DataPaths p;
    p.plots_dir = (root / "plots").lexically_normal().string();
    if (fs::exists(root / ref, ec)) p.reference = (root / ref).lexically_normal().string();
    return p;
  }
  return {};
}

std::string default_reference_path() { return find_data_paths().reference; }

}  // namespace gpuprobe
