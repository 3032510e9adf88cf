#include "gpu/nvml.hpp"

#include <dlfcn.h>

#include <vector>

namespace gpuprobe {

namespace {
using nvmlDevice_t = void*;
using nvmlReturn_t = int;
constexpr int kClockSm = 1, kClockMem = 2, kTemperatureGpu = 0;
}  // namespace

struct Nvml::Impl {
  void* lib = nullptr;
  nvmlDevice_t dev = nullptr;
  std::string why;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*ecc)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*driver)(char*, unsigned) = nullptr;
  nvmlReturn_t (*by_bus)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*topology)(nvmlDevice_t, nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*p2p_status)(nvmlDevice_t, nvmlDevice_t, int, int*) = nullptr;

  template <class F>
  bool load(F& fn, const char* name) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    return fn != nullptr;
  }
};

Nvml::Nvml(const std::string& pci_bus_id) : impl_(new Impl) {
  Impl& m = *impl_;
  m.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!m.lib) {
    m.why = "libnvidia-ml.so.1 not found";
    return;
  }
  nvmlReturn_t (*init)() = nullptr;
  if (!m.load(init, "nvmlInit_v2") || !m.load(m.by_bus, "nvmlDeviceGetHandleByPciBusId_v2") ||
      !m.load(m.shutdown, "nvmlShutdown")) {
    m.why = "libnvidia-ml lacks nvmlInit_v2";
    return;
  }
  m.load(m.clock, "nvmlDeviceGetClockInfo");
  m.load(m.max_clock, "nvmlDeviceGetMaxClockInfo");
  // Renamed to "clocks event reasons" in newer drivers; the old name is kept as an alias.
  if (!m.load(m.throttle, "nvmlDeviceGetCurrentClocksEventReasons"))
    m.load(m.throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
  m.load(m.power_limit, "nvmlDeviceGetPowerManagementLimit");
  m.load(m.ecc, "nvmlDeviceGetEccMode");
  m.load(m.temperature, "nvmlDeviceGetTemperature");
  m.load(m.driver, "nvmlSystemGetDriverVersion");
  m.load(m.topology, "nvmlDeviceGetTopologyCommonAncestor");
  m.load(m.p2p_status, "nvmlDeviceGetP2PStatus");
  if (init() != 0) {
    m.why = "nvmlInit failed";
    m.shutdown = nullptr;
    return;
  }
  if (m.by_bus(pci_bus_id.c_str(), &m.dev) != 0) {
    m.why = "NVML does not know the device at " + pci_bus_id;
    m.dev = nullptr;
  }
}

std::string Nvml::link_to(const std::string& other_pci_bus_id) const {
  const Impl& m = *impl_;
  nvmlDevice_t other = nullptr;
  if (!m.dev || !m.by_bus || m.by_bus(other_pci_bus_id.c_str(), &other) != 0) return "unknown";
  constexpr int kP2pCapsNvlink = 2, kP2pStatusOk = 0;  // nvmlGpuP2PCapsIndex_t, nvmlGpuP2PStatus_t
  int status = -1;
  if (m.p2p_status && m.p2p_status(m.dev, other, kP2pCapsNvlink, &status) == 0 && status == kP2pStatusOk)
    return "nvlink";
  int level = -1;  // nvmlGpuTopologyLevel_t
  if (!m.topology || m.topology(m.dev, other, &level) != 0) return "unknown";
  switch (level) {
    case 0: return "internal";
    case 10: return "PIX";
    case 20: return "PXB";
    case 30: return "PHB";
    case 40: return "NODE";
    case 50: return "SYS";
    default: return "unknown";
  }
}

Nvml::~Nvml() {
  if (impl_->shutdown) impl_->shutdown();
  if (impl_->lib) dlclose(impl_->lib);
  delete impl_;
}

NvmlReading Nvml::read() const {
  const Impl& m = *impl_;
  NvmlReading r;
  if (!m.dev) {
    r.why_unavailable = m.why;
    return r;
  }
  r.available = true;
  if (m.clock) {
    m.clock(m.dev, kClockSm, &r.sm_clock_mhz);
    m.clock(m.dev, kClockMem, &r.mem_clock_mhz);
  }
  if (m.max_clock) {
    m.max_clock(m.dev, kClockSm, &r.max_sm_clock_mhz);
    m.max_clock(m.dev, kClockMem, &r.max_mem_clock_mhz);
  }
  if (m.throttle) m.throttle(m.dev, &r.throttle_reasons);
  unsigned mw = 0;
  if (m.power_limit && m.power_limit(m.dev, &mw) == 0) r.power_limit_w = mw / 1000.0;
  int cur = 0, pending = 0;
  if (m.ecc && m.ecc(m.dev, &cur, &pending) == 0) r.ecc_current = cur;
  if (m.temperature) m.temperature(m.dev, kTemperatureGpu, &r.temperature_c);
  if (m.driver) {
    char buf[96] = {};
    if (m.driver(buf, sizeof buf) == 0) r.driver = buf;
  }
  return r;
}

// ---------------------------------------------------------------- PCIe link (host_link)

PcieLink Nvml::pcie_link() const {
  const Impl& m = *impl_;
  PcieLink l;
  if (!m.dev) return l;
  using Get = nvmlReturn_t (*)(nvmlDevice_t, unsigned*);
  auto get = [&](const char* fn, unsigned* out) {
    auto f = reinterpret_cast<Get>(dlsym(m.lib, fn));
    return f && f(m.dev, out) == 0;
  };
  l.available = get("nvmlDeviceGetCurrPcieLinkGeneration", &l.generation) &&
                get("nvmlDeviceGetCurrPcieLinkWidth", &l.width) && l.generation > 0 && l.width > 0;
  get("nvmlDeviceGetMaxPcieLinkGeneration", &l.max_generation);
  get("nvmlDeviceGetMaxPcieLinkWidth", &l.max_width);
  return l;
}

// ----------------------------------------------------------------

std::string throttle_reason_text(unsigned long long mask) {
  static const std::vector<std::pair<unsigned long long, const char*>> names = {
      {0x1, "gpu_idle"},          {0x2, "applications_clocks"}, {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},       {0x10, "sync_boost"},         {0x20, "sw_thermal"},
      {0x40, "hw_thermal"},       {0x80, "hw_power_brake"},     {0x100, "display_clocks"}};
  if (mask == 0) return "none";
  std::string out;
  for (const auto& [bit, name] : names)
    if (mask & bit) out += (out.empty() ? "" : "|") + std::string(name);
  unsigned long long known = 0;
  for (const auto& n : names) known |= n.first;
  if (mask & ~known) out += (out.empty() ? "" : "|") + std::string("other");
  return out;
}

}  // namespace gpuprobe
