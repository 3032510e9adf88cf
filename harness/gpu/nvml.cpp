#include "gpu/nvml.hpp"

#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

namespace gpuprobe {

namespace {
using nvmlDevice_t = void*;
using nvmlReturn_t = int;
constexpr int kClockSm = 1, kClockMem = 2, kTemperatureGpu = 0;

// NVML's entry points for the node's links (nvml.h of CUDA 13 / NVML API 13), loaded together.
struct LinkApi {
  nvmlReturn_t (*state)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*version)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*remote_pci)(nvmlDevice_t, unsigned, void*) = nullptr;  // nvmlPciInfo_t*
  nvmlReturn_t (*remote_type)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*fields)(nvmlDevice_t, int, void*) = nullptr;  // nvmlFieldValue_t*
  nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_max_gen)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_max_width)(nvmlDevice_t, unsigned*) = nullptr;
};
void load_link_api(void* lib, LinkApi& a);
// The one field the operating point reads: the power now, in milliwatts (the driver's averaged
// nvmlDeviceGetPowerUsage changes only a few times a second).
constexpr unsigned kFieldPowerInstant = 186;  // NVML_FI_DEV_POWER_INSTANT

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
  LinkApi links;  // the node's links: loaded by load_link_api, below
  // The board's identity (card()): each writes a NUL-terminated string into (buffer, length).
  using TextFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned);
  TextFn uuid = nullptr, serial = nullptr, vbios = nullptr, board_part = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  std::string text(TextFn fn, const char* name) const;

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
  m.load(m.uuid, "nvmlDeviceGetUUID");
  m.load(m.serial, "nvmlDeviceGetSerial");
  m.load(m.vbios, "nvmlDeviceGetVbiosVersion");
  m.load(m.board_part, "nvmlDeviceGetBoardPartNumber");
  m.load(m.error_string, "nvmlErrorString");
  load_link_api(m.lib, m.links);
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
  const std::string path = node::topology_level_name(common_ancestor(other_pci_bus_id));
  return path.empty() ? "unknown" : path;
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

// One identity string, or why NVML does not give it.
std::string Nvml::Impl::text(TextFn fn, const char* name) const {
  if (!dev) return card_unknown(why);
  if (!fn) return card_unknown(std::string("libnvidia-ml lacks ") + name);
  char buf[128] = {};  // above NVML's largest (the 96-byte UUID)
  const nvmlReturn_t rc = fn(dev, buf, sizeof buf);
  if (rc != 0) {
    const char* e = error_string ? error_string(rc) : nullptr;
    return card_unknown(std::string(name) + ": " + (e ? e : "NVML error " + std::to_string(rc)));
  }
  buf[sizeof buf - 1] = 0;
  return buf[0] ? std::string(buf) : card_unknown(std::string(name) + ": empty");
}

CardIdentity Nvml::card() const {
  const Impl& m = *impl_;
  CardIdentity c;
  c.uuid = m.text(m.uuid, "nvmlDeviceGetUUID");
  c.serial = m.text(m.serial, "nvmlDeviceGetSerial");
  c.vbios = m.text(m.vbios, "nvmlDeviceGetVbiosVersion");
  c.board_part = m.text(m.board_part, "nvmlDeviceGetBoardPartNumber");
  return c;
}

// ---- The node's links ----

