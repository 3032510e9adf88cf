#pragma once
// Bandwidth: the peak bandwidth of each memory level (the bandwidth family).
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::bandwidth {

// dram_read_bandwidth, dram_write_bandwidth, dram_copy_bandwidth, l2_read_bandwidth (GB/s),
// l1_bandwidth_per_sm (B/clk/SM), each the best configuration measured; the DRAM ones quote
// their fraction of the theoretical peak (row dram_theoretical) in the method.
std::vector<Parameter> analyze_bandwidth(const std::vector<Observation>& obs, const Metadata& meta);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"bandwidth", "bandwidth.gp"};

}  // namespace gpuprobe::bandwidth
