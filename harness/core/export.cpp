#include "core/export.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "analysis/util.hpp"
#include "core/csv.hpp"
#include "core/run_dir.hpp"

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

// A small JSON tree: an object of members, or a value already written as JSON text.
struct Json {
  std::vector<std::pair<std::string, Json>> members;
  std::string text;  // set for a value
  bool is_value = false;

  static Json value(std::string t) {
    Json j;
    j.text = std::move(t);
    j.is_value = true;
    return j;
  }
  Json& operator[](const std::string& key) {
    for (auto& [k, v] : members)
      if (k == key) return v;
    members.emplace_back(key, Json());
    return members.back().second;
  }
  bool empty() const { return !is_value && members.empty(); }
};

Json str(const std::string& s) { return Json::value(json_string(s)); }
// Numbers as JSON numbers; NaN and infinities, which JSON lacks, as null.
Json num(double v) { return Json::value(std::isfinite(v) ? format_printf("%.15g", v) : "null"); }

std::string render(const Json& j, int indent = 0) {
  if (j.is_value) return j.text;
  if (j.members.empty()) return "{}";
  std::string pad(static_cast<size_t>(indent + 2), ' '), out = "{\n";
  for (size_t i = 0; i < j.members.size(); ++i) {
    const auto& [k, v] = j.members[i];
    std::string inner = v.text;
    if (!v.is_value) inner = render(v, indent + 2);
    out += pad + json_string(k) + ": " + inner + (i + 1 < j.members.size() ? ",\n" : "\n");
  }
  return out + std::string(static_cast<size_t>(indent), ' ') + "}";
}

std::string render_array(const std::vector<Json>& items, int indent) {
  if (items.empty()) return "[]";
  std::string pad(static_cast<size_t>(indent + 2), ' '), out = "[\n";
  for (size_t i = 0; i < items.size(); ++i)
    out += pad + render(items[i], indent + 2) + (i + 1 < items.size() ? ",\n" : "\n");
  return out + std::string(static_cast<size_t>(indent), ' ') + "]";
}

const Parameter* find(const RunData& run, const std::string& name) {
  for (const auto& p : run.params)
    if (p.name == name) return &p;
  return nullptr;
}

// A metadata value's leading number ("2619 (cudaDevAttrMemoryClockRate, peak)" -> 2619).
double meta_number(const RunData& run, const std::string& key) {
  return analysis::leading_number(run.meta_value(key));
}

}  // namespace

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string export_json(const RunData& run) {
  Json root;
  root["schema"] = str("gpuprobe-run");
  root["schema_version"] = num(kExportSchemaVersion);
  root["exported_by"] = str(std::string("gpuprobe ") + GPUPROBE_VERSION);
  Json& meta = root["metadata"];
  for (const auto& [k, v] : run.meta) meta[k] = str(relative_text(v, run.dir));  // as report.md shows them
  std::vector<Json> params;
  for (const auto& p : run.params) {
    Json j;
    j["name"] = str(p.name);
    j["family"] = str(family_of(p));
    j["value"] = num(p.value);
    j["unit"] = str(p.unit);
    j["low"] = num(p.low);
    j["high"] = num(p.high);
    j["confidence"] = num(p.confidence);
    j["method"] = str(p.method);
    j["evidence"] = str(p.evidence);
    params.push_back(j);
  }
  std::vector<Json> families;
  fs::path fam = fs::path(run.dir) / "families.csv";
  if (fs::exists(fam)) {
    CsvTable t = read_csv(fam.string());
    for (const auto& row : t.rows) {
      Json j;
      for (size_t c = 0; c < t.header.size() && c < row.size(); ++c) j[t.header[c]] = str(row[c]);
      families.push_back(j);
    }
  }
  // Arrays are written by hand: the tree holds objects and values only.
  std::string out = render(root);
  out.erase(out.size() - 2);  // "\n}"
  out += ",\n  \"parameters\": " + render_array(params, 2) + ",\n  \"families\": " + render_array(families, 2) + "\n}\n";
  return out;
}

