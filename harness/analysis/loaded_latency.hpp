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

}  // namespace gpuprobe::loaded_latency
