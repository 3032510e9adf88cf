// libFuzzer target: CSV text -> observations -> every registered analyzer, as `gpuprobe
// analyze` meets a family file. Whatever the rows hold, an analyzer may fail only with an
// exception (reported by analyze_checked), and every parameter that comes out holds the
// invariants of a written parameter. Seeds: tests/fuzz/corpus/ (family files among them).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analysis/analyzer.hpp"
#include "core/csv.hpp"
#include "core/observation.hpp"

using namespace gpuprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<Observation> obs;
  Metadata meta;
  try {
    CsvTable t = parse_csv(text, "fuzz.csv");
    obs = observations_from_table(t);
    meta = t.meta;
  } catch (const CsvError&) {
    return 0;
  }
  for (const auto& [family, fn] : analyzers()) {
    // The file names its family; every analyzer is handed the rows all the same.
    for (auto& o : obs) o.family = family;
    Analysis a = analyze_checked(family, obs, meta);
    for (const auto& p : a.params)
      if (!(std::isfinite(p.value) && std::isfinite(p.low) && std::isfinite(p.high) &&
            p.low <= p.value && p.value <= p.high && p.confidence >= 0 && p.confidence <= 1 &&
            p.value > 0)) {
        std::fprintf(stderr, "%s: %s = %.17g [%.17g, %.17g] confidence %.17g\n", family.c_str(),
                     p.name.c_str(), p.value, p.low, p.high, p.confidence);
        std::abort();
      }
  }
  return 0;
}
