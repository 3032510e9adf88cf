#pragma once
// Command line of the one gpuprobe binary, parsed with CLI11 (app/cli_parse.hpp). Parsing is
// pure so that every bad input is tested without a GPU; each mistake is one line of text in a
// UsageError.
#include <stdexcept>
#include <string>
#include <vector>

namespace gpuprobe {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  std::string command;  // run, list, info, analyze, report, compare, export, catalog, help
  std::string help;     // help: the text asked for (overview, a command's, --version)
  bool quick = false;
  std::string filter;               // regex over "family/probe"; empty selects all
  std::string out = "results";      // root of run directories
  int device = 0;
  std::string reference;            // documented figures CSV; empty: the default
  std::string benchmark_out;        // extra copy of the Google Benchmark JSON
  std::string json_nvbandwidth;     // run/analyze: host-link and P2P results as nvbandwidth's JSON
  bool ranks_from_env = false;      // run: one rank of a job, one process per GPU (collectives)
  std::string nccl_id_file;         // run --ranks-from-env: where rank 0 leaves NCCL's unique id
  std::vector<std::string> benchmark_flags;  // --benchmark_* passed to Google Benchmark
  std::vector<std::string> positional;       // run directories of analyze/report/compare
  bool to_stdout = false;           // analyze: print parameters.csv instead of writing it
  bool verbose = false;             // analyze: every warning, not only their count
  bool drop_missing = false;        // analyze: drop the rows of a family whose file is lost
  std::vector<std::string> rest;    // report/compare/export/catalog: their own flags
};

// The command and its options (CLI11); report, compare, export and anchor keep their own
// arguments in `rest`, parsed by their *_main. Throws UsageError with one line.
Options parse_command_line(const std::vector<std::string>& args);

// For `run`: throws UsageError unless --out can hold run folders and --benchmark_out can be
// written, and neither it nor --json-nvbandwidth names a file of a run's measurements
// (check_output_path), so that a mistake there is found before any measurement, not after
// hours of it. Creates nothing.
void validate_outputs(const Options& o);

// Standard output flushed and checked (a full disk, a closed pipe): `code` when all of it was
// written, else 1 after one line "<prefix>: cannot write standard output: <why>" on stderr.
// Every command that prints its result ends with it.
int checked_stdout(const std::string& prefix, int code);

// True when `name` ("family/probe") is selected by `filter` (regex search; empty: all).
// Throws UsageError for a malformed regex.
bool filter_matches(const std::string& filter, const std::string& name);

}  // namespace gpuprobe
