#include "core/compare.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "core/cli.hpp"
#include "core/csv.hpp"
#include "core/paper_table.hpp"
#include "core/fleet.hpp"
#include "core/report.hpp"
#include "core/run_dir.hpp"

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

constexpr double kNotable = 0.05;  // differences listed in compare.md beyond this fraction

std::string usage() {
  return "usage: gpuprobe compare RUN_DIR RUN_DIR... [--out DIR] [--plots DIR] [--reference CSV]\n"
         "       gpuprobe compare --table markdown|latex|csv RUN_DIR... [--reference CSV]  (to stdout)\n"
         "       gpuprobe compare --fleet RUN_DIR... (see --fleet --help)";
}

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

}  // namespace

int compare_main(const std::vector<std::string>& args_in) {
  auto fleet = std::find(args_in.begin(), args_in.end(), std::string("--fleet"));
  if (fleet != args_in.end()) {
    std::vector<std::string> rest(args_in.begin(), fleet);
    rest.insert(rest.end(), fleet + 1, args_in.end());
    return fleet_main(rest);
  }
  Diagnostics diag;
  diag.prefix = "gpuprobe compare";
  std::vector<std::string> args = args_in;
  ReportPaths paths;
  std::string out_dir;
  bool out_given = false;
  std::string table;  // a paper table to stdout instead of a comparison folder
  std::vector<std::string> dirs;
  try {
    paths = resolve_paths(args);
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& a = args[i];
      if (a == "--help" || a == "-h") {
        std::printf("%s\n", usage().c_str());
        return 0;
      } else if (a == "--out") {
        if (i + 1 >= args.size()) throw UsageError("--out: missing value");
        out_dir = args[++i];
        out_given = true;
      } else if (a.rfind("--out=", 0) == 0) {
        out_dir = a.substr(6);
        out_given = true;
      } else if (a == "--table" || a.rfind("--table=", 0) == 0) {
        if (a == "--table" && i + 1 >= args.size()) throw UsageError("--table: missing value");
        table = a == "--table" ? args[++i] : a.substr(8);
        if (table != "markdown" && table != "latex" && table != "csv")
          throw UsageError("--table: expected markdown, latex or csv, got '" + table + "'");
      } else if (a.rfind("-", 0) == 0) {
        throw UsageError("unknown option '" + a + "' (" + usage() + ")");
      } else {
        dirs.push_back(a);
      }
    }
    if (dirs.size() < (table.empty() ? 2u : 1u))
      throw UsageError("expected at least " + std::string(table.empty() ? "two RUN_DIRs" : "one RUN_DIR") +
                       " (" + usage() + ")");
    if (out_given && out_dir.empty()) throw UsageError("--out: empty directory name");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "gpuprobe compare: %s\n", e.what());
    return 2;
  }

  try {
    std::vector<FigureScript> scripts = figure_scripts(paths.plots_dir, diag);
    std::set<std::string> known = known_families(scripts);
    std::vector<RunData> runs;
    for (const auto& d : dirs) runs.push_back(load_run(d, known, diag));
    Reference ref = load_reference_or_report(paths.reference, diag);
    std::vector<std::string> labels = run_labels(runs);
    if (!table.empty()) {
      std::fputs(paper_table(runs, labels, ref, table).c_str(), stdout);
      return diag.errors.empty() ? 0 : 1;
    }
    if (out_dir.empty()) {
      std::string slugs;
      for (const auto& r : runs) slugs += (slugs.empty() ? "" : "_vs_") + gpu_slug(r.gpu);
      out_dir = "results/compare/" + slugs;
    }
    // Write only into a folder made for a comparison: never over a run's own files.
    const FolderKind out_kind = folder_kind(out_dir);
    if (out_kind == FolderKind::run || out_kind == FolderKind::other)
      throw std::runtime_error("--out " + out_dir + ": " + folder_kind_name(out_kind) +
                               "; compare writes only into a new, empty or earlier compare folder");
    fs::create_directories(out_dir);

    if (paths.gnuplot.empty())
      diag.warn("gnuplot not found on PATH (install gnuplot, or set GNUPLOT to its path): "
                "figures not drawn");
    std::string figures_md;
    for (const auto& s : scripts) {
      std::vector<std::string> files, curve_labels;
      for (size_t k = 0; k < runs.size(); ++k) {
        std::string f = runs[k].file_of(s.family);
        if (f.empty()) continue;
        files.push_back(f);
        curve_labels.push_back(labels[k]);
      }
      if (files.empty()) continue;
      for (size_t k = 0; k < runs.size(); ++k)
        if (runs[k].file_of(s.family).empty())
          diag.warn(runs[k].dir + ": no " + s.family + ".csv: " + labels[k] + " is missing from " +
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

    // Parameters: the union, in the order the runs list them.
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

    std::vector<std::string> csv_header = {"parameter", "unit"};
    for (const auto& l : labels) csv_header.insert(csv_header.end(), {l, l + "_confidence"});
    for (size_t k = 1; k < runs.size(); ++k) csv_header.push_back("ratio_" + labels[k] + "_to_" + labels[0]);
    std::vector<std::vector<std::string>> md_rows = {{"parameter"}};
    for (const auto& l : labels) md_rows[0].push_back(l);
    for (size_t k = 1; k < runs.size(); ++k) md_rows[0].push_back(labels[k] + " / " + labels[0]);
    for (const auto& rep : representative_gpus()) {
      std::string col = rep.label;
      for (char& c : col) c = c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      csv_header.insert(csv_header.end(), {col, col + "_reference_line", col + "_method"});
      md_rows[0].push_back(rep.label + " (documented)");
    }
    std::vector<std::vector<std::string>> csv_rows;
    std::vector<std::pair<double, std::string>> notable;
    std::set<int> cited;
    for (const auto& row : rows) {
      size_t first = 0;
      while (row.index[first] < 0) ++first;
      const RunData& base_run = runs[first];
      const Parameter& base = base_run.params[static_cast<size_t>(row.index[first])];
      std::vector<std::string> c = {row.name, base.unit}, m = {row.name};
      std::vector<bool> comparable(runs.size(), false);
      for (size_t k = 0; k < runs.size(); ++k) {
        if (row.index[k] < 0) {
          c.insert(c.end(), {"", ""});
          m.push_back("-");
          continue;
        }
        size_t i = static_cast<size_t>(row.index[k]);
        const Parameter& p = runs[k].params[i];
        comparable[k] = same_unit(p.unit, base.unit);
        if (!comparable[k]) {
          int line = runs[k].param_lines[i], base_line = base_run.param_lines[static_cast<size_t>(row.index[first])];
          diag.warn(runs[k].params_path + (line ? ":" + std::to_string(line) : "") + ": " + p.name +
                    " in '" + p.unit + "' but " + base_run.params_path +
                    (base_line ? ":" + std::to_string(base_line) : "") + " has '" + base.unit +
                    "': no ratio");
        }
        c.insert(c.end(), {format_number(p.value) + (comparable[k] ? "" : " " + p.unit), format_number(p.confidence)});
        char conf[16];
        std::snprintf(conf, sizeof conf, "%.2f", p.confidence);
        m.push_back(human(p.value, p.unit) + " (" + conf + ")");
      }
      for (size_t k = 1; k < runs.size(); ++k) {
        std::string r;
        if (row.index[0] >= 0 && row.index[k] >= 0 && comparable[0] && comparable[k]) {
          double a = runs[0].params[static_cast<size_t>(row.index[0])].value;
          double b = runs[k].params[static_cast<size_t>(row.index[k])].value;
          if (a != 0 && std::isfinite(a) && std::isfinite(b)) {
            r = ratio_text(b / a);
            if (std::fabs(b / a - 1) > kNotable)
              notable.push_back({std::fabs(std::log(std::fabs(b / a) + 1e-300)),
                                 row.name + ": " + labels[k] + " / " + labels[0] + " = " + r + " (" +
                                     human(a, base.unit) + " vs " + human(b, base.unit) + ")"});
          }
        }
        c.push_back(r);
        m.push_back(r.empty() ? "-" : r);
      }
      for (const auto& rep : representative_gpus()) {
        auto d = documented_for_arch(ref, row.name, rep.arch);
        if (!d) {
          c.insert(c.end(), {"", "", ""});
          m.push_back("-");
          continue;
        }
        cited.insert(d->line);
        bool agree = units_agree(base_run, static_cast<size_t>(row.index[first]), *d, ref.path, diag);
        c.insert(c.end(), {d->value_text + (agree ? "" : " " + d->unit), std::to_string(d->line), d->method});
        // Compare shows no ratio to a documented figure; it says where the methods differ.
        m.push_back(documented_cell(*d) + (methods_comparable(base, *d) ? "" : " (other method: " + d->method + ")"));
      }
      csv_rows.push_back(c);
      md_rows.push_back(m);
    }

    Metadata csv_meta = {{"gpuprobe_version", GPUPROBE_VERSION}, {"reference", shown_path(ref.path)}};
    for (size_t k = 0; k < runs.size(); ++k) {
      std::string n = std::to_string(k + 1);
      csv_meta.insert(csv_meta.end(), {{"run_" + n, shown_path(runs[k].dir)}, {"gpu_" + n, runs[k].gpu},
                                       {"label_" + n, labels[k]}, {"run_id_" + n, runs[k].meta_value("run_id")}});
    }
    write_file_atomic((fs::path(out_dir) / "parameters.csv").string(), format_csv(csv_meta, csv_header, csv_rows));

    std::string title;
    for (const auto& l : labels) title += (title.empty() ? "" : " vs ") + l;
    std::string md = "# gpuprobe compare: " + title + "\n\nMade by gpuprobe " + GPUPROBE_VERSION +
                     " from the CSV files alone: `gpuprobe compare";
    for (const auto& d : dirs) md += " " + shown_path(d);
    md += "`. Side-by-side values are in `parameters.csv`.\n\n## Runs\n\n";
    for (size_t k = 0; k < runs.size(); ++k) {
      const std::string status = runs[k].meta_value("run_status");
      if (status == "running" || status == "interrupted")
        md += "**Incomplete run** " + labels[k] + " (run_status=" + status +
              (runs[k].meta_value("interrupted").empty() ? "" : ", " + runs[k].meta_value("interrupted")) +
              "): its families after that point were not measured.\n\n";
    }
    std::vector<std::vector<std::string>> meta_rows = {{"key"}};
    for (const auto& l : labels) meta_rows[0].push_back(l);
    std::vector<std::string> keys = {"run directory"};
    for (const auto& r : runs)
      for (const auto& [k, v] : r.meta)
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    for (const auto& key : keys) {
      std::vector<std::string> mr = {key};
      for (const auto& r : runs)
        mr.push_back(key == "run directory" ? shown_path(r.dir) : relative_text(r.meta_value(key), r.dir));
      meta_rows.push_back(mr);
    }
    md += markdown_table(meta_rows) + "\n## Inferred parameters\n\n";
    md += "Each value with its confidence; ratios are against " + labels[0] +
          ". Documented figures are for the representative parts; `[rN]` is line N of `" +
          fs::path(ref.path).filename().string() + "`.\n\n" + markdown_table(md_rows) + "\n";
    if (!notable.empty()) {
      std::stable_sort(notable.begin(), notable.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      md += "Differences beyond " + std::to_string(static_cast<int>(kNotable * 100)) + " %, largest first:\n\n";
      for (const auto& n : notable) md += "- " + n.second + "\n";
      md += "\n";
    }
    if (!cited.empty()) {
      md += "Documented figures cited:\n\n";
      for (const auto& f : ref.figures)
        if (cited.count(f.line))
          md += "- r" + std::to_string(f.line) + ": " + f.gpu + ", " + f.quantity + " = " + describe(f) + ". " +
                f.source + "\n";
      md += "\n";
    }
    md += "## Figures\n\n" + (figures_md.empty() ? std::string("None rendered.\n\n") : figures_md);
    md += messages_markdown(diag, out_dir);
    write_file_atomic((fs::path(out_dir) / "compare.md").string(), md);
    std::printf("%s/compare.md written (%zu runs, %zu parameters)\n", out_dir.c_str(), runs.size(), rows.size());
  } catch (const std::exception& e) {
    diag.print("compare.md");
    std::fprintf(stderr, "gpuprobe compare: %s\n", e.what());
    return 1;
  }
  diag.print("compare.md");
  return diag.errors.empty() ? 0 : 1;
}

}  // namespace gpuprobe
