// report.md's Node section: the GPUs of the machine and their links (base/node.hpp, from the
// run's metadata), and the p2p figures against the links' physical rate.
#include <algorithm>
#include <cmath>

#include "analysis/common/util.hpp"
#include "analysis/p2p.hpp"
#include "app/report_detail.hpp"
#include "base/node.hpp"
#include "base/stats.hpp"

namespace gpuprobe {

namespace {

std::string gbs_text(double v) { return v > 0 ? human(v, "GB/s") : "-"; }

std::string nvlink_cell(const node::Gpu& g) {
  if (!g.why.empty()) return "unknown (" + g.why + ")";
  if (!g.nvlink || g.links == 0) return "none active";
  return std::to_string(g.links) + " links, NVLink " + (g.version.empty() ? "?" : g.version) + ", " +
         gbs_text(g.link_gbs) + " each";
}

std::string to_cell(const node::Gpu& g) {
  std::string to;
  if (g.switch_links > 0) to = "NVSwitch (" + std::to_string(g.switch_links) + ")";
  for (const auto& [peer, n] : g.peer_links)
    to += (to.empty() ? "" : ", ") + std::string("GPU ") + std::to_string(peer) + " (" + std::to_string(n) + ")";
  if (g.other_links > 0) to += (to.empty() ? "" : ", ") + std::string("other (") + std::to_string(g.other_links) + ")";
  return to.empty() ? "-" : to;
}

std::string physical_cell(const node::Gpu& g) {
  const double nv = node::gpu_nvlink_gbs(g), pcie = node::pcie_gbs(g);
  if (nv > 0) return gbs_text(nv) + " (" + std::to_string(g.links) + " x " + analysis::num(g.link_gbs, 5) + ")";
  return pcie > 0 ? gbs_text(pcie) + " (PCIe)" : "-";
}

// The median over the pairs (or GPUs) a mode's rows cover of the physical rate their copies
// could reach; < 0 unknown.
double typical_physical(const p2p::Mode& m, const node::Node& n) {
  const int gpus = int(n.gpus.size());
  std::vector<double> caps;
  if (m.pattern == p2p::Pattern::all_pairs) return p2p::physical_gbs(m, n, -1, -1);
  for (int d = 0; d < gpus; ++d) {
    if (!p2p::is_pair(m)) caps.push_back(p2p::physical_gbs(m, n, d, -1));
    for (int p = 0; p2p::is_pair(m) && p < gpus; ++p)
      if (p != d) caps.push_back(p2p::physical_gbs(m, n, d, p));
  }
  const bool known = !caps.empty() && std::all_of(caps.begin(), caps.end(), [](double c) { return c > 0; });
  return known ? median(caps) : -1;
}

std::string measured_against_links(const RunData& run, const node::Node& n) {
  std::vector<std::vector<std::string>> rows = {{"mode", "measured", "physical", "share"}};
  for (const auto& m : p2p::modes()) {
    const auto it = std::find_if(run.params.begin(), run.params.end(),
                                 [&](const Parameter& p) { return p.name == p2p::parameter_name(m); });
    const double cap = typical_physical(m, n);
    if (it == run.params.end() || !(cap > 0)) continue;
    rows.push_back(
        {"`" + it->name + "`", gbs_text(it->value), gbs_text(cap), analysis::num(100 * it->value / cap, 3) + " %"});
  }
  if (rows.size() == 1) return "";
  return "Each mode's median against the physical rate of the links its copies cross (raw signalling, "
         "before encoding and protocol: no copy reaches it):\n\n" +
         markdown_table(rows) + "\n";
}

}  // namespace

std::string node_markdown(const RunData& run) {
  const node::Node n = node::from_metadata(run.meta);
  const bool p2p_ran = !run.file_of(std::string(p2p::kFamily.name)).empty();
  if (n.empty())
    return p2p_ran ? "## Node\n\nThe GPUs' links were not recorded: this run predates the node_* metadata "
                     "(p2p.csv's `link` rows name each pair's link as NVML saw it).\n\n"
                   : "";
  std::string md = "## Node\n\n" + std::to_string(n.gpus.size()) + " GPU" + (n.gpus.size() == 1 ? "" : "s") +
                   " as CUDA numbers them, their links as NVML reports them (rates per direction).\n\n";
  std::vector<std::vector<std::string>> rows = {
      {"GPU", "name", "PCI bus", "PCIe", "NVLink", "to", "physical rate per direction"}};
  for (const auto& g : n.gpus)
    rows.push_back(
        {std::to_string(g.ordinal), g.name, g.bus, node::pcie_text(g), nvlink_cell(g), to_cell(g), physical_cell(g)});
  md += markdown_table(rows) + "\n";
  if (!n.paths.empty()) {
    std::string paths;
    for (const auto& [ab, level] : n.paths)
      paths += (paths.empty() ? "" : ", ") + std::to_string(ab.first) + "-" + std::to_string(ab.second) + " " + level;
    md +=
        "PCIe path between each pair (NVML's common ancestor, named as `nvidia-smi topo` names it: PIX one "
        "switch, PXB several, PHB a host bridge, NODE within a NUMA node, SYS across): " +
        paths + ".\n\n";
  }
  if (n.gpus.size() < 2) return md + "One GPU: the p2p family has no peer to measure.\n\n";
  return md + measured_against_links(run, n);
}

}  // namespace gpuprobe
