#pragma once
// The canonical parameter table (docs/parameters.md), embedded at build time: every name a
// run may write, with its unit, family, method label and tolerance, and the vocabulary of
// method labels. One source for the labels the runs carry and the reference figures match.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/observation.hpp"

namespace gpuprobe {

struct CatalogEntry {
  std::string name, unit, family, method, tolerance;
};

struct Catalog {
  std::set<std::string> methods;               // the "## Method labels" table
  std::map<std::string, CatalogEntry> params;  // the "## Parameters" table, by name
};

// Parses the markdown: rows "| `label` | meaning |" under "## Method labels" and
// "| `name` | unit | family | `method` | tolerance |" under "## Parameters".
Catalog parse_catalog(const std::string& markdown);

// docs/parameters.md as built into this program.
const Catalog& catalog();

// The longest a method label may be (the report's column and the CSV stay readable).
constexpr size_t kMaxMethodLabel = 40;

// Prefixes the method text with the catalog's label for the parameter's name ("index_chase: ...")
// unless it already starts with a label; names not in the catalog are left as they are (the
// catalog test names them).
void attach_method_label(Parameter& p);

}  // namespace gpuprobe
