#include "app/report.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <system_error>

#include "base/card.hpp"
#include "base/catalog.hpp"
#include "app/cli.hpp"
#include "app/cli_parse.hpp"
#include "base/csv.hpp"
#include "app/report_detail.hpp"
#include "app/run_analysis.hpp"
#include "base/run_dir.hpp"
#include "base/signals.hpp"
#include "app/summary.hpp"
#include "base/version.hpp"

#include <unistd.h>

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

// A table of the run as markdown, its rows chosen by `keep` (all when empty); "" when no row
// is left.
// Its first `columns` columns, of the rows `keep` accepts.
std::string markdown_of(const CsvTable& t,
                        const std::function<bool(const std::vector<std::string>&)>& keep = {},
                        size_t columns = SIZE_MAX) {
  auto first = [&](const std::vector<std::string>& r) {
    return std::vector<std::string>(r.begin(),
                                    r.begin() + static_cast<long>(std::min(columns, r.size())));
  };
  std::vector<std::vector<std::string>> rows = {first(t.header)};
  for (const auto& r : t.rows)
    if (!keep || keep(r)) rows.push_back(first(r));
  return rows.size() > 1 ? markdown_table(rows) : "";
}

// families.csv's own columns (family, status, wall time, clock, rows, message): report.md shows
// these of a family that did not run as asked; its operating point is in methods.md.
constexpr size_t kFamilyStatusColumns = 6;

// A CSV of the run (invalid.csv, skipped.csv) as a markdown table, or "" when absent or empty.
std::string table_of(const std::string& path, Diagnostics& diag) {
  if (!fs::exists(path)) return "";
  CsvTable t;
  if (!read_table(path, &t, diag, false)) return "";
  return markdown_of(t);
}

// "126.8–126.9" in the value's unit (written once, in the value cell); "-" for a point.
std::string interval_text(const Parameter& p) {
  std::string lo = human(p.low, p.unit), hi = human(p.high, p.unit);
  if (lo == hi) return "-";
  size_t a = lo.rfind(' '), b = hi.rfind(' ');
  if (a != std::string::npos && b != std::string::npos && lo.substr(a) == hi.substr(b)) {
    lo.resize(a);
    if (hi.substr(b + 1) == p.unit) hi.resize(b);  // KiB, MiB stay: the value's scale may differ
  }
  return lo + "–" + hi;
}

// A source up to its first ';' (the others are in methods.md), at most kSourceMax characters.
constexpr size_t kSourceMax = 110;
std::string short_source(const std::string& source) {
  std::string s = source.substr(0, source.find(';'));
  if (s.size() <= kSourceMax) return s;
  size_t cut = s.rfind(' ', kSourceMax - 3);
  return s.substr(0, cut == std::string::npos ? kSourceMax - 3 : cut) + "...";
}

// Documented-figure cells cite their source by number ("[2]"); the sources are listed once.
struct Documenting {
  const RunData& run;
  const Reference& ref;
  Diagnostics& diag;
  std::set<int> cited;               // reference lines
  std::vector<std::string> sources;  // in order of first citation
  std::string cite(const DocumentedFigure& d) {
    cited.insert(d.line);
    // By the short form shown: sources that differ only past it are one entry.
    const std::string shown = short_source(d.source);
    auto it = std::find(sources.begin(), sources.end(), shown);
    if (it == sources.end()) it = sources.insert(sources.end(), shown);
    return "[" + std::to_string(it - sources.begin() + 1) + "]";
  }
  // The figure documented for this GPU; "-" when none.
  std::map<size_t, std::string> mine_cells;  // each warned about once
  std::string this_gpu(size_t index) {
    if (auto it = mine_cells.find(index); it != mine_cells.end()) return it->second;
    const Parameter& p = run.params[index];
    auto mine = documented_for_gpu(ref, p.name, run.gpu, run.cc_major, run.cc_minor);
    std::string& cell = mine_cells[index];
    if (!mine) cell = "-";
    else if (!units_agree(run, index, *mine, fs::path(ref.path).filename().string(), diag))
      cell = describe(*mine) + " " + cite(*mine);
    else cell = documented_figure_cell(p, *mine) + " " + cite(*mine);
    return cell;
  }
  // The figure documented for the representative part of `a`, for methods.md.
  std::string arch(size_t index, const std::string& a) {
    const Parameter& p = run.params[index];
    auto d = documented_for_arch(ref, p.name, a);
    if (!d) return "-";
    cited.insert(d->line);
    std::string line = " [line " + std::to_string(d->line) + "]";
    bool agree = units_agree(run, index, *d, fs::path(ref.path).filename().string(), diag);
    return (agree ? documented_figure_cell(p, *d) : describe(*d)) + line;
  }
};

