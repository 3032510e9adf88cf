#include "base/family.hpp"

namespace gpuprobe {

// A function-local map: ready for the first registration, whatever the order in which the
// translation units' static initialisers run.
std::map<std::string, const FamilyDescriptor*>& family_descriptors() {
  static std::map<std::string, const FamilyDescriptor*> all;
  return all;
}

}  // namespace gpuprobe
