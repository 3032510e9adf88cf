#include "app/export.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <set>
#include <utility>

#include "analysis/common/util.hpp"
#include "analysis/energy.hpp"
#include "analysis/p2p.hpp"
#include "analysis/pipes.hpp"
#include "app/cli.hpp"
#include "app/cli_parse.hpp"
#include "app/run_analysis.hpp"
#include "base/csv.hpp"
#include "base/json.hpp"
#include "base/node.hpp"
#include "base/parameter_names.hpp"
#include "base/run_dir.hpp"
#include "base/version.hpp"

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

Json num(double v) { return json_number(v); }

const Parameter* find(const RunData& run, const std::string& name) {
  for (const auto& p : run.params)
    if (p.name == name) return &p;
  return nullptr;
}

// A metadata value's leading number ("2619 (cudaDevAttrMemoryClockRate, peak)" -> 2619).
double meta_number(const RunData& run, const std::string& key) {
  return analysis::leading_number(run.meta_value(key));
}

// What one operation and one byte cost, and the idle and static power: the energy family's
// parameters by kind ("per_operation" in pJ/op, "per_byte" in pJ/B, "power" in W), each with
// its interval and confidence; all-zero operands under their own "_zero" names.
Json energy_json(const RunData& run) {
  Json out = Json::object();
  for (const auto& p : run.params) {
    if (family_of(p) != energy::kFamily.name) continue;
    const char* kind = p.unit == "pJ/op"  ? "per_operation"
                       : p.unit == "pJ/B" ? "per_byte"
                                          : "power";
    out[kind][p.name] = {{"value", num(p.value)},
                         {"unit", p.unit},
                         {"low", num(p.low)},
                         {"high", num(p.high)},
                         {"confidence", num(p.confidence)}};
  }
  return out;
}

Json numbers(const std::vector<double>& v) {
  Json out = Json::array();
  for (double x : v) out.push_back(num(x));
  return out;
}

// The run's p2p figures: a [device][peer] matrix per pair mode (and per pair under all pairs at
// once, beside the node's total), one figure per device for one to all and all to one.
Json p2p_json(const RunData& run) {
  Json out = Json::object();
  const std::string file = run.file_of(std::string(p2p::kFamily.name));
  if (file.empty()) return out;
  const std::vector<Observation> obs = read_observations(file);
  auto matrix = [&](const std::string& probe, const std::string& unit, Json& into) {
    p2p::Matrix m;
    if (!p2p::matrix(obs, probe, unit, &m)) return;
    Json rows = Json::array();
    for (const auto& row : m.value) rows.push_back(numbers(row));
    into["matrix"] = rows;
  };
  for (const auto& mode : p2p::modes()) {
    Json j = {{"unit", "GB/s"}};
    matrix(mode.probe, "GB/s", j);
    if (mode.pattern == p2p::Pattern::all_pairs) {
      for (const auto& o : select(obs, mode.probe, "GB/s"))
        if (!std::isfinite(o.param(p2p::kDeviceColumn))) j["total"] = num(o.value);
    } else if (!p2p::is_pair(mode)) {
      const std::vector<double> v = p2p::per_device(obs, mode.probe, "GB/s");
      if (!v.empty()) j["per_device"] = numbers(v);
    }
    if (j.size() > 1) out[mode.probe] = j;
  }
  Json lat = {{"unit", "ns"}};
  matrix(p2p::kLatencyProbe, "ns", lat);
  if (lat.size() > 1) out[p2p::kLatencyProbe] = lat;
  return out;
}

