#pragma once
// Warp divergence: a warp whose lanes take P distinct paths (lane % P) of equal work, against
// the model that every path is paid in full, t(P) = P * t(1).
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::divergence {

constexpr int kMaxPaths = 32;
constexpr int kStepsPerPath = 64;  // FMAs on each path per loop trip

std::vector<int> path_counts(bool quick);
std::string kernel_name(int ilp);

struct Fit {
  double cost_per_path = 0;  // slope of t(P)/t(1) against P - 1: 1 = each path paid in full
  double low = 0, high = 0;  // smallest and largest (t(P)/t(1) - 1)/(P - 1) over the sweep
  double slowdown_max = 0;   // t(P_max)/t(1)
  int paths_max = 0;
};

// paths[i] distinct paths took cycles[i]; needs P = 1 and at least one P > 1.
bool fit_paths(const std::vector<int>& paths, const std::vector<double>& cycles, Fit* out);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"divergence", "divergence.gp"};

// The names of divergence.csv, each written by the driver and read by the analyzer and tests.
constexpr const char* kFullSmProbe = "full_sm";    // every SM full of diverging warps
constexpr const char* kOneWarpProbe = "one_warp";  // one diverging warp alone
constexpr const char* kPathsColumn = "paths";      // distinct paths per warp

// divergence_cost_per_path (whole SM busy) and divergence_cost_per_path_one_warp (one warp
// alone, where a scheduler could hide one path's latency behind another's), and
// divergence_slowdown_<P>_paths for the largest P.
std::vector<Parameter> analyze_divergence(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace gpuprobe::divergence
