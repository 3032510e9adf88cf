#include "app/catalog_doc.hpp"

#include <cstdio>
#include <exception>
#include <map>
#include <set>
#include <stdexcept>

#include "app/cli.hpp"
#include "app/cli_parse.hpp"
#include "app/suite_doc.hpp"
#include "base/data_paths.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/run_dir.hpp"

namespace gpuprobe {

namespace {

const char kSource[] = "harness/base/parameters/";

std::string code(const std::string& s) { return "`" + s + "`"; }

std::string methods_table() {
  std::string t = "| label | what it means |\n| --- | --- |\n";
  for (const auto& m : catalog().method_list)
    t += "| " + code(m.label) + " | " + m.meaning + " |\n";
  return t;
}

// One table per family, in the order the catalog lists them.
std::string parameters_table() {
  std::vector<std::string> families;
  std::map<std::string, std::string> rows;
  for (const auto& e : catalog().entries) {
    if (!rows.count(e.family)) families.push_back(e.family);
    rows[e.family] += "| " + code(e.name) + " | " + e.unit + " | " + code(e.method) + " | " +
                      e.tolerance + " | " + e.meaning + " |\n";
  }
  std::string t;
  for (const auto& f : families)
    t += (t.empty() ? "" : "\n") + std::string("### ") + f +
         "\n\n| name | unit | method | tolerance | meaning |\n| --- | --- | --- | --- | --- |\n" +
         rows[f];
  return t;
}

// A table of `name -> text` rows, in the catalog's order of the names (a numbered name at its
// pattern's place).
std::string by_name_table(const std::string& header, const std::map<std::string, std::string>& m) {
  std::map<std::string, size_t> place;
  for (size_t i = 0; i < catalog().entries.size(); ++i) place[catalog().entries[i].name] = i;
  std::multimap<size_t, std::string> rows;
  for (const auto& [name, text] : m) {
    const CatalogEntry* e = find_parameter(name);
    rows.emplace(e ? place.at(e->name) : place.size(), "| " + code(name) + " | " + text + " |\n");
  }
  std::string t = "| name | " + header + " |\n| --- | --- |\n";
  for (const auto& [i, row] : rows) t += row;
  return t;
}

std::string aliases_table() {
  std::string t = "| old name | read as | why |\n| --- | --- | --- |\n";
  for (const auto& e : catalog().entries)
    for (const auto& [old, a] : catalog().aliases)
      if (a.name == e.name) t += "| " + code(old) + " | " + code(a.name) + " | " + a.why + " |\n";
  return t;
}

const std::string kOpen = "<!-- catalog:";
const std::string kClose = "<!-- /catalog:";

}  // namespace

std::vector<std::string> catalog_table_names() {
  return {"methods", "parameters", "variants", "not_in_quick", "aliases"};
}

std::string catalog_table(const std::string& name) {
  if (name == "methods") return methods_table();
  if (name == "parameters") return parameters_table();
  if (name == "variants") return by_name_table("includes", catalog().includes);
  if (name == "not_in_quick") return by_name_table("reason", catalog().not_in_quick);
  if (name == "aliases") return aliases_table();
  throw std::runtime_error("no catalog table '" + name + "'");
}

std::string regenerate_catalog_doc(const std::string& doc) {
  std::string out;
  std::set<std::string> seen;
  size_t at = 0;
  for (size_t open; (open = doc.find(kOpen, at)) != std::string::npos;) {
    const size_t name_end = doc.find_first_of(":", open + kOpen.size());
    const size_t line_end = doc.find('\n', open);
    if (name_end == std::string::npos || line_end == std::string::npos || name_end > line_end)
      throw std::runtime_error("a catalog marker without its table's name and a newline");
    const std::string name = doc.substr(open + kOpen.size(), name_end - open - kOpen.size());
    const std::string close_marker = kClose + name + " -->";
    const size_t close = doc.find(close_marker, line_end);
    if (close == std::string::npos) throw std::runtime_error("no " + close_marker);
    if (!seen.insert(name).second) throw std::runtime_error("catalog table '" + name + "' twice");
    out += doc.substr(at, line_end + 1 - at) + "\n" + catalog_table(name) + "\n";
    at = close;
  }
  for (const auto& name : catalog_table_names())
    if (!seen.count(name)) throw std::runtime_error("no catalog table '" + name + "' in the text");
  return out + doc.substr(at);
}

namespace {

// Writes `path` with `text` where it differs, and says which.
int write_generated(const std::string& path, const std::string& before, const std::string& after,
                    const char* source) {
  if (after != before) write_file_atomic(path, after);
  const std::string said =
      after == before ? std::string("as ") + source + " gives it" : "rewritten";
  std::printf("%s: %s\n", path.c_str(), said.c_str());
  return checked_stdout("gpuprobe catalog", 0);
}

int write_suite(const std::string& doc, const std::string& times) {
  std::string before;
  try {
    before = read_file(doc);
  } catch (const std::exception&) {
    // A first page: nothing to compare with.
  }
  return write_generated(doc, before,
                         suite_page(read_family_times(times), find_data_paths().plots_dir, times),
                         "the registry");
}

}  // namespace

int catalog_main(const std::vector<std::string>& args) {
  CLI::App app{
      "The catalog of parameters: every name a run may write, its unit, family, method "
      "label, tolerance and meaning (no GPU).",
      "gpuprobe catalog"};
  std::string doc;
  app.add_option("--markdown", doc,
                 std::string("rewrite the generated tables of this document (docs/parameters.md) "
                             "from the catalog, ") +
                     kSource)
      ->type_name("DOC")
      ->check(non_empty());
  std::string suite, times = kSuiteTimesRun;
  app.add_option("--suite", suite,
                 "write the suite on one page (docs/suite.md): each family, its probes, "
                 "parameters, figure and wall time")
      ->type_name("DOC")
      ->check(non_empty());
  app.add_option("--times", times, "the families.csv whose wall times --suite shows")
      ->type_name("CSV")
      ->capture_default_str();
  if (auto exit_code = parse_subcommand(app, args, "gpuprobe catalog")) return *exit_code;
  try {
    if (!suite.empty()) return write_suite(suite, times);
    if (doc.empty()) {
      std::vector<std::vector<std::string>> rows;
      for (const auto& e : catalog().entries)
        rows.push_back({e.name, e.unit, e.family, e.method, e.tolerance, e.meaning});
      std::fputs(format_csv({}, {"name", "unit", "family", "method", "tolerance", "meaning"}, rows)
                     .c_str(),
                 stdout);
      return checked_stdout("gpuprobe catalog", 0);
    }
    const std::string before = read_file(doc);
    return write_generated(doc, before, regenerate_catalog_doc(before), "the catalog");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuprobe catalog: %s\n", e.what());
    return 1;
  }
}

}  // namespace gpuprobe
