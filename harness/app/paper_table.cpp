#include "app/paper_table.hpp"

#include <algorithm>
#include <stdexcept>

#include "base/csv.hpp"
#include "base/parameter_names.hpp"
#include "base/version.hpp"

namespace gpuprobe {

namespace {

// The rows of a characterisation table, in the order of Jia et al.'s Table 3.1 and on; the
// index-chase twins (the papers' method) where a run measured them.
const std::vector<QuantityRow>& paper_rows() {
  static const std::vector<QuantityRow> rows = {
      {"SM clock (measured)", {param::sm_clock_measured}},
      {"L1 data cache size", {param::l1_size}},
      {"L1 line size", {param::l1_line_size}},
      {"L1 sector size", {param::l1_sector_size}},
      {"L1 hit latency", {param::l1_hit_latency}},
      {"L1 hit latency, index chase", {param::l1_hit_latency_index_chase}},
      {"L2 size", {param::l2_size}},
      {"L2 line size", {param::l2_line_size}},
      {"L2 sector size", {param::l2_sector_size}},
      {"L2 hit latency", {param::l2_hit_latency, param::l2_near_hit_latency}},
      {"L2 hit latency, index chase", {param::l2_hit_latency_index_chase}},
      {"L2 hit latency (far)", {param::l2_far_hit_latency}},
      {"DRAM latency", {param::dram_latency}},
      {"DRAM latency, index chase", {param::dram_latency_index_chase}},
      {"Shared memory latency", {param::shared_latency}},
      {"Shared memory latency, index chase", {param::shared_latency_index_chase}},
      {"Constant cache hit latency", {param::constant_hit_latency}},
      {"Shared memory banks", {param::shared_bank_count}},
      {"Shared memory bank width", {param::shared_bank_width}},
      {"L1 TLB coverage", {param::tlb_l1_coverage}},
      {"L2 TLB coverage", {param::tlb_l2_coverage}},
      {"TLB page entry", {param::tlb_page_entry_size}},
      {"DRAM read bandwidth", {param::dram_read_bandwidth}},
      {"L2 read bandwidth", {param::l2_read_bandwidth}},
      {"fp32 FMA per clock per SM", {param::fp32_fma_throughput_per_sm}},
      {"fp64 FMA per clock per SM", {param::fp64_fma_throughput_per_sm}},
      {"fp32 FMA latency", {param::fp32_fma_latency}},
      {"Bytes in flight per SM, 90 % of DRAM peak", {param::dram_bytes_in_flight_90pct}},
  };
  return rows;
}

// One table, whatever its format: cells as plain text, with their marks apart.
struct Cell {
  std::string text;     // "32 cycles", "-"
  int source = 0;       // footnote number of a documented figure, 0 for none
  bool other_method = false, low_confidence = false;
};

std::string latex_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\textbackslash{}"; break;
      case '&': case '%': case '$': case '#': case '_': case '{': case '}': out += std::string("\\") + c; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      default: out += c;
    }
  }
  return out;
}

// A row of the table: a quantity, its cells (the runs, then the representative GPUs) and the
// parameter each run gave for it.
struct Line {
  std::string label, unit;
  std::vector<Cell> cells;
  std::vector<const Parameter*> measured;
};

// The table whatever its format, with the documented figures' sources numbered as footnotes.
struct PaperTable {
  std::vector<Line> lines;
  std::vector<std::string> header;   // run labels, then the representative GPUs
  std::vector<std::string> sources;  // footnote k + 1
  bool any_low = false, any_other = false;
  size_t n_runs = 0;

  int source_of(const DocumentedFigure& d) {
    auto it = std::find(sources.begin(), sources.end(), d.source);
    if (it == sources.end()) it = sources.insert(sources.end(), d.source);
    return static_cast<int>(it - sources.begin()) + 1;
  }
};

const std::string kLowNote = "measured with confidence below " + format_printf("%.1f", kPaperTableMinConfidence);
const std::string kOtherNote = "documented with another method than gpuprobe's: not comparable one to one";

// The row's measured cells; the first run's parameter that has it, or nullptr.
const Parameter* measured_cells(const std::vector<RunData>& runs, const QuantityRow& row, Line& line,
                                PaperTable& t) {
  const Parameter* first = nullptr;
  for (const auto& run : runs) {
    const Parameter* p = first_present(run, row);
    line.measured.push_back(p);
    if (p && !first) first = p;
    Cell c;
    if (p) {
      c.text = human(p->value, p->unit);
      c.low_confidence = p->confidence < kPaperTableMinConfidence;
      t.any_low = t.any_low || c.low_confidence;
    } else {
      c.text = "-";
    }
    line.cells.push_back(c);
  }
  return first;
}

void documented_cells(const Parameter& first, const Reference& ref, Line& line, PaperTable& t) {
  for (const auto& rep : representative_gpus()) {
    Cell c;
    auto d = documented_for_arch(ref, first.name, rep.arch);
    if (!d) {
      c.text = "-";
    } else {
      c.text = describe(*d);
      c.source = t.source_of(*d);
      // The one rule of comparing: where it finds the methods differ, the figure is marked.
      c.other_method = versus_documented(first, *d).rfind("other method", 0) == 0;
      t.any_other = t.any_other || c.other_method;
    }
    line.cells.push_back(c);
  }
}

PaperTable build_table(const std::vector<RunData>& runs, const std::vector<std::string>& labels,
                       const Reference& ref) {
  PaperTable t;
  t.n_runs = runs.size();
  t.header = labels;
  for (const auto& rep : representative_gpus()) t.header.push_back(rep.label);
  for (const auto& row : paper_rows()) {
    Line line{row.label, "", {}, {}};
    const Parameter* first = measured_cells(runs, row, line, t);
    if (!first) continue;  // no run measured it
    line.unit = first->unit;
    documented_cells(*first, ref, line, t);
    t.lines.push_back(line);
  }
  return t;
}

