#pragma once
// Synthetic nodes and the p2p rows microbench/p2p.cu writes on them, for the p2p analysis,
// nvbandwidth JSON, report and export tests: the rows follow p2p::transfers (the probe's own
// choice of copies), so that they cannot drift from what the probe measures.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/p2p.hpp"
#include "base/node.hpp"
#include "base/run_dir.hpp"
#include "observation_rows.hpp"

namespace gpuprobe {

// `gpus` GPUs, every one with 18 NVLink 4.0 links of 26.562 GB/s to NVSwitch and PCIe gen5 x16
// (the 4 x H200 machine of 2026-11-28: nvidia-smi topo NV18 for every pair, NVML's common
// ancestor 30 = PHB).
inline node::Node nvswitch_node(int gpus) {
  node::Node n;
  for (int i = 0; i < gpus; ++i) {
    node::Gpu g;
    g.ordinal = i;
    g.name = "NVIDIA H200";
    g.bus = "0000:00:0" + std::to_string(6 + i) + ".0";
    g.nvlink = true;
    g.links = g.switch_links = 18;
    g.version = "4.0";
    g.link_gbs = 26.562;
    g.pcie_gen = g.pcie_max_gen = 5;
    g.pcie_width = g.pcie_max_width = 16;
    n.gpus.push_back(g);
    for (int j = 0; j < i; ++j) n.paths[{j, i}] = "PHB";
  }
  return n;
}

// The rows of one node of `gpus` GPUs: a pair mode's rate `pair_gbs` for each one-way copy (GPU
// `slow`'s pairs at half; -1: none slow), twice that both ways; one GPU with all `fan_gbs`;
// all pairs at once `fan_gbs` per GPU; the latency 860 ns.
inline std::vector<Observation> node_rows(int gpus, double pair_gbs, double fan_gbs, int slow = -1) {
  std::vector<Observation> obs;
  auto all = [](int, int) { return true; };
  auto row = [&](const std::string& probe, Params pp, double v, const std::string& unit = "GB/s") {
    obs.push_back(make_row("p2p", probe, std::move(pp), v, unit, 0.004));
  };
  for (int d = 0; d < gpus; ++d)
    for (int p = 0; p < gpus; ++p)
      if (d != p)
        row("link", {{"device", std::to_string(d)}, {"peer", std::to_string(p)}, {"link", "nvlink"}}, 1, "peer_access");
  for (const auto& m : p2p::modes()) {
    const double both = m.pattern == p2p::Pattern::pair_bidir ? 2 : 1;
    for (int d = 0; p2p::is_pair(m) && d < gpus; ++d)
      for (int p = 0; p < gpus; ++p)
        if (!p2p::transfers(m, d, p, gpus, all).empty())
          row(m.probe, {{"device", std::to_string(d)}, {"peer", std::to_string(p)}},
              both * pair_gbs * (d == slow || p == slow ? 0.5 : 1));
    if (m.pattern == p2p::Pattern::one_to_all || m.pattern == p2p::Pattern::all_to_one)
      for (int d = 0; d < gpus; ++d)
        row(m.probe, {{"device", std::to_string(d)}, {"peers", std::to_string(gpus - 1)}}, fan_gbs);
    if (m.pattern == p2p::Pattern::all_pairs && gpus > 1) {
      const auto copies = p2p::transfers(m, -1, -1, gpus, all);
      row(m.probe, {{"gpus", std::to_string(gpus)}, {"copies", std::to_string(copies.size())}}, gpus * fan_gbs);
      for (const auto& t : copies)
        row(m.probe, {{"device", std::to_string(t.src)}, {"peer", std::to_string(t.dst)}}, fan_gbs / (gpus - 1));
    }
  }
  for (int d = 0; d < gpus; ++d)
    for (int p = 0; p < gpus; ++p)
      if (d != p) {
        Params pp = {{"device", std::to_string(d)}, {"peer", std::to_string(p)}, {"clock_mhz", "1980.0"}};
        row(p2p::kLatencyProbe, pp, 860, "ns");
        row(p2p::kLatencyProbe, pp, 860 * 1.98, "cycles");
      }
  return obs;
}

// A run's metadata on `n`, as the runner writes it.
inline Metadata node_run_meta(const node::Node& n) {
  Metadata m = {{"gpu", "NVIDIA H200"},       {"pci_bus_id", "0000:00:06.0"}, {"driver_version", "580.159.04"},
                {"cuda_driver_api", "13000"}, {"gpuprobe_version", "test"},   {"run_id", "20261128T000000Z"}};
  for (auto& kv : node::to_metadata(n)) m.push_back(kv);
  return m;
}

// A run folder on `n` with `obs` as its p2p.csv (none when empty: the family could not run),
// its families.csv and parameters.csv, as the runner leaves them.
inline void write_node_run(const std::filesystem::path& dir, const node::Node& n, const std::vector<Observation>& obs,
                           const std::vector<Parameter>& params) {
  std::filesystem::create_directories(dir);
  const Metadata meta = node_run_meta(n);
  // As the runner writes them (base/run_dir.hpp: RunFileRights::run).
  const auto as_run = RunFileRights::run;
  if (!obs.empty())
    write_file_atomic((dir / "p2p.csv").string(), format_observations(meta, obs), as_run);
  const std::vector<std::string> row =
      obs.empty() ? std::vector<std::string>{"p2p", "unsupported", "0", "", "0", "needs two or more GPUs"}
                  : std::vector<std::string>{"p2p", "ok", "1.0", "1980.0", std::to_string(obs.size()), ""};
  write_file_atomic(
      (dir / "families.csv").string(),
      format_csv(meta,
                 {"family", "status", "wall_time_s", "sm_clock_mhz", "observations", "message"},
                 {row}),
      as_run);
  write_file_atomic((dir / "parameters.csv").string(), format_parameters(meta, params), as_run);
}

}  // namespace gpuprobe
