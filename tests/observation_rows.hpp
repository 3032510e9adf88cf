#pragma once
// Synthetic observation rows for the analysis tests: a median with a symmetric p05/p95 spread.
#include <string>
#include <utility>

#include "base/observation.hpp"

namespace gpuprobe {

inline Observation make_row(const std::string& family, const std::string& probe, Params params,
                            double value, const std::string& unit, double spread) {
  Observation o;
  o.family = family;
  o.probe = probe;
  o.params = std::move(params);
  o.value = o.p50 = value;
  o.p05 = value * (1 - spread);
  o.p95 = value * (1 + spread);
  o.unit = unit;
  o.reps = 11;
  return o;
}

}  // namespace gpuprobe
