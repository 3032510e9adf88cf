// The markdown report.md and compare.md share: tables, messages, values in their units, the
// documented figures' cells, and paths shortened so that no file names the machine that wrote it.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>

#include "app/report.hpp"
#include "app/report_detail.hpp"
#include "app/run_analysis.hpp"
#include "app/summary.hpp"

namespace gpuprobe {

namespace fs = std::filesystem;

std::string trim_copy(const std::string& s) {
  size_t b = s.find_first_not_of(' ');
  size_t e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

void Diagnostics::warn(const std::string& m) { warnings.push_back(m); }

void Diagnostics::error(const std::string& m) { errors.push_back(m); }

void Diagnostics::print(const std::string& listed_in) const {
  print_messages(prefix, warnings, errors, false, "all listed in " + listed_in);
}

Reference load_reference_or_report(const std::string& path, Diagnostics& diag) {
  try {
    return load_reference(path);
  } catch (const std::exception& e) {
    diag.error(std::string(e.what()) + " (documented figures left out)");
    Reference empty;
    empty.path = path;
    return empty;
  }
}

std::string human(double value, const std::string& unit) {
  return trim_copy(human_value(value, unit));
}

std::string documented_cell(const DocumentedFigure& doc) {
  return describe(doc) + " [r" + std::to_string(doc.line) + "]";
}

bool units_agree(const RunData& run, size_t index, const DocumentedFigure& doc,
                 const std::string& reference_path, Diagnostics& diag) {
  const Parameter& p = run.params.at(index);
  if (same_unit(p.unit, doc.unit)) return true;
  int line = index < run.param_lines.size() ? run.param_lines[index] : 0;
  diag.warn(run.params_path + (line ? ":" + std::to_string(line) : "") + ": " + p.name + " in '" +
            p.unit + "' but the documented figure (" + reference_path + ":" +
            std::to_string(doc.line) + ") is in '" + doc.unit + "': not compared");
  return false;
}

std::string markdown_table(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "|";
    for (const auto& c : rows[r]) out += " " + md_escape(c) + " |";
    out += "\n";
    if (r == 0) {
      out += "|";
      for (size_t c = 0; c < rows[0].size(); ++c) out += " --- |";
      out += "\n";
    }
  }
  return out;
}

std::string figure_markdown(const FigureScript& s, const std::string& rel_dir) {
  std::string base = rel_dir + "/" + s.name;
  return "### " + s.title + "\n\n" + (s.read.empty() ? "" : s.read + "\n\n") + "![" + s.name + "](" +
         base + ".svg)\n\n";
}

namespace {

// One line per distinct message, in order of first appearance, with how often it came: a
// figure script drawn in three formats repeats each gnuplot warning three times per series.
std::string message_lines(const std::string& kind, const std::vector<std::string>& messages,
                          const std::string& dir) {
  std::vector<std::pair<std::string, int>> distinct;
  for (const auto& m : messages) {
    auto it = std::find_if(distinct.begin(), distinct.end(), [&](const auto& d) { return d.first == m; });
    if (it == distinct.end()) distinct.emplace_back(m, 1);
    else ++it->second;
  }
  std::string out;
  for (const auto& [m, n] : distinct)
    out += "- " + kind + (n > 1 ? " (" + std::to_string(n) + " times)" : "") + ": " +
           md_escape(relative_text(m, dir)) + "\n";
  return out;
}

}  // namespace

std::string messages_markdown(const Diagnostics& diag, const std::string& dir) {
  if (diag.warnings.empty() && diag.errors.empty()) return "";
  return "## Messages\n\n" + message_lines("error", diag.errors, dir) +
         message_lines("warning", diag.warnings, dir) + "\n";
}

const Parameter* first_present(const RunData& run, const QuantityRow& row, size_t* index) {
  for (const char* n : row.names)
    for (size_t i = 0; i < run.params.size(); ++i)
      if (run.params[i].name == n) {
        if (index) *index = i;
        return &run.params[i];
      }
  return nullptr;
}

std::string family_of(const Parameter& p) {
  std::string stem = fs::path(evidence_path(p.evidence)).stem().string();
  return stem.empty() || stem == "families" ? "run" : stem;
}

std::string relative_text(const std::string& text, const std::string& run_dir) {
  // The run's own files by their names; any other absolute path by ".../" and its last part.
  std::string out = text;
  if (!run_dir.empty()) {
    std::string prefix = fs::path(run_dir).lexically_normal().string();
    if (!prefix.empty() && prefix.back() != '/') prefix += '/';
    for (const std::string& p : {prefix, fs::absolute(run_dir).lexically_normal().string() + "/"}) {
      if (p.size() < 2) continue;
      for (size_t at; (at = out.find(p)) != std::string::npos;) out.erase(at, p.size());
    }
  }
  std::string result;
  for (size_t i = 0; i < out.size();) {
    bool starts = out[i] == '/' && (i == 0 || std::strchr(" `'\"(=:,", out[i - 1])) &&
                  i + 1 < out.size() && std::isalnum(static_cast<unsigned char>(out[i + 1]));
    if (!starts) {
      result += out[i++];
      continue;
    }
    size_t end = out.find_first_of(" `'\"),:", i);
    if (end == std::string::npos) end = out.size();
    std::string path = out.substr(i, end - i);
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    result += ".../" + fs::path(path).filename().string();
    i = end;
  }
  return result;
}

std::string documented_figure_cell(const Parameter& p, const DocumentedFigure& doc) {
  // Until the reference carries each figure's method: the ratio where the units agree.
  std::string cell = describe(doc);
  if (same_unit(p.unit, doc.unit) && cell.size() > p.unit.size() + 1 &&
      cell.compare(cell.size() - p.unit.size() - 1, std::string::npos, " " + p.unit) == 0)
    cell.resize(cell.size() - p.unit.size() - 1);  // the unit is the value's, shown beside it
  std::string ratio = versus_documented(p, doc);
  return ratio.empty() ? cell : cell + " (" + ratio + ")";
}

}  // namespace gpuprobe
