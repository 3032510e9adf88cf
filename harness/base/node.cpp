#include "base/node.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace gpuprobe::node {

namespace {

constexpr int kRemoteGpu = 0, kRemoteSwitch = 2;  // nvmlIntNvLinkDeviceType_t
constexpr double kMbPerGb = 1000;                 // NVML's MBps and our GB/s are decimal
constexpr double kBitsPerByte = 8;
// PCIe transfer rate per lane by generation, GT/s (PCI-SIG base specifications 1.0 to 6.0).
constexpr double kPcieGtPerLane[] = {2.5, 5, 8, 16, 32, 64};

std::string key(int g, const std::string& what) {
  return "node_gpu" + std::to_string(g) + (what.empty() ? "" : "_" + what);
}

std::string value_of(const Metadata& meta, const std::string& k) {
  for (const auto& [mk, v] : meta)
    if (mk == k) return v;
  return "";
}

std::string rate_text(double gbs) {
  if (!(gbs > 0)) return "?";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", gbs);
  std::string s = buf;
  s.erase(s.find_last_not_of('0') + 1);  // 26.562, 25, 50.5
  if (s.back() == '.') s.pop_back();
  return s;
}

// The three numbers of a bus id "domain:bus:device.function" (hex); false when not one.
bool bus_numbers(const std::string& id, unsigned long out[4]) {
  std::string s = id;
  std::replace(s.begin(), s.end(), '.', ':');
  std::istringstream in(s);
  std::string part;
  int n = 0;
  while (std::getline(in, part, ':')) {
    if (n == 4 || part.empty()) return false;
    char* end = nullptr;
    out[n++] = std::strtoul(part.c_str(), &end, 16);
    if (*end) return false;
  }
  return n == 4;
}

void parse_links(Gpu& g, const std::string& list) {
  std::istringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::istringstream words(item);
    std::string target;
    int count = 0;
    if (!(words >> target >> count)) continue;
    if (target == "nvswitch")
      g.switch_links += count;
    else if (target.rfind("gpu", 0) == 0)
      g.peer_links[std::atoi(target.c_str() + 3)] += count;
    else
      g.other_links += count;
  }
}

void parse_nvlink(Gpu& g, const std::string& text) {
  int links = 0;
  if (std::sscanf(text.c_str(), "%d active link", &links) != 1) {
    const std::string unknown = "unknown (";
    if (text.rfind(unknown, 0) == 0 && text.back() == ')')
      g.why = text.substr(unknown.size(), text.size() - unknown.size() - 1);
    return;  // "none reported": NVML answered, this GPU has no NVLink
  }
  g.nvlink = true;
  g.links = links;
  const size_t v = text.find("NVLink ");
  if (v != std::string::npos) {
    g.version = text.substr(v + 7, text.find(',', v) - v - 7);
    if (g.version == "?") g.version.clear();
  }
  const size_t r = text.find(" GB/s");
  if (r != std::string::npos) {
    const size_t b = text.rfind(' ', r - 1);
    char* end = nullptr;
    const double gbs = std::strtod(text.c_str() + b + 1, &end);
    if (end == text.c_str() + r && gbs > 0) g.link_gbs = gbs;
  }
  const size_t to = text.find("; to ");
  if (to != std::string::npos) parse_links(g, text.substr(to + 5));
}

}  // namespace

std::string nvlink_version_text(unsigned v) {
  static const char* kNames[] = {"", "1.0", "2.0", "2.2", "3.0", "3.1", "4.0", "5.0", "6.0"};
  return v < sizeof kNames / sizeof kNames[0] ? kNames[v] : "";
}

bool same_pci_bus(const std::string& a, const std::string& b) {
  unsigned long x[4], y[4];
  return bus_numbers(a, x) && bus_numbers(b, y) && std::equal(x, x + 4, y);
}

