#pragma once
// `gpuprobe anchor RUN_DIR --nccl-tests LOG...`: a run's collective figures beside an anchor's
// on the same machine: nccl-tests' own output (its stdout, the out-of-place columns), or another
// run's (one process for all GPUs against one process per GPU), as the markdown table that
// docs/node.md keeps. Reads files only (no GPU).
#include <string>
#include <vector>

#include "base/observation.hpp"

namespace gpuprobe {

// One size of one collective as a source reports it.
struct CollectiveRow {
  std::string collective;  // the probe name (collectives::kAllReduceProbe)
  double bytes = 0;        // S: nccl-tests' "size" column, the run's `bytes`
  int ranks = 0;
  std::string mode;                          // the run's `mode`; "" for nccl-tests
  double time_us = 0, algbw = 0, busbw = 0;  // out of place; GB/s
};

// The rows of nccl-tests' stdout (one test or several concatenated): the collective from its
// "# Collective test starting: <name>_perf" line (else `fallback`, the log's file name), the
// ranks from the "#  Rank" lines of its device list; its 0 B rows (a rank's share rounded to
// nothing, which the run leaves out too) are left out. Throws std::runtime_error naming the line
// where a row does not parse or no collective is named.
std::vector<CollectiveRow> parse_nccl_tests(const std::string& text,
                                            const std::string& fallback = "");
// A run's rows (collectives.csv): the median time, algbw and busbw computed from it.
std::vector<CollectiveRow> collective_rows(const std::vector<Observation>& obs);

struct AnchorSource {
  std::string label;  // a column heading: "gpuprobe", "nccl-tests"
  std::vector<CollectiveRow> rows;
};
// The markdown table: for each collective of `run` at `ranks` ranks, its largest size (busbw)
// and its smallest (time), or every size with `all_sizes`; each source's busbw and time, and
// each other's busbw and time against the run's, marked where they lie within 5 %.
std::string anchor_table(const AnchorSource& run, const std::vector<AnchorSource>& others,
                         int ranks, bool all_sizes);

int anchor_main(const std::vector<std::string>& args);

}  // namespace gpuprobe
