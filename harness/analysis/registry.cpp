#include <algorithm>
#include <cmath>
#include <exception>

#include "analysis/analyzer.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/operating_point.hpp"
#include "base/probe.hpp"

namespace gpuprobe {

namespace {

// No quantity this suite measures comes near 1e15 in its unit (bytes, cycles, GB/s, ...):
// anything larger is a broken measurement or a corrupted file, not hardware.
constexpr double kAbsurdMagnitude = 1e15;

bool plausible(double v) { return std::isfinite(v) && std::fabs(v) < kAbsurdMagnitude; }

// Why `p` may not be written, or "" when it may. Every canonical quantity (sizes, counts,
// latencies, rates, ratios) is strictly positive: "not measured" is said by leaving the
// parameter out, never by a zero.
std::string violation(const Parameter& p) {
  if (p.name.empty()) return "no name";
  if (!plausible(p.value)) return "value " + format_number(p.value) + " is not a finite, plausible number";
  if (!plausible(p.low) || !plausible(p.high))
    return "bounds " + format_number(p.low) + ".." + format_number(p.high) + " are not finite";
  if (p.value <= 0) return "value " + format_number(p.value) + " <= 0 for a quantity that cannot be";
  if (p.low < 0) return "low bound " + format_number(p.low) + " < 0";
  if (p.high < p.low) return "high " + format_number(p.high) + " < low " + format_number(p.low);
  // Bounds are computed apart from the value; a rounding-sized miss is not a contradiction.
  const double slack = 1e-9 * std::fabs(p.value);
  if (p.value < p.low - slack || p.value > p.high + slack)
    return "value " + format_number(p.value) + " outside its bounds " + format_number(p.low) +
           ".." + format_number(p.high);
  if (!(p.confidence >= 0 && p.confidence <= 1))
    return "confidence " + format_number(p.confidence) + " outside [0, 1]";
  return "";
}

bool finite_row(const Observation& o) {
  return plausible(o.value) && plausible(o.p05) && plausible(o.p50) && plausible(o.p95);
}

}  // namespace

std::vector<std::unique_ptr<ProbeFamily>>& probe_families() {
  static std::vector<std::unique_ptr<ProbeFamily>> families;
  return families;
}

std::map<std::string, const FamilyDescriptor*>& family_descriptors() {
  static std::map<std::string, const FamilyDescriptor*> all;
  return all;
}

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
  for (const auto& o : obs)
    if (finite_row(o)) kept.push_back(o);
  if (kept.size() != obs.size())
    a.warnings.push_back(family + ": " + std::to_string(obs.size() - kept.size()) +
                         " observation row(s) with a non-finite or absurd value dropped");
  std::vector<Parameter> found;
  try {
    found = it->second(kept, meta);
  } catch (const std::exception& e) {
    a.error = family + ": analysis failed: " + e.what();
    return a;
  }
  for (auto& p : found) {
    std::string why = violation(p);
    if (why.empty()) {
      // Within rounding of its bounds: the bounds widen to hold it, so that low <= value <=
      // high holds exactly in what is written.
      p.low = std::min(p.low, p.value);
      p.high = std::max(p.high, p.value);
      attach_method_label(p);  // every parameter names its method's label
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
