// libFuzzer target: CSV text -> observations -> every registered analyzer, as `gpuprobe
// analyze` meets a family file. Whatever the rows hold, an analyzer may fail only with an
// exception (reported by analyze_checked), and every parameter that comes out holds the
// invariants of a written parameter. Seeds: tests/fuzz/corpus/ (family files among them).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analyze_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bad =
      gpuprobe::analyze_input(std::string(reinterpret_cast<const char*>(data), size));
  if (!bad.empty()) {
    std::fprintf(stderr, "invariant broken: %s\n", bad.c_str());
    std::abort();
  }
  return 0;
}
