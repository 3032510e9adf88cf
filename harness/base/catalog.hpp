#pragma once
// The canonical parameter table, built from the catalog's lists (base/parameter_list.hpp): every
// name a run may write, with its unit, family, method label, tolerance and meaning, the
// vocabulary of method labels, and the old names committed runs wrote. One source for the
// labels the runs carry, the names the code uses (base/parameter_names.hpp) and the tables of
// docs/parameters.md (`gpuprobe catalog --markdown`).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/observation.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe {

struct CatalogEntry {
  std::string name, unit, family, method, tolerance, meaning;
};

struct MethodLabel {
  std::string label, meaning;
};

struct CatalogAlias {
  std::string old_name, name, why;
};

struct Catalog {
  std::vector<MethodLabel> method_list;             // in the lists' order
  std::vector<CatalogEntry> entries;                // in the lists' order (the document's)
  std::set<std::string> methods;                    // the labels
  std::map<std::string, CatalogEntry> params;       // by name (a numbered one by its pattern)
  std::map<std::string, std::string> not_in_quick;  // name -> why a quick run leaves it out
  std::map<std::string, std::string> includes;      // method variant -> what one step holds
  std::map<std::string, CatalogAlias> aliases;      // by the old name
};

// The catalog as built into this program.
const Catalog& catalog();

// The catalog's entry for a name, or nullptr. A numbered parameter's entry, named by its pattern
// (`l2_near_sm_count_<g>`), stands for the pattern with a number in place of <g>.
const CatalogEntry* find_parameter(const std::string& name);

// The name a parameter has now: an old name of the alias table gives its new one, any other
// name itself. Every reader of a parameters.csv goes through it (read_parameters), so that a
// committed run reads under today's names.
std::string canonical_name(const std::string& name);

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

// Parameters of a parsed parameters.csv, in row order, each row checked as a written one is
// (parameter_violation(); positive for a name of the catalog, whose every row is a positive
// quantity; a name given twice is refused the second time). A row that fails is left out
// and described in *rejected, one line each ("file:line: name: why"); without `rejected` the
// first such row throws CsvError. *lines gets the source line of each parameter kept. A file
// without the eight columns throws CsvError.
std::vector<Parameter> parameters_from_table(const CsvTable& t,
                                             std::vector<std::string>* rejected = nullptr,
                                             std::vector<int>* lines = nullptr);
std::vector<Parameter> read_parameters(const std::string& path, Metadata* meta = nullptr,
                                       std::vector<std::string>* rejected = nullptr);

}  // namespace gpuprobe
