#include <algorithm>
#include <cmath>
#include <exception>
#include <iterator>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/operating_point.hpp"

namespace gpuprobe {

namespace {

// Bounds are computed apart from the value; a rounding-sized miss is not a contradiction.
constexpr double kWriteSlack = 1e-9;

bool finite_row(const Observation& o) {
  return plausible(o.value) && plausible(o.p05) && plausible(o.p50) && plausible(o.p95);
}

// A row no GPU can produce: a time (the units the probes time in) that is zero or negative,
// or percentiles out of order.
bool impossible_row(const Observation& o) {
  static const char* const kTimeUnits[] = {"cycles", "ns", "us", "ms", "s", "cycles/request"};
  const bool time =
      std::find(std::begin(kTimeUnits), std::end(kTimeUnits), o.unit) != std::end(kTimeUnits);
  return (time && o.value <= 0) || o.p05 > o.p95;
}

// Rows in, no parameter out: said, never silent (an analyzer leaves a parameter out when its
// rows cannot give it, and rows that are all zero or negative give none).
std::string nothing_inferred(const std::string& family, const std::vector<Observation>& kept) {
  const bool none_positive =
      std::none_of(kept.begin(), kept.end(), [](const Observation& o) { return o.value > 0; });
  return family + ": no parameter inferred from its " + std::to_string(kept.size()) +
         " observation row(s)" +
         (none_positive ? " (every value is zero or negative: not a measurement)" : "");
}

}  // namespace

std::map<std::string, Analyzer>& analyzers() {
  static std::map<std::string, Analyzer> all;
  return all;
}

Analysis analyze_checked(const std::string& family, const std::vector<Observation>& obs,
                         const Metadata& meta) {
  Analysis a;
  auto it = analyzers().find(family);
  if (it == analyzers().end()) return a;
  std::vector<Observation> kept;
  kept.reserve(obs.size());
  size_t impossible = 0;
  for (const auto& o : obs)
    if (!finite_row(o)) continue;
    else if (impossible_row(o)) ++impossible;
    else kept.push_back(o);
  if (kept.size() + impossible != obs.size())
    a.warnings.push_back(family + ": " + std::to_string(obs.size() - kept.size() - impossible) +
                         " observation row(s) with a non-finite or absurd value dropped");
  if (impossible > 0)
    a.warnings.push_back(family + ": " + std::to_string(impossible) +
                         " observation row(s) no GPU can produce (a time <= 0, or p05 > p95) "
                         "dropped");
  // Rows none of which is positive are no measurement: no analyzer is asked to read them.
  if (!kept.empty() &&
      std::none_of(kept.begin(), kept.end(), [](const Observation& o) { return o.value > 0; })) {
    a.warnings.push_back(nothing_inferred(family, kept));
    return a;
  }
  std::vector<Parameter> found;
  try {
    found = it->second(kept, meta);
  } catch (const std::exception& e) {
    a.error = family + ": analysis failed: " + e.what();
    return a;
  }
  if (found.empty() && !kept.empty()) a.warnings.push_back(nothing_inferred(family, kept));
  for (auto& p : found) {
    // Every canonical quantity (sizes, counts, latencies, rates, ratios) is strictly positive.
    std::string why = parameter_violation(p, true, kWriteSlack);
    if (why.empty()) {
      // Within rounding of its bounds: the bounds widen to hold it, so that low <= value <=
      // high holds exactly in what is written.
      p.low = std::min(p.low, p.value);
      p.high = std::max(p.high, p.value);
      attach_method_label(p);  // every parameter names its method's label
      analysis::cap_confidence_by_tolerance(p);
      a.params.push_back(std::move(p));
    } else {
      a.warnings.push_back(family + ": " + (p.name.empty() ? "a parameter" : p.name) +
                           " not written: " + why);
    }
  }
  // Values measured while the clock was held down say so (the family's NVML samples, which
  // the runner wrote into the file's metadata).
  mark_throttled(a.params, meta);
  return a;
}

std::vector<Parameter> analyze(const std::string& family, const std::vector<Observation>& obs,
                               const Metadata& meta) {
  Analysis a = analyze_checked(family, obs, meta);
  if (!a.error.empty()) throw std::runtime_error(a.error);
  return a.params;
}

}  // namespace gpuprobe