std::string export_accel_sim(const RunData& run) {
  std::string out, left_out;
  out += "# gpgpusim.config fragment for Accel-Sim / GPGPU-Sim, written by gpuprobe " +
         std::string(GPUPROBE_VERSION) + "\n# from run " + run.meta_value("run_id") + " of " + run.gpu +
         ": measured values only. Put it after a base config of the same\n# architecture; every line "
         "names the parameter of parameters.csv behind it.\n";
  auto usable = [&](const std::string& name, const Parameter** p) {
    *p = find(run, name);
    if (!*p) return false;
    if ((*p)->confidence < kSimulatorMinConfidence) {
      left_out += "#   " + name + ": confidence " + format_printf("%.2f", (*p)->confidence) + " < " +
                  format_printf("%.1f", kSimulatorMinConfidence) + "\n";
      return false;
    }
    return std::isfinite((*p)->value);
  };
  auto line = [&](const std::string& key, const std::string& value, const std::string& why) {
    out += key + " " + value + "  # " + why + "\n";
  };
  auto cite = [](const Parameter& p) { return p.name + " = " + format_number(p.value) + " " + p.unit; };
  auto cycles = [](double v) { return format_printf("%.0f", std::round(v)); };

  out += "\n# core counts (device attribute: SM count)\n";
  if (double sms = meta_number(run, "sm_count"); std::isfinite(sms)) {
    line("-gpgpu_n_clusters", format_printf("%.0f", sms), "sm_count = " + format_printf("%.0f", sms) + " (metadata)");
    line("-gpgpu_n_cores_per_cluster", "1", "one SM per cluster, so that clusters = SMs");
  } else {
    left_out += "#   -gpgpu_n_clusters: no sm_count in the run's metadata\n";
  }

  const Parameter *clk = nullptr, *l1 = nullptr, *l2 = nullptr, *dram = nullptr, *smem = nullptr, *p = nullptr;
  out += "\n# clock domains <core>:<interconnect>:<L2>:<DRAM> in MHz, all at the measured SM clock: the\n"
         "# latencies below were measured in SM cycles, and only the SM clock was measured\n";
  if (usable("sm_clock_measured", &clk)) {
    std::string c = format_printf("%.1f", clk->value);
    line("-gpgpu_clock_domains", c + ":" + c + ":" + c + ":" + c, cite(*clk));
  }
  left_out += "#   separate interconnect, L2 and DRAM clocks: not measured\n";

  out += "\n# memory latencies in SM cycles (GPGPU-Sim adds them: L2 = L1 + ROP, DRAM = L2 + dram)\n";
  bool have_l1 = usable("l1_hit_latency", &l1);
  if (have_l1) line("-gpgpu_l1_latency", cycles(l1->value), cite(*l1));
  if (usable("shared_latency", &smem)) line("-gpgpu_smem_latency", cycles(smem->value), cite(*smem));
  bool have_l2 = usable("l2_hit_latency", &l2) || usable("l2_near_hit_latency", &l2);
  if (have_l1 && have_l2)
    line("-gpgpu_l2_rop_latency", cycles(l2->value - l1->value), cite(*l2) + " - " + cite(*l1));
  else
    left_out += "#   -gpgpu_l2_rop_latency: needs both L1 and L2 hit latencies\n";
  if (have_l2 && usable("dram_latency", &dram))
    line("-dram_latency", cycles(dram->value - l2->value), cite(*dram) + " - " + cite(*l2));
  else
    left_out += "#   -dram_latency: needs both L2 hit and DRAM latencies\n";

  out += "\n# L1 data cache geometry <sector>:<sets>:<line>:<ways>\n";
  const Parameter *sets = nullptr, *ways = nullptr, *line_size = nullptr;
  bool geometry = usable("l1_sets", &sets) & usable("l1_ways", &ways) & usable("l1_line_size", &line_size);
  if (geometry) {
    double s = std::round(sets->value);
    bool pow2 = s >= 1 && std::fabs(std::exp2(std::round(std::log2(s))) - s) < 0.5;
    if (!pow2) {
      left_out += "#   -gpgpu_cache:dl1: l1_sets = " + format_number(s) +
                  " is not a power of two, which GPGPU-Sim's set index functions need\n";
    } else {
      const Parameter* sector = find(run, "l1_sector_size");
      bool sectored = sector && sector->confidence >= kSimulatorMinConfidence && sector->value < line_size->value;
      out += "# (replacement, write, allocation and MSHR fields are not measured: keep your base config's)\n";
      out += "# -gpgpu_cache:dl1 " + std::string(sectored ? "S" : "N") + ":" + format_number(s) + ":" +
             format_number(line_size->value) + ":" + format_number(std::round(ways->value)) + ",<policy fields>  # " +
             cite(*sets) + ", " + cite(*ways) + ", " + cite(*line_size) + "\n";
    }
  }
  left_out += "#   -gpgpu_cache:dl2: L2 sets and ways per memory sub-partition are not measured\n";
  if (usable("shared_banks", &p)) line("-gpgpu_shmem_num_banks", format_number(p->value), cite(*p));

  out += "\n# -trace_opcode_latency_initiation_<unit> <latency>,<initiation interval>: the latency of a\n"
         "# dependent chain; the interval is 32 lanes x U units / the measured rate per SM, for U = 4\n"
         "# units per SM (a base config's -gpgpu_num_<unit>_units; scale it if yours differs)\n";
  constexpr double kUnitsPerSm = 4, kWarp = 32;
  const std::vector<std::pair<std::string, std::string>> pipes = {
      {"int", "int32_add"}, {"sp", "fp32_fma"}, {"dp", "fp64_fma"}, {"sfu", "sfu_rsqrt"}};
  for (const auto& [unit, op] : pipes) {
    const Parameter *lat = nullptr, *rate = nullptr;
    if (usable(op + "_latency", &lat) && usable(op + "_throughput_per_sm", &rate) && rate->value > 0) {
      double interval = std::max(1.0, std::round(kWarp * kUnitsPerSm / rate->value));
      line("-trace_opcode_latency_initiation_" + unit, cycles(lat->value) + "," + format_number(interval),
           cite(*lat) + ", " + cite(*rate));
    } else {
      left_out += "#   -trace_opcode_latency_initiation_" + unit + ": no " + op + " latency and rate\n";
    }
  }
  left_out += "#   -trace_opcode_latency_initiation_tensor: mma rates are in multiply-adds, not warp instructions\n";

  out += "\n# kernel launch latency in SM cycles (launch overhead x measured SM clock)\n";
  const Parameter* launch = nullptr;
  if (clk && usable("kernel_launch_overhead", &launch) && launch->unit == "us")
    line("-gpgpu_kernel_launch_latency", cycles(launch->value * clk->value), cite(*launch) + " x " + cite(*clk));
  else
    left_out += "#   -gpgpu_kernel_launch_latency: needs kernel_launch_overhead in us and the SM clock\n";

  return out + "\n# Left out (not measured, or not trusted enough):\n" + left_out;
}