// The node: every GPU with its links (base/node.hpp, from the metadata), the PCIe paths, and
// the p2p figures.
Json node_json(const RunData& run) {
  const node::Node n = node::from_metadata(run.meta);
  Json gpus = Json::array();
  for (const auto& g : n.gpus) {
    Json to_gpus = Json::object();
    for (const auto& [peer, links] : g.peer_links) to_gpus[std::to_string(peer)] = links;
    gpus.push_back({{"ordinal", g.ordinal},
                    {"name", g.name},
                    {"pci_bus_id", g.bus},
                    {"pcie",
                     {{"generation", g.pcie_gen}, {"width", g.pcie_width}, {"max_generation", g.pcie_max_gen},
                      {"max_width", g.pcie_max_width}, {"gbs", num(node::pcie_gbs(g) > 0 ? node::pcie_gbs(g) : NAN)}}},
                    {"nvlink",
                     {{"known", g.why.empty() && g.nvlink}, {"why_unknown", g.why}, {"active_links", g.links},
                      {"version", g.version}, {"link_gbs", num(g.link_gbs > 0 ? g.link_gbs : NAN)},
                      {"to_nvswitch", g.switch_links}, {"to_gpus", to_gpus}, {"to_other", g.other_links},
                      {"gbs", num(node::gpu_nvlink_gbs(g) > 0 ? node::gpu_nvlink_gbs(g) : NAN)}}}});
  }
  Json paths = Json::array();
  for (const auto& [ab, level] : n.paths) paths.push_back({{"gpus", {ab.first, ab.second}}, {"path", level}});
  return {{kNodeGpusKey, gpus}, {"pcie_paths", paths}, {p2p::kExportKey, p2p_json(run)}};
}

}  // namespace

std::string export_json(const RunData& run) {
  Json root;
  root["schema"] = "gpuprobe-run";
  root["schema_version"] = kExportSchemaVersion;
  root["exported_by"] = std::string("gpuprobe ") + gpuprobe_version();
  Json meta = Json::object();
  for (const auto& [k, v] : run.meta) meta[k] = relative_text(v, run.dir);  // as report.md shows them
  root["metadata"] = meta;
  Json params = Json::array();
  for (const auto& p : run.params)
    params.push_back({{"name", p.name},
                      {"family", family_of(p)},
                      {"value", num(p.value)},
                      {"unit", p.unit},
                      {"low", num(p.low)},
                      {"high", num(p.high)},
                      {"confidence", num(p.confidence)},
                      {"method", p.method},
                      {"evidence", p.evidence}});
  root["parameters"] = params;
  Json families = Json::array();
  fs::path fam = fs::path(run.dir) / "families.csv";
  if (fs::exists(fam)) {
    CsvTable t = read_csv(fam.string());
    if (const auto faults = families_faults(t); !faults.empty())
      throw std::runtime_error(faults.front() + ": not exported");
    for (const auto& row : t.rows) {
      Json j = Json::object();
      for (size_t c = 0; c < t.header.size() && c < row.size(); ++c) j[t.header[c]] = row[c];
      families.push_back(j);
    }
  }
  root["families"] = families;
  root[energy::kExportKey] = energy_json(run);
  root["node"] = node_json(run);
  return json_text(root);
}

namespace {

// A gpgpusim.config fragment as it is written: the lines set, and the keys left out with why.
struct SimConfig {
  const RunData& run;
  std::string out, left_out;

