// The model benches' known failures (test_model_gpus, test_model_tlb, test_model_families):
// each (model, parameter) with the exact seeds it fails on and why. The list is exact: a
// failure not listed fails the test, and so does a listed case that passes now (remove it:
// the list only shrinks).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "base/csv.hpp"

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

// A number as the calibration tables print it: 6 significant digits, empty when not finite.
inline std::string table_number(double v) { return std::isfinite(v) ? format_printf("%.6g", v) : ""; }

// One answer in a calibration table: "seed,parameter,truth,value,low,high,confidence,verdict".
inline std::string answer_fields(unsigned seed, const std::string& parameter, double truth, double value,
                                 double low, double high, double confidence, const std::string& verdict) {
  return std::to_string(seed) + "," + parameter + "," + table_number(truth) + "," + table_number(value) + "," +
         table_number(low) + "," + table_number(high) + "," + format_printf("%.3f", confidence) + "," + verdict;
}

// One row of a confidence-bin table: "low,high,answers,right,fraction_right" of bin b (tenths).
inline std::string bin_row(int b, int answers, int right) {
  return format_printf("%.1f", b / 10.0) + "," + format_printf("%.1f", (b + 1) / 10.0) + "," +
         std::to_string(answers) + "," + std::to_string(right) + "," +
         (answers ? format_printf("%.3f", double(right) / answers) : std::string());
}
inline int confidence_bin(double confidence) { return std::clamp(int(confidence * 10), 0, 9); }

// Two CSV texts agree: the same lines, fields equal as text or as numbers within 1e-6
// (relative), so that a libm's last digit does not fail the check on another machine.
inline bool same_csv(const std::string& a, const std::string& b, std::string* where) {
  std::istringstream ia(a), ib(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = bool(std::getline(ia, la)), gb = bool(std::getline(ib, lb));
    if (!ga || !gb) {
      if (ga != gb) *where = "line " + std::to_string(line) + ": one table ends";
      return ga == gb;
    }
    const auto fa = split_csv_line(la), fb = split_csv_line(lb);
    bool same = fa.size() == fb.size();
    for (size_t i = 0; same && i < fa.size(); ++i) {
      double x = 0, y = 0;
      same = fa[i] == fb[i] || (parse_number(fa[i], &x) && parse_number(fb[i], &y) &&
                                std::fabs(x - y) <= 1e-6 * std::max({1.0, std::fabs(x), std::fabs(y)}));
    }
    if (!same) {
      *where = "line " + std::to_string(line) + ": committed '" + la + "', bench '" + lb + "'";
      return false;
    }
  }
}

// The committed tables (results/model-gpus/NAME) are what the bench gives now. With
// GPUPROBE_CALIBRATION_OUT=DIR set, they are written there first (DIR=results/model-gpus
// refreshes them); `filter` is the --gtest_filter that does it.
inline void check_committed_tables(const std::vector<std::pair<std::string, std::string>>& tables,
                                   const std::string& filter) {
  if (const char* dir = std::getenv("GPUPROBE_CALIBRATION_OUT"))
    for (const auto& [name, text] : tables) std::ofstream(std::string(dir) + "/" + name) << text;
  for (const auto& [name, text] : tables) {
    const std::string path = std::string(GPUPROBE_SOURCE_DIR) + "/results/model-gpus/" + name;
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << path;
    const std::string committed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string where;
    EXPECT_TRUE(same_csv(committed, text, &where))
        << path << " is not what the bench gives now (" << where << "); regenerate: GPUPROBE_CALIBRATION_OUT="
        << "results/model-gpus build/tests/gpuprobe_tests --gtest_filter='" << filter << "'";
  }
}

}  // namespace model
}  // namespace gpuprobe
