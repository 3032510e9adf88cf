#pragma once
// `gpuprobe analyze RUN_DIR`: the parameters inferred again from a run's observation files
// alone, with every file it read, skipped or could not read accounted for.
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "app/cli.hpp"
#include "base/csv.hpp"
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

// One *.csv file of a run folder: its text, or why it could not be read.
struct RunFile {
  std::string name;  // "latency.csv"
  std::string text;
  std::string error;  // "" when read
};
// The *.csv files of `dir`, by name; those that are not regular files (FIFOs, devices, links
// to them or in a loop) are refused unread, with why.
std::vector<RunFile> read_run_files(const std::string& dir);

// The rows of an observations file (`t`, read into `obs`) that no analysis may use, taken out
// of `obs`: a row given again (the same probe, swept parameters and unit) and one whose p05
// exceeds its p95. "" when there is none, else one line naming the file, the count and the
// first line ("x.csv:12: 3 of 40 observation rows not used (a row given again, or p05 >
// p95)").
std::string drop_unusable_rows(const CsvTable& t, std::vector<Observation>& obs);

// The faults of a parsed families.csv, one line each ("file:line: column 'wall_time_s' is
// '-1', not a number >= 0"): a row without its family, or a measured column (every one but
// family, status, message, throttle_reasons) that is neither empty nor a finite number >= 0
// (observations: a whole one). A row with a fault is not to be trusted in any column.
std::vector<std::string> families_faults(const CsvTable& families);
// The rows of families.csv without a fault, by index into families.rows.
std::vector<size_t> sound_family_rows(const CsvTable& families);

// The first header of a run's files that no GPU can have, or "": sm_count, l2_bytes,
// shared_per_sm_bytes, global_mem_bytes and sm_clock_mhz, where present, each a finite number
// > 0 (sm_count a whole one, at most 1e5). "tlb.csv: # l2_bytes=-1: not a size any
// GPU has".
std::string metadata_fault(const std::vector<std::pair<std::string, Metadata>>& files);

// One family's rows as its file holds them (`t` names the file and the lines), analysed the one
// way `run`, `analyze` and `report` all take: the rows no analysis may use dropped and said
// (drop_unusable_rows), the family's analyzer run and checked (analyze_checked), and each
// parameter inferred from part of the rows saying so. Warnings and the error name the file.
Analysis analyze_family_rows(const CsvTable& t, const std::string& family,
                             std::vector<Observation> obs);
// The same for the text of a family file as written: `gpuprobe run` analyses what it wrote,
// read back as `analyze` reads it, so that its parameters.csv is what `analyze` infers again.
// A text that does not parse is the error.
Analysis analyze_family_text(const std::string& path, const std::string& text,
                             const std::string& family);

struct AnalyzeOptions {
  // parameters.csv is this command's own standard output, emptied by the shell before it could
  // be read (`analyze --stdout RUN > RUN/parameters.csv`): its run-level rows are recovered
  // from families.csv where the run recorded them there, and each one that cannot be is an
  // error.
  bool parameters_emptied = false;
  // A family that families.csv lists `ok` with N observations, whose file is missing, cannot
  // be read or holds fewer: its rows of parameters.csv are kept and that is an error (the
  // rows are by then the only record of the measurement); with this, they are dropped (what
  // the file still gives is used) and that is a warning.
  bool drop_missing = false;
};

// The analysis of a run's files (`dir` names them in messages): every family file analysed
// again, the run-level parameters (sm_clock_measured, suite_wall_time: no observations file
// gives them) kept from parameters.csv, or, when it is missing, recovered from the metadata
// of families.csv (to 0.1 MHz; the wall time where the run recorded it). A broken family file
// is a warning and is listed as skipped; a bad row of parameters.csv is a warning and is not
// used. Throws std::runtime_error, one line, where writing the result would lose what the run
// holds: a parameters.csv that cannot be read (empty, malformed, not a regular file), a
// run-level row of it that cannot be read nor recovered, files that name different GPUs.
RunAnalysis analyze_run_files(const std::string& dir, const std::vector<RunFile>& files,
                              const AnalyzeOptions& opt = {});
// The same for a run folder; throws std::runtime_error when `dir` is not one (missing, empty
// or foreign).
RunAnalysis analyze_run_dir(const std::string& dir, const AnalyzeOptions& opt = {});

// The parameters.csv text of an analysis.
std::string format_run_analysis(const RunAnalysis& a);

// Prints `warnings` then `errors` on stderr under `prefix`: the warnings collapsed to one line
// with their count unless `verbose`, the errors last, one line each, so that an error is
// never buried.
void print_messages(const std::string& prefix, const std::vector<std::string>& warnings,
                    const std::vector<std::string>& errors, bool verbose,
                    const std::string& all_listed = "-v lists them all");

// `gpuprobe analyze RUN_DIR [--stdout] [-v]`: writes RUN_DIR/parameters.csv atomically (or
// prints it) and a summary; exit 1, nothing written, when the folder is not a run or its
// files would be lost (analyze_run_files); exit 1 when an analyzer failed or standard output
// could not be written. Standard output redirected into the run's own parameters.csv: see
// AnalyzeOptions (emptied by `>`); appended to by `>>`, refused.
int analyze_main(const Options& opt);

}  // namespace gpuprobe
