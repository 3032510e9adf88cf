#pragma once
// `gpuprobe report RUN_DIR`: renders every figure of a run with gnuplot and writes
// RUN_DIR/report.md (metadata, inferred parameters beside the documented figures, figures).
// Also the pieces `gpuprobe compare` shares, each in a file of its own: reading a run
// directory without trusting it (run_data.cpp), finding the figure scripts and rendering one
// figure (report_figures.cpp), and the markdown both write (report_markdown.cpp). Works from
// the CSV files alone.
#include <set>
#include <string>
#include <vector>

#include "base/observation.hpp"
#include "app/reference.hpp"

namespace CLI {
class App;
}

namespace gpuprobe {

// Messages about the input: each names the file, and the line where there is one.
struct Diagnostics {
  std::string prefix;  // "gpuprobe report"
  std::vector<std::string> warnings, errors;
  void warn(const std::string& m);   // listed in the report, counted on stderr by print()
  void error(const std::string& m);  // the same, and the command exits non-zero
  // On stderr: the warnings as one line with their count (every one is in `listed_in`), then
  // each error, last, so that none is buried under warnings.
  void print(const std::string& listed_in) const;
};

// Where the figure scripts, the documented figures and gnuplot are. Flags win over the
// environment (GPUPROBE_PLOTS_DIR, GPUPROBE_REFERENCE, GNUPLOT, then GPUPROBE_SOURCE_DIR),
// which wins over what find_data_paths finds beside the executable, in the install tree or
// in the source tree of a build directory.
struct ReportPaths {
  std::string plots_dir;
  std::string reference;
  std::string gnuplot;  // the executable; empty when none was found
  std::string style;    // "paper": vector PDF at column widths (plots/style.gp); "" the default
};
// `plots` and `reference` are the flags' values, "" where not given.
ReportPaths resolve_paths(const std::string& plots = "", const std::string& reference = "");
// The --plots DIR and --reference CSV options of report and compare.
void add_path_options(CLI::App& app, std::string* plots, std::string* reference);

struct FigureScript {
  std::string name;    // "latency" for plots/latency.gp
  std::string path;
  std::string family;  // from the "# family: <family>" first line
  std::string title;   // from "# title: ..." (at most 80 characters), else the name
  std::string read;    // from "# read: ...": one line on what to read in it
};
// Every plots/*.gp that declares its family, sorted by name. Scripts without the header
// (style.gp, ref_value.gp) are helpers and skipped.
std::vector<FigureScript> figure_scripts(const std::string& plots_dir, Diagnostics& diag);

// Families the suite knows: registered probe families and analyzers, and `scripts`' families.
std::set<std::string> known_families(const std::vector<FigureScript>& scripts);

struct RunData {
  std::string dir;
  Metadata meta;      // of parameters.csv, else of the first observations file
  std::string gpu;    // "# gpu=", else the directory's name
  int cc_major = 0, cc_minor = 0;  // "# compute_capability=", 0.0 when absent
  std::string params_path;
  std::vector<Parameter> params;
  std::vector<int> param_lines;  // line of each parameter in params_path; 0 when re-inferred
  std::vector<std::pair<std::string, std::string>> families;  // (family, file) that read cleanly
  std::string file_of(const std::string& family) const;       // "" when absent
  std::string meta_value(const std::string& key) const;
};
// Reads what can be read and says what cannot: a malformed file is an error naming file
// and line, and the rest of the run is still read. Without parameters.csv (an older or an
// interrupted run) the parameters are inferred again from the observations. Throws
// std::runtime_error only when `dir` is not a run folder (see folder_kind()).
RunData load_run(const std::string& dir, const std::set<std::string>& known, Diagnostics& diag);

// Short figure-key labels, one per run, unique, made of [A-Za-z0-9.-] only: "H100", "H200".
std::vector<std::string> run_labels(const std::vector<RunData>& runs);

// Why gnuplot cannot draw at all (a plot of y = x into SVG fails), or "" when it can: tells a
// broken figure toolchain from figures whose data is missing.
std::string gnuplot_fault(const ReportPaths& paths);

// Renders `script` with one curve per file (labels alike) into out_dir/<name>.{svg,png,pdf}.
// Returns the files written (relative names), or an empty list after recording why.
std::vector<std::string> render_figure(const ReportPaths& paths, const FigureScript& script,
                                       const std::vector<std::string>& files,
                                       const std::vector<std::string>& labels,
                                       const std::string& out_dir, Diagnostics& diag);

// The documented figures, or an empty reference after recording why.
Reference load_reference_or_report(const std::string& path, Diagnostics& diag);

// "28 cycles [r261]" for the table (its ratio: versus_documented of app/reference.hpp).
std::string documented_cell(const DocumentedFigure& doc);
// True when `p` and `doc` are in units that compare; records a message naming both files
// and lines otherwise.
bool units_agree(const RunData& run, size_t index, const DocumentedFigure& doc,
                 const std::string& reference_path, Diagnostics& diag);

// "### title", what to read, and the SVG under rel_dir embedded (PNG and PDF lie beside it).
std::string figure_markdown(const FigureScript& s, const std::string& rel_dir);
// "## Messages" listing errors then warnings, paths as relative_text() gives them against
// `dir` (the folder the markdown is written to); "" when there are none.
std::string messages_markdown(const Diagnostics& diag, const std::string& dir);
std::string markdown_table(const std::vector<std::vector<std::string>>& rows);  // row 0: header
std::string human(double value, const std::string& unit);  // human_value without padding

// A row of a summary table: a quantity and the parameters that give it, in order of preference
// ("L2 hit latency": l2_hit_latency, else l2_near_hit_latency).
struct QuantityRow {
  const char* label;
  std::vector<const char*> names;
};
// The first of the row's parameters the run has (its index in `index`), or nullptr.
const Parameter* first_present(const RunData& run, const QuantityRow& row, size_t* index = nullptr);

// The method labels report.md shows (app/reference's method_label) are at most this long.
constexpr size_t kMethodLabelMax = 60;
// The family a parameter belongs to: its evidence file's stem ("latency"), "run" otherwise.
std::string family_of(const Parameter& p);
// `text` with the run directory's prefix removed and any other absolute path shortened to
// ".../<last part>": report.md names no path of the machine that wrote it.
std::string relative_text(const std::string& text, const std::string& run_dir);
// The documented-figure cell: "28 cycles (x1.18) [r12]".
std::string documented_figure_cell(const Parameter& p, const DocumentedFigure& doc);

int report_main(const std::vector<std::string>& args);

}  // namespace gpuprobe
