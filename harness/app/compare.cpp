#include "app/compare.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "app/cli.hpp"
#include "app/cli_parse.hpp"
#include "base/csv.hpp"
#include "app/paper_table.hpp"
#include "app/fleet.hpp"
#include "app/nvbandwidth_json.hpp"
#include "app/report.hpp"
#include "app/run_analysis.hpp"
#include "base/run_dir.hpp"
#include "base/version.hpp"

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

constexpr double kNotable = 0.05;  // differences listed in compare.md beyond this fraction

std::string ratio_text(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", r);
  return buf;
}

// Line of the first row of each probe and its unit, per observations file.
struct ProbeUnit {
  std::string unit;
  int line;
};
std::multimap<std::string, ProbeUnit> probe_units(const std::string& path) {
  std::multimap<std::string, ProbeUnit> out;
  CsvTable t = read_csv(path);
  std::vector<Observation> obs = observations_from_table(t);
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t r = 0; r < obs.size(); ++r)
    if (seen.insert({obs[r].probe, obs[r].unit}).second)
      out.emplace(obs[r].probe, ProbeUnit{obs[r].unit, t.row_lines[r]});
  return out;
}

// A probe measured in a unit by one run and not by another overlays unlike curves.
void check_probe_units(const std::vector<std::string>& files, Diagnostics& diag) {
  std::vector<std::multimap<std::string, ProbeUnit>> units;
  for (const auto& f : files) {
    try {
      units.push_back(probe_units(f));
    } catch (const std::exception& e) {
      diag.error(e.what());
      return;
    }
  }
  for (size_t k = 1; k < files.size(); ++k) {
    for (const auto& [probe, pu] : units[k]) {
      auto range = units[0].equal_range(probe);
      if (range.first == range.second) continue;
      bool shared = false;
      for (auto it = range.first; it != range.second; ++it) shared = shared || it->second.unit == pu.unit;
      if (!shared)
        diag.warn(files[k] + ":" + std::to_string(pu.line) + ": probe '" + probe + "' in '" + pu.unit +
                  "' but " + files[0] + ":" + std::to_string(range.first->second.line) + " has '" +
                  range.first->second.unit + "': the curves do not compare");
    }
  }
}

// Run directories are recorded relative to where compare ran (the repository root, for
// committed comparisons), so that scripts/render-all.sh can run it again there.
std::string shown_path(const std::string& dir) {
  std::error_code ec;
  std::string p = fs::proximate(dir, ec).string();
  return ec || p.empty() ? dir : p;
}

struct Row {
  std::string name;
  std::vector<int> index;  // per run: index into its params, -1 when absent
};

// The runs compared, and what every part of the comparison names them by.
struct Compared {
  std::vector<std::string> dirs;  // as given
  std::vector<RunData> runs;
  std::vector<std::string> labels;
  Reference ref;
};

// One figure per script with a curve for every run that has its family; the markdown of those
// drawn.
std::string compare_figures(const ReportPaths& paths, const std::vector<FigureScript>& scripts,
                            const Compared& c, const std::string& out_dir, Diagnostics& diag) {
  if (paths.gnuplot.empty())
    diag.warn("gnuplot not found on PATH (install gnuplot, or set GNUPLOT to its path): "
              "figures not drawn");
  std::string figures_md;
  for (const auto& s : scripts) {
    std::vector<std::string> files, curve_labels;
    for (size_t k = 0; k < c.runs.size(); ++k) {
      std::string f = c.runs[k].file_of(s.family);
      if (f.empty()) continue;
      files.push_back(f);
      curve_labels.push_back(c.labels[k]);
    }
    if (files.empty()) continue;
    for (size_t k = 0; k < c.runs.size(); ++k)
      if (c.runs[k].file_of(s.family).empty())
        diag.warn(c.runs[k].dir + ": no " + s.family + ".csv: " + c.labels[k] + " is missing from " +
                  s.name + " (and the colours of the runs after it shift)");
    check_probe_units(files, diag);
    // A figure whose probe no run measured is left out with a note, not a failure.
    Diagnostics fig_diag;
    fig_diag.prefix = diag.prefix;
    auto written = render_figure(paths, s, files, curve_labels, (fs::path(out_dir) / "figures").string(), fig_diag);
    for (const auto& w : fig_diag.warnings) diag.warnings.push_back(w);
    if (written.empty()) {
      if (!paths.gnuplot.empty())
        diag.warnings.push_back(s.name + " not drawn: " +
                                (fig_diag.errors.empty() ? "gnuplot wrote nothing" : fig_diag.errors.front()));
      continue;
    }
    figures_md += figure_markdown(s, "figures");
  }
  return figures_md;
}

