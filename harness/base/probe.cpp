#include "base/probe.hpp"

namespace gpuprobe {

// A function-local list: ready for the first registration, whatever the order in which the
// translation units' static initialisers run.
std::vector<std::unique_ptr<ProbeFamily>>& probe_families() {
  static std::vector<std::unique_ptr<ProbeFamily>> families;
  return families;
}

Observation summary_row(const std::string& probe, Params params, const Summary& s,
                        const std::string& unit) {
  return {"", probe, std::move(params), s.p50, unit, s.p05, s.p50, s.p95, s.n};
}

}  // namespace gpuprobe
