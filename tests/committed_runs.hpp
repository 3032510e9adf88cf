#pragma once
// The newest committed full run of a GPU (results/<slug>/<run-id>/ with parameters.csv and
// latency.csv), so that tests follow the runs the project commits; "" when there is none.
#include <filesystem>
#include <string>

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

}  // namespace gpuprobe