std::string export_mt4g(const RunData& run) {
  Json root;
  std::string name = run.gpu;
  root["general"]["name"] = str(name);
  root["general"]["vendor"] = str(name.rfind("NVIDIA", 0) == 0 ? "NVIDIA" : name.rfind("AMD", 0) == 0 ? "AMD" : "unknown");
  if (run.cc_major > 0) {
    root["general"]["computeCapability"]["major"] = num(run.cc_major);
    root["general"]["computeCapability"]["minor"] = num(run.cc_minor);
  }
  if (double sms = meta_number(run, "sm_count"); std::isfinite(sms)) root["compute"]["multiProcessorCount"] = num(sms);
  // MT4G's measured quantities: {"mean", "p50", "method", "unit"} for latencies and
  // {"size", "unit", "confidence", "method"} for sizes; its device attributes {"unit", "value"}.
  auto latency = [&](Json& at, const std::string& param) {
    if (const Parameter* p = find(run, param)) {
      Json& j = at["latency"];
      j["mean"] = num(p->value);
      j["p50"] = num(p->value);
      j["method"] = str("p-chase");
      j["unit"] = str("cycles");
    }
  };
  auto sized = [&](Json& at, const std::string& key, const std::string& param) {
    if (const Parameter* p = find(run, param)) {
      Json& j = at[key];
      j["confidence"] = num(p->confidence);
      j["method"] = str("p-chase");
      j["randomized"] = Json::value("true");
      j["size"] = num(p->value);
      j["unit"] = str("bytes");
    }
  };
  auto valued = [&](Json& at, const std::string& key, double v, const std::string& unit) {
    if (!std::isfinite(v)) return;
    at[key]["unit"] = str(unit);
    at[key]["value"] = num(v);
  };
  auto gib_per_s = [&](const std::string& param) {
    const Parameter* p = find(run, param);
    return p && p->unit == "GB/s" ? p->value * 1e9 / (1024.0 * 1024 * 1024) : NAN;
  };
  Json& mem = root["memory"];
  latency(mem["l1"], "l1_hit_latency");
  sized(mem["l1"], "size", "l1_size");
  sized(mem["l1"], "lineSize", "l1_line_size");
  sized(mem["l1"], "fetchGranularity", "l1_sector_size");
  latency(mem["l2"], find(run, "l2_hit_latency") ? "l2_hit_latency" : "l2_near_hit_latency");
  sized(mem["l2"], "lineSize", "l2_line_size");
  sized(mem["l2"], "fetchGranularity", "l2_sector_size");
  sized(mem["l2"], "segmentSize", "l2_segment_size");
  if (const Parameter* p = find(run, "l2_size")) valued(mem["l2"], "size", p->value, "bytes");
  valued(mem["l2"], "readBandwidth", gib_per_s("l2_read_bandwidth"), "GiB/s");
  latency(mem["main"], "dram_latency");
  valued(mem["main"], "readBandwidth", gib_per_s("dram_read_bandwidth"), "GiB/s");
  valued(mem["main"], "writeBandwidth", gib_per_s("dram_write_bandwidth"), "GiB/s");
  valued(mem["main"], "totalGlobalMem", meta_number(run, "global_mem_bytes"), "bytes");
  valued(mem["main"], "memoryBusWidth", meta_number(run, "memory_bus_width_bits"), "bit");
  valued(mem["main"], "memoryClockRate", meta_number(run, "memory_clock_mhz") * 1000, "kHz");
  latency(mem["shared"], "shared_latency");
  valued(mem["shared"], "sharedMemPerMultiProcessor", meta_number(run, "shared_per_sm_bytes"), "bytes");
  latency(mem["readOnly"], "readonly_hit_latency");
  sized(mem["readOnly"], "lineSize", "readonly_line_size");
  latency(mem["constant"]["l1"], "constant_hit_latency");
  sized(mem["constant"]["l1"], "lineSize", "constant_line_size");
  // Drop levels the run measured nothing of.
  std::vector<std::pair<std::string, Json>> kept;
  for (auto& [k, v] : mem.members) {
    if (k == "constant" && v["l1"].empty()) continue;
    if (!v.empty()) kept.emplace_back(k, v);
  }
  mem.members = kept;
  root["meta"]["tool"] = str(std::string("gpuprobe ") + GPUPROBE_VERSION);
  root["meta"]["runId"] = str(run.meta_value("run_id"));
  if (double d = meta_number(run, "cuda_driver_api"); std::isfinite(d)) root["meta"]["driver"] = num(d);
  if (double r = meta_number(run, "runtime_version"); std::isfinite(r)) root["meta"]["runtime"] = num(r);
  return render(root) + "\n";
}

