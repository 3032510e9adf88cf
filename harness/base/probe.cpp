#include "base/probe.hpp"

namespace gpuprobe {

// A function-local list: ready for the first registration, whatever the order in which the
// translation units' static initialisers run.
std::vector<std::unique_ptr<ProbeFamily>>& probe_families() {
  static std::vector<std::unique_ptr<ProbeFamily>> families;
  return families;
}

}  // namespace gpuprobe
