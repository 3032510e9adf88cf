// The model benches' known failures (test_model_gpus, test_model_tlb, test_model_families):
// each (model, parameter) with the exact seeds it fails on and why. The list is exact: a
// failure not listed fails the test, and so does a listed case that passes now (remove it:
// the list only shrinks).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gpuprobe {
namespace model {

struct Known {
  std::string model, parameter;
  std::vector<unsigned> seeds;
  std::string reason;
};

// One answer of a bench that failed its gates.
struct Failure {
  std::string model, parameter;
  unsigned seed = 0;
  std::string description;  // what the bench prints for it
};

inline const Known* find_known(const std::vector<Known>& list, const std::string& model,
                               const std::string& parameter, unsigned seed) {
  for (const auto& k : list)
    if (k.model == model && k.parameter == parameter && std::count(k.seeds.begin(), k.seeds.end(), seed))
      return &k;
  return nullptr;
}

// Prints each listed failure with its reason; fails the test on a failure not listed and on a
// listed seed that did not fail; on any mismatch prints the failures as the list would hold them.
inline void check_known_failures(const std::vector<Known>& list, const std::vector<Failure>& failures) {
  std::map<std::pair<std::string, std::string>, std::set<unsigned>> got;
  bool mismatch = false;
  for (const auto& f : failures) {
    got[{f.model, f.parameter}].insert(f.seed);
    if (const Known* k = find_known(list, f.model, f.parameter, f.seed)) {
      std::cout << "  EXPECTED FAILURE " << f.description << " -- " << k->reason << "\n";
    } else {
      ADD_FAILURE() << "unexpected failure: " << f.description;
      mismatch = true;
    }
  }
  for (const auto& k : list)
    for (unsigned seed : k.seeds)
      if (!got[{k.model, k.parameter}].count(seed)) {
        ADD_FAILURE() << k.model << " seed " << seed << " " << k.parameter
                      << " is listed as failing but passes now: remove it from the known failures";
        mismatch = true;
      }
  if (!mismatch) return;
  std::cout << "the failures as the list would hold them:\n";
  for (const auto& [key, seeds] : got) {
    if (seeds.empty()) continue;
    std::cout << "    {\"" << key.first << "\", \"" << key.second << "\", {";
    for (unsigned s : seeds) std::cout << s << (s == *seeds.rbegin() ? "" : ", ");
    std::cout << "}, ...},\n";
  }
}

}  // namespace model
}  // namespace gpuprobe