int export_main(const std::vector<std::string>& args) {
  const char* usage = "usage: gpuprobe export RUN_DIR --json|--accel-sim|--mt4g [--out FILE]";
  std::string dir, format, out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::printf("%s\n", usage);
      return 0;
    }
    if (a == "--json" || a == "--accel-sim" || a == "--mt4g") {
      if (!format.empty() && format != a) {
        std::fprintf(stderr, "gpuprobe export: one format at a time (%s)\n", usage);
        return 2;
      }
      format = a;
    } else if (a == "--out" || a.rfind("--out=", 0) == 0) {
      if (a == "--out" && i + 1 >= args.size()) {
        std::fprintf(stderr, "gpuprobe export: --out: missing value\n");
        return 2;
      }
      out = a == "--out" ? args[++i] : a.substr(6);
    } else if (a.rfind("-", 0) == 0) {
      std::fprintf(stderr, "gpuprobe export: unknown option '%s' (%s)\n", a.c_str(), usage);
      return 2;
    } else if (dir.empty()) {
      dir = a;
    } else {
      std::fprintf(stderr, "gpuprobe export: expected one RUN_DIR (%s)\n", usage);
      return 2;
    }
  }
  if (dir.empty() || format.empty()) {
    std::fprintf(stderr, "gpuprobe export: %s\n", usage);
    return 2;
  }
  if (const FolderKind kind = folder_kind(dir); kind != FolderKind::run) {
    std::fprintf(stderr, "gpuprobe export: %s: %s, not a run folder\n", dir.c_str(), folder_kind_name(kind));
    return 1;
  }
  try {
    Diagnostics diag;
    diag.prefix = "gpuprobe export";
    RunData run = load_run(dir, known_families({}), diag);
    std::string text = format == "--json" ? export_json(run) : format == "--accel-sim" ? export_accel_sim(run) : export_mt4g(run);
    if (out.empty()) std::fputs(text.c_str(), stdout);
    else write_file_atomic(out, text);
    return diag.errors.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuprobe export: %s\n", e.what());
    return 1;
  }
}

}  // namespace gpuprobe