// The headline: what a reader of a GPU characterisation looks for first.
// A parameter's method label (app/reference), "-" where it has none.
std::string shown_label(const Parameter& p) {
  std::string l = method_label(p);
  return l.empty() ? "-" : l;
}

const std::vector<QuantityRow>& headline_rows() {
  static const std::vector<QuantityRow> rows = {
      {"SM clock (measured)", {param::sm_clock_measured}},
      {"L1 hit latency", {param::l1_hit_latency}},
      {"L1 size", {param::l1_size}},
      {"L2 hit latency", {param::l2_hit_latency, param::l2_near_hit_latency}},
      {"L2 hit latency, far partition", {param::l2_far_hit_latency}},
      {"L2 size", {param::l2_size}},
      {"DRAM latency", {param::dram_latency}},
      {"DRAM read bandwidth", {param::dram_read_bandwidth}},
      {"fp32 FMA rate", {param::fp32_fma_throughput_per_sm}},
      {"fp64 FMA rate", {param::fp64_fma_throughput_per_sm}},
      {"shared memory banks", {param::shared_bank_count}},
      {"shared memory bank width", {param::shared_bank_width}},
      {"bytes in flight per SM for 90 % of DRAM peak", {param::dram_bytes_in_flight_90pct}},
  };
  return rows;
}


}  // namespace

