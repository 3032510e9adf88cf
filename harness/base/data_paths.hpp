#pragma once
// Where the figure scripts and the documented figures are, found at run time and never from
// a path baked into the binary: beside the executable (a copied tree), in the install tree
// (`cmake --install`: <prefix>/bin/gpuprobe and <prefix>/share/gpuprobe/), or in the source
// tree named by the `gpuprobe-source-dir` file CMake writes into the build directory.
#include <string>

namespace gpuprobe {

struct DataPaths {
  std::string plots_dir;  // holding style.gp and the figure scripts; "" when none was found
  std::string reference;  // documented_figures.csv; "" when none was found
};

// The first candidate root that holds plots/style.gp. `exe_dir` is the directory of the
// running executable (empty: found from /proc/self/exe).
DataPaths find_data_paths(const std::string& exe_dir = "");

// The documented figures' default path ("" when none was found): what `run`, `report` and
// `compare` use without --reference.
std::string default_reference_path();

}  // namespace gpuprobe
