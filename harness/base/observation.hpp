#pragma once
// Observations (one measurement per row) and inferred parameters: the data contract of
// docs/design.md section 3, with readers that check what they are handed.
#include <string>
#include <utility>
#include <vector>

#include "base/csv.hpp"

namespace gpuprobe {

// Swept parameters of one measurement, in column order: ("footprint_bytes", "4096"), ...
using Params = std::vector<std::pair<std::string, std::string>>;

struct Observation {
  std::string family;
  std::string probe;
  Params params;
  double value = 0;  // the figure a reader should quote: the median unless the probe says
  std::string unit;
  double p05 = 0, p50 = 0, p95 = 0;
  int reps = 0;

  // The swept parameter `key` as a number; NaN when absent or not numeric.
  double param(const std::string& key) const;
  std::string param_text(const std::string& key) const;
  // The same measurement in another unit: value and percentiles times `factor`.
  Observation scaled(double factor, std::string new_unit) const;
};

struct Parameter {
  std::string name;
  double value = 0;
  std::string unit;
  double low = 0, high = 0;
  double confidence = 0;
  std::string method;
  std::string evidence;  // the file it came from, then any notes after "; "
};

// The file an evidence names: its text up to the first "; " ("pipes.csv; sw_power_cap ..."
// -> "pipes.csv").
std::string evidence_path(const std::string& evidence);

// Fixed columns that end every observations file.
extern const std::vector<std::string> kObservationTail;

// Tidy CSV text: family,probe,<union of swept parameters in first-seen order>,value,unit,...
std::string format_observations(const Metadata& meta, const std::vector<Observation>& obs);
// Reads an observations file; throws CsvError naming file and line on anything malformed.
std::vector<Observation> read_observations(const std::string& path, Metadata* meta = nullptr);
std::vector<Observation> observations_from_table(const CsvTable& t);

std::string format_parameters(const Metadata& meta, const std::vector<Parameter>& params);
std::vector<Parameter> read_parameters(const std::string& path, Metadata* meta = nullptr);
// Parameters of a parsed parameters.csv, one per row in order (so t.row_lines[i] is the
// line of the i-th); throws CsvError naming file and line on anything malformed.
std::vector<Parameter> parameters_from_table(const CsvTable& t);

// Adds `found` to `params`, keeping first-seen order; where two families measured the same
// parameter, the one with the higher confidence stays.
void merge_parameters(std::vector<Parameter>& params, const std::vector<Parameter>& found);

// Rows of `obs` that belong to `probe` and have `unit` (either may be empty for any).
std::vector<Observation> select(const std::vector<Observation>& obs, const std::string& probe,
                                const std::string& unit = "");

}  // namespace gpuprobe
