#pragma once
// `gpuprobe run --ranks-from-env`: this process is one rank of a job of one process per GPU
// (base/ranks.hpp reads where it stands). Rank 0 runs the suite as usual, the collectives family
// alone, and writes the run; the other ranks write nothing: they take part in every collective
// rank 0 times (microbench/collectives.cu) and end.
#include <optional>

#include "app/cli.hpp"

namespace gpuprobe {

// Reads the rank from the environment and sets it for the collectives family. Returns nothing
// for rank 0 (the run goes on); the exit code of any other rank once it has followed rank 0.
// Throws UsageError for a bad environment or a filter that selects another family.
std::optional<int> join_as_rank(const Options& opt);

}  // namespace gpuprobe
