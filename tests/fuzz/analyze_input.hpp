#pragma once
// One input of fuzz_analyze: CSV text -> observations -> every registered analyzer. Returns
// "" when every parameter that came out holds the invariants of a written parameter, else a
// line naming the first that does not. Shared by the fuzz target and by the test that
// replays the committed corpus in every build (tests/test_core.cpp).
#include <cmath>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "base/csv.hpp"
#include "base/observation.hpp"

namespace gpuprobe {

inline std::string analyze_input(const std::string& text) {
  std::vector<Observation> obs;
  Metadata meta;
  try {
    CsvTable t = parse_csv(text, "fuzz.csv");
    obs = observations_from_table(t);
    meta = t.meta;
  } catch (const CsvError&) {
    return "";
  }
  for (const auto& [family, fn] : analyzers()) {
    // The file names its family; every analyzer is handed the rows all the same.
    for (auto& o : obs) o.family = family;
    Analysis a = analyze_checked(family, obs, meta);
    for (const auto& p : a.params)
      if (!(std::isfinite(p.value) && std::isfinite(p.low) && std::isfinite(p.high) &&
            p.low <= p.value && p.value <= p.high && p.confidence >= 0 && p.confidence <= 1 &&
            p.value > 0))
        return family + ": " + p.name + " = " + format_number(p.value) + " [" +
               format_number(p.low) + ", " + format_number(p.high) + "] confidence " +
               format_number(p.confidence);
  }
  return "";
}

}  // namespace gpuprobe