Gpu with_links(Gpu g, const std::vector<LinkReading>& links, const std::vector<std::string>& buses) {
  g.nvlink = true;
  for (const auto& l : links) {
    if (!l.active) continue;
    ++g.links;
    if (g.version.empty()) g.version = nvlink_version_text(l.version);
    if (l.mbps > 0) g.link_gbs = std::max(g.link_gbs, l.mbps / kMbPerGb);
    if (l.remote_type == kRemoteSwitch) {
      ++g.switch_links;
      continue;
    }
    int peer = -1;
    for (size_t k = 0; k < buses.size(); ++k)
      if (l.remote_type == kRemoteGpu && same_pci_bus(l.remote_bus, buses[k])) peer = int(k);
    if (peer >= 0 && peer != g.ordinal)
      ++g.peer_links[peer];
    else
      ++g.other_links;
  }
  return g;
}

std::string topology_level_name(int level) {
  switch (level) {  // nvmlGpuTopologyLevel_t
    case 0:
      return "internal";
    case 10:
      return "PIX";
    case 20:
      return "PXB";
    case 30:
      return "PHB";
    case 40:
      return "NODE";
    case 50:
      return "SYS";
    default:
      return "";
  }
}

std::string nvlink_text(const Gpu& g) {
  if (!g.why.empty()) return "unknown (" + g.why + ")";
  if (!g.nvlink) return "none reported";
  std::string s = std::to_string(g.links) + " active link" + (g.links == 1 ? "" : "s");
  if (g.links == 0) return s;
  s += ", NVLink " + (g.version.empty() ? std::string("?") : g.version) + ", " + rate_text(g.link_gbs) +
       " GB/s per link and direction; to ";
  std::string to;
  auto add = [&](const std::string& what, int n) {
    if (n > 0) to += (to.empty() ? "" : ", ") + what + " " + std::to_string(n);
  };
  add("nvswitch", g.switch_links);
  for (const auto& [peer, n] : g.peer_links) add("gpu" + std::to_string(peer), n);
  add("other", g.other_links);
  return s + to;
}

std::string pcie_text(const Gpu& g) {
  if (g.pcie_max_gen <= 0 && g.pcie_gen <= 0) return "unknown";
  auto link = [](int gen, int width) {
    return (gen > 0 ? "gen" + std::to_string(gen) : std::string("gen?")) + " x" +
           (width > 0 ? std::to_string(width) : std::string("?"));
  };
  return link(g.pcie_gen, g.pcie_width) + " (max " + link(g.pcie_max_gen, g.pcie_max_width) + ")";
}

Metadata to_metadata(const Node& n) {
  Metadata m = {{"node_gpus", std::to_string(n.gpus.size())}};
  for (const auto& g : n.gpus) {
    m.emplace_back(key(g.ordinal, ""), g.name + " (" + g.bus + ")");
    m.emplace_back(key(g.ordinal, "pcie"), pcie_text(g));
    m.emplace_back(key(g.ordinal, "nvlink"), nvlink_text(g));
  }
  if (!n.paths.empty()) {
    std::string paths;
    for (const auto& [ab, level] : n.paths)
      paths += (paths.empty() ? "" : ", ") + std::to_string(ab.first) + "-" + std::to_string(ab.second) + " " +
               (level.empty() ? "?" : level);
    m.emplace_back("node_pcie_paths", paths);
  }
  return m;
}

