#pragma once
// The node a run is measured on, read once at the start: every GPU CUDA sees (its name and PCI
// bus id), with NVML's description of its NVLink and PCIe links and the PCIe path between each
// pair (base/node.hpp keeps it as metadata).
#include "base/node.hpp"

namespace gpuprobe {

// Never throws: a GPU NVML cannot describe says why in its `why`; no GPU, an empty node.
node::Node read_node();

}  // namespace gpuprobe