// Parameters: the union, in the order the runs list them.
std::vector<Row> parameter_rows(const std::vector<RunData>& runs) {
  std::vector<Row> rows;
  for (size_t k = 0; k < runs.size(); ++k) {
    for (size_t i = 0; i < runs[k].params.size(); ++i) {
      const std::string& name = runs[k].params[i].name;
      auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.name == name; });
      if (it == rows.end()) {
        rows.push_back({name, std::vector<int>(runs.size(), -1)});
        it = rows.end() - 1;
      }
      if (it->index[k] < 0) it->index[k] = static_cast<int>(i);
    }
  }
  return rows;
}

// The side-by-side table, as parameters.csv (csv) and as compare.md shows it (md).
struct SideBySide {
  std::vector<std::string> csv_header;
  std::vector<std::vector<std::string>> csv_rows, md_rows;
  std::vector<std::pair<double, std::string>> notable;  // (|log ratio|, line), differences past kNotable
  std::set<int> cited;                                   // reference lines
};

SideBySide side_by_side_header(const std::vector<std::string>& labels) {
  SideBySide t;
  t.csv_header = {"parameter", "unit"};
  for (const auto& l : labels) t.csv_header.insert(t.csv_header.end(), {l, l + "_confidence"});
  for (size_t k = 1; k < labels.size(); ++k) t.csv_header.push_back("ratio_" + labels[k] + "_to_" + labels[0]);
  t.md_rows = {{"parameter"}};
  for (const auto& l : labels) t.md_rows[0].push_back(l);
  for (size_t k = 1; k < labels.size(); ++k) t.md_rows[0].push_back(labels[k] + " / " + labels[0]);
  for (const auto& rep : representative_gpus()) {
    std::string col = rep.label;
    for (char& c : col) c = c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    t.csv_header.insert(t.csv_header.end(), {col, col + "_reference_line", col + "_method"});
    t.md_rows[0].push_back(rep.label + " (documented)");
  }
  return t;
}

// One row of the table under construction: its parameter, and its first run's value as the base.
struct RowCells {
  const Row& row;
  size_t first;  // the first run that has the parameter
  std::vector<std::string> csv, md;
  std::vector<bool> comparable;  // per run: in the base's unit
};

// Each run's value and confidence; a unit unlike the base's is shown and gets no ratio.
void measured_cells(RowCells& r, const Compared& c, Diagnostics& diag) {
  const RunData& base_run = c.runs[r.first];
  const size_t base_index = static_cast<size_t>(r.row.index[r.first]);
  const Parameter& base = base_run.params[base_index];
  for (size_t k = 0; k < c.runs.size(); ++k) {
    if (r.row.index[k] < 0) {
      r.csv.insert(r.csv.end(), {"", ""});
      r.md.push_back("-");
      continue;
    }
    size_t i = static_cast<size_t>(r.row.index[k]);
    const Parameter& p = c.runs[k].params[i];
    r.comparable[k] = same_unit(p.unit, base.unit);
    if (!r.comparable[k]) {
      int line = c.runs[k].param_lines[i], base_line = base_run.param_lines[base_index];
      diag.warn(c.runs[k].params_path + (line ? ":" + std::to_string(line) : "") + ": " + p.name + " in '" +
                p.unit + "' but " + base_run.params_path + (base_line ? ":" + std::to_string(base_line) : "") +
                " has '" + base.unit + "': no ratio");
    }
    r.csv.insert(r.csv.end(), {format_number(p.value) + (r.comparable[k] ? "" : " " + p.unit), format_number(p.confidence)});
    char conf[16];
    std::snprintf(conf, sizeof conf, "%.2f", p.confidence);
    r.md.push_back(human(p.value, p.unit) + " (" + conf + ")");
  }
}