std::string csv_table(const PaperTable& t, const std::vector<std::string>& labels) {
  Metadata meta = {{"table", "gpuprobe compare --table csv"}, {"gpuprobe_version", gpuprobe_version()}};
  for (size_t k = 0; k < t.sources.size(); ++k) meta.push_back({"source_" + std::to_string(k + 1), t.sources[k]});
  std::vector<std::string> cols = {"parameter", "name"};
  for (const auto& l : labels) cols.insert(cols.end(), {l, l + "_confidence"});
  for (const auto& rep : representative_gpus()) {
    std::string id = rep.arch;
    cols.insert(cols.end(), {id + "_documented", id + "_source", id + "_other_method"});
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : t.lines) {
    std::string name;
    for (const auto* p : line.measured)
      if (p && name.empty()) name = p->name;
    std::vector<std::string> r = {line.label, name};
    for (size_t k = 0; k < t.n_runs; ++k) {
      const Parameter* p = line.measured[k];
      r.push_back(p ? format_number(p->value) + " " + p->unit : "");
      r.push_back(p ? format_printf("%.2f", p->confidence) : "");
    }
    for (size_t k = t.n_runs; k < line.cells.size(); ++k) {
      const Cell& c = line.cells[k];
      r.push_back(c.text == "-" ? "" : c.text);
      r.push_back(c.source ? std::to_string(c.source) : "");
      r.push_back(c.source ? (c.other_method ? "1" : "0") : "");
    }
    rows.push_back(r);
  }
  return format_csv(meta, cols, rows);
}

std::string markdown_paper_table(const PaperTable& t) {
  std::string out = "| parameter |";
  for (const auto& h : t.header) out += " " + h + " |";
  out += "\n| --- |";
  for (size_t k = 0; k < t.header.size(); ++k) out += " ---: |";
  out += "\n";
  for (const auto& line : t.lines) {
    out += "| " + line.label + " |";
    for (const auto& c : line.cells) {
      std::string text = c.text;
      if (c.low_confidence) text += " \\*";
      if (c.source) text += " [" + std::to_string(c.source) + "]";
      if (c.other_method) text += " †";
      out += " " + text + " |";
    }
    out += "\n";
  }
  out += "\nMeasured by gpuprobe " + std::string(gpuprobe_version()) + "; documented figures after them.";
  if (t.any_low) out += " \\* " + kLowNote + ".";
  if (t.any_other) out += " † " + kOtherNote + ".";
  out += "\n\n";
  for (size_t k = 0; k < t.sources.size(); ++k) out += std::to_string(k + 1) + ". " + t.sources[k] + "\n";
  return out;
}

// LaTeX with booktabs: measured columns, then the documented ones under one rule.
std::string latex_table(const PaperTable& t) {
  const size_t n_runs = t.n_runs, n_doc = representative_gpus().size();
  std::string out = "% gpuprobe compare --table latex (gpuprobe " + std::string(gpuprobe_version()) +
                    "); needs \\usepackage{booktabs}\n\\begin{table}[t]\n\\centering\n\\footnotesize\n"
                    "\\begin{tabular}{l" + std::string(n_runs + n_doc, 'r') + "}\n\\toprule\n";
  out += " & \\multicolumn{" + std::to_string(n_runs) + "}{c}{Measured (gpuprobe)} & \\multicolumn{" +
         std::to_string(n_doc) + "}{c}{Documented} \\\\\n";
  out += "\\cmidrule(lr){2-" + std::to_string(1 + n_runs) + "} \\cmidrule(lr){" + std::to_string(2 + n_runs) + "-" +
         std::to_string(1 + n_runs + n_doc) + "}\nParameter";
  for (const auto& h : t.header) out += " & " + latex_escape(h);
  out += " \\\\\n\\midrule\n";
  for (const auto& line : t.lines) {
    out += latex_escape(line.label);
    for (const auto& c : line.cells) {
      std::string text = latex_escape(c.text), marks;
      if (c.low_confidence) marks += "*";
      if (c.source) marks += std::string(marks.empty() ? "" : ",") + std::to_string(c.source);
      if (c.other_method) marks += "\\dagger";
      out += " & " + text + (marks.empty() ? "" : "$^{" + marks + "}$");
    }
    out += " \\\\\n";
  }
  out += "\\bottomrule\n\\end{tabular}\n\\par\\smallskip\n\\begin{minipage}{\\linewidth}\\scriptsize\n";
  if (t.any_low) out += "$^{*}$ " + latex_escape(kLowNote) + ". ";
  if (t.any_other) out += "$^{\\dagger}$ " + latex_escape(kOtherNote) + ". ";
  for (size_t k = 0; k < t.sources.size(); ++k)
    out += "$^{" + std::to_string(k + 1) + "}$ " + latex_escape(t.sources[k]) + ". ";
  out += "\n\\end{minipage}\n\\caption{Measured parameters beside the documented Kepler, Maxwell and Volta figures.}\n"
         "\\label{tab:gpuprobe}\n\\end{table}\n";
  return out;
}

}  // namespace

std::string paper_table(const std::vector<RunData>& runs, const std::vector<std::string>& labels,
                        const Reference& ref, const std::string& format) {
  if (format != "markdown" && format != "latex" && format != "csv")
    throw std::invalid_argument("--table: expected markdown, latex or csv, got '" + format + "'");
  const PaperTable t = build_table(runs, labels, ref);
  if (format == "csv") return csv_table(t, labels);
  if (format == "markdown") return markdown_paper_table(t);
  return latex_table(t);
}

}  // namespace gpuprobe
