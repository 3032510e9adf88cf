#pragma once
// NVML, loaded at run time with dlopen so that the build never needs nvml.h and a machine
// without it still runs the suite (it says so, and goes on).
#include <string>
#include <vector>

#include "base/card.hpp"
#include "base/node.hpp"
#include "base/operating_point.hpp"  // throttle_reason_text, OperatingSample

namespace gpuprobe {

struct NvmlReading {
  bool available = false;
  std::string why_unavailable;
  std::string driver;
  unsigned sm_clock_mhz = 0, mem_clock_mhz = 0;       // current
  unsigned max_sm_clock_mhz = 0, max_mem_clock_mhz = 0;
  double power_limit_w = 0;
  int ecc_current = -1;                               // -1: unknown
  unsigned temperature_c = 0;
  unsigned long long throttle_reasons = 0;            // bit mask, as NVML defines it
};

class Nvml {
 public:
  // Loads the library and finds the device with this PCI bus id; never throws.
  explicit Nvml(const std::string& pci_bus_id);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  NvmlReading read() const;
  // The board's UUID, serial, VBIOS and part number; each one NVML does not give reads
  // "unknown (<NVML's error string>)" (cuda_uuid is left for the caller).
  CardIdentity card() const;
  // How this GPU reaches the one at `other_pci_bus_id`: "nvlink", or the PCIe path as
  // nvidia-smi topo names it (PIX, PXB, PHB, NODE, SYS), or "unknown" with NVML absent.
  std::string link_to(const std::string& other_pci_bus_id) const;

  // ---- The node's links (p2p; base/node.hpp summarizes them) ----
  // Why NVML cannot describe this GPU's links ("" when it can).
  std::string why_not() const;
  // Every NVLink link NVML knows of (nvmlDeviceGetNvLinkState answers), active or not: none on a
  // GPU without NVLink. False where NVML cannot tell.
  bool nvlinks(std::vector<node::LinkReading>* links) const;
  // The PCIe link's current and maximum generation and width (0 where NVML does not say).
  void pcie(node::Gpu* g) const;
  // nvmlDeviceGetTopologyCommonAncestor to the GPU at `other_pci_bus_id`; -1 unknown.
  int common_ancestor(const std::string& other_pci_bus_id) const;

  // ---- Power and energy (the operating point, base/operating_point.hpp) ----
  // What this device answers of them now (t_s and family are left for the caller); NaN where
  // it does not.
  OperatingSample sample() const;
  // The total energy counter (mJ since the driver loaded, Volta and later); false where the
  // device or driver has none (`why` says so).
  bool energy_mj(unsigned long long* mj, std::string* why = nullptr) const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace gpuprobe
