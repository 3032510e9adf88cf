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
struct Staging {
  std::filesystem::path dir;
  explicit Staging(const std::filesystem::path& parent = std::filesystem::temp_directory_path(),
                   const std::string& prefix = "gpuprobe-render-");
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
};

}  // namespace gpuprobe