namespace {

// The figures of one run, drawn into its figure folder, or listed with why they were not.
struct DrawnFigures {
  std::string dir;  // relative to the run: figures, or figures/paper
  std::string markdown;
  std::vector<std::vector<std::string>> not_drawn = {{"figure", "why not drawn"}};
  int tried = 0, drawn = 0;  // figures gnuplot was asked for, and drew
};

constexpr const char* kStagingPrefix = ".figures.tmp-";
// The first words of report.md and methods.md: written here, and read back to tell a report
// this program wrote from a user's file of the same name (foreign_report_file).
constexpr const char* kReportTitle = "# gpuprobe report: ";
constexpr const char* kMethodsTitle = "# Methods: ";

// What the old figure folder holds that no figure script draws (the paper figures in
// figures/paper/ beside the web ones, the user's own files), copied into the new one so that
// swapping it in loses nothing; a figure a script draws, not drawn this time, stays out (stale).
void carry_over(const fs::path& old_dir, const fs::path& staged,
                const std::vector<FigureScript>& scripts) {
  std::set<std::string> drawn_by_script;
  for (const auto& s : scripts) drawn_by_script.insert(s.name);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(old_dir, ec)) {
    const fs::path name = e.path().filename();
    if (drawn_by_script.count(e.path().stem().string()) || fs::exists(staged / name) ||
        name.string().rfind(kStagingPrefix, 0) == 0)
      continue;
    fs::copy(e.path(), staged / name,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
}

// Draws every figure of `run`; false when a stop signal cut it short (nothing replaced then).
bool draw_figures(const ReportPaths& paths, const std::vector<FigureScript>& scripts, const RunData& run,
                  const std::string& style, DrawnFigures& fig, Diagnostics& diag) {
  const bool paper = style == "paper";
  fig.dir = paper ? "figures/paper" : "figures";
  ReportPaths fig_paths = paths;
  if (paper) fig_paths.style = "paper";
  std::vector<std::string> labels = run_labels({run});
  // Rendered beside the figure folder (same file system) and swapped in whole: a reader, or a
  // concurrent report, sees the old figures or the new ones, never a mix or stale ones.
  const fs::path fig_path = fs::path(run.dir) / fig.dir;
  // A figure folder the user made read-only is theirs to keep: nothing is swapped in.
  if (fs::is_directory(fig_path) && ::access(fig_path.c_str(), W_OK) != 0) {
    const std::string why = std::generic_category().message(errno);
    diag.error(fig_path.string() + ": not writable (" + why + "): its figures left as they were");
    for (const auto& s : scripts) fig.not_drawn.push_back({s.name, fig.dir + "/ not writable"});
    return true;
  }
  fs::create_directories(fig_path.parent_path());
  remove_stale_staging(fig_path.parent_path(), kStagingPrefix);
  remove_stale_staging(fs::temp_directory_path(), "gpuprobe-render-");  // a killed report's
  std::optional<Staging> staged;
  if (!paths.gnuplot.empty()) staged.emplace(fig_path.parent_path(), kStagingPrefix);
  for (const auto& s : scripts) {
    if (stop_signal()) break;
    std::string csv = run.file_of(s.family);
    if (csv.empty()) {
      fig.not_drawn.push_back({s.name, "no " + s.family + ".csv in this run"});
      continue;
    }
    if (paths.gnuplot.empty()) {
      fig.not_drawn.push_back({s.name, "gnuplot not found"});
      continue;
    }
    Diagnostics fig_diag;
    fig_diag.prefix = diag.prefix;
    ++fig.tried;
    auto written = render_figure(fig_paths, s, {csv}, labels, staged->dir.string(), fig_diag);
    for (const auto& w : fig_diag.warnings) diag.warnings.push_back(w);
    if (written.empty()) {
      // A run without the probe a figure needs (an older run, a filtered one, another
      // vendor) leaves that figure out: a note, not a failure (unless none is drawn).
      std::string why = fig_diag.errors.empty() ? "gnuplot wrote nothing" : fig_diag.errors.front();
      fig.not_drawn.push_back({s.name, relative_text(why, run.dir)});
      diag.warnings.push_back(s.name + " not drawn: " + why);
      continue;
    }
    ++fig.drawn;
    fig.markdown += figure_markdown(s, fig.dir);
  }
  if (stop_signal()) return false;
  // Nothing drawn is no new set of figures: the folder there is, if any, stays as it was.
  if (staged && fig.drawn > 0) {
    fs::permissions(staged->dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                     fs::perms::others_read | fs::perms::others_exec);
    carry_over(fig_path, staged->dir, scripts);
    replace_dir(staged->dir.string(), fig_path.string());
  }
  return true;
}

// families.csv, read (and any fault in it reported) once. A family it accounts for
// (unsupported on this GPU, failed) is no surprise when its CSV is missing; the others are
// named in one warning (a filtered run lacks most of them).
CsvTable read_families(const RunData& run, const std::set<std::string>& known, Diagnostics& diag) {
  CsvTable families;
  const std::string families_csv = (fs::path(run.dir) / "families.csv").string();
  if (fs::exists(families_csv) && read_table(families_csv, &families, diag, false))
    for (const auto& fault : families_faults(families)) diag.warn(fault);
  std::set<std::string> accounted;
  for (const auto& row : families.rows)
    if (!row.empty()) accounted.insert(row[0]);
  std::string missing;
  size_t count = 0;
  for (const auto& family : known)
    if (!fs::exists(fs::path(run.dir) / (family + ".csv")) && !accounted.count(family))
      missing += (count++ ? ", " : "") + family;
  const std::string filter = run.meta_value("filter");
  if (count > 0)
    diag.warn(run.dir + ": " + std::to_string(count) + (count == 1 ? " family" : " families") +
              " missing from this run" + (filter.empty() ? "" : " (--filter " + filter + ")") +
              ": " + missing);
  return families;
}

std::string report_intro(const RunData& run) {
  std::string md = kReportTitle + run.gpu + "\n\n";
  std::string id = run.meta_value("run_id");
  std::string version = run.meta_value("gpuprobe_version");
  md += "Run " + (id.empty() ? std::string("(no run-id)") : "`" + id + "`") + " (gpuprobe " +
        (version.empty() ? "unknown" : version) + "), reported by gpuprobe " + gpuprobe_version() +
        " from its CSV files. Methods in full: [methods.md](methods.md). Documented figures: "
        "(xR) is measured / documented, [N] their source. Metadata at the end.\n\n";
  md += card_text(run.meta) + "\n\n";  // which card, not only which model
  const std::string status = run.meta_value("run_status");
  if (status == "running" || status == "interrupted")
    md += "**Incomplete run** (run_status=" + status +
          (run.meta_value("interrupted").empty() ? "" : ", " + run.meta_value("interrupted")) +
          "): the families after that point were not measured.\n\n";
  return md;
}

// Why a headline quantity has no value: its family was not in this run (a run filtered to
// other families, an older run); a quick run leaves it out on purpose; its family did not run
// as asked (families.csv says how); or the family ran and did not give it.
std::string absent_text(const RunData& run, const CsvTable& families, const QuantityRow& row) {
  bool in_run = false, left_out_by_quick = false;
  std::string status;  // of the first of the row's families that did not run as asked
  for (const char* name : row.names) {
    left_out_by_quick = left_out_by_quick || catalog().not_in_quick.count(name);
    const CatalogEntry* entry = find_parameter(name);
    // The runner's own parameters (family "run") and names the catalog lacks: in every run.
    if (!entry || entry->family == "run") {
      in_run = true;
      continue;
    }
    in_run = in_run || fs::exists(fs::path(run.dir) / (entry->family + ".csv"));
    for (const auto& r : families.rows)
      if (r.size() > 1 && r[0] == entry->family) {
        in_run = true;
        if (status.empty() && r[1] != "ok") status = entry->family + " " + r[1];
      }
  }
  if (!in_run) return "not in this run";
  if (left_out_by_quick && run.meta_value("quick") == "1") return "not measured by a quick run";
  return status.empty() ? "not measured" : "not measured (" + status + ")";
}

std::string headline_markdown(const RunData& run, const CsvTable& families, Documenting& doc) {
  std::vector<std::vector<std::string>> head = {{"quantity", "value", "interval", "conf.", "documented (this GPU)"}};
  for (const auto& h : headline_rows()) {
    size_t index = 0;
    const Parameter* p = first_present(run, h, &index);
    if (!p) {
      head.push_back({h.label, absent_text(run, families, h), "", "", ""});
      continue;
    }
    head.push_back({std::string(h.label) + " (`" + p->name + "`)", human(p->value, p->unit), interval_text(*p),
                    format_printf("%.2f", p->confidence), doc.this_gpu(index)});
  }
  if (std::string mem = run.meta_value("global_mem_bytes"); !mem.empty()) {
    double bytes = std::strtod(mem.c_str(), nullptr);
    head.push_back({"DRAM size (device attribute, not measured)", human(bytes, "bytes"), "", "", ""});
  }
  return "## Headline\n\n" + markdown_table(head) + "\n";
}

// One family's table in report.md, and its methods and older architectures' figures in
// methods.md (appended to `methods`).
std::string family_markdown(const std::string& family, const RunData& run, Documenting& doc,
                            std::string& methods) {
  std::vector<size_t> members;
  for (size_t i = 0; i < run.params.size(); ++i)
    if (family_of(run.params[i]) == family) members.push_back(i);
  // The method and documented columns only where they say something: one label shared by
  // the whole family goes into its heading.
  std::set<std::string> labels_used;
  std::vector<std::string> documented;
  for (size_t i : members) {
    labels_used.insert(shown_label(run.params[i]));
    documented.push_back(doc.this_gpu(i));
  }
  bool any_documented = std::any_of(documented.begin(), documented.end(), [](const std::string& c) { return c != "-"; });
  std::vector<std::vector<std::string>> rows = {{"parameter", "value", "interval", "conf."}};
  if (labels_used.size() > 1) rows[0].push_back("method");
  if (any_documented) rows[0].push_back("documented");
  std::vector<std::vector<std::string>> older = {{"parameter"}};
  for (const auto& rep : representative_gpus()) older[0].push_back(rep.label);
  const std::string evidence = evidence_path(run.params[members.front()].evidence);
  methods += "## " + family + "\n\n";
  for (size_t k = 0; k < members.size(); ++k) {
    const Parameter& p = run.params[members[k]];
    rows.push_back({p.name, human(p.value, p.unit), interval_text(p), format_printf("%.2f", p.confidence)});
    if (labels_used.size() > 1) rows.back().push_back(shown_label(p));
    if (any_documented) rows.back().push_back(documented[k]);
    std::vector<std::string> o = {p.name};
    for (const auto& rep : representative_gpus()) o.push_back(doc.arch(members[k], rep.arch));
    if (std::any_of(o.begin() + 1, o.end(), [](const std::string& c) { return c != "-"; })) older.push_back(o);
    methods += "- `" + p.name + "`: " + md_escape(relative_text(p.method, run.dir)) +
               (p.evidence.empty() ? "" : " (" + p.evidence + ")") + "\n";
  }
  methods += "\n";
  if (older.size() > 1)
    methods += "Documented for the older architectures (measured / documented):\n\n" + markdown_table(older) + "\n";
  std::string md = "### " + family + (labels_used.size() == 1 ? ": " + *labels_used.begin() : std::string()) +
                   "\n\n" + markdown_table(rows) + "\n";
  // The family's figures are in the Figures section, titled: a link here would repeat them.
  md += "<details><summary>Evidence</summary>\n\n[" + evidence + "](" + evidence + ") · [methods](methods.md#" +
        family + ")";
  return md + "\n\n</details>\n\n";
}

// One short table per family, in the order the run lists them.
std::string families_markdown(const RunData& run, Documenting& doc, std::string& methods) {
  std::vector<std::string> family_order;
  for (const auto& p : run.params)
    if (std::find(family_order.begin(), family_order.end(), family_of(p)) == family_order.end())
      family_order.push_back(family_of(p));
  std::string md = "## Parameters by family\n\n";
  if (run.params.empty()) md += "None inferred.\n\n";
  for (const auto& family : family_order) md += family_markdown(family, run, doc, methods);
  return md;
}

// The figures not drawn, one row per reason ("energy, energy_trace | no energy.csv in this run").
std::vector<std::vector<std::string>> by_reason(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::vector<std::string>> out = {rows.front()};
  for (size_t i = 1; i < rows.size(); ++i) {
    auto same =
        std::find_if(out.begin() + 1, out.end(), [&](const auto& r) { return r[1] == rows[i][1]; });
    if (same == out.end()) out.push_back(rows[i]);
    else (*same)[0] += ", " + rows[i][0];
  }
  return out;
}

std::string figures_section(const DrawnFigures& fig, bool have_gnuplot) {
  const std::string none =
      fig.tried > 0 ? "None drawn; the figures of an earlier report, if any, are left in `" +
                          fig.dir + "/`.\n\n"
                    : std::string("None drawn.\n\n");
  std::string md =
      "## Figures\n\n" + (fig.markdown.empty() ? none
                                               : "Each also as PNG and PDF beside its SVG in `" +
                                                     fig.dir + "/`.\n\n" + fig.markdown);
  if (fig.not_drawn.size() > 1) {
    md += "### Figures not drawn\n\n" + markdown_table(by_reason(fig.not_drawn)) + "\n";
    if (!have_gnuplot)
      md += "To draw them: install gnuplot (or set `GNUPLOT` to its path) and run "
            "`gpuprobe report RUN_DIR` again.\n\n";
  }
  return md;
}

// The sources cited, in report.md; each figure by its reference line in methods.md.
std::string sources_markdown(const Documenting& doc, const Reference& ref, std::string& methods) {
  if (doc.sources.empty()) return "";
  std::string md = "## Sources of the documented figures\n\n";
  for (size_t k = 0; k < doc.sources.size(); ++k) md += std::to_string(k + 1) + ". " + md_escape(doc.sources[k]) + "\n";
  md += "\nEach figure, by its line in `" + fs::path(ref.path).filename().string() +
        "`: [methods.md](methods.md#documented-figures).\n\n";
  methods += "## Documented figures\n\n";
  for (const auto& f : ref.figures)
    if (doc.cited.count(f.line))
      methods += "- line " + std::to_string(f.line) + ": " + md_escape(f.gpu) + ", " + md_escape(f.quantity) +
                 " = " + md_escape(describe(f)) + ". " + md_escape(f.source) + "\n";
  methods += "\n";
  return md;
}

// Metadata, the families that did not run as asked, and the probes not measured.
std::string device_and_run(const RunData& run, const CsvTable& families, Diagnostics& diag, std::string& methods) {
  std::string md = "## Device and run\n\n";
  std::vector<std::vector<std::string>> meta_rows = {{"key", "value"}};
  for (const auto& [k, v] : run.meta) meta_rows.push_back({k, relative_text(v, run.dir)});
  md += (run.meta.size() ? markdown_table(meta_rows) : "No metadata.\n") + "\n";
  // Every family's wall time and clock in methods.md; here only those that did not run as
  // asked (unsupported on this GPU, failed, interrupted).
  std::string fam = markdown_of(families);
  if (!fam.empty()) methods += "## Families\n\n" + fam + "\n";
  std::string not_ok = markdown_of(
      families, [](const auto& r) { return r.size() > 1 && r[1] != "ok"; }, kFamilyStatusColumns);
  if (!fam.empty())
    md += "### Families\n\n" + (not_ok.empty() ? std::string("All ran") : not_ok + "\nThe others ran") +
          "; wall times and clocks: [methods.md](methods.md#families).\n\n";
  const std::pair<const char*, const char*> notes[] = {
      {"invalid.csv", "Invalid probes (not measured, not reported)"},
      {"not_measured.csv", "Not measured by this quick run"},
      {"skipped.csv", "Skipped probes (this GPU cannot run them)"}};
  for (const auto& [file, title] : notes) {
    std::string t = table_of((fs::path(run.dir) / file).string(), diag);
    if (!t.empty()) md += "### " + std::string(title) + "\n\n" + t + "\n";
  }
  return md;
}

// report.md and methods.md of a run; the exit code.
int report_run(const ReportPaths& paths, const std::string& dir, const std::string& style, Diagnostics& diag) {
  std::vector<FigureScript> scripts = figure_scripts(paths.plots_dir, diag);
  std::set<std::string> known = known_families(scripts);
  RunData run = load_run(dir, known, diag);
  Reference ref = load_reference_or_report(paths.reference, diag);
  CsvTable families = read_families(run, known, diag);
  DrawnFigures fig;
  if (!draw_figures(paths, scripts, run, style, fig, diag)) {
    const int sig = stop_signal();
    std::fprintf(stderr, "gpuprobe report: %s: stopped; figures and report.md left as they were\n",
                 signal_name(sig).c_str());
    return 128 + sig;
  }
  if (scripts.empty() && diag.errors.empty())
    diag.error(paths.plots_dir + ": no figure scripts (plots/*.gp with a '# family:' line) in it");
  // No figure drawn because gnuplot cannot draw (not because their probes are missing).
  if (fig.tried > 0 && fig.drawn == 0)
    if (const std::string fault = gnuplot_fault(paths); !fault.empty())
      diag.error("no figure could be drawn: " + fault + "; " + fig.dir + "/ left as it was");
  // Counted with the other warnings (and listed in report.md), so that errors stay last.
  if (paths.gnuplot.empty())
    diag.warn("gnuplot not found on PATH: report.md written without figures (install gnuplot, "
              "or set GNUPLOT to its path)");

  Documenting doc{run, ref, diag, {}, {}, {}};
  std::string methods = kMethodsTitle + run.gpu + "\n\nHow each parameter of run `" +
                        run.meta_value("run_id") +
                        "` was measured and inferred, in full (report.md shows a label).\n\n";
  std::string md = report_intro(run) + headline_markdown(run, families, doc);
  md += families_markdown(run, doc, methods);
  md += node_markdown(run);
  md += power_markdown(run, families, diag);
  md += figures_section(fig, !paths.gnuplot.empty());
  md += sources_markdown(doc, ref, methods);
  md += messages_markdown(diag, dir);
  md += device_and_run(run, families, diag, methods);
  write_file_atomic((fs::path(dir) / "methods.md").string(), methods);
  write_file_atomic((fs::path(dir) / "report.md").string(), md);
  std::printf("%s/report.md written (%zu parameters, %zu figures not drawn)\n", dir.c_str(), run.params.size(),
              fig.not_drawn.size() - 1);
  diag.print(dir + "/report.md");
  return diag.errors.empty() ? 0 : 1;
}

// The first of report.md and methods.md in `dir` that gpuprobe did not write (its first line
// is not the one report_run writes), or "": a folder of notes beside one run file is no run
// whose report may be replaced.
std::string foreign_report_file(const std::string& dir) {
  const std::pair<const char*, const char*> ours[] = {{"report.md", kReportTitle},
                                                      {"methods.md", kMethodsTitle}};
  for (const auto& [name, first] : ours) {
    const fs::path p = fs::path(dir) / name;
    if (!fs::exists(p)) continue;
    std::ifstream in(p, std::ios::binary);
    std::string line;
    std::getline(in, line);
    if (line.rfind(first, 0) != 0) return p.string();
  }
  return "";
}

}  // namespace

int report_main(const std::vector<std::string>& args) {
  Diagnostics diag;
  diag.prefix = "gpuprobe report";
  CLI::App app{"Renders every figure of a run and writes RUN_DIR/report.md and methods.md, from its CSV "
               "files alone (no GPU).",
               "gpuprobe report"};
  std::string dir, style, plots, reference;
  app.add_option("RUN_DIR", dir, "the run directory")->required();
  app.add_option("--style", style, "paper: vector PDF at column widths, into figures/paper/; web: the default")
      ->check(CLI::IsMember({"paper", "web"}));
  add_path_options(app, &plots, &reference);
  if (auto code = parse_subcommand(app, args, diag.prefix)) return *code;
  // report writes report.md and figures/ into the folder: only into a run's own.
  if (const FolderKind kind = folder_kind(dir); kind != FolderKind::run) {
    std::fprintf(stderr, "gpuprobe report: %s: %s, not a run folder\n", dir.c_str(), folder_kind_name(kind));
    return 1;
  }
  if (const std::string mine = foreign_report_file(dir); !mine.empty()) {
    std::fprintf(stderr,
                 "gpuprobe report: %s: not written by gpuprobe, left as it is (report a copy of "
                 "the run's CSV files elsewhere)\n",
                 mine.c_str());
    return 1;
  }
  try {
    return checked_stdout(diag.prefix,
                          report_run(resolve_paths(plots, reference), dir, style, diag));
  } catch (const std::exception& e) {
    diag.print(dir + "/report.md");
    std::fprintf(stderr, "gpuprobe report: %s\n", e.what());
    return 1;
  }
}

}  // namespace gpuprobe