  // The parameter, when the run has it finite and trusted enough for a simulator.
  bool usable(const std::string& name, const Parameter** p) {
    *p = find(run, name);
    if (!*p) return false;
    if ((*p)->confidence < kSimulatorMinConfidence) {
      left_out += "#   " + name + ": confidence " + format_printf("%.2f", (*p)->confidence) + " < " +
                  format_printf("%.1f", kSimulatorMinConfidence) + "\n";
      return false;
    }
    return std::isfinite((*p)->value);
  }
  void line(const std::string& key, const std::string& value, const std::string& why) {
    out += key + " " + value + "  # " + why + "\n";
  }
};

std::string cite(const Parameter& p) { return p.name + " = " + format_number(p.value) + " " + p.unit; }
std::string cycles(double v) { return format_printf("%.0f", std::round(v)); }

// SM count and clock domains; the measured SM clock, or nullptr.
const Parameter* sim_clocks(SimConfig& c) {
  c.out += "\n# core counts (device attribute: SM count)\n";
  if (double sms = meta_number(c.run, "sm_count"); std::isfinite(sms)) {
    c.line("-gpgpu_n_clusters", format_printf("%.0f", sms), "sm_count = " + format_printf("%.0f", sms) + " (metadata)");
    c.line("-gpgpu_n_cores_per_cluster", "1", "one SM per cluster, so that clusters = SMs");
  } else {
    c.left_out += "#   -gpgpu_n_clusters: no sm_count in the run's metadata\n";
  }
  const Parameter* clk = nullptr;
  c.out += "\n# clock domains <core>:<interconnect>:<L2>:<DRAM> in MHz, all at the measured SM clock: the\n"
           "# latencies below were measured in SM cycles, and only the SM clock was measured\n";
  if (c.usable(param::sm_clock_measured, &clk)) {
    std::string mhz = format_printf("%.1f", clk->value);
    c.line("-gpgpu_clock_domains", mhz + ":" + mhz + ":" + mhz + ":" + mhz, cite(*clk));
  }
  c.left_out += "#   separate interconnect, L2 and DRAM clocks: not measured\n";
  return clk;
}

void sim_latencies(SimConfig& c) {
  const Parameter *l1 = nullptr, *l2 = nullptr, *dram = nullptr, *smem = nullptr;
  c.out += "\n# memory latencies in SM cycles (GPGPU-Sim adds them: L2 = L1 + ROP, DRAM = L2 + dram)\n";
  bool have_l1 = c.usable(param::l1_hit_latency, &l1);
  if (have_l1) c.line("-gpgpu_l1_latency", cycles(l1->value), cite(*l1));
  if (c.usable(param::shared_latency, &smem))
    c.line("-gpgpu_smem_latency", cycles(smem->value), cite(*smem));
  bool have_l2 = c.usable(param::l2_hit_latency, &l2) || c.usable(param::l2_near_hit_latency, &l2);
  if (have_l1 && have_l2)
    c.line("-gpgpu_l2_rop_latency", cycles(l2->value - l1->value), cite(*l2) + " - " + cite(*l1));
  else
    c.left_out += "#   -gpgpu_l2_rop_latency: needs both L1 and L2 hit latencies\n";
  if (have_l2 && c.usable(param::dram_latency, &dram))
    c.line("-dram_latency", cycles(dram->value - l2->value), cite(*dram) + " - " + cite(*l2));
  else
    c.left_out += "#   -dram_latency: needs both L2 hit and DRAM latencies\n";
}

void sim_caches(SimConfig& c) {
  c.out += "\n# L1 data cache geometry <sector>:<sets>:<line>:<ways>\n";
  const Parameter *sets = nullptr, *ways = nullptr, *line_size = nullptr, *banks = nullptr;
  // All three asked, so that each one left out says why.
  const bool have_sets = c.usable(param::l1_sets, &sets),
             have_ways = c.usable(param::l1_ways, &ways),
             have_line = c.usable(param::l1_line_size, &line_size);
  if (have_sets && have_ways && have_line) {
    double s = std::round(sets->value);
    bool pow2 = s >= 1 && std::fabs(std::exp2(std::round(std::log2(s))) - s) < 0.5;
    if (!pow2) {
      c.left_out += "#   -gpgpu_cache:dl1: l1_sets = " + format_number(s) +
                    " is not a power of two, which GPGPU-Sim's set index functions need\n";
    } else {
      const Parameter* sector = find(c.run, param::l1_sector_size);
      bool sectored = sector && sector->confidence >= kSimulatorMinConfidence && sector->value < line_size->value;
      c.out += "# (replacement, write, allocation and MSHR fields are not measured: keep your base config's)\n";
      c.out += "# -gpgpu_cache:dl1 " + std::string(sectored ? "S" : "N") + ":" + format_number(s) + ":" +
               format_number(line_size->value) + ":" + format_number(std::round(ways->value)) +
               ",<policy fields>  # " + cite(*sets) + ", " + cite(*ways) + ", " + cite(*line_size) + "\n";
    }
  }
  c.left_out += "#   -gpgpu_cache:dl2: L2 sets and ways per memory sub-partition are not measured\n";
  if (c.usable(param::shared_bank_count, &banks))
    c.line("-gpgpu_shmem_num_banks", format_number(banks->value), cite(*banks));
}

void sim_pipes(SimConfig& c) {
  c.out += "\n# -trace_opcode_latency_initiation_<unit> <latency>,<initiation interval>: the latency of a\n"
           "# dependent chain; the interval is 32 lanes x U units / the measured rate per SM, for U = 4\n"
           "# units per SM (a base config's -gpgpu_num_<unit>_units; scale it if yours differs)\n";
  constexpr double kUnitsPerSm = 4, kWarp = 32;
  struct Unit {
    std::string unit, op;
    const char *latency, *rate;
  };
  const Unit pipes[] = {
      {"int", pipes::kInt32AddProbe, param::int32_add_latency, param::int32_add_throughput_per_sm},
      {"sp", pipes::kFp32FmaProbe, param::fp32_fma_latency, param::fp32_fma_throughput_per_sm},
      {"dp", pipes::kFp64FmaProbe, param::fp64_fma_latency, param::fp64_fma_throughput_per_sm},
      {"sfu", pipes::kSfuRsqrtProbe, param::sfu_rsqrt_latency, param::sfu_rsqrt_throughput_per_sm}};
  for (const auto& [unit, op, latency, throughput] : pipes) {
    const Parameter *lat = nullptr, *rate = nullptr;
    if (c.usable(latency, &lat) && c.usable(throughput, &rate) && rate->value > 0) {
      double interval = std::max(1.0, std::round(kWarp * kUnitsPerSm / rate->value));
      c.line("-trace_opcode_latency_initiation_" + unit, cycles(lat->value) + "," + format_number(interval),
             cite(*lat) + ", " + cite(*rate));
    } else {
      c.left_out += "#   -trace_opcode_latency_initiation_" + unit + ": no " + op + " latency and rate\n";
    }
  }
  c.left_out += "#   -trace_opcode_latency_initiation_tensor: mma rates are in multiply-adds, not warp instructions\n";
}

}  // namespace

