#pragma once
// The node a run was measured on: every GPU CUDA sees, its PCIe link and its NVLink links as
// NVML reports them, and the PCIe path between each pair. Written by the runner into every
// file's `# key=value` metadata (node_*), read back by the p2p analysis (the physical rate a
// measured bandwidth cannot pass), the report's Node section and the exports. Pure C++: the
// GPU side (gpu/node_probe) only gathers NVML's raw readings, summarized here.
//
//   node_gpus=4
//   node_gpu0=NVIDIA H200 (0000:00:06.0)
//   node_gpu0_pcie=gen5 x16 (max gen5 x16)
//   node_gpu0_nvlink=18 active links, NVLink 4.0, 26.562 GB/s per link and direction; to nvswitch 18
//   node_pcie_paths=0-1 PHB, 0-2 PHB, ...
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/csv.hpp"

namespace gpuprobe::node {

// One NVLink link as NVML reports it (nvmlDeviceGetNvLink*, nvmlDeviceGetFieldValues).
struct LinkReading {
  bool active = false;
  unsigned version = 0;    // nvmlNvlinkVersion_t: 1 = 1.0 ... 6 = 4.0, 7 = 5.0; 0 unknown
  double mbps = -1;        // NVML_FI_DEV_NVLINK_GET_SPEED: MB/s per direction; < 0 unknown
  int remote_type = -1;    // nvmlIntNvLinkDeviceType_t: 0 GPU, 1 IBM NPU, 2 NVSwitch; -1 unknown
  std::string remote_bus;  // the PCI bus id at the link's other end ("" unknown)
};

// What NVML says of one GPU's links; `nvlink` false with `why` where it cannot tell.
struct Gpu {
  int ordinal = 0;
  std::string name, bus;
  std::string why;                // "" when NVML answered; otherwise why nothing is known
  bool nvlink = false;            // NVML answered for its links (supported, any active or not)
  int links = 0;                  // active NVLink links
  std::string version;            // "4.0"; "" unknown
  double link_gbs = -1;           // the fastest active link, GB/s per direction; < 0 unknown
  int switch_links = 0;           // active links to an NVSwitch
  std::map<int, int> peer_links;  // active links straight to another GPU of the node, by ordinal
  int other_links = 0;            // active links to anything else (a GPU not in this node, an NPU)
  int pcie_gen = 0, pcie_width = 0, pcie_max_gen = 0, pcie_max_width = 0;  // 0 unknown
};

struct Node {
  std::vector<Gpu> gpus;
  std::map<std::pair<int, int>, std::string> paths;  // (a, b), a < b: PIX, PXB, PHB, NODE, SYS
  bool empty() const { return gpus.empty(); }
};

// "4.0" for NVML's version enum (nvmlNvlinkVersion_t); "" for 0 or one it does not define.
std::string nvlink_version_text(unsigned nvml_version);
// The same bus whatever the domain's width ("0000:00:06.0" and "00000000:00:06.0"); case-blind.
bool same_pci_bus(const std::string& a, const std::string& b);
// `g` with its links counted from NVML's per-link readings; `buses[k]` is GPU k's bus id.
Gpu with_links(Gpu g, const std::vector<LinkReading>& links, const std::vector<std::string>& buses);

// NVML's topology level (nvmlGpuTopologyLevel_t) as nvidia-smi topo names it; "" unknown.
std::string topology_level_name(int level);

Metadata to_metadata(const Node& n);
// The node of a file's metadata; empty where the run predates it (no node_gpus).
Node from_metadata(const Metadata& meta);

// The texts of the metadata lines, also shown by the report.
std::string nvlink_text(const Gpu& g);
std::string pcie_text(const Gpu& g);

// Physical rates, GB/s per direction, as the links are described (raw signalling: NVML's per
// link rate, PCIe's transfer rate x lanes / 8, before encoding and protocol): what no measured
// bandwidth can pass. Negative where the description does not give one.
double pcie_gbs(const Gpu& g);        // at the link's maximum generation and width (it idles lower)
// One direction of a PCIe link of `generation` and `lanes` after its line code (8b/10b to
// generation 2, 128b/130b from 3; 6.0's PAM4 flits have none), before packet overheads: gen 5
// x16 is 32 GT/s x 16 x 128/130 / 8 = 63.0 GB/s. Negative for a generation the table lacks.
double pcie_line_gbs(int generation, int lanes);
double gpu_nvlink_gbs(const Gpu& g);  // all active NVLink links x the link rate
// NVLink links a pair shares (direct ones, plus through NVSwitch the fewer of the two's); -1
// where NVML could not say for either.
int pair_links(const Node& n, int a, int b);
// Between a and b, one direction: their NVLink links, or PCIe (the slower end) where they share
// none. Unknown where NVLink is: a PCIe bound on an NVLink pair would call honest figures
// impossible.
double pair_gbs(const Node& n, int a, int b);
// What g can send to (or take from) all of `peers` at once, one direction: the sum of the pairs,
// at most g's own NVLink links (and its PCIe link where a peer is reached over PCIe).
double fanout_gbs(const Node& n, int g, const std::vector<int>& peers);

}  // namespace gpuprobe::node
