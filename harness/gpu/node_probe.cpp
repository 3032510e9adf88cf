#include "gpu/node_probe.hpp"

#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "gpu/nvml.hpp"

namespace gpuprobe {

node::Node read_node() {
  node::Node n;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver, no device: the run says so elsewhere
    return n;
  }
  std::vector<std::string> buses;
  for (int i = 0; i < count; ++i) {
    char bus[32] = {};
    cudaDeviceProp prop{};
    node::Gpu g;
    g.ordinal = i;
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) g.bus = bus;
    if (cudaGetDeviceProperties(&prop, i) == cudaSuccess) g.name = prop.name;
    (void)cudaGetLastError();
    buses.push_back(g.bus);
    n.gpus.push_back(g);
  }
  std::vector<std::unique_ptr<Nvml>> nvml;
  for (auto& g : n.gpus) {
    nvml.push_back(std::make_unique<Nvml>(g.bus));
    const Nvml& nv = *nvml.back();
    g.why = nv.why_not();
    std::vector<node::LinkReading> links;
    if (g.why.empty() && !nv.nvlinks(&links)) g.why = "NVML does not say (nvmlDeviceGetNvLinkState)";
    if (g.why.empty()) g = node::with_links(g, links, buses);
    nv.pcie(&g);
  }
  for (int a = 0; a < count; ++a)
    for (int b = a + 1; b < count; ++b)
      n.paths[{a, b}] = node::topology_level_name(nvml[size_t(a)]->common_ancestor(buses[size_t(b)]));
  return n;
}

}  // namespace gpuprobe