std::string export_accel_sim(const RunData& run) {
  SimConfig c{run, "", ""};
  c.out = "# gpgpusim.config fragment for Accel-Sim / GPGPU-Sim, written by gpuprobe " + std::string(gpuprobe_version()) +
          "\n# from run " + run.meta_value("run_id") + " of " + run.gpu +
          ": measured values only. Put it after a base config of the same\n# architecture; every line "
          "names the parameter of parameters.csv behind it.\n";
  const Parameter* clk = sim_clocks(c);
  sim_latencies(c);
  sim_caches(c);
  sim_pipes(c);
  c.out += "\n# kernel launch latency in SM cycles (launch overhead x measured SM clock)\n";
  const Parameter* launch = nullptr;
  if (clk && c.usable(param::kernel_launch_overhead, &launch) && launch->unit == "us")
    c.line("-gpgpu_kernel_launch_latency", cycles(launch->value * clk->value), cite(*launch) + " x " + cite(*clk));
  else
    c.left_out += "#   -gpgpu_kernel_launch_latency: needs kernel_launch_overhead in us and the SM clock\n";
  return c.out + "\n# Left out (not measured, or not trusted enough):\n" + c.left_out;
}

namespace {

// AccelWattch's per-component keys (its accelwattch_*.xml, Volta to Ampere configs of Accel-Sim)
// with the gpuprobe parameter measured for each, in the order its XML lists them.
struct WattchKey {
  const char* key;
  std::vector<const char*> params;  // the first present is used
  const char* what;
};
const std::vector<WattchKey>& wattch_keys() {
  static const std::vector<WattchKey> keys = {
      {"DC_RH", {param::l1_read_energy_per_byte}, "L1 data cache read hits"},
      {"SHRD_ACC", {param::shared_read_energy_per_byte}, "shared memory accesses (reads)"},
      {"INT_MUL_ACC", {param::int32_mad_energy}, "integer multiply-add (IMAD)"},
      {"FP_MUL_ACC", {param::fp32_fma_energy}, "fp32 FMA (FFMA)"},
      {"FP_SIN_ACC", {param::sfu_sin_energy}, "SFU sin (MUFU.SIN)"},
      {"DP_MUL_ACC", {param::fp64_fma_energy}, "fp64 FMA (DFMA)"},
      {"TENSOR_ACC",
       {param::tensor_wgmma_f16_energy, param::tensor_mma_f16_energy},
       "tensor core fp16 multiply-add"},
      {"MEM_RD", {param::dram_read_energy_per_byte}, "DRAM reads"},
      {"MEM_WR", {param::dram_write_energy_per_byte}, "DRAM writes"},
      {"L2_RH",
       {param::l2_near_read_energy_per_byte},
       "L2 read hits (the near partition where split)"},
      {"constant_power",
       {param::static_power},
       "constant power: every SM resident, nothing issued"},
  };
  return keys;
}

// AccelWattch's keys gpuprobe does not measure.
constexpr const char* kWattchNotMeasured =
    "TOT_INST, FP_INT, IC_H, IC_M, DC_RM, DC_WH, DC_WM, CC_H, CC_M, REG_RD, REG_WR, INT_ACC, "
    "FP_ACC, DP_ACC, FP_SQRT_ACC, FP_LG_ACC, FP_EXP_ACC, TEX_ACC, MEM_PRE, L2_RM, L2_WH, L2_WM, "
    "NOC_A, PIPE_A, idle_core_power, static_*_flane / static_*_addlane (lane activation powers)";

}  // namespace

