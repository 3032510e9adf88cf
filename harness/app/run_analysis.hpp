#pragma once
// `gpuprobe analyze RUN_DIR`: the parameters inferred again from a run's observation files
// alone, with every file it read, skipped or could not read accounted for.
#include <string>
#include <vector>

#include "app/cli.hpp"
#include "base/observation.hpp"

namespace gpuprobe {

struct RunAnalysis {
  Metadata meta;                      // the run's, plus analyzed=, skipped=, warning= lines
  std::vector<Parameter> params;      // re-inferred, plus the run-level ones kept (families.csv)
  std::vector<std::string> analyzed;  // families whose analyzer ran
  std::vector<std::string> skipped;   // "file (why)" for each family file not analyzed
  std::vector<std::string> warnings;  // each names its file, and line where there is one
  std::vector<std::string> errors;    // an analyzer that failed
};

// Throws std::runtime_error when `dir` is not a run folder (missing, empty or foreign).
// A broken file is a warning and is listed as skipped; the rest of the run is analyzed.
RunAnalysis analyze_run_dir(const std::string& dir);

// The parameters.csv text of an analysis.
std::string format_run_analysis(const RunAnalysis& a);

// Prints `warnings` then `errors` on stderr under `prefix`: the warnings collapsed to one line
// with their count unless `verbose`, the errors last, one line each, so that an error is
// never buried.
void print_messages(const std::string& prefix, const std::vector<std::string>& warnings,
                    const std::vector<std::string>& errors, bool verbose,
                    const std::string& all_listed = "-v lists them all");

// `gpuprobe analyze RUN_DIR [--stdout] [-v]`: writes RUN_DIR/parameters.csv atomically (or
// prints it) and a summary; exit 1 when an analyzer failed or the folder is not a run.
int analyze_main(const Options& opt);

}  // namespace gpuprobe
