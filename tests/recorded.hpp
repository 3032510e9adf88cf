#pragma once
// Tests on data recorded on a GPU (tests/data/h100_*.csv) fail, never skip, when their data
// is missing: renaming or deleting a recorded file turns them red instead of silently
// passing. Usage: REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_bandwidth.csv";
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "base/observation.hpp"

#define REQUIRE_RECORDED(present) \
  if (present) {                  \
  } else                          \
    FAIL() << "recorded test data missing (committed under tests/data/): "

namespace gpuprobe {

// tests/data/<name>
inline std::string data_file(const std::string& name) { return std::string(GPUPROBE_TEST_DATA) + "/" + name; }

// The observations of tests/data/h100_<name>.csv (and, given meta, its metadata); none without
// the file.
inline std::vector<Observation> recorded_observations(const std::string& name,
                                                      Metadata* meta = nullptr) {
  const std::string path = data_file("h100_" + name + ".csv");
  if (!std::filesystem::exists(path)) return {};
  return read_observations(path, meta);
}

// What the family's analyzer infers from tests/data/h100_<family>.csv; none without the file.
inline std::vector<Parameter> recorded_parameters(const std::string& family) {
  std::string path = data_file("h100_" + family + ".csv");
  if (!std::filesystem::exists(path)) return {};
  Metadata meta;
  auto obs = read_observations(path, &meta);
  return analyze(family, obs, meta);
}

}  // namespace gpuprobe

// Fails the test (never skips) where tests/data/h100_<family>.csv is missing.
#define SKIP_WITHOUT(family)                                                                   \
  REQUIRE_RECORDED(std::filesystem::exists(data_file("h100_" + std::string(family) + ".csv"))) \
      << "tests/data/h100_" << (family) << ".csv"
