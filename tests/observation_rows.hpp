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

// make_row with the spread a test file gives its rows, set once: `const RowMaker row{0.01};`;
// a row that needs another passes its own.
struct RowMaker {
  double spread;
  Observation operator()(const std::string& family, const std::string& probe, Params params,
                         double value, const std::string& unit) const {
    return make_row(family, probe, std::move(params), value, unit, spread);
  }
  Observation operator()(const std::string& family, const std::string& probe, Params params,
                         double value, const std::string& unit, double own_spread) const {
    return make_row(family, probe, std::move(params), value, unit, own_spread);
  }
};

}  // namespace gpuprobe
