#pragma once
// One input of fuzz_analyze, in one of two forms, and "" when what came out holds the
// invariants, else a line naming the first that does not. Shared by the fuzz target and by the
// test that replays the committed corpus in every build (tests/test_data_contract.cpp).
//
// - CSV text: one family file -> observations -> every registered analyzer. Every parameter
//   holds the invariants of a written parameter (finite, 0 < value, low <= value <= high,
//   confidence in [0, 1]), and an analyzer handed rows says something: parameters, a
//   warning or an error, never nothing.
// - A run: several files, each after a line "==> NAME <==" (as `head` prints several files),
//   analysed as `gpuprobe analyze` analyses a run folder (analyze_run_files); "==> NAME <==
//   !why" stands for a file that could not be read (a FIFO). It may refuse
//   (files of two GPUs, a parameters.csv it cannot read); when it does not, every parameter
//   holds the invariants of a read one (parameter_violation), and every run-level row that
//   parameters.csv holds readably comes out unchanged, as does every row of a family whose file
//   is missing or unreadable: analyze never drops what it cannot infer again.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "app/run_analysis.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/observation.hpp"

namespace gpuprobe {

// A value read back may miss its bounds by this fraction of itself (base/observation.cpp).
constexpr double kFuzzReadSlack = 1e-6;
constexpr const char* kFuzzFileMark = "==> ";

inline std::string family_input(const std::string& text) {
  std::vector<Observation> obs;
  Metadata meta;
  try {
    CsvTable t = parse_csv(text, "fuzz.csv");
    obs = observations_from_table(t);
    meta = t.meta;
  } catch (const CsvError&) {
    return "";
  }
  for (const auto& [family, fn] : analyzers()) {
    // The file names its family; every analyzer is handed the rows all the same.
    for (auto& o : obs) o.family = family;
    Analysis a = analyze_checked(family, obs, meta);
    if (!obs.empty() && a.params.empty() && a.warnings.empty() && a.error.empty())
      return family + ": " + std::to_string(obs.size()) + " rows in, not a word out";
    for (const auto& p : a.params)
      if (!(std::isfinite(p.value) && std::isfinite(p.low) && std::isfinite(p.high) &&
            p.low <= p.value && p.value <= p.high && p.confidence >= 0 && p.confidence <= 1 &&
            p.value > 0))
        return family + ": " + p.name + " = " + format_number(p.value) + " [" +
               format_number(p.low) + ", " + format_number(p.high) + "] confidence " +
               format_number(p.confidence);
  }
  return "";
}

// The files of a run input: each "==> NAME <==" line starts one (a name given again replaces
// the earlier file); "==> NAME <== !why" stands
// for a file that could not be read (a FIFO, a device, a loop of links), with why.
inline std::vector<RunFile> run_files_of(const std::string& text) {
  std::vector<RunFile> files;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    const size_t end = line.find(" <==");
    if (line.rfind(kFuzzFileMark, 0) == 0 && end != std::string::npos && end >= 4) {
      // A folder holds one file of a name: the last one given.
      const std::string name = line.substr(4, end - 4);
      files.erase(std::remove_if(files.begin(), files.end(),
                                 [&](const RunFile& f) { return f.name == name; }),
                  files.end());
      const size_t bang = line.find(" !", end);
      files.push_back({name, "", bang == std::string::npos ? "" : line.substr(bang + 2)});
    } else if (!files.empty()) {
      files.back().text += line + "\n";
    }
    pos = nl + 1;
  }
  return files;
}

inline std::string run_input(const std::string& text) {
  const std::vector<RunFile> files = run_files_of(text);
  RunAnalysis a;
  try {
    a = analyze_run_files("fuzz-run", files);
  } catch (const std::runtime_error&) {
    return "";  // refused, with one line: nothing written
  }
  for (const auto& p : a.params) {
    const bool positive = find_parameter(p.name) != nullptr || p.evidence != "families.csv";
    if (std::string why = parameter_violation(p, positive, kFuzzReadSlack); !why.empty())
      return "run: " + p.name + ": " + why;
  }
  for (const auto& f : files) {
    if (f.name != "parameters.csv") continue;
    std::vector<std::string> rejected;
    std::vector<Parameter> rows;
    try {
      rows = parameters_from_table(parse_csv(f.text, f.name), &rejected);
    } catch (const CsvError&) {
      return "run: a parameters.csv that cannot be read was not refused";
    }
    // Kept as it was, or given again by an analyzer (a name an observations file gives); a
    // row of a family whose file the run lacks or cannot read is kept (the only record).
    auto file_lost = [&](const std::string& evidence) {
      const std::string name = evidence_path(evidence);
      const std::string stem = name.substr(0, name.rfind(".csv"));
      if (!analyzers().count(stem)) return false;
      for (const auto& g : files)
        if (g.name == name && g.error.empty()) return false;
      return true;
    };
    for (const auto& p : rows) {
      if (p.evidence != "families.csv" && !file_lost(p.evidence)) continue;
      bool kept = false;
      for (const auto& q : a.params) kept = kept || q.name == p.name;
      if (!kept) return "run: " + p.name + " dropped from parameters.csv";
    }
  }
  return "";
}

inline std::string analyze_input(const std::string& text) {
  return text.rfind(kFuzzFileMark, 0) == 0 ? run_input(text) : family_input(text);
}

}  // namespace gpuprobe
