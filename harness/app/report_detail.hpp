#pragma once
// What the report's own files share (run_data.cpp, report_figures.cpp, report_markdown.cpp,
// report.cpp); other code uses app/report.hpp.
#include <filesystem>
#include <string>

#include "base/csv.hpp"
#include "app/report.hpp"

namespace gpuprobe {

// Reads and parses one CSV file; records the error and returns false when it cannot. A
// header without rows is worth a warning for observations, not for a list that is normally
// empty (invalid.csv).
bool read_table(const std::string& path, CsvTable* t, Diagnostics& diag, bool rows_expected = true);

// A CSV's text as the figure scripts read it: every old name (the catalog's aliases) in its
// column `column` as today's, so that a script asking by today's name finds a committed run's
// rows ("parameter") and the reference's ("quantity"). A line without an old name is kept as
// written.
std::string with_todays_names(const std::string& text, const std::string& column);

// report.md's power sections (report_energy.cpp): the families that ran throttled, and the
// energy family's held-out check; "" when the run has neither.
std::string power_markdown(const RunData& run, const CsvTable& families, Diagnostics& diag);

std::string trim_copy(const std::string& s);  // without leading and trailing spaces
std::string md_escape(const std::string& s);  // a markdown table cell: '|' escaped, one line

// report.md's Node section (report_node.cpp): the GPUs and their links from the run's node_*
// metadata, the p2p figures against the links' physical rate; "" for a run of one GPU that
// predates that metadata.
std::string node_markdown(const RunData& run);

// A temporary directory, unique to this process and call (mkdtemp), that removes itself on
// every way out: return, exception, and a stop signal (the loops look at it and return).
// It holds an exclusive lock (flock) on itself while it lives, so that one left by a killed
// process is told from one in use (remove_stale_staging).
struct Staging {
  std::filesystem::path dir;
  explicit Staging(const std::filesystem::path& parent = std::filesystem::temp_directory_path(),
                   const std::string& prefix = "gpuprobe-render-");
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

 private:
  int lock_fd_ = -1;
};

// Removes the folders `parent`/<prefix>* that no living Staging holds: what a killed process
// left (SIGKILL gives it no chance to clean up).
void remove_stale_staging(const std::filesystem::path& parent, const std::string& prefix);

}  // namespace gpuprobe