// Each later run's value over the first run's, where both are there in one unit.
void ratio_cells(RowCells& r, const Compared& c, SideBySide& t) {
  const std::string& unit = c.runs[r.first].params[static_cast<size_t>(r.row.index[r.first])].unit;
  for (size_t k = 1; k < c.runs.size(); ++k) {
    std::string text;
    if (r.row.index[0] >= 0 && r.row.index[k] >= 0 && r.comparable[0] && r.comparable[k]) {
      double a = c.runs[0].params[static_cast<size_t>(r.row.index[0])].value;
      double b = c.runs[k].params[static_cast<size_t>(r.row.index[k])].value;
      if (a != 0 && std::isfinite(a) && std::isfinite(b)) {
        text = ratio_text(b / a);
        if (std::fabs(b / a - 1) > kNotable)
          t.notable.push_back({std::fabs(std::log(std::fabs(b / a) + 1e-300)),
                               r.row.name + ": " + c.labels[k] + " / " + c.labels[0] + " = " + text + " (" +
                                   human(a, unit) + " vs " + human(b, unit) + ")"});
      }
    }
    r.csv.push_back(text);
    r.md.push_back(text.empty() ? "-" : text);
  }
}

// The documented figures of the representative older parts.
void documented_cells(RowCells& r, const Compared& c, SideBySide& t, Diagnostics& diag) {
  const RunData& base_run = c.runs[r.first];
  const size_t base_index = static_cast<size_t>(r.row.index[r.first]);
  for (const auto& rep : representative_gpus()) {
    auto d = documented_for_arch(c.ref, r.row.name, rep.arch);
    if (!d) {
      r.csv.insert(r.csv.end(), {"", "", ""});
      r.md.push_back("-");
      continue;
    }
    t.cited.insert(d->line);
    bool agree = units_agree(base_run, base_index, *d, c.ref.path, diag);
    r.csv.insert(r.csv.end(), {d->value_text + (agree ? "" : " " + d->unit), std::to_string(d->line), d->method});
    // Compare shows no ratio to a documented figure; it says where the methods differ.
    r.md.push_back(documented_cell(*d) +
                   (methods_comparable(base_run.params[base_index], *d) ? "" : " (other method: " + d->method + ")"));
  }
}

SideBySide side_by_side(const std::vector<Row>& rows, const Compared& c, Diagnostics& diag) {
  SideBySide t = side_by_side_header(c.labels);
  for (const auto& row : rows) {
    size_t first = 0;
    while (row.index[first] < 0) ++first;
    RowCells r{row, first, {row.name, c.runs[first].params[static_cast<size_t>(row.index[first])].unit}, {row.name},
               std::vector<bool>(c.runs.size(), false)};
    measured_cells(r, c, diag);
    ratio_cells(r, c, t);
    documented_cells(r, c, t, diag);
    t.csv_rows.push_back(r.csv);
    t.md_rows.push_back(r.md);
  }
  return t;
}

void write_compare_csv(const Compared& c, const SideBySide& t, const std::string& out_dir) {
  Metadata csv_meta = {{"gpuprobe_version", gpuprobe_version()}, {"reference", shown_path(c.ref.path)}};
  for (size_t k = 0; k < c.runs.size(); ++k) {
    std::string n = std::to_string(k + 1);
    csv_meta.insert(csv_meta.end(), {{"run_" + n, shown_path(c.runs[k].dir)}, {"gpu_" + n, c.runs[k].gpu},
                                     {"label_" + n, c.labels[k]}, {"run_id_" + n, c.runs[k].meta_value("run_id")}});
  }
  write_file_atomic((fs::path(out_dir) / "parameters.csv").string(), format_csv(csv_meta, t.csv_header, t.csv_rows));
}

