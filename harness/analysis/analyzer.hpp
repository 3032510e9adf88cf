#pragma once
// Inference is a plain function from a family's observations (and its file's metadata) to
// parameters. Each family's analysis registers itself with the family's descriptor
// (base/family.hpp), so that `gpuprobe run`, `gpuprobe analyze` and the tests all reach the
// same code.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe {

using Analyzer =
    std::function<std::vector<Parameter>(const std::vector<Observation>&, const Metadata&)>;

std::map<std::string, Analyzer>& analyzers();

// What one family's analysis gave: the parameters that hold the invariants every written
// parameter must (finite, 0 < value, low <= value <= high, confidence in [0, 1]), a warning
// for each one dropped and for input rows dropped as non-finite, and the analyzer's own
// failure, if it threw ("" otherwise).
struct Analysis {
  std::vector<Parameter> params;
  std::vector<std::string> warnings;
  std::string error;
};
Analysis analyze_checked(const std::string& family, const std::vector<Observation>& obs,
                         const Metadata& meta = {});

// Parameters inferred from one family's observations; empty for a family with no analyzer.
// The same checks as analyze_checked(), its warnings discarded; throws on an analyzer failure.
std::vector<Parameter> analyze(const std::string& family, const std::vector<Observation>& obs,
                               const Metadata& meta = {});

struct RegisterAnalyzer {
  RegisterAnalyzer(const FamilyDescriptor& family, Analyzer fn) {
    analyzers()[std::string(family.name)] = std::move(fn);
    DescribeFamily{family};
  }
};

}  // namespace gpuprobe

// In harness/analysis/<family>.cpp: GPUPROBE_REGISTER_ANALYZER(divergence::kFamily, analyze_divergence);
#define GPUPROBE_REGISTER_ANALYZER(descriptor, fn) \
  static ::gpuprobe::RegisterAnalyzer gpuprobe_analyzer_##fn(descriptor, fn)
