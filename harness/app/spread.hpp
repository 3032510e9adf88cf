#pragma once
// Repeatability on record: the spread of each parameter over N runs of one GPU
// (scripts/repeat.sh makes them), against the interval each run gives it. A parameter whose
// values move between runs by more than its own interval (the median of the runs' high - low)
// is flagged: its interval claims a precision the runs do not repeat.
//   gpuprobe spread RUN_DIR RUN_DIR... [--out FILE]
// writes FILE (default: spread.csv beside the runs, in the folder holding the first one).
#include <string>
#include <vector>

#include "base/observation.hpp"

namespace gpuprobe {

struct SpreadRow {
  std::string parameter, unit;
  int n = 0;  // runs that gave a finite value
  double median = 0, min = 0, max = 0;
  double relative_spread = 0;  // (max - min) / |median|; 0 when the median is 0
  double median_interval = 0;  // median over the runs of high - low
  bool exceeds = false;        // max - min > median_interval (and > 0.1 % of the median), two runs or
                               // more, of a parameter docs/parameters.md compares (a tolerance)
};

// One row per parameter any run gave, in name order.
std::vector<SpreadRow> spread_of(const std::vector<std::vector<Parameter>>& runs);

// The subcommand: its arguments after "spread"; returns the exit status. Throws UsageError on
// bad arguments and std::runtime_error on a run it cannot read.
int spread_main(const std::vector<std::string>& args);

}  // namespace gpuprobe
