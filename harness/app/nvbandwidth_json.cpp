#include "app/nvbandwidth_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "analysis/host_link.hpp"
#include "analysis/p2p.hpp"
#include "base/csv.hpp"
#include "base/json.hpp"
#include "base/node.hpp"
#include "base/run_dir.hpp"

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

// As nvbandwidth's `std::stringstream << double`: six significant digits.
constexpr int kNvbandwidthDigits = 6;
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", kNvbandwidthDigits, v);
  return buf;
}

std::string meta_value(const Metadata& meta, const std::string& key, const std::string& fallback) {
  for (const auto& [k, v] : meta)
    if (k == key) return v;
  return fallback;
}

// "0000:00:06.0" as getDeviceDisplayInfo writes it: "%08x:%02x:%02x" of domain, bus, device.
std::string display_bus(const std::string& bus) {
  unsigned domain = 0, b = 0, d = 0, f = 0;
  if (std::sscanf(bus.c_str(), "%x:%x:%x.%x", &domain, &b, &d, &f) != 4) return bus;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08x:%02x:%02x", domain, b, d);
  return buf;
}

// The row of `probe` at the transfer size closest to nvbandwidth's default.
const Observation* at_default_size(const std::vector<Observation>& rows, const std::string& probe,
                                   const std::string& unit) {
  const Observation* best = nullptr;
  double best_d = 0;
  for (const auto& o : rows) {
    if (o.probe != probe || o.unit != unit) continue;
    const double b = o.param("bytes");
    if (!(b > 0)) continue;
    const double d = std::fabs(std::log2(b / double(kNvbandwidthBufferBytes)));
    if (!best || d < best_d - 1e-9 || (std::fabs(d - best_d) < 1e-9 && b > best->param("bytes"))) {
      best = &o;
      best_d = d;
    }
  }
  return best;
}

// One row (the CPU) of `gpus` columns, `v` in the measured device's.
std::vector<std::vector<double>> host_row(double v, int gpus, int device) {
  std::vector<double> row(size_t(std::max(gpus, device + 1)), NAN);
  row[size_t(device)] = v;
  return {row};
}

void host_cases(const std::vector<Observation>& rows, int gpus, int device, std::vector<NvbandwidthCase>& out) {
  struct HostCase {
    const char* probe;
    const char* name;
    const char* description;  // nvbandwidth's testcases_ce.cpp / testcases_sm.cpp
  };
  const HostCase cases[] = {
      {host_link::kCeH2dPinnedProbe, "host_to_device_memcpy_ce",
       "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)"},
      {host_link::kCeD2hPinnedProbe, "device_to_host_memcpy_ce",
       "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)"},
      {host_link::kSmH2dProbe, "host_to_device_memcpy_sm",
       "memcpy SM CPU(row) -> GPU(column) bandwidth (GB/s)"},
      {host_link::kSmD2hProbe, "device_to_host_memcpy_sm",
       "memcpy SM CPU(row) <- GPU(column) bandwidth (GB/s)"},
  };
  for (const HostCase& c : cases)
    if (const Observation* o = at_default_size(rows, c.probe, "GB/s"))
      out.push_back({c.name, c.description, host_row(o->value, gpus, device)});
  for (const auto& o : rows)
    if (o.probe == host_link::kMappedLatencyProbe && o.unit == "ns")
      out.push_back({"host_device_latency_sm", "memory latency SM CPU(row) <-> GPU(column) (ns)",
                     host_row(o.value, gpus, device)});
}

// `m` grown to n x n (a GPU whose every pair went unmeasured is still a row and a column).
std::vector<std::vector<double>> square(std::vector<std::vector<double>> m, int n) {
  const size_t size = std::max(m.size(), size_t(std::max(n, 0)));
  m.resize(size);
  for (auto& row : m) row.resize(size, NAN);
  return m;
}

void peer_cases(const std::vector<Observation>& rows, int gpus, bool bidir_sums, std::vector<NvbandwidthCase>& out) {
  for (const auto& m : p2p::modes()) {
    if (!m.nvbandwidth_name[0] || (p2p::compares_with_total_rows(m) && !bidir_sums)) continue;
    if (p2p::is_pair(m)) {
      p2p::Matrix mat;
      if (p2p::matrix(rows, m.probe, "GB/s", &mat))
        out.push_back({m.nvbandwidth_name, m.nvbandwidth_description, square(mat.value, gpus)});
      continue;
    }
    std::vector<double> v = p2p::per_device(rows, m.probe, "GB/s");
    if (v.empty()) continue;
    v.resize(std::max(v.size(), size_t(std::max(gpus, 0))), NAN);
    out.push_back({m.nvbandwidth_name, m.nvbandwidth_description, {v}});
  }
  p2p::Matrix lat;
  if (p2p::matrix(rows, p2p::kLatencyProbe, "ns", &lat))
    out.push_back({"device_to_device_latency_sm", "Device to Device Latency SM GPU(row) <-> GPU(column) (ns)",
                   square(lat.value, gpus)});
}

// nvbandwidth's p2p cases, each "Waived" (what it writes where a case's filter fails).
void waived_peer_cases(std::vector<NvbandwidthCase>& out) {
  for (const auto& m : p2p::modes())
    if (m.nvbandwidth_name[0] && !p2p::compares_with_total_rows(m))
      out.push_back({m.nvbandwidth_name, "", {}, "Waived"});
  out.push_back({"device_to_device_latency_sm", "", {}, "Waived"});
}

