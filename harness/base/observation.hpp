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
// The columns of parameters.csv, in order.
extern const std::vector<std::string> kParameterHeader;

// Tidy CSV text: family,probe,<union of swept parameters in first-seen order>,value,unit,...
std::string format_observations(const Metadata& meta, const std::vector<Observation>& obs);
// Reads an observations file; throws CsvError naming file and line on anything malformed.
std::vector<Observation> read_observations(const std::string& path, Metadata* meta = nullptr);
std::vector<Observation> observations_from_table(const CsvTable& t);

// No quantity this suite measures comes near 1e15 in its unit (bytes, cycles, GB/s, ...):
// anything larger is a broken measurement or a corrupted file, not hardware.
inline constexpr double kAbsurdMagnitude = 1e15;
// Finite and below kAbsurdMagnitude in size.
bool plausible(double v);
// Why `p` may not be written or read as a parameter, or "" when it may: no name, a value or
// bound not plausible(), high < low, the value outside [low, high] by more than `slack` of
// its size, a confidence outside [0, 1]; and, where `positive` (every quantity of the
// catalog: sizes, counts, latencies, rates, ratios of rates), a value <= 0 or a low bound
// < 0: "not measured" is said by leaving a parameter out, never by a zero.
std::string parameter_violation(const Parameter& p, bool positive, double slack);

std::string format_parameters(const Metadata& meta, const std::vector<Parameter>& params);
// Adds `found` to `params`, keeping first-seen order; where two families measured the same
// parameter, the one with the higher confidence stays.
void merge_parameters(std::vector<Parameter>& params, const std::vector<Parameter>& found);

// Rows of `obs` that belong to `probe` and have `unit` (either may be empty for any).
std::vector<Observation> select(const std::vector<Observation>& obs, const std::string& probe,
                                const std::string& unit = "");

}  // namespace gpuprobe