// compare.md's runs: a note on each incomplete one, then every metadata key side by side.
std::string runs_markdown(const Compared& c) {
  std::string md;
  for (size_t k = 0; k < c.runs.size(); ++k) {
    const std::string status = c.runs[k].meta_value("run_status");
    if (status == "running" || status == "interrupted")
      md += "**Incomplete run** " + c.labels[k] + " (run_status=" + status +
            (c.runs[k].meta_value("interrupted").empty() ? "" : ", " + c.runs[k].meta_value("interrupted")) +
            "): its families after that point were not measured.\n\n";
  }
  std::vector<std::vector<std::string>> meta_rows = {{"key"}};
  for (const auto& l : c.labels) meta_rows[0].push_back(l);
  std::vector<std::string> keys = {"run directory"};
  for (const auto& r : c.runs)
    for (const auto& [k, v] : r.meta)
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  for (const auto& key : keys) {
    std::vector<std::string> mr = {key};
    for (const auto& r : c.runs)
      mr.push_back(key == "run directory" ? shown_path(r.dir) : relative_text(r.meta_value(key), r.dir));
    meta_rows.push_back(mr);
  }
  return md + markdown_table(meta_rows);
}

// compare.md's parameters: the table, the notable differences, the documented figures cited.
std::string parameters_markdown(const Compared& c, SideBySide& t) {
  std::string md = "Each value with its confidence; ratios are against " + c.labels[0] +
                   ". Documented figures are for the representative parts; `[rN]` is line N of `" +
                   fs::path(c.ref.path).filename().string() + "`.\n\n" + markdown_table(t.md_rows) + "\n";
  if (!t.notable.empty()) {
    std::stable_sort(t.notable.begin(), t.notable.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    md += "Differences beyond " + std::to_string(static_cast<int>(kNotable * 100)) + " %, largest first:\n\n";
    for (const auto& n : t.notable) md += "- " + n.second + "\n";
    md += "\n";
  }
  if (!t.cited.empty()) {
    md += "Documented figures cited:\n\n";
    for (const auto& f : c.ref.figures)
      if (t.cited.count(f.line))
        md += "- r" + std::to_string(f.line) + ": " + f.gpu + ", " + f.quantity + " = " + describe(f) + ". " +
              f.source + "\n";
    md += "\n";
  }
  return md;
}

std::string compare_markdown(const Compared& c, SideBySide& t, const std::string& figures_md,
                             const std::string& out_dir, const Diagnostics& diag) {
  std::string title;
  for (const auto& l : c.labels) title += (title.empty() ? "" : " vs ") + l;
  std::string md = "# gpuprobe compare: " + title + "\n\nMade by gpuprobe " + gpuprobe_version() +
                   " from the CSV files alone: `gpuprobe compare";
  for (const auto& d : c.dirs) md += " " + shown_path(d);
  md += "`. Side-by-side values are in `parameters.csv`.\n\n## Runs\n\n";
  md += runs_markdown(c) + "\n## Inferred parameters\n\n" + parameters_markdown(c, t);
  md += "## Figures\n\n" + (figures_md.empty() ? std::string("None rendered.\n\n") : figures_md);
  return md + messages_markdown(diag, out_dir);
}

// The comparison folder: the one given, else one named after the GPUs. Throws unless it is
// made for a comparison: never over a run's own files.
std::string comparison_folder(std::string out_dir, const std::vector<RunData>& runs) {
  if (out_dir.empty()) {
    std::string slugs;
    for (const auto& r : runs) slugs += (slugs.empty() ? "" : "_vs_") + gpu_slug(r.gpu);
    out_dir = "results/compare/" + slugs;
  }
  const FolderKind out_kind = folder_kind(out_dir);
  if (out_kind == FolderKind::run || out_kind == FolderKind::other)
    throw std::runtime_error("--out " + out_dir + ": " + folder_kind_name(out_kind) +
                             "; compare writes only into a new, empty or earlier compare folder");
  // Nor below a run: its folder would then hold files no run wrote.
  std::error_code ec;
  for (fs::path p = fs::weakly_canonical(out_dir, ec).parent_path();
       !ec && !p.empty() && p != p.root_path(); p = p.parent_path())
    if (folder_kind(p.string()) == FolderKind::run)
      throw std::runtime_error("--out " + out_dir + ": inside the run folder " + p.string() +
                               "; compare writes only outside a run");
  fs::create_directories(out_dir);
  return out_dir;
}

// The whole comparison, or a paper table on stdout; the exit code.
int compare_runs(const ReportPaths& paths, const std::vector<std::string>& dirs, const std::string& out,
                 const std::string& table, Diagnostics& diag) {
  std::vector<FigureScript> scripts = figure_scripts(paths.plots_dir, diag);
  std::set<std::string> known = known_families(scripts);
  Compared c;
  c.dirs = dirs;
  for (const auto& d : dirs) c.runs.push_back(load_run(d, known, diag));
  c.ref = load_reference_or_report(paths.reference, diag);
  c.labels = run_labels(c.runs);
  if (!table.empty()) {
    std::fputs(paper_table(c.runs, c.labels, c.ref, table).c_str(), stdout);
    print_messages(diag.prefix, {}, diag.errors, false);
    return checked_stdout(diag.prefix, diag.errors.empty() ? 0 : 1);
  }
  const std::string out_dir = comparison_folder(out, c.runs);
  const std::string figures_md = compare_figures(paths, scripts, c, out_dir, diag);
  const std::vector<Row> rows = parameter_rows(c.runs);
  SideBySide t = side_by_side(rows, c, diag);
  write_compare_csv(c, t, out_dir);
  write_file_atomic((fs::path(out_dir) / "compare.md").string(), compare_markdown(c, t, figures_md, out_dir, diag));
  std::printf("%s/compare.md written (%zu runs, %zu parameters)\n", out_dir.c_str(), c.runs.size(), rows.size());
  diag.print("compare.md");
  return checked_stdout(diag.prefix, diag.errors.empty() ? 0 : 1);
}

}  // namespace

