// Every parameter the committed H100 run's data gives, pinned: value, low, high and
// confidence (not the method text, which names the method and may be reworded) read again
// from tests/data/h100_<family>.csv must match tests/data/pinned_parameters_h100.csv within
// rounding. Any change of an analyzer's answer on real data, such as a scale of x0.5 to x3
// on one output, turns this red. For a deliberate change, print new pins and commit them
// with the change that explains them:
//   build/tests/gpuprobe_tests --gtest_also_run_disabled_tests
//       --gtest_filter='PinnedH100.DISABLED_PrintPins'
// (one command line; the CSV is the lines between the BEGIN and END markers).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "analysis/analyzer.hpp"
#include "base/csv.hpp"
#include "base/observation.hpp"
#include "recorded.hpp"

using namespace gpuprobe;

namespace {

const std::string kPins = std::string(GPUPROBE_TEST_DATA) + "/pinned_parameters_h100.csv";

// Analysis is deterministic; the pins are printed with every digit. This allows only for a
// different compiler or math library rounding the last bits.
constexpr double kPinTolerance = 1e-9;

// (family, parameter) -> what the family's recorded file gives now.
std::map<std::pair<std::string, std::string>, Parameter> current(const std::set<std::string>& families) {
  std::map<std::pair<std::string, std::string>, Parameter> out;
  for (const auto& family : families) {
    const std::string path = std::string(GPUPROBE_TEST_DATA) + "/h100_" + family + ".csv";
    if (!std::filesystem::exists(path)) continue;
    Metadata meta;
    auto obs = read_observations(path, &meta);
    Analysis a = analyze_checked(family, obs, meta);
    EXPECT_TRUE(a.error.empty()) << a.error;
    for (const auto& w : a.warnings) ADD_FAILURE() << path << ": " << w;
    for (const auto& p : a.params) out[{family, p.name}] = p;
  }
  return out;
}

// Families with an analyzer and a recorded file.
std::set<std::string> recorded_families() {
  std::set<std::string> out;
  for (const auto& [family, fn] : analyzers())
    if (std::filesystem::exists(std::string(GPUPROBE_TEST_DATA) + "/h100_" + family + ".csv"))
      out.insert(family);
  return out;
}

bool close(double pinned, double now) {
  return std::fabs(now - pinned) <= kPinTolerance * std::max(1.0, std::fabs(pinned));
}

}  // namespace

TEST(PinnedH100, EveryParameterMatchesItsPin) {
  REQUIRE_RECORDED(std::filesystem::exists(kPins)) << kPins;
  CsvTable t = read_csv(kPins);
  const int cf = t.require("family"), cp = t.require("parameter"), cv = t.require("value"),
            cl = t.require("low"), ch = t.require("high"), cc = t.require("confidence");
  std::set<std::string> families;
  for (const auto& row : t.rows) families.insert(row[static_cast<size_t>(cf)]);
  for (const auto& f : families)
    REQUIRE_RECORDED(std::filesystem::exists(std::string(GPUPROBE_TEST_DATA) + "/h100_" + f + ".csv"))
        << "tests/data/h100_" << f << ".csv (pinned)";
  auto now = current(recorded_families());
  std::set<std::pair<std::string, std::string>> pinned;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto key = std::make_pair(t.rows[r][static_cast<size_t>(cf)], t.rows[r][static_cast<size_t>(cp)]);
    pinned.insert(key);
    auto it = now.find(key);
    if (it == now.end()) {
      ADD_FAILURE() << key.first << "/" << key.second << " (pins line " << t.row_lines[r]
                    << ") is no longer given";
      continue;
    }
    const Parameter& p = it->second;
    const std::pair<const char*, std::pair<double, double>> fields[] = {
        {"value", {t.number(r, cv), p.value}},
        {"low", {t.number(r, cl), p.low}},
        {"high", {t.number(r, ch), p.high}},
        {"confidence", {t.number(r, cc), p.confidence}}};
    for (const auto& [name, v] : fields)
      EXPECT_TRUE(close(v.first, v.second))
          << key.first << "/" << key.second << " " << name << ": pinned " << format_number(v.first)
          << ", now " << format_number(v.second) << " (pins line " << t.row_lines[r] << ")";
  }
  for (const auto& [key, p] : now)
    EXPECT_TRUE(pinned.count(key)) << key.first << "/" << key.second << " = " << format_number(p.value)
                                   << " is given but not pinned";
}

TEST(PinnedH100, DISABLED_PrintPins) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& [key, p] : current(recorded_families()))
    rows.push_back({key.first, key.second, format_number(p.value), p.unit, format_number(p.low),
                    format_number(p.high), format_number(p.confidence)});
  std::cout << "BEGIN\n"
            << format_csv({{"source", "tests/data/h100_<family>.csv through this gpuprobe's analyzers "
                                      "(PinnedH100.DISABLED_PrintPins)"}},
                          {"family", "parameter", "value", "unit", "low", "high", "confidence"}, rows)
            << "END\n";
}
