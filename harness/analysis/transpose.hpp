#pragma once
// Transpose through shared memory: the probes' names (microbench/transpose.cu) and the analyzer
// of the transpose family (transpose_padding_speedup_<type>).
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::transpose {

constexpr const char* kTranspose = "transpose";             // us per kernel
constexpr const char* kPaddingSpeedup = "padding_speedup";  // unpadded time / padded time

std::vector<Parameter> analyze_transpose(const std::vector<Observation>& obs, const Metadata& meta);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{
    "transpose", "", "",
    "analysis-only: two padding speedups (float, double), read from the table; a figure of "
    "two bars would add nothing"};

}  // namespace gpuprobe::transpose
