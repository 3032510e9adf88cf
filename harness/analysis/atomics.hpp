#pragma once
// Atomics: the probes' names and kernels (microbench/atomics.cu) and the analyzer of the
// atomics family (atomic_<space>_latency_*, atomic_<space>_throughput_per_sm).
#include <string>
#include <vector>

#include "analysis/common/util.hpp"
#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::atomics {

using analysis::kWarpLanes;

constexpr const char* kAtomicLatency = "latency";        // cycles per atomic, one warp
constexpr const char* kAtomicThroughput = "throughput";  // atomics/clk/SM
constexpr const char* kPerClockPerSm = "atomics/clk/SM";

// Atomics per loop trip of the timed loops, and the kernels' names as the code checks
// (base/code_check.hpp) know them.
constexpr int kAtomicsPerTrip = 8;                     // in chain_kernel and stream_kernel
std::string chain_kernel_name(bool shared, bool cas);  // "atomics::chain_kernel<true, false>"
std::string stream_kernel_name(bool shared, bool cas);

std::vector<Parameter> analyze_atomics(const std::vector<Observation>& obs, const Metadata& meta);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"atomics", "atomics.gp"};

}  // namespace gpuprobe::atomics
