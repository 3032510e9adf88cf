#include "app/nvbandwidth_json.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "analysis/p2p.hpp"
#include "base/json.hpp"
#include "base/run_dir.hpp"

namespace gpuprobe {

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

}  // namespace

std::vector<NvbandwidthCase> nvbandwidth_cases(
    const std::map<std::string, std::vector<Observation>>& families) {
  std::vector<NvbandwidthCase> out;
  auto host = families.find("host_link");
  if (host != families.end()) {
    struct HostCase {
      const char* probe;
      const char* unit;
      const char* name;
      const char* description;  // nvbandwidth's testcases_ce.cpp / testcases_sm.cpp
    };
    const HostCase cases[] = {
        {"ce_h2d_pinned", "GB/s", "host_to_device_memcpy_ce", "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)"},
        {"ce_d2h_pinned", "GB/s", "device_to_host_memcpy_ce", "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)"},
        {"sm_h2d", "GB/s", "host_to_device_memcpy_sm", "memcpy SM CPU(row) -> GPU(column) bandwidth (GB/s)"},
        {"sm_d2h", "GB/s", "device_to_host_memcpy_sm", "memcpy SM CPU(row) <- GPU(column) bandwidth (GB/s)"},
    };
    for (const HostCase& c : cases)
      if (const Observation* o = at_default_size(host->second, c.probe, c.unit))
        out.push_back({c.name, c.description, {{o->value}}});
    for (const auto& o : host->second)
      if (o.probe == "mapped_latency" && o.unit == "ns")
        out.push_back({"host_device_latency_sm", "memory latency SM CPU(row) <-> GPU(column) (ns)", {{o.value}}});
  }
  auto peer = families.find("p2p");
  if (peer != families.end()) {
    for (const auto& m : p2p::measures()) {
      if (!m.nvbandwidth_name[0]) continue;
      p2p::Matrix mat;
      if (p2p::matrix(peer->second, m.probe, m.unit, &mat))
        out.push_back({m.nvbandwidth_name, m.nvbandwidth_description, mat.value});
    }
  }
  return out;
}

std::string format_nvbandwidth_json(const Metadata& meta, const std::vector<NvbandwidthCase>& cases) {
  const std::string version = "gpuprobe " + meta_value(meta, "gpuprobe_version", "unknown");
  const std::string device = "0: " + meta_value(meta, "gpu", "unknown GPU") + " (" +
                             meta_value(meta, "pci_bus_id", "unknown") + "): (" +
                             meta_value(meta, "hostname", "unknown host") + ")";
  int runtime = 0;
  try {
    runtime = std::stoi(meta_value(meta, "cuda_driver_api", meta_value(meta, "runtime_version", "0")));
  } catch (const std::exception&) {
    runtime = 0;
  }
  Json testcases = Json::array();
  for (const auto& c : cases) {
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
                         {"status", "Passed"},
                         {"sum", json_number(sum, kNvbandwidthDigits)}});
  }
  // Keys in nvbandwidth's order (its JSON writer sorts them).
  Json nvb;
  nvb["CUDA Runtime Version"] = runtime;
  nvb["Driver Version"] = meta_value(meta, "driver_version", "unknown");
  nvb["GPU Device list"] = Json::array({device});
  nvb["git_version"] = version;
  nvb["testcases"] = testcases;
  nvb["version"] = version;
  return json_text(Json{{"nvbandwidth", nvb}});
}

void write_nvbandwidth_json(const std::string& run_dir, const std::string& path) {
  std::map<std::string, std::vector<Observation>> families;
  Metadata meta;
  for (const char* family : {"host_link", "p2p"}) {
    const std::string file = run_dir + "/" + family + ".csv";
    if (!std::filesystem::exists(file)) continue;
    Metadata m;
    families[family] = read_observations(file, &m);
    if (meta.empty()) meta = m;
  }
  if (families.empty())
    throw std::runtime_error("--json-nvbandwidth: " + run_dir + " has no host_link.csv or p2p.csv");
  write_file_atomic(path, format_nvbandwidth_json(meta, nvbandwidth_cases(families)));
}

}  // namespace gpuprobe
