#include "gpu/nvml.hpp"

#include <dlfcn.h>

#include <cmath>

namespace gpuprobe {

namespace {
using nvmlDevice_t = void*;
using nvmlReturn_t = int;
constexpr int kClockSm = 1, kClockMem = 2, kTemperatureGpu = 0;

// nvmlFieldValue_t as nvml.h lays it out (the build never sees nvml.h), for the one field read:
// NVML_FI_DEV_POWER_INSTANT, milliwatts as an unsigned int (the driver's averaged
// nvmlDeviceGetPowerUsage changes only a few times a second).
struct FieldValue {
  unsigned field_id;
  unsigned scope_id;
  long long timestamp;
  long long latency_us;
  int value_type;
  int nvml_return;
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
  } value;
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t is 40 bytes");
constexpr unsigned kFieldPowerInstant = 186;  // NVML_FI_DEV_POWER_INSTANT
constexpr int kValueTypeUnsignedInt = 1;      // NVML_VALUE_TYPE_UNSIGNED_INT
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
  // Power and energy (the operating point): loaded where the driver has them.
  nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*field_values)(nvmlDevice_t, int, FieldValue*) = nullptr;

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
  m.load(m.total_energy, "nvmlDeviceGetTotalEnergyConsumption");
  m.load(m.power_usage, "nvmlDeviceGetPowerUsage");
  m.load(m.field_values, "nvmlDeviceGetFieldValues");
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

OperatingSample Nvml::sample() const {
  const Impl& m = *impl_;
  OperatingSample s;
  s.power_w = s.power_avg_w = s.energy_j = s.sm_clock_mhz = s.mem_clock_mhz = s.temperature_c = NAN;
  if (!m.dev) return s;
  unsigned v = 0;
  if (m.clock && m.clock(m.dev, kClockSm, &v) == 0) s.sm_clock_mhz = v;
  if (m.clock && m.clock(m.dev, kClockMem, &v) == 0) s.mem_clock_mhz = v;
  if (m.temperature && m.temperature(m.dev, kTemperatureGpu, &v) == 0) s.temperature_c = v;
  if (m.power_usage && m.power_usage(m.dev, &v) == 0) s.power_avg_w = v / 1000.0;
  FieldValue f{};
  f.field_id = kFieldPowerInstant;
  if (m.field_values && m.field_values(m.dev, 1, &f) == 0 && f.nvml_return == 0 &&
      f.value_type == kValueTypeUnsignedInt)
    s.power_w = f.value.ui / 1000.0;
  else
    s.power_w = s.power_avg_w;
  unsigned long long mj = 0;
  if (energy_mj(&mj)) s.energy_j = static_cast<double>(mj) / 1000.0;
  if (m.throttle) m.throttle(m.dev, &s.reasons);
  return s;
}

bool Nvml::energy_mj(unsigned long long* mj, std::string* why) const {
  const Impl& m = *impl_;
  std::string reason;
  if (!m.dev)
    reason = m.why;
  else if (!m.total_energy)
    reason = "libnvidia-ml lacks nvmlDeviceGetTotalEnergyConsumption";
  else if (int rc = m.total_energy(m.dev, mj); rc != 0)
    reason = "nvmlDeviceGetTotalEnergyConsumption returned " + std::to_string(rc) +
             (rc == 3 ? " (not supported on this device)" : "");
  if (why) *why = reason;
  return reason.empty();
}

}  // namespace gpuprobe