// The figure scripts index one colour and point type per run up to this (plots/style.gp's
// max_gpus); a fleet of more GPUs is compare --fleet's job.
constexpr size_t kMaxCompareRuns = 64;

int compare_main(const std::vector<std::string>& args_in) {
  auto fleet = std::find(args_in.begin(), args_in.end(), std::string("--fleet"));
  if (fleet != args_in.end()) {
    std::vector<std::string> rest(args_in.begin(), fleet);
    rest.insert(rest.end(), fleet + 1, args_in.end());
    return fleet_main(rest);
  }
  Diagnostics diag;
  diag.prefix = "gpuprobe compare";
  CLI::App app{"Overlays the figures of several runs, one curve per GPU, and tabulates their parameters side "
               "by side with ratios and the documented Kepler, Maxwell and Volta figures (no GPU). "
               "'gpuprobe compare --fleet --help': a fleet's outliers.",
               "gpuprobe compare"};
  std::vector<std::string> dirs;
  std::string out_dir, table, plots, reference;
  app.add_option("RUN_DIR", dirs, "the runs; the first is the base of the ratios")->required();
  app.add_option("--out", out_dir, "the comparison folder (default: results/compare/<slug>_vs_<slug>)")
      ->type_name("DIR")
      ->check(non_empty());
  app.add_option("--table", table, "a paper table of the runs to stdout instead of a comparison folder")
      ->check(CLI::IsMember({"markdown", "latex", "csv"}));
  std::string nvbandwidth;
  app.add_option("--nvbandwidth", nvbandwidth,
                 "one run beside nvbandwidth's --json output of the same machine, test case by test case "
                 "(markdown to stdout)")
      ->type_name("FILE")
      ->check(non_empty());
  add_path_options(app, &plots, &reference);
  auto enough_runs = [&] {
    if (!nvbandwidth.empty() && dirs.size() != 1) throw UsageError("--nvbandwidth: expected one RUN_DIR");
    const bool one = !table.empty() || !nvbandwidth.empty();
    if (dirs.size() < (one ? 1u : 2u))
      throw UsageError("expected at least " + std::string(one ? "one RUN_DIR" : "two RUN_DIRs"));
    if (dirs.size() > kMaxCompareRuns)
      throw UsageError("at most " + std::to_string(kMaxCompareRuns) + " RUN_DIRs (compare --fleet takes more)");
  };
  if (auto code = parse_subcommand(app, args_in, diag.prefix, enough_runs)) return *code;
  try {
    if (!nvbandwidth.empty()) {
      std::fputs(nvbandwidth_side_by_side(dirs.front(), read_file(nvbandwidth)).c_str(), stdout);
      return checked_stdout(diag.prefix, 0);
    }
    return compare_runs(resolve_paths(plots, reference), dirs, out_dir, table, diag);
  } catch (const std::exception& e) {
    diag.print("compare.md");
    std::fprintf(stderr, "gpuprobe compare: %s\n", e.what());
    return 1;
  }
}

}  // namespace gpuprobe
