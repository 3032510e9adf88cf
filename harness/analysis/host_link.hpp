#pragma once
// The host link: copies between host and device memory by the copy engines (cudaMemcpyAsync)
// and by SM kernels on mapped host memory, over transfer sizes, and the latency of one load
// from mapped host memory.
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe {

namespace host_link {

// Transfer sizes in bytes: 4 KiB to 1 GiB in steps of 4 (to 64 MiB with --quick).
std::vector<long long> transfer_sizes(bool quick);

// The bandwidth a link settles at: the median of the points within kPlateauFraction of the
// best one (small transfers pay a fixed launch cost and never reach it).
struct Plateau {
  double value = 0, low = 0, high = 0;  // GB/s: median on the plateau, lowest from its first size
                                        // on (larger copies may fall off it), highest
  int points = 0;
  long long first_size = 0;  // smallest transfer on the plateau
  bool at_largest = false;   // one point on it, the largest transfer measured: may still rise
  double confidence = 0;
};
constexpr double kPlateauFraction = 0.9;  // within 10 %: run-to-run noise of a PCIe/C2C link
bool plateau(const std::vector<Observation>& rows, Plateau* out);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"host_link", "host_link.gp"};

}  // namespace host_link

// h2d/d2h/bidir_bandwidth_pinned, h2d/d2h_bandwidth_pageable, h2d/d2h_bandwidth_sm (GB/s),
// host_mapped_latency (ns).
std::vector<Parameter> analyze_host_link(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace gpuprobe