Node from_metadata(const Metadata& meta) {
  Node n;
  const int count = std::atoi(value_of(meta, "node_gpus").c_str());
  for (int i = 0; i < count; ++i) {
    Gpu g;
    g.ordinal = i;
    const std::string id = value_of(meta, key(i, ""));
    const size_t open = id.rfind(" (");
    g.name = id.substr(0, open);
    if (open != std::string::npos && id.back() == ')') g.bus = id.substr(open + 2, id.size() - open - 3);
    std::sscanf(value_of(meta, key(i, "pcie")).c_str(), "gen%d x%d (max gen%d x%d)", &g.pcie_gen, &g.pcie_width,
                &g.pcie_max_gen, &g.pcie_max_width);
    parse_nvlink(g, value_of(meta, key(i, "nvlink")));
    n.gpus.push_back(g);
  }
  std::istringstream in(value_of(meta, "node_pcie_paths"));
  std::string item;
  while (std::getline(in, item, ',')) {
    int a = -1, b = -1;
    char level[16] = {};
    if (std::sscanf(item.c_str(), " %d-%d %15s", &a, &b, level) == 3 && std::string(level) != "?")
      n.paths[{a, b}] = level;
  }
  return n;
}

double pcie_gbs(const Gpu& g) {
  const int gen = g.pcie_max_gen > 0 ? g.pcie_max_gen : g.pcie_gen;
  const int width = g.pcie_max_width > 0 ? g.pcie_max_width : g.pcie_width;
  constexpr int kGenerations = sizeof kPcieGtPerLane / sizeof kPcieGtPerLane[0];
  if (gen < 1 || gen > kGenerations || width < 1) return -1;
  return kPcieGtPerLane[gen - 1] * width / kBitsPerByte;
}

double pcie_line_gbs(int generation, int lanes) {
  // The share of the transfers that carries data, by generation.
  constexpr double kPayload[] = {8.0 / 10, 8.0 / 10, 128.0 / 130, 128.0 / 130, 128.0 / 130, 1};
  constexpr int kGenerations = sizeof kPcieGtPerLane / sizeof kPcieGtPerLane[0];
  static_assert(sizeof kPayload / sizeof kPayload[0] == kGenerations, "a line code per generation");
  if (generation < 1 || generation > kGenerations || lanes < 1) return -1;
  return kPcieGtPerLane[generation - 1] * kPayload[generation - 1] * lanes / kBitsPerByte;
}

double gpu_nvlink_gbs(const Gpu& g) { return g.nvlink && g.links > 0 && g.link_gbs > 0 ? g.links * g.link_gbs : -1; }

int pair_links(const Node& n, int a, int b) {
  if (a < 0 || b < 0 || a >= int(n.gpus.size()) || b >= int(n.gpus.size())) return -1;
  const Gpu &x = n.gpus[size_t(a)], &y = n.gpus[size_t(b)];
  if (!x.nvlink || !y.nvlink) return -1;
  auto direct = x.peer_links.find(b);
  return (direct == x.peer_links.end() ? 0 : direct->second) + std::min(x.switch_links, y.switch_links);
}

double pair_gbs(const Node& n, int a, int b) {
  const int links = pair_links(n, a, b);
  if (links < 0) return -1;  // NVML could not say: a PCIe bound could be an NVLink pair's
  const Gpu &x = n.gpus[size_t(a)], &y = n.gpus[size_t(b)];
  if (links > 0) {
    const double rate = std::max(x.link_gbs, y.link_gbs);
    return rate > 0 ? links * rate : -1;
  }
  const double pa = pcie_gbs(x), pb = pcie_gbs(y);
  return pa > 0 && pb > 0 ? std::min(pa, pb) : -1;
}

double fanout_gbs(const Node& n, int g, const std::vector<int>& peers) {
  if (peers.empty() || g < 0 || g >= int(n.gpus.size())) return -1;
  double sum = 0;
  bool over_pcie = false;
  for (int k : peers) {
    const double r = pair_gbs(n, g, k);
    if (!(r > 0)) return -1;
    sum += r;
    over_pcie = over_pcie || pair_links(n, g, k) == 0;
  }
  const Gpu& x = n.gpus[size_t(g)];
  const double nv = std::max(0.0, gpu_nvlink_gbs(x)), pcie = over_pcie ? pcie_gbs(x) : 0;
  return std::min(sum, nv + pcie);
}

}  // namespace gpuprobe::node