// The status families.csv gives `family` ("" when it is not listed).
std::string family_status(const std::string& run_dir, const std::string& family) {
  const fs::path f = fs::path(run_dir) / "families.csv";
  if (!fs::exists(f)) return "";
  const CsvTable t = read_csv(f.string());
  const int name = t.column("family"), status = t.column("status");
  if (name < 0 || status < 0) return "";
  for (const auto& r : t.rows)
    if (int(r.size()) > std::max(name, status) && r[size_t(name)] == family) return r[size_t(status)];
  return "";
}

}  // namespace

std::vector<std::string> nvbandwidth_devices(const Metadata& meta) {
  const std::string host = meta_value(meta, "hostname", "unknown host");
  std::vector<std::string> out;
  const node::Node n = node::from_metadata(meta);
  for (const auto& g : n.gpus)
    out.push_back(std::to_string(g.ordinal) + ": " + g.name + " (" + display_bus(g.bus) + "): (" + host + ")");
  if (out.empty())
    out.push_back("0: " + meta_value(meta, "gpu", "unknown GPU") + " (" +
                  display_bus(meta_value(meta, "pci_bus_id", "unknown")) + "): (" + host + ")");
  return out;
}

std::vector<NvbandwidthCase> nvbandwidth_cases(const std::map<std::string, std::vector<Observation>>& families,
                                               int gpus, int device, bool bidir_sums) {
  std::vector<NvbandwidthCase> out;
  if (auto host = families.find(std::string(host_link::kFamily.name)); host != families.end())
    host_cases(host->second, gpus, device, out);
  if (auto peer = families.find(std::string(p2p::kFamily.name)); peer != families.end())
    peer_cases(peer->second, gpus, bidir_sums, out);
  return out;
}

std::string format_nvbandwidth_json(const Metadata& meta, const std::vector<NvbandwidthCase>& cases) {
  const std::string version = "gpuprobe " + meta_value(meta, "gpuprobe_version", "unknown");
  int runtime = 0;
  try {
    runtime = std::stoi(meta_value(meta, "cuda_driver_api", meta_value(meta, "runtime_version", "0")));
  } catch (const std::exception&) {
    runtime = 0;
  }
  Json testcases = Json::array();
  for (const auto& c : cases) {
    if (c.status != "Passed") {  // addTestcase: the name and status alone
      testcases.push_back({{"name", c.name}, {"status", c.status}});
      continue;
    }
    double sum = 0;
    Json matrix = Json::array();
    for (const auto& row : c.matrix) {
      Json cells = Json::array();
      for (double v : row) {
        cells.push_back(std::isfinite(v) ? number(v) : "N/A");
        if (std::isfinite(v)) sum += v;
      }
      matrix.push_back(cells);
    }
    testcases.push_back({{"bandwidth_description", c.description},
                         {"bandwidth_matrix", matrix},
                         {"name", c.name},
                         {"status", c.status},
                         {"sum", json_number(sum, kNvbandwidthDigits)}});
  }
  // Keys in nvbandwidth's order (its JSON writer sorts them).
  Json nvb;
  nvb["CUDA Runtime Version"] = runtime;
  nvb["Driver Version"] = meta_value(meta, "driver_version", "unknown");
  // A run that predates the node's metadata names its own GPU only: the others of its matrices
  // are listed as unknown.
  std::vector<std::string> devices = nvbandwidth_devices(meta);
  size_t width = 0;
  for (const auto& c : cases)
    for (const auto& row : c.matrix) width = std::max(width, row.size());
  for (size_t i = devices.size(); i < width; ++i)
    devices.push_back(std::to_string(i) + ": unknown GPU (unknown): (" + meta_value(meta, "hostname", "unknown host") +
                      ")");
  nvb["GPU Device list"] = devices;
  nvb["git_version"] = version;
  nvb["testcases"] = testcases;
  nvb["version"] = version;
  return json_text(Json{{"nvbandwidth", nvb}});
}

NvbandwidthRun read_nvbandwidth_run(const std::string& run_dir) {
  if (folder_kind(run_dir) != FolderKind::run)
    throw std::runtime_error(run_dir + " is " + folder_kind_name(folder_kind(run_dir)) + ", not a run folder");
  NvbandwidthRun r;
  const std::string host = std::string(host_link::kFamily.name);
  for (const std::string& file : {host + ".csv", std::string("p2p.csv"),
                                  std::string("families.csv"), std::string("parameters.csv")}) {
    const std::string f = run_dir + "/" + file;
    if (!fs::exists(f)) continue;
    Metadata m;
    const std::string stem = fs::path(file).stem().string();
    if (stem == host || stem == p2p::kFamily.name) r.families[stem] = read_observations(f, &m);
    else
      m = read_csv(f).meta;
    if (r.meta.empty()) r.meta = m;
  }
  const node::Node n = node::from_metadata(r.meta);
  r.gpus = int(n.gpus.size());
  for (const auto& g : n.gpus)
    if (node::same_pci_bus(g.bus, meta_value(r.meta, "pci_bus_id", ""))) r.device = g.ordinal;
  const std::string p2p_family(p2p::kFamily.name);
  r.p2p_unsupported =
      !r.families.count(p2p_family) && family_status(run_dir, p2p_family) == "unsupported";
  return r;
}

void write_nvbandwidth_json(const std::string& run_dir, const std::string& path) {
  NvbandwidthRun r;
  try {
    r = read_nvbandwidth_run(run_dir);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("--json-nvbandwidth: " + std::string(e.what()));
  }
  std::vector<NvbandwidthCase> cases = nvbandwidth_cases(r.families, r.gpus, r.device);
  if (r.p2p_unsupported) waived_peer_cases(cases);
  write_file_atomic(path, format_nvbandwidth_json(r.meta, cases));
}

}  // namespace gpuprobe
