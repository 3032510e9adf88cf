#pragma once
// Tests on data recorded on a GPU (tests/data/h100_*.csv) fail, never skip, when their data
// is missing: renaming or deleting a recorded file turns them red instead of silently
// passing. Usage: REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_bandwidth.csv";
#include <gtest/gtest.h>

#include <string>

#define REQUIRE_RECORDED(present) \
  if (present) {                  \
  } else                          \
    FAIL() << "recorded test data missing (committed under tests/data/): "

namespace gpuprobe {

// tests/data/<name>
inline std::string data_file(const std::string& name) { return std::string(GPUPROBE_TEST_DATA) + "/" + name; }

}  // namespace gpuprobe
