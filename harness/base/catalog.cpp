#include "base/catalog.hpp"

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <utility>

namespace gpuprobe {

namespace {

// Each method label as a symbol, so that a parameter's entry naming a label the vocabulary
// lacks does not compile.
namespace vocabulary {
#define GPUPROBE_METHOD(label, meaning) constexpr char label[] = #label;
#include "base/parameter_list.hpp"
}  // namespace vocabulary

// The units, methods and tolerance of a pipes op's two parameters.
constexpr const char* kPipes = "pipes";
constexpr char kPipeTolerance[] = "3 %";

Catalog build() {
  Catalog c;
#define GPUPROBE_METHOD(label, what) c.method_list.push_back({#label, what});
#define GPUPROBE_PARAMETER(n, unit, family, label, tolerance, what) \
  c.entries.push_back({param::n, unit, family, vocabulary::label, tolerance, what});
#define GPUPROBE_NUMBERED(n, pattern, unit, family, label, tolerance, what) \
  c.entries.push_back({pattern, unit, family, vocabulary::label, tolerance, what});
#define GPUPROBE_PIPE_OP(op, results, instruction)                                         \
  c.entries.push_back({param::op##_throughput_per_sm, "results/clk/SM", kPipes,            \
                       vocabulary::throughput_loop, kPipeTolerance,                        \
                       std::string(results) + " per clock per SM, every SM busy"});        \
  c.entries.push_back(                                                                     \
      {param::op##_latency, "cycles", kPipes, vocabulary::dependent_chain, kPipeTolerance, \
       std::string("cycles from one ") + instruction + " to the next that needs its result"});
#define GPUPROBE_ALIAS(old, n, why) c.aliases[old] = {old, param::n, why};
#include "base/parameter_list.hpp"
  for (const auto& m : c.method_list) c.methods.insert(m.label);
  for (const auto& e : c.entries) c.params[e.name] = e;
  return c;
}

// The tables whose key is a name written as an expression in namespace param (a symbol, or a
// numbered name's call).
void add_name_tables(Catalog& c) {
  using namespace param;
#define GPUPROBE_VARIANT(n, what) c.includes[n] = what;
#define GPUPROBE_NOT_IN_QUICK(n, why) c.not_in_quick[n] = why;
#include "base/parameter_list.hpp"
}

// The catalog's entry of `name` if its family is `family`, else std::logic_error.
std::string checked(const std::string& name, const char* family) {
  const CatalogEntry* e = find_parameter(name);
  if (!e || e->family != family)
    throw std::logic_error(name + ": no parameter of the " + family +
                           " family by that name in the catalog (base/parameters/)");
  return name;
}

// The same for the family of `sibling`, one of its fixed parameters: a family whose name is
// declared in its analysis header (a floor above this one) is typed only in the entries.
std::string checked_beside(const std::string& name, const char* sibling) {
  return checked(name, find_parameter(sibling)->family.c_str());
}

}  // namespace

const Catalog& catalog() {
  static const Catalog c = [] {
    Catalog built = build();
    add_name_tables(built);
    return built;
  }();
  return c;
}

std::string param::numbered_name(std::string_view pattern, long n) {
  const size_t open = pattern.find('<'), close = pattern.find('>', open);
  if (open == std::string_view::npos || close == std::string_view::npos || n < 0)
    throw std::logic_error("numbered name " + std::string(pattern) + " of " + std::to_string(n));
  return std::string(pattern.substr(0, open)) + std::to_string(n) +
         std::string(pattern.substr(close + 1));
}

std::string param::pipe_throughput_per_sm(std::string_view op) {
  return checked(std::string(op) + "_throughput_per_sm", kPipes);
}

std::string param::pipe_latency(std::string_view op) {
  return checked(std::string(op) + "_latency", kPipes);
}

std::string param::dual_issue_pair(std::string_view pair) {
  return checked_beside("dual_issue_" + std::string(pair), param::dual_issue_fp32_int32);
}

std::string param::p2p_bandwidth(std::string_view mode) {
  return checked_beside("p2p_" + std::string(mode) + "_bandwidth", param::p2p_latency);
}

std::string param::collective_busbw(std::string_view c) {
  return checked_beside(std::string(c) + "_busbw", param::collective_ranks);
}

std::string param::collective_latency(std::string_view c) {
  return checked_beside(std::string(c) + "_latency", param::collective_ranks);
}

std::string param::op_energy(std::string_view op, bool zero_operands) {
  return checked_beside(std::string(op) + (zero_operands ? "_energy_zero" : "_energy"),
                        param::static_power);
}

std::string param::level_energy_per_byte(std::string_view level, bool zero_operands) {
  return checked_beside(std::string(level) + "_energy_per_byte" + (zero_operands ? "_zero" : ""),
                        param::static_power);
}

namespace {

// Whether `name` is `pattern` with a number (one or more digits) in place of its <x>.
bool matches_pattern(const std::string& name, const std::string& pattern) {
  const size_t open = pattern.find('<'), close = pattern.find('>', open);
  if (open == std::string::npos || close == std::string::npos) return false;
  const size_t tail = pattern.size() - close - 1;
  if (name.size() <= open + tail || name.compare(0, open, pattern, 0, open) != 0 ||
      name.compare(name.size() - tail, tail, pattern, close + 1, tail) != 0)
    return false;
  const std::string number = name.substr(open, name.size() - open - tail);
  return number.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

const CatalogEntry* find_parameter(const std::string& name) {
  const auto& params = catalog().params;
  if (auto it = params.find(name); it != params.end()) return &it->second;
  for (const auto& [pattern, entry] : params)
    if (matches_pattern(name, pattern)) return &entry;
  return nullptr;
}

std::string canonical_name(const std::string& name) {
  const auto& aliases = catalog().aliases;
  const auto it = aliases.find(name);
  return it == aliases.end() ? name : it->second.name;
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
    if (it == catalog().not_in_quick.end()) kept.push_back(std::move(p));
    else dropped.push_back({p.name, it->second});
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

std::vector<Parameter> read_parameters(const std::string& path, Metadata* meta,
                                       std::vector<std::string>* rejected) {
  CsvTable t = read_csv(path);
  if (meta) *meta = t.meta;
  return parameters_from_table(t, rejected);
}

namespace {

// A value read back may miss its bounds by this fraction of itself: the committed runs'
// suite_wall_time took its value and its bounds from three clock reads microseconds apart
// (up to 5e-8 of the value outside; fixed since), which is no edit of the file.
constexpr double kReadSlack = 1e-6;

// Row r of a parameters table, or why it cannot be used: as a written row is checked, and
// against the catalog (a name it lacks, an old name reading through its alias table, or a
// unit other than its own, is refused).
std::string parameter_of_row(const CsvTable& t, size_t r, const std::vector<int>& c, Parameter* p) {
  const auto& row = t.rows[r];
  auto cell = [&](int i) { return row[static_cast<size_t>(c[static_cast<size_t>(i)])]; };
  p->name = canonical_name(cell(0));  // an old name reads as today's
  p->unit = cell(2);
  p->method = cell(6);
  p->evidence = cell(7);
  double* numbers[] = {&p->value, &p->low, &p->high, &p->confidence};
  const int columns[] = {1, 3, 4, 5};
  for (int k = 0; k < 4; ++k)
    if (!parse_number(cell(columns[k]), numbers[k]))
      return "column '" + kParameterHeader[static_cast<size_t>(columns[k])] +
             "' is not a number: '" + cell(columns[k]) + "'";
  const CatalogEntry* entry = find_parameter(p->name);
  if (!entry) return "not a parameter of this gpuprobe's catalog (nor an old name of one)";
  if (p->unit != entry->unit)
    return "unit '" + p->unit + "', where the catalog's is '" + entry->unit + "'";
  return parameter_violation(*p, true, kReadSlack);
}

}  // namespace

std::vector<Parameter> parameters_from_table(const CsvTable& t, std::vector<std::string>* rejected,
                                             std::vector<int>* lines) {
  std::vector<int> c;
  for (const auto& h : kParameterHeader) c.push_back(t.require(h));
  std::vector<Parameter> out;
  std::map<std::string, int> first_line;
  if (lines) lines->clear();
  for (size_t r = 0; r < t.rows.size(); ++r) {
    Parameter p;
    std::string why = parameter_of_row(t, r, c, &p);
    const int line = t.row_lines[r];
    if (why.empty() && !first_line.emplace(p.name, line).second)
      why = "given again (first on line " + std::to_string(first_line[p.name]) + ")";
    if (!why.empty()) {
      const std::string m = t.path + ":" + std::to_string(line) + ": " +
                            (p.name.empty() ? std::string("a parameter") : p.name) + ": " + why;
      if (!rejected) throw CsvError(m);
      rejected->push_back(m + ": row not used");
      continue;
    }
    out.push_back(std::move(p));
    if (lines) lines->push_back(line);
  }
  return out;
}

}  // namespace gpuprobe
