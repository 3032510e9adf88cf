#pragma once
// `gpuprobe compare RUN_DIR RUN_DIR... [--out DIR]`: the figures of several runs with one
// curve per GPU, and their inferred parameters side by side with ratios and the documented
// Kepler, Maxwell and Volta figures (parameters.csv and compare.md). The default output is
// results/compare/<slug>_vs_<slug>/. Works from the CSV files alone.
#include <string>
#include <vector>

namespace gpuprobe {

int compare_main(const std::vector<std::string>& args);

}  // namespace gpuprobe