std::string export_accelwattch(const RunData& run) {
  std::string out =
      "<!-- AccelWattch per-component energies measured by gpuprobe " +
      std::string(gpuprobe_version()) + " on " + run.gpu + ", run " + run.meta_value("run_id") +
      ".\n"
      "     Each value is a measured energy per access: pJ per thread operation, per\n"
      "     multiply-add (tensor) or per byte (memory), and W for constant_power; AccelWattch's\n"
      "     own XML holds scale factors over McPAT's modelled energy per access, so divide by the\n"
      "     modelled energy to use one as a factor. Every line names the parameter of\n"
      "     parameters.csv behind it. -->\n"
      "<component id=\"gpuprobe_energy\" name=\"gpuprobe_energy\">\n";
  std::string left_out;
  std::set<std::string> used;
  for (const auto& k : wattch_keys()) {
    const Parameter* p = nullptr;
    for (const char* name : k.params)
      if (!p) p = find(run, name);
    if (!p || p->confidence < kSimulatorMinConfidence) {
      const std::string why = p ? p->name + " at confidence " + format_printf("%.2f", p->confidence)
                                : std::string("not measured");
      left_out += std::string("       ") + k.key + " (" + k.what + "): " + why + "\n";
      continue;
    }
    used.insert(p->name);
    out += "  <param name=\"" + std::string(k.key) + "\" value=\"" + format_number(p->value) +
           "\"/> <!-- " + p->name + " " + p->unit + " [" + format_number(p->low) + ", " +
           format_number(p->high) + "], confidence " + format_printf("%.2f", p->confidence) + ": " +
           k.what + " -->\n";
  }
  std::string unmapped;
  for (const auto& p : run.params)
    if (family_of(p) == energy::kFamily.name && !used.count(p.name))
      unmapped += (unmapped.empty() ? "" : ", ") + p.name;
  return out + "</component>\n<!-- Left out:\n" + left_out +
         "       not measured by gpuprobe: " + kWattchNotMeasured +
         "\n     Measured, no AccelWattch key: " + (unmapped.empty() ? "none" : unmapped) +
         " -->\n";
}

