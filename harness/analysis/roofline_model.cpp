#include "analysis/roofline_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/energy.hpp"
#include "analysis/pipes.hpp"
#include "analysis/roofline.hpp"
#include "base/csv.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe::roofline {

namespace {

constexpr double kGiga = 1e9;
constexpr double kPico = 1e-12;
constexpr double kMicro = 1e-6;
constexpr double kMega = 1e6;

const Parameter* find_param(const std::vector<Parameter>& params, const std::string& name) {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

// A pipe of the compute roofs: its pipes op, the roof's name and whether it counts flops.
struct Pipe {
  const char* op;
  const char* roof;
  bool flops;  // a multiply-add is two flops; an integer MAD two ops (GOP/s)
};
const std::vector<Pipe>& pipes() {
  static const std::vector<Pipe> v = {
      {pipes::kFp32FmaProbe, "fp32", true},
      {pipes::kFp64FmaProbe, "fp64", true},
      {pipes::kInt32MadProbe, "int32", false},
      {pipes::kTensorMmaF16Probe, pipes::kTensorMmaF16Probe, true},
      {pipes::kTensorMmaBf16Probe, pipes::kTensorMmaBf16Probe, true},
      {pipes::kTensorMmaTf32Probe, pipes::kTensorMmaTf32Probe, true},
      {pipes::kTensorMmaInt8Probe, pipes::kTensorMmaInt8Probe, false},
      {pipes::kTensorMmaFp64Probe, pipes::kTensorMmaFp64Probe, true},
      {pipes::kTensorWgmmaF16Probe, pipes::kTensorWgmmaF16Probe, true},
      {pipes::kTensorWgmmaBf16Probe, pipes::kTensorWgmmaBf16Probe, true},
      {pipes::kTensorWgmmaTf32Probe, pipes::kTensorWgmmaTf32Probe, true},
      {pipes::kTensorWgmmaFp8E4m3Probe, pipes::kTensorWgmmaFp8E4m3Probe, true},
      {pipes::kTensorWgmmaInt8Probe, pipes::kTensorWgmmaInt8Probe, false},
  };
  return v;
}

const Pipe* pipe_of_item(const std::string& item) {
  for (const auto& p : pipes())
    if (item == p.op) return &p;
  return nullptr;
}

// The memory roofs: name, the items whose bytes they carry, the parameters of their rate.
constexpr const char* kDram = "dram";
constexpr const char* kL2 = "l2";
constexpr const char* kL1 = "l1";
constexpr const char* kShared = "shared";
constexpr const char* kAtomics = "atomic_global";

void add_per_sm(Model& m, const std::vector<Parameter>& params, const Parameter& clock,
                const std::string& name, const std::string& what, const char* param_name,
                double factor, const std::string& unit) {
  const Parameter* p = find_param(params, param_name);
  if (!p) {
    m.missing.push_back({name, std::string("no ") + param_name});
    return;
  }
  // rate per SM per clock x SMs x measured clock, in units of 1e9 per second
  const double s = m.sm_count * kMega / kGiga * factor;
  m.ceilings.push_back(
      {name, kTime, what, p->value * clock.value * s, p->low * clock.low * s,
       p->high * clock.high * s, unit,
       std::string(param_name) + " + " + param::sm_clock_measured + " + sm_count"});
}

void add_bandwidth(Model& m, const std::vector<Parameter>& params, const std::string& name,
                   const char* param_name) {
  const Parameter* p = find_param(params, param_name);
  if (!p) {
    m.missing.push_back({name, std::string("no ") + param_name});
    return;
  }
  m.ceilings.push_back(
      {name, kTime, kBandwidthCeiling, p->value, p->low, p->high, "GB/s", param_name});
}

void add_time_roofs(Model& m, const std::vector<Parameter>& params, const Parameter& clock) {
  add_bandwidth(m, params, kDram, param::dram_read_bandwidth);
  add_bandwidth(m, params, "dram_copy", param::dram_copy_bandwidth);
  add_bandwidth(m, params, kL2, param::l2_read_bandwidth);
  add_per_sm(m, params, clock, kL1, kBandwidthCeiling, param::l1_bandwidth_per_sm, 1, "GB/s");
  add_per_sm(m, params, clock, kShared, kBandwidthCeiling, param::shared_bandwidth_per_sm, 1,
             "GB/s");
  for (const auto& p : pipes()) {
    const std::string name = param::pipe_throughput_per_sm(p.op);
    if (!find_param(params, name)) {
      m.missing.push_back({p.roof, "no " + name});
      continue;
    }
    add_per_sm(m, params, clock, p.roof, kComputeCeiling, name.c_str(), kFlopsPerFma,
               p.flops ? "GFLOP/s" : "GOP/s");
  }
  add_per_sm(m, params, clock, kAtomics, kAtomicsCeiling, param::atomic_global_throughput_per_sm, 1,
             "Gatomic/s");
}

void add_energy(Model& m, const std::vector<Parameter>& params, const std::string& name,
                const std::string& what, const std::string& param_name, double factor,
                const std::string& unit) {
  const Parameter* p = find_param(params, param_name);
  if (!p) return;
  m.ceilings.push_back({name, kEnergy, what, p->value * factor, p->low * factor, p->high * factor,
                        unit, param_name});
}

void add_energy_roofs(Model& m, const std::vector<Parameter>& params, const Metadata& meta) {
  const Parameter* st = find_param(params, param::static_power);
  if (!st) {
    m.no_energy =
        "no static_power: the run has no energy family, so the energy roofline is "
        "left out";
    return;
  }
  m.ceilings.push_back({param::static_power, kEnergy, "static", st->value, st->low, st->high, "W",
                        param::static_power});
  for (const auto& p : pipes()) {
    std::string name;
    try {
      name = param::op_energy(p.op, false);
    } catch (const std::logic_error&) {
      continue;  // the energy family measures some pipes only: the catalog names which
    }
    add_energy(m, params, p.roof, "op_energy", name, 1 / kFlopsPerFma,
               p.flops ? "pJ/flop" : "pJ/op");
  }
  for (const auto& level : energy::levels())
    add_energy(m, params, level, "byte_energy", param::level_energy_per_byte(level, false), 1,
               "pJ/B");
  double cap = 0;
  if (parse_number(meta_value_of(meta, "power_limit_w"), &cap) && cap > 0)
    m.ceilings.push_back({"power_limit", kEnergy, "cap", cap, cap, cap, "W", "power_limit_w"});
  else m.missing.push_back({"power_limit", "no power_limit_w in the run's metadata"});
}

}  // namespace

std::string meta_value_of(const Metadata& meta, const std::string& key) {
  for (const auto& [k, v] : meta)
    if (k == key) return v;
  return "";
}

const Ceiling* Model::find(const std::string& name, const std::string& kind) const {
  for (const auto& c : ceilings)
    if (c.name == name && c.kind == kind) return &c;
  return nullptr;
}

Model build_model(const std::vector<Parameter>& params, const Metadata& meta,
                  const std::string& gpu) {
  Model m;
  m.gpu = gpu;
  if (!parse_number(meta_value_of(meta, "sm_count"), &m.sm_count) || m.sm_count < 1)
    throw ModelError(gpu + ": no sm_count in the run's metadata: no per-SM roof can be scaled");
  const Parameter* clock = find_param(params, param::sm_clock_measured);
  if (!clock || !(clock->value > 0))
    throw ModelError(gpu +
                     ": no sm_clock_measured in parameters.csv: the roofs need the "
                     "measured SM clock (a nominal one is not used)");
  m.clock_hz = clock->value * kMega;
  add_time_roofs(m, params, *clock);
  if (m.ceilings.empty())
    throw ModelError(gpu + ": not one roof: parameters.csv has no bandwidth and no pipe rate");
  if (const Parameter* l = find_param(params, param::kernel_launch_overhead))
    m.launch_overhead_s = l->value * kMicro;
  add_energy_roofs(m, params, meta);
  return m;
}

std::vector<Kernel> kernels_of(const std::vector<Observation>& obs) {
  std::vector<Kernel> out;
  auto kernel = [&](const std::string& name) -> Kernel& {
    for (auto& k : out)
      if (k.name == name) return k;
    out.push_back({name, {}, {}, {}});
    return out.back();
  };
  for (const auto& o : obs) {
    const std::string metric = o.param_text(kMetricColumn);
    Kernel& k = kernel(o.probe);
    if (metric == kCount) k.counts.push_back({o.param_text(kItemColumn), o.value, o.unit});
    else if (metric == kTime) k.time_s = o.value;
    else if (metric == kEnergy) k.energy_j = o.value;
  }
  return out;
}

namespace {

// Ops or bytes per second a roof allows, for its items.
double rate_of(const Ceiling& c) {
  return c.unit == "GB/s" || c.unit == "Gatomic/s" ? c.value * kGiga
                                                   : c.value * kGiga / kFlopsPerFma;
}

struct RoofTime {
  std::string roof;
  double s = 0;
};

double count_of(const Kernel& k, const std::string& item) {
  double n = 0;
  for (const auto& c : k.counts)
    if (c.item == item) n += c.value;
  return n;
}

// The time each roof the kernel's counts reach needs, and the roofs the run lacks.
std::vector<RoofTime> roof_times(const Model& m, const Kernel& k, std::vector<std::string>* lacks) {
  std::vector<RoofTime> t;
  auto add = [&](const std::string& roof, double amount) {
    if (amount <= 0) return;
    const Ceiling* c = m.find(roof);
    if (c) t.push_back({roof, amount / rate_of(*c)});
    else lacks->push_back(roof);
  };
  // DRAM: reads alone stream at the read roof; with writes, at the copy roof (both directions
  // share the bus), the read roof where the run has no copy roof.
  const double dram_r = count_of(k, energy::kDramRead), dram_w = count_of(k, energy::kDramWrite);
  add(dram_w > 0 && m.find("dram_copy") ? "dram_copy" : kDram, dram_r + dram_w);
  // L2: the bytes it serves (every global load's, or its hits where only those are counted)
  // and the bytes stored into lines it holds, at the read roof (no write roof is measured).
  const double l2_read = count_of(k, kL2Read);
  add(kL2,
      (l2_read > 0 ? l2_read : count_of(k, energy::kL2NearRead) + count_of(k, energy::kL2FarRead)) +
          count_of(k, kL2Write));
  add(kL1, count_of(k, energy::kL1Read));
  add(kShared, count_of(k, energy::kSharedRead) + count_of(k, energy::kSharedWrite));
  add(kAtomics, count_of(k, kAtomicGlobal));
  for (const auto& c : k.counts)
    if (const Pipe* p = pipe_of_item(c.item)) add(p->roof, c.value);
  return t;
}

double dynamic_energy(const Model& m, const Kernel& k, std::vector<std::string>* lacks) {
  double j = 0;
  for (const auto& c : k.counts) {
    if (c.item == kFootprint || c.item == kL2Read || c.item == kAtomicGlobal) continue;
    const Pipe* p = pipe_of_item(c.item);
    const Ceiling* e = m.find(p ? p->roof : c.item, kEnergy);
    if (!e) {
      lacks->push_back(c.item + " energy");
      continue;
    }
    // pJ/flop x flops (two per multiply-add) or pJ/B x bytes
    j += e->value * kPico * c.value * (p ? kFlopsPerFma : 1);
  }
  return j;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

void classify(const Model& m, Prediction& p, std::vector<RoofTime> t, const Kernel& k,
              double capped_s) {
  std::sort(t.begin(), t.end(), [](const RoofTime& a, const RoofTime& b) { return a.s > b.s; });
  p.binding = t.front().roof;
  char buf[160];
  if (k.time_s && *k.time_s > kLatencyFactor * p.time_s) {
    p.bound = kLatencyBound;
    std::snprintf(buf, sizeof buf, "measured %.3g x the binding roof's time (%s): beyond %.0fx",
                  *k.time_s / p.time_s, p.binding.c_str(), kLatencyFactor);
  } else if (capped_s > t.front().s) {
    p.bound = kPowerCapped;
    p.binding = "power_limit";
    std::snprintf(buf, sizeof buf, "rate x energy + static power passes power_limit (%.0f W)",
                  m.find("power_limit", kEnergy)->value);
  } else if (t.size() > 1 && t.front().s < kOneRoofMargin * t[1].s) {
    p.bound = kTwoRoofs;
    p.binding = t[0].roof + "+" + t[1].roof;
    std::snprintf(buf, sizeof buf, "%s and %s within %.2gx of each other", t[0].roof.c_str(),
                  t[1].roof.c_str(), kOneRoofMargin);
  } else {
    p.bound = kOneRoof;
    std::snprintf(buf, sizeof buf, "%s binds", p.binding.c_str());
  }
  p.reason = buf;
}

}  // namespace

Prediction predict(const Model& m, const Kernel& k) {
  Prediction p;
  p.kernel = k.name;
  p.measured_time_s = k.time_s;
  p.measured_energy_j = k.energy_j;
  for (const auto& c : k.counts)
    if (pipe_of_item(c.item)) p.flops += c.value * kFlopsPerFma;
  p.bytes = count_of(k, energy::kDramRead) + count_of(k, energy::kDramWrite);
  p.intensity = p.bytes > 0 ? p.flops / p.bytes : 0;
  std::vector<std::string> lacks;
  const std::vector<RoofTime> t = roof_times(m, k, &lacks);
  if (t.empty()) {
    p.bound = kUnpredicted;
    p.reason = lacks.empty() ? "no counts" : "the run lacks every roof it needs: " + joined(lacks);
    return p;
  }
  double roof_s = 0;
  for (const auto& r : t) roof_s = std::max(roof_s, r.s);
  std::vector<std::string> energy_lacks;
  const bool energy = m.no_energy.empty();
  const double dyn = energy ? dynamic_energy(m, k, &energy_lacks) : 0;
  // Choi et al.: the power cap bounds time at dynamic energy / (cap - static power)
  double capped_s = 0;
  const Ceiling* cap = m.find("power_limit", kEnergy);
  const Ceiling* st = m.find(param::static_power, kEnergy);
  if (energy && cap && st && cap->value > st->value) capped_s = dyn / (cap->value - st->value);
  p.time_s = std::max(roof_s, capped_s) + m.launch_overhead_s.value_or(0);
  if (k.time_s) p.time_error = (p.time_s - *k.time_s) / *k.time_s;
  if (energy && st) {
    p.energy_j = st->value * k.time_s.value_or(p.time_s) + dyn;
    if (k.energy_j) p.energy_error = (*p.energy_j - *k.energy_j) / *k.energy_j;
  }
  classify(m, p, t, k, capped_s);
  if (!lacks.empty()) p.reason += "; left out (the run lacks them): " + joined(lacks);
  if (!energy_lacks.empty()) p.reason += "; no energy for " + joined(energy_lacks);
  if (!m.launch_overhead_s) p.reason += "; no kernel_launch_overhead";
  return p;
}

bool curve_at(const Model& m, const std::string& pipe, const std::string& level, double i,
              CurvePoint* out) {
  const Ceiling* f = m.find(pipe);
  const Ceiling* b = m.find(level);
  if (!f || !b || i <= 0) return false;
  // per flop: time tau_f, energy eps_f; per byte: tau_m, eps_m (Choi et al.'s notation)
  const double tau_f = 1 / (f->value * kGiga), tau_m = 1 / (b->value * kGiga);
  const double t = std::max(tau_f, tau_m / i);  // seconds per flop
  out->gflops = 1 / t / kGiga;
  out->gflops_capped = out->gflops;
  out->gflops_per_joule = 0;
  const Ceiling* ef = m.find(pipe, kEnergy);
  const std::string level_energy = level == kDram ? energy::kDramRead
                                   : level == kL2 ? energy::kL2NearRead
                                   : level == kL1 ? energy::kL1Read
                                                  : energy::kSharedRead;
  const Ceiling* em = m.find(level_energy, kEnergy);
  const Ceiling* st = m.find(param::static_power, kEnergy);
  if (!ef || !em || !st) return true;
  const double eps = ef->value * kPico + em->value * kPico / i;  // joules per flop, dynamic
  double tc = t;
  if (const Ceiling* cap = m.find("power_limit", kEnergy); cap && cap->value > st->value)
    tc = std::max(t, eps / (cap->value - st->value));
  out->gflops_capped = 1 / tc / kGiga;
  out->gflops_per_joule = 1 / (eps + st->value * tc) / kGiga;
  return true;
}

}  // namespace gpuprobe::roofline
