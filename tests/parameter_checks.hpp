#pragma once
// Looking up and checking the parameters an analyzer returns, for every family's tests.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/observation.hpp"

namespace gpuprobe {

// The parameter named `name`, or nullptr.
inline const Parameter* find(const std::vector<Parameter>& ps, const std::string& name) {
  for (const auto& p : ps)
    if (p.name == name) return &p;
  return nullptr;
}
// Not of a temporary: the pointer would outlive the parameters it points into (keep the
// vector in a variable first).
const Parameter* find(std::vector<Parameter>&& ps, const std::string& name) = delete;

// What every parameter an analyzer returns must be, whatever its family: a finite value inside
// ordered bounds, a confidence in [0, 1], a method and a unit (and, when given, its evidence).
inline void expect_well_formed(const std::vector<Parameter>& ps, const std::string& evidence = "") {
  for (const auto& p : ps) {
    SCOPED_TRACE(p.name);
    EXPECT_TRUE(std::isfinite(p.value));
    EXPECT_LE(p.low, p.high);
    EXPECT_GE(p.confidence, 0.0);
    EXPECT_LE(p.confidence, 1.0);
    EXPECT_FALSE(p.method.empty());
    EXPECT_FALSE(p.unit.empty());
    if (!evidence.empty()) {
      EXPECT_EQ(p.evidence, evidence);
    }
  }
}

}  // namespace gpuprobe
