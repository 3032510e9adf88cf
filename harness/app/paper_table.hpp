#pragma once
// `gpuprobe compare --table markdown|latex|csv RUN...`: the parameters a paper tabulates
// (after Jia et al. 2018, Table 3.1) for each measured GPU, beside the documented Kepler,
// Maxwell and Volta figures, whose sources become footnotes. A documented figure measured by
// another method than the run's is marked, not compared.
#include <string>
#include <vector>

#include "app/report.hpp"

namespace gpuprobe {

// Measured values below this confidence are marked in the table.
constexpr double kPaperTableMinConfidence = 0.5;

// `format` is "markdown", "latex" or "csv"; throws std::invalid_argument otherwise.
std::string paper_table(const std::vector<RunData>& runs, const std::vector<std::string>& labels,
                        const Reference& ref, const std::string& format);

}  // namespace gpuprobe
