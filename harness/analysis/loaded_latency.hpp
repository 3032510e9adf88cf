#pragma once
// Latency under load (microbench/loaded_latency.cu): the chase latency against the bandwidth
// the other SMs' streams achieve meanwhile, from idle to saturation.
#include "base/family.hpp"

namespace gpuprobe::loaded_latency {

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{
    "loaded_latency", "loaded_latency.gp",
    "figure-only: the curve of latency against background load is the result; no single "
    "parameter names it"};

// The names of loaded_latency.csv, written by the driver and read by its figure.
constexpr const char* kStreamProbe = "stream";  // GB/s the streaming blocks achieved
constexpr const char* kChaseProbe = "chase";    // the DRAM chase's latency meanwhile
constexpr const char* kStreamingBlocksColumn = "streaming_blocks";
constexpr const char* kDelayColumn = "delay_ns";  // each streaming block's pause
constexpr const char* kLoadColumn = "load_gbs";   // the chase rows' background load

}  // namespace gpuprobe::loaded_latency
