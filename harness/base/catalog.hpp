#pragma once
// The canonical parameter table (docs/parameters.md), embedded at build time: every name a
// run may write, with its unit, family, method label and tolerance, and the vocabulary of
// method labels. One source for the labels the runs carry and the reference figures match.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/observation.hpp"

namespace gpuprobe {

struct CatalogEntry {
  std::string name, unit, family, method, tolerance;
};

struct Catalog {
  std::set<std::string> methods;               // the "## Method labels" table
  std::map<std::string, CatalogEntry> params;  // the "## Parameters" table, by name
  std::map<std::string, std::string> not_in_quick;  // "## Not measured by a quick run": name -> reason
  std::map<std::string, std::string> includes;      // "## Method variants": name -> what a step holds
};

// Parses the markdown: rows "| `label` | meaning |" under "## Method labels" and
// "| `name` | unit | family | `method` | tolerance |" under "## Parameters", and
// "| `name` | reason |" under "## Not measured by a quick run", "| `name` | includes |" under
// "## Method variants".
Catalog parse_catalog(const std::string& markdown);

// docs/parameters.md as built into this program.
const Catalog& catalog();

// The catalog's entry for a name, or nullptr. A row named with a placeholder, `l2_near_sm_count_<g>`,
// stands for that prefix followed by a number (one parameter per partition, GPU, ...).
const CatalogEntry* find_parameter(const std::string& name);

// The longest a method label may be (the report's column and the CSV stay readable).
constexpr size_t kMaxMethodLabel = 40;

// Prefixes the method text with the catalog's label for the parameter's name ("index_chase: ...")
// unless it already starts with a label; names not in the catalog are left as they are (the
// catalog test names them).
void attach_method_label(Parameter& p);

// A quick run keeps only what it measures faithfully: removes from `params` every parameter
// the catalog lists as not measured by a quick run, and returns "name,reason" rows for them.
std::vector<std::vector<std::string>> drop_not_quick(std::vector<Parameter>& params);

// The "name,reason" rows of every parameter of `family` in the catalog, for a family a quick
// run leaves out as a whole (base/family.hpp's not_in_quick).
std::vector<std::vector<std::string>> family_rows_not_measured(const std::string& family,
                                                               const std::string& reason);

// A tolerance of the table as a fraction: "3 %" -> 0.03, "exact" -> 0; false when the
// parameter is not compared ("not compared ...").
bool tolerance_fraction(const std::string& tolerance, double* fraction);

}  // namespace gpuprobe
