#pragma once
// Where the build wrote the PTX the code checks read: <build>/ptx/sm_<arch>/, one folder per
// architecture (GPUPROBE_PTX_ARCHS). Tests that look at one file read the newest
// architecture's.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace gpuprobe::test {

// Every numbered architecture's folder, by architecture (sm_90a, the wgmma file alone, aside).
inline std::map<int, std::string> ptx_architectures() {
  std::map<int, std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(GPUPROBE_PTX_DIR, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.rfind("sm_", 0) != 0) continue;
    const std::string digits = name.substr(3);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    out[std::stoi(digits)] = entry.path().string();
  }
  return out;
}

// microbench/<source>.cu's PTX for the newest architecture built, or "" when there is none.
inline std::string newest_ptx_path(const std::string& source) {
  auto archs = ptx_architectures();
  if (archs.empty()) return "";
  const std::string path = archs.rbegin()->second + "/" + source + ".ptx";
  return std::filesystem::exists(path) ? path : "";
}

// The text of that PTX, or "" when there is none.
inline std::string newest_ptx_text(const std::string& source) {
  const std::string path = newest_ptx_path(source);
  if (path.empty()) return "";
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace gpuprobe::test