// The key of MT4G's JSON that holds a measured latency: its word, not the latency family's name.
constexpr const char* kMt4gLatencyKey = "latency";

std::string export_mt4g(const RunData& run) {
  Json root;
  std::string name = run.gpu;
  root["general"]["name"] = name;
  root["general"]["vendor"] = name.rfind("NVIDIA", 0) == 0 ? "NVIDIA" : name.rfind("AMD", 0) == 0 ? "AMD" : "unknown";
  if (run.cc_major > 0) {
    root["general"]["computeCapability"]["major"] = num(run.cc_major);
    root["general"]["computeCapability"]["minor"] = num(run.cc_minor);
  }
  if (double sms = meta_number(run, "sm_count"); std::isfinite(sms)) root["compute"]["multiProcessorCount"] = num(sms);
  // MT4G's measured quantities: {"mean", "p50", "method", "unit"} for latencies and
  // {"size", "unit", "confidence", "method"} for sizes; its device attributes {"unit", "value"}.
  auto latency = [&](Json& at, const std::string& param) {
    if (const Parameter* p = find(run, param)) {
      Json& j = at[kMt4gLatencyKey];
      j["mean"] = num(p->value);
      j["p50"] = num(p->value);
      j["method"] = "p-chase";
      j["unit"] = "cycles";
    }
  };
  auto sized = [&](Json& at, const std::string& key, const std::string& param) {
    if (const Parameter* p = find(run, param)) {
      Json& j = at[key];
      j["confidence"] = num(p->confidence);
      j["method"] = "p-chase";
      j["randomized"] = true;
      j["size"] = num(p->value);
      j["unit"] = "bytes";
    }
  };
  auto valued = [&](Json& at, const std::string& key, double v, const std::string& unit) {
    if (!std::isfinite(v)) return;
    at[key]["unit"] = unit;
    at[key]["value"] = num(v);
  };
  auto gib_per_s = [&](const std::string& param) {
    const Parameter* p = find(run, param);
    return p && p->unit == "GB/s" ? p->value * 1e9 / (1024.0 * 1024 * 1024) : NAN;
  };
  Json& mem = root["memory"];
  latency(mem["l1"], param::l1_hit_latency);
  sized(mem["l1"], "size", param::l1_size);
  sized(mem["l1"], "lineSize", param::l1_line_size);
  sized(mem["l1"], "fetchGranularity", param::l1_sector_size);
  latency(mem["l2"],
          find(run, param::l2_hit_latency) ? param::l2_hit_latency : param::l2_near_hit_latency);
  sized(mem["l2"], "lineSize", param::l2_line_size);
  sized(mem["l2"], "fetchGranularity", param::l2_sector_size);
  sized(mem["l2"], "segmentSize", param::l2_segment_size);
  if (const Parameter* p = find(run, param::l2_size)) valued(mem["l2"], "size", p->value, "bytes");
  valued(mem["l2"], "readBandwidth", gib_per_s(param::l2_read_bandwidth), "GiB/s");
  latency(mem["main"], param::dram_latency);
  valued(mem["main"], "readBandwidth", gib_per_s(param::dram_read_bandwidth), "GiB/s");
  valued(mem["main"], "writeBandwidth", gib_per_s(param::dram_write_bandwidth), "GiB/s");
  valued(mem["main"], "totalGlobalMem", meta_number(run, "global_mem_bytes"), "bytes");
  valued(mem["main"], "memoryBusWidth", meta_number(run, "memory_bus_width_bits"), "bit");
  valued(mem["main"], "memoryClockRate", meta_number(run, "memory_clock_mhz") * 1000, "kHz");
  latency(mem["shared"], param::shared_latency);
  valued(mem["shared"], "sharedMemPerMultiProcessor", meta_number(run, "shared_per_sm_bytes"), "bytes");
  latency(mem["readOnly"], param::readonly_hit_latency);
  sized(mem["readOnly"], "lineSize", param::readonly_line_size);
  latency(mem["constant"]["l1"], param::constant_hit_latency);
  sized(mem["constant"]["l1"], "lineSize", param::constant_line_size);
  // Drop levels the run measured nothing of.
  Json kept = Json::object();
  for (auto& [k, v] : mem.items()) {
    if (k == "constant" && v["l1"].empty()) continue;
    if (!v.empty()) kept[k] = v;
  }
  mem = kept;
  root["meta"]["tool"] = std::string("gpuprobe ") + gpuprobe_version();
  root["meta"]["runId"] = run.meta_value("run_id");
  if (double d = meta_number(run, "cuda_driver_api"); std::isfinite(d)) root["meta"]["driver"] = num(d);
  if (double r = meta_number(run, "runtime_version"); std::isfinite(r)) root["meta"]["runtime"] = num(r);
  return json_text(root);
}

