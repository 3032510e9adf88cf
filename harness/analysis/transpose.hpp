#pragma once
// Transpose through shared memory: the probes' names (microbench/transpose.cu) and the analyzer
// of the transpose family (transpose_padding_speedup_<type>).
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::transpose {

// The names of transpose.csv, written by the driver and read by the analyzer and the tests.
constexpr const char* kTransposeProbe = "transpose";             // us per kernel
constexpr const char* kPaddingSpeedupProbe = "padding_speedup";  // unpadded time / padded time
constexpr const char* kTypeColumn = "type";                      // the element: float or double
constexpr const char* kPaddingColumn = "padding";  // columns of padding per tile row: 0 or 1
constexpr const char* kSideColumn = "n";           // the square matrix's side (elements)

std::vector<Parameter> analyze_transpose(const std::vector<Observation>& obs, const Metadata& meta);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{
    "transpose", "", "",
    "analysis-only: two padding speedups (float, double), read from the table; a figure of "
    "two bars would add nothing"};

}  // namespace gpuprobe::transpose
