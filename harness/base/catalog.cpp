#include "base/catalog.hpp"

#include <cstdlib>
#include <sstream>

namespace gpuprobe {

namespace {

// docs/parameters.md, written into the build tree by CMakeLists.txt as a raw string literal.
const char kParametersMarkdown[] =
#include "parameters_md.inc"
    ;

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// "| `a` | b |" -> {"a", "b"}: the cells of a table row, backquotes removed.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|') {
      out.push_back(trim(cur));
      cur.clear();
    } else if (line[i] != '`') {
      cur += line[i];
    }
  }
  return out;
}

}  // namespace

Catalog parse_catalog(const std::string& markdown) {
  Catalog c;
  std::istringstream in(markdown);
  std::string section;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) {
      section = trim(line.substr(3));
      continue;
    }
    if (line.rfind("| `", 0) != 0) continue;  // headers and separators start "| name", "| ---"
    auto row = cells(line);
    if (section == "Method labels" && !row.empty()) {
      c.methods.insert(row[0]);
    } else if (section == "Parameters" && row.size() >= 5) {
      c.params[row[0]] = {row[0], row[1], row[2], row[3], row[4]};
    } else if (section == "Not measured by a quick run" && row.size() >= 2) {
      c.not_in_quick[row[0]] = row[1];
    } else if (section == "Method variants" && row.size() >= 2) {
      c.includes[row[0]] = row[1];
    }
  }
  return c;
}

const Catalog& catalog() {
  static const Catalog c = parse_catalog(kParametersMarkdown);
  return c;
}

const CatalogEntry* find_parameter(const std::string& name) {
  const auto& params = catalog().params;
  if (auto it = params.find(name); it != params.end()) return &it->second;
  // "prefix_<g>": the name is the prefix and a number.
  const size_t cut = name.find_last_not_of("0123456789");
  if (cut == std::string::npos || cut + 1 == name.size()) return nullptr;
  const std::string prefix = name.substr(0, cut + 1);
  for (auto it = params.lower_bound(prefix); it != params.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    const std::string rest = it->first.substr(prefix.size());
    if (rest.size() > 2 && rest.front() == '<' && rest.back() == '>') return &it->second;
  }
  return nullptr;
}

void attach_method_label(Parameter& p) {
  const CatalogEntry* entry = find_parameter(p.name);
  if (!entry) return;
  const std::string& label = entry->method;
  size_t colon = p.method.find(':');
  if (colon != std::string::npos && catalog().methods.count(p.method.substr(0, colon))) return;
  p.method = label + (p.method.empty() ? "" : ": " + p.method);
}

std::vector<std::vector<std::string>> drop_not_quick(std::vector<Parameter>& params) {
  std::vector<std::vector<std::string>> dropped;
  std::vector<Parameter> kept;
  for (auto& p : params) {
    auto it = catalog().not_in_quick.find(p.name);
    if (it == catalog().not_in_quick.end())
      kept.push_back(std::move(p));
    else
      dropped.push_back({p.name, it->second});
  }
  params = std::move(kept);
  return dropped;
}

std::vector<std::vector<std::string>> family_rows_not_measured(const std::string& family,
                                                               const std::string& reason) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, entry] : catalog().params)
    if (entry.family == family) rows.push_back({name, reason});
  return rows;
}

bool tolerance_fraction(const std::string& tolerance, double* fraction) {
  if (tolerance == "exact") {
    *fraction = 0;
    return true;
  }
  char* end = nullptr;
  double v = std::strtod(tolerance.c_str(), &end);
  if (end == tolerance.c_str() || std::string(end).find('%') == std::string::npos) return false;
  *fraction = v / 100;
  return true;
}

}  // namespace gpuprobe