int export_main(const std::vector<std::string>& args) {
  CLI::App app{"A run's inferred parameters in forms other tools read (no GPU).", "gpuprobe export"};
  std::string dir, out;
  bool json = false, accel_sim = false, mt4g = false, accelwattch = false;
  app.add_option("RUN_DIR", dir, "the run directory")->required();
  app.add_flag("--json", json, "gpuprobe's own schema (\"gpuprobe-run\", README)");
  app.add_flag("--accel-sim", accel_sim, "a gpgpusim.config fragment for Accel-Sim / GPGPU-Sim, measured values only");
  app.add_flag("--mt4g", mt4g, "the topology JSON of MT4G (caps-tum/mt4g), where it maps");
  app.add_flag("--accelwattch", accelwattch,
               "the measured energies as AccelWattch's per-component XML parameters, where a key "
               "maps");
  app.add_option("--out", out, "the file to write (default: stdout)")->type_name("FILE")->check(non_empty());
  auto one_format = [&] {
    if (json + accel_sim + mt4g + accelwattch != 1)
      throw UsageError("one of --json, --accel-sim, --mt4g, --accelwattch");
  };
  if (auto code = parse_subcommand(app, args, "gpuprobe export", one_format)) return *code;
  if (const FolderKind kind = folder_kind(dir); kind != FolderKind::run) {
    std::fprintf(stderr, "gpuprobe export: %s: %s, not a run folder\n", dir.c_str(), folder_kind_name(kind));
    return 1;
  }
  try {
    // A run's report.md and methods.md are gpuprobe report's: an export goes beside them.
    std::error_code ec;
    const fs::path target = fs::weakly_canonical(out, ec);
    if (!out.empty() && !ec &&
        (target.filename() == "report.md" || target.filename() == "methods.md") &&
        folder_kind(target.parent_path().string()) == FolderKind::run)
      throw std::runtime_error(out + ": a run's " + target.filename().string() +
                               " (gpuprobe report writes it): not written over; name another file");
    Diagnostics diag;
    diag.prefix = "gpuprobe export";
    RunData run = load_run(dir, known_families({}), diag);
    // A run that does not read cleanly is not exported in part: each fault, one line, instead.
    if (!diag.errors.empty()) {
      print_messages(diag.prefix, {}, diag.errors, false);
      return 1;
    }
    std::string text = json          ? export_json(run)
                       : accel_sim   ? export_accel_sim(run)
                       : accelwattch ? export_accelwattch(run)
                                     : export_mt4g(run);
    if (out.empty()) std::fputs(text.c_str(), stdout);
    else write_file_atomic(out, text);
    return checked_stdout(diag.prefix, 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuprobe export: %s\n", e.what());
    return 1;
  }
}

}  // namespace gpuprobe