namespace {

constexpr unsigned kMaxNvlinks = 36;  // NVML_NVLINK_MAX_LINKS (NVML API 13)
constexpr int kFeatureEnabled = 1;    // nvmlEnableState_t
constexpr nvmlReturn_t kErrorInvalidArgument = 2, kErrorNotSupported = 3;  // a link that is not there
constexpr unsigned kFieldLinkSpeed = 164;    // NVML_FI_DEV_NVLINK_GET_SPEED, MBps, scopeId = link
constexpr unsigned kFieldCommonSpeed = 90;   // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON, older drivers

// nvmlPciInfo_t and nvmlFieldValue_t as nvml.h lays them out.
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
static_assert(sizeof(PciInfo) == 68, "nvmlPciInfo_t");
struct FieldValue {
  unsigned field_id, scope_id;
  long long timestamp, latency_us;
  int value_type, ret;
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
    unsigned short us;
  } value;
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t");

double field_number(const FieldValue& f) {
  switch (f.value_type) {  // nvmlValueType_t
    case 0: return f.value.d;
    case 1: return f.value.ui;
    case 2: return double(f.value.ul);
    case 3: return double(f.value.ull);
    case 4: return double(f.value.sll);
    case 5: return f.value.si;
    case 6: return f.value.us;
    default: return -1;
  }
}

void load_link_api(void* lib, LinkApi& a) {
  auto load = [lib](auto& fn, const char* name) {
    fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(lib, name));
  };
  load(a.state, "nvmlDeviceGetNvLinkState");
  load(a.version, "nvmlDeviceGetNvLinkVersion");
  load(a.remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  load(a.remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
  load(a.fields, "nvmlDeviceGetFieldValues");
  load(a.pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
  load(a.pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
  load(a.pcie_max_gen, "nvmlDeviceGetMaxPcieLinkGeneration");
  load(a.pcie_max_width, "nvmlDeviceGetMaxPcieLinkWidth");
}

// Each active link's rate in MB/s (links[i] is link ids[i]): NVML_FI_DEV_NVLINK_GET_SPEED,
// else the common rate of an older driver.
void link_speeds(const LinkApi& a, nvmlDevice_t dev, const std::vector<unsigned>& ids,
                 std::vector<node::LinkReading>& links) {
  if (!a.fields) return;
  std::vector<FieldValue> f;
  std::vector<size_t> of;  // the link each field asks for
  for (size_t i = 0; i < links.size(); ++i) {
    if (!links[i].active) continue;
    FieldValue v;
    std::memset(&v, 0, sizeof v);
    v.field_id = kFieldLinkSpeed;
    v.scope_id = ids[i];
    f.push_back(v);
    of.push_back(i);
  }
  if (f.empty() || a.fields(dev, int(f.size()), f.data()) != 0) return;
  double common = -1;
  bool common_asked = false;
  for (size_t k = 0; k < f.size(); ++k) {
    if (f[k].ret == 0) {
      links[of[k]].mbps = field_number(f[k]);
      continue;
    }
    if (!common_asked) {
      common_asked = true;
      FieldValue c;
      std::memset(&c, 0, sizeof c);
      c.field_id = kFieldCommonSpeed;
      if (a.fields(dev, 1, &c) == 0 && c.ret == 0) common = field_number(c);
    }
    links[of[k]].mbps = common;
  }
}

}  // namespace

std::string Nvml::why_not() const {
  if (!impl_->dev) return impl_->why.empty() ? "NVML unavailable" : impl_->why;
  return impl_->links.state ? "" : "libnvidia-ml lacks nvmlDeviceGetNvLinkState";
}

bool Nvml::nvlinks(std::vector<node::LinkReading>* links) const {
  const Impl& m = *impl_;
  std::vector<node::LinkReading>& out = *links;
  std::vector<unsigned> ids;
  out.clear();
  if (!m.dev || !m.links.state) return false;
  bool unsure = false;  // an answer other than "no such link": NVML could not tell
  for (unsigned l = 0; l < kMaxNvlinks; ++l) {
    int state = 0;
    if (const nvmlReturn_t e = m.links.state(m.dev, l, &state); e != 0) {
      unsure = unsure || (e != kErrorNotSupported && e != kErrorInvalidArgument);
      continue;
    }
    node::LinkReading r;
    r.active = state == kFeatureEnabled;
    if (r.active) {
      if (m.links.version) m.links.version(m.dev, l, &r.version);
      if (m.links.remote_type && m.links.remote_type(m.dev, l, &r.remote_type) != 0) r.remote_type = -1;
      PciInfo pci{};
      if (m.links.remote_pci && m.links.remote_pci(m.dev, l, &pci) == 0)
        r.remote_bus = std::string(pci.bus_id, strnlen(pci.bus_id, sizeof pci.bus_id));
    }
    out.push_back(r);
    ids.push_back(l);
  }
  link_speeds(m.links, m.dev, ids, out);
  return !(out.empty() && unsure);
}

void Nvml::pcie(node::Gpu* g) const {
  const Impl& m = *impl_;
  if (!m.dev) return;
  auto read = [&](nvmlReturn_t (*fn)(nvmlDevice_t, unsigned*), int* out) {
    unsigned v = 0;
    if (fn && fn(m.dev, &v) == 0) *out = int(v);
  };
  read(m.links.pcie_gen, &g->pcie_gen);
  read(m.links.pcie_width, &g->pcie_width);
  read(m.links.pcie_max_gen, &g->pcie_max_gen);
  read(m.links.pcie_max_width, &g->pcie_max_width);
}

int Nvml::common_ancestor(const std::string& other_pci_bus_id) const {
  const Impl& m = *impl_;
  nvmlDevice_t other = nullptr;
  int level = -1;  // nvmlGpuTopologyLevel_t
  if (!m.dev || !m.by_bus || !m.topology || m.by_bus(other_pci_bus_id.c_str(), &other) != 0 ||
      m.topology(m.dev, other, &level) != 0)
    return -1;
  return level;
}

// ---- Power and energy (the operating point) ----

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
  FieldValue f;
  std::memset(&f, 0, sizeof f);
  f.field_id = kFieldPowerInstant;
  if (m.links.fields && m.links.fields(m.dev, 1, &f) == 0 && f.ret == 0 && field_number(f) >= 0)
    s.power_w = field_number(f) / 1000.0;
  else s.power_w = s.power_avg_w;
  unsigned long long mj = 0;
  if (energy_mj(&mj)) s.energy_j = static_cast<double>(mj) / 1000.0;
  if (m.throttle) m.throttle(m.dev, &s.reasons);
  return s;
}

bool Nvml::energy_mj(unsigned long long* mj, std::string* why) const {
  const Impl& m = *impl_;
  std::string reason;
  if (!m.dev) reason = m.why;
  else if (!m.total_energy) reason = "libnvidia-ml lacks nvmlDeviceGetTotalEnergyConsumption";
  else if (int rc = m.total_energy(m.dev, mj); rc != 0)
    reason = "nvmlDeviceGetTotalEnergyConsumption returned " + std::to_string(rc) +
             (rc == 3 ? " (not supported on this device)" : "");
  if (why) *why = reason;
  return reason.empty();
}

}  // namespace gpuprobe
