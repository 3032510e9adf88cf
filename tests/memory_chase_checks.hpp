#pragma once
// What the tests of the four chase families (granularity, fine_grained, carveout, tlb) share:
// a row maker, the invariants every parameter keeps, a BoundarySearch driven the way the probes
// drive it, and the recorded H100 curves (tests/data/h100_<family>.csv).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "analysis/common/memory_chase.hpp"
#include "base/csv.hpp"
#include "base/observation.hpp"

namespace gpuprobe::chase_test {

constexpr double kKiB = 1024, kMiB = 1 << 20, kGiB = 1 << 30;

inline Observation row(const std::string& family, const std::string& probe, Params params, double v,
                       const std::string& unit) {
  return Observation{family, probe, std::move(params), v, unit, v, v, v, 3};
}

inline std::string num(double v) { return format_number(v); }

inline void expect_sane(const Parameter& p) {
  EXPECT_GE(p.confidence, 0.0) << p.name;
  EXPECT_LE(p.confidence, 1.0) << p.name;
  EXPECT_LE(p.low, p.value) << p.name;
  EXPECT_GE(p.high, p.value) << p.name;
  EXPECT_FALSE(p.method.empty()) << p.name;
  EXPECT_FALSE(p.evidence.empty()) << p.name;
}

// Runs a BoundarySearch the way the probes do, on a predicate.
template <class Fits>
void search(BoundarySearch& s, Fits fits) {
  while (auto x = s.next()) s.add(*x, fits(*x));
}

// tests/data/h100_<family><suffix>.csv analysed as `family` (suffix "_repeat": a second run).
inline std::vector<Parameter> h100(const std::string& family, const std::string& suffix = "") {
  std::string path = std::string(GPUPROBE_TEST_DATA) + "/h100_" + family + suffix + ".csv";
  if (!std::filesystem::exists(path)) return {};
  Metadata meta;
  auto obs = read_observations(path, &meta);
  return analyze(family, obs, meta);
}

inline bool have(const std::string& family) {
  return std::filesystem::exists(std::string(GPUPROBE_TEST_DATA) + "/h100_" + family + ".csv");
}

inline bool pow2(double v) { return v >= 1 && std::exp2(std::round(std::log2(v))) == v; }

}  // namespace gpuprobe::chase_test
