// libFuzzer target for the readers of user-supplied CSV: the CSV parser, observations,
// parameters and the documented figures with their lookups. A reader may reject its input
// only with CsvError (a message naming file and line); anything else escaping, or any
// sanitizer report, is a bug. Seeds: tests/fuzz/corpus/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/observation.hpp"
#include "app/reference.hpp"

using namespace gpuprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    CsvTable t = parse_csv(text, "fuzz.csv");
    try {
      observations_from_table(t);
    } catch (const CsvError&) {
    }
    try {
      parameters_from_table(t);
    } catch (const CsvError&) {
    }
    try {
      std::vector<std::string> rejected;  // a bad row said and left out, the rest read
      parameters_from_table(t, &rejected);
    } catch (const CsvError&) {
    }
  } catch (const CsvError&) {
  }
  try {
    Reference ref = parse_reference(text, "fuzz.csv");
    for (const auto& f : ref.figures) {
      describe(f);
      cc_covers(f.cc, 9, 0);
      documented_for_gpu(ref, f.quantity, f.gpu, 7, 0);
      documented_for_arch(ref, f.quantity, f.arch);
    }
  } catch (const CsvError&) {
  }
  return 0;
}
