#pragma once
// The newest committed full run of a GPU (results/<slug>/<run-id>/ with parameters.csv and
// latency.csv), so that tests follow the runs the project commits; "" when there is none.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace gpuprobe {

inline std::string newest_full_run(const std::string& gpu_slug) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(GPUPROBE_SOURCE_DIR) / "results" / gpu_slug;
  std::string best;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return best;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (fs::exists(e.path() / "parameters.csv") && fs::exists(e.path() / "latency.csv") &&
        !fs::exists(e.path() / "not_measured.csv") && e.path().string() > best)
      best = e.path().string();  // a quick run (not_measured.csv) is no full run
  return best;
}

// Every committed run, full or quick, of every GPU: results/<gpu-slug>/<run-id>/ holding the
// families.csv a run writes (results/compare/ and results/model-gpus/ hold none), sorted.
inline std::vector<std::string> committed_run_dirs() {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& gpu : fs::directory_iterator(fs::path(GPUPROBE_SOURCE_DIR) / "results", ec))
    for (const auto& run : fs::directory_iterator(gpu.path(), ec))
      if (fs::exists(run.path() / "families.csv")) out.push_back(run.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gpuprobe
