#include "analysis/analyzer.hpp"
#include "core/catalog.hpp"
#include "core/probe.hpp"

namespace gpuprobe {

std::vector<std::unique_ptr<ProbeFamily>>& probe_families() {
  static std::vector<std::unique_ptr<ProbeFamily>> families;
  return families;
}

std::map<std::string, Analyzer>& analyzers() {
  static std::map<std::string, Analyzer> all;
  return all;
}

std::vector<Parameter> analyze(const std::string& family, const std::vector<Observation>& obs,
                               const Metadata& meta) {
  auto it = analyzers().find(family);
  if (it == analyzers().end()) return {};
  std::vector<Parameter> out = it->second(obs, meta);
  for (auto& p : out) attach_method_label(p);  // every parameter names its method's label
  return out;
}

}  // namespace gpuprobe
