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
// Columns of atomics.csv; the global latency chains add kLinesColumn and kLineStrideColumn.
constexpr const char* kSpaceColumn = "space";                   // shared or global
constexpr const char* kOpColumn = "op";                         // add or cas
constexpr const char* kLanesColumn = "lanes";                   // active lanes of each warp
constexpr const char* kAddressesColumn = "addresses";           // distinct words they hit
constexpr const char* kLinesColumn = "lines";                   // lines a global chain steps over
constexpr const char* kLineStrideColumn = "line_stride_bytes";  // bytes between those lines
constexpr const char* kWarpsPerSmColumn = "warps_per_sm";       // the throughput probe's warps

// Atomics per loop trip of the timed loops, and the kernels' names as the code checks
// (base/code_check.hpp) know them.
constexpr int kAtomicsPerTrip = 8;                     // in chain_kernel and stream_kernel
std::string chain_kernel_name(bool shared, bool cas);  // "atomics::chain_kernel<true, false>"
std::string stream_kernel_name(bool shared, bool cas);

// The global latency chain steps over kChainLines lines kChainStrideBytes apart (every lane of a
// step on the same line, as the pattern has it): one word's L2 slice is near the SM or far from
// it (H100: 262 or 478 cycles, by where an allocation landed), many lines average over both.
constexpr int kChainLines = 64;
constexpr int kChainStrideBytes = 4096 + 128;  // a new page and a new line offset each step
static_assert(kChainLines % kAtomicsPerTrip == 0, "a round of the lines is whole trips");

std::vector<Parameter> analyze_atomics(const std::vector<Observation>& obs, const Metadata& meta);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"atomics", "atomics.gp"};

}  // namespace gpuprobe::atomics
