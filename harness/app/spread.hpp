#pragma once
// Repeatability on record: the spread of each parameter over N runs of one GPU model
// (scripts/repeat.sh makes them), against the interval each run gives it, by two rules. A
// parameter whose values move between runs by more than its own interval (the median of the
// runs' high - low) is flagged; stricter, a parameter repeats only when every run's value lies
// inside every other run's interval. Runs are grouped by card (base/card.hpp): over runs of
// several cards each card's own runs are scored beside all of them together.
//   gpuprobe spread RUN_DIR RUN_DIR... [--out FILE] [--markdown FILE]
//   gpuprobe spread --fit RUN_DIR... --check RUN_DIR... [--out FILE] [--markdown FILE]
// The second form scores a check card's runs beside a fit card's (each set one card, as the
// user says, where the runs do not record it). Writes FILE (default: spread.csv beside the
// runs, in the folder holding the first one).
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
  bool strict_excludes = false;  // some run's value lies outside another run's [low, high] (and the
                                 // same conditions as `exceeds` besides the interval)
};

// One row per parameter any run gave, in name order.
std::vector<SpreadRow> spread_of(const std::vector<std::vector<Parameter>>& runs);

// The subcommand: its arguments after "spread"; returns the exit status. Throws UsageError on
// bad arguments and std::runtime_error on a run it cannot read.
int spread_main(const std::vector<std::string>& args);

}  // namespace gpuprobe
