#include "analysis/p2p.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/node.hpp"
#include "base/parameter_names.hpp"
#include "base/stats.hpp"

namespace gpuprobe {

namespace p2p {

const std::vector<Mode>& modes() {
  using E = Engine;
  using A = Access;
  using P = Pattern;
  // nvbandwidth v0.8's descriptions, as its testcases_ce.cpp and testcases_sm.cpp write them.
  static const char* kCeTo = "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)";
  static const char* kCeFrom = "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)";
  static const char* kSmTo = "memcpy SM GPU(row) -> GPU(column) bandwidth (GB/s)";
  static const char* kSmFrom = "memcpy SM GPU(row) <- GPU(column) bandwidth (GB/s)";
  static const std::vector<Mode> m = {
      {"ce_write", P::pair, E::copy_engine, A::write,
       "device's copy engine writes into the peer (cudaMemcpyPeerAsync), GB/s", "device_to_device_memcpy_write_ce",
       kCeFrom},
      {"ce_read", P::pair, E::copy_engine, A::read, "device's copy engine reads the peer's memory into its own, GB/s",
       "device_to_device_memcpy_read_ce", kCeTo},
      {"sm_write", P::pair, E::sm, A::write, "device's kernel stores into the peer's memory, GB/s",
       "device_to_device_memcpy_write_sm", kSmFrom},
      {"sm_read", P::pair, E::sm, A::read, "device's kernel loads the peer's memory, GB/s",
       "device_to_device_memcpy_read_sm", kSmTo},
      {"ce_write_bidir", P::pair_bidir, E::copy_engine, A::write,
       "ce_write both ways at once, GB/s of both (each direction's rate, summed)",
       "device_to_device_bidirectional_memcpy_write_ce", ""},
      {"ce_read_bidir", P::pair_bidir, E::copy_engine, A::read, "ce_read both ways at once, GB/s of both",
       "device_to_device_bidirectional_memcpy_read_ce", ""},
      {"sm_write_bidir", P::pair_bidir, E::sm, A::write, "sm_write both ways at once, GB/s of both",
       "device_to_device_bidirectional_memcpy_write_sm", ""},
      {"sm_read_bidir", P::pair_bidir, E::sm, A::read, "sm_read both ways at once, GB/s of both",
       "device_to_device_bidirectional_memcpy_read_sm", ""},
      {"one_to_all_write_ce", P::one_to_all, E::copy_engine, A::write,
       "device's copy engines write into every other GPU at once, GB/s of all", "one_to_all_write_ce", kCeTo},
      {"one_to_all_read_ce", P::one_to_all, E::copy_engine, A::read,
       "device's copy engines read every other GPU at once, GB/s of all", "one_to_all_read_ce", kCeFrom},
      {"all_to_one_write_ce", P::all_to_one, E::copy_engine, A::write,
       "every other GPU's copy engine writes into device at once, GB/s of all", "all_to_one_write_ce", kCeFrom},
      {"all_to_one_read_ce", P::all_to_one, E::copy_engine, A::read,
       "every other GPU's copy engine reads device's memory at once, GB/s of all", "all_to_one_read_ce", kCeTo},
      {"one_to_all_write_sm", P::one_to_all, E::sm, A::write,
       "device's kernels store into every other GPU at once, GB/s of all", "one_to_all_write_sm", kSmTo},
      // nvbandwidth v0.8's one_to_all_read_sm and all_to_one_read_sm run the copy kernel in the
      // source's context (PREFER_SRC_CONTEXT): stores by the other side, not these loads.
      {"one_to_all_read_sm", P::one_to_all, E::sm, A::read,
       "device's kernels load every other GPU's memory at once, GB/s of all", "", ""},
      {"all_to_one_write_sm", P::all_to_one, E::sm, A::write,
       "every other GPU's kernel stores into device at once, GB/s of all", "all_to_one_write_sm", kSmFrom},
      {"all_to_one_read_sm", P::all_to_one, E::sm, A::read,
       "every other GPU's kernel loads device's memory at once, GB/s of all", "", ""},
      {"all_pairs_write_ce", P::all_pairs, E::copy_engine, A::write,
       "every GPU's copy engines write into every other GPU at once: the node's total GB/s, and each pair's", "", ""},
      {"all_pairs_write_sm", P::all_pairs, E::sm, A::write,
       "every GPU's kernels store into every other GPU at once: the node's total GB/s, and each pair's", "", ""},
  };
  return m;
}

const Mode* find_mode(const std::string& probe) {
  for (const auto& m : modes())
    if (probe == m.probe) return &m;
  return nullptr;
}

std::string parameter_name(const Mode& m) { return param::p2p_bandwidth(m.probe); }

bool is_pair(const Mode& m) { return m.pattern == Pattern::pair || m.pattern == Pattern::pair_bidir; }

bool compares_with_total_rows(const Mode& m) { return m.pattern == Pattern::pair_bidir; }

std::vector<Transfer> transfers(const Mode& m, int device, int peer, int gpus,
                                const std::function<bool(int, int)>& accessible) {
  std::vector<Transfer> out;
  auto in_node = [&](int g) { return g >= 0 && g < gpus; };
  // A copy `by` initiates with `other`: its write goes by -> other, its read other -> by.
  auto initiate = [&](int by, int other) {
    if (!in_node(by) || !in_node(other) || by == other || !accessible(by, other)) return false;
    out.push_back(m.access == Access::write ? Transfer{by, other, by} : Transfer{other, by, by});
    return true;
  };
  switch (m.pattern) {
    case Pattern::pair:
      initiate(device, peer);
      break;
    case Pattern::pair_bidir:
      // Both directions or none: one alone is the one-way mode.
      if (!initiate(device, peer) || !initiate(peer, device)) out.clear();
      break;
    case Pattern::one_to_all:
      for (int k = 0; in_node(device) && k < gpus; ++k) initiate(device, k);
      break;
    case Pattern::all_to_one:
      for (int k = 0; in_node(device) && k < gpus; ++k) initiate(k, device);
      break;
    case Pattern::all_pairs:
      for (int a = 0; a < gpus; ++a)
        for (int b = 0; b < gpus; ++b) initiate(a, b);
      break;
  }
  return out;
}

double physical_gbs(const Mode& m, const node::Node& n, int device, int peer) {
  const int gpus = int(n.gpus.size());
  auto others = [gpus](int g) {
    std::vector<int> out;
    for (int k = 0; k < gpus; ++k)
      if (k != g) out.push_back(k);
    return out;
  };
  if (device >= 0 && peer >= 0) return node::pair_gbs(n, device, peer) * (m.pattern == Pattern::pair_bidir ? 2 : 1);
  if (device >= 0) return node::fanout_gbs(n, device, others(device));
  double total = 0;  // every GPU sends on its own links
  for (int g = 0; g < gpus; ++g) {
    const double r = node::fanout_gbs(n, g, others(g));
    if (!(r > 0)) return -1;
    total += r;
  }
  return gpus > 1 ? total : -1;
}

namespace {

// A device or peer index of a row; -1 where the row has none (or it is not a small index).
constexpr int kMaxGpus = 1024;
int index_of(const Observation& o, const char* key) {
  const double v = o.param(key);
  return v >= 0 && v < kMaxGpus ? int(v) : -1;
}

}  // namespace

bool matrix(const std::vector<Observation>& obs, const std::string& probe, const std::string& unit,
            Matrix* out) {
  std::map<std::pair<int, int>, double> cells;
  int n = 0;
  for (const auto& o : select(obs, probe, unit)) {
    const int d = index_of(o, "device"), p = index_of(o, "peer");
    if (d < 0 || p < 0) continue;
    cells[{d, p}] = o.value;
    n = std::max(n, std::max(d, p) + 1);
  }
  if (cells.empty()) return false;
  Matrix m{probe, unit, std::vector<std::vector<double>>(size_t(n), std::vector<double>(size_t(n), NAN))};
  for (const auto& [k, v] : cells) m.value[size_t(k.first)][size_t(k.second)] = v;
  *out = m;
  return true;
}

std::vector<double> per_device(const std::vector<Observation>& obs, const std::string& probe,
                               const std::string& unit) {
  std::vector<double> out;
  for (const auto& o : select(obs, probe, unit)) {
    const int d = index_of(o, "device");
    if (d < 0 || index_of(o, "peer") >= 0) continue;
    if (size_t(d) >= out.size()) out.resize(size_t(d) + 1, NAN);
    out[size_t(d)] = o.value;
  }
  return out;
}

}  // namespace p2p

namespace {

using p2p::Mode;
using p2p::Pattern;

// Events and the median of a few repetitions may read a little high; a figure past the links'
// physical rate by more than this is impossible, not noise.
constexpr double kCapSlack = 0.02;
// What an impossible figure is worth: it is measured, but something timed it wrong.
constexpr double kImpossibleConfidence = 0.02;
// Pairs (or GPUs) that differ by more than this from each other are named in the method text:
// the median then hides a slower link.
constexpr double kUnevenSpread = 0.10;
// Three full runs in a row on one 2 x H200 host moved the pair rates by up to 0.98 %, more
// than one run's spread over its pairs and repetitions (docs/repeatability.md).
constexpr double kRunToRun = 0.01;
// What the driver reports of its links, read and not measured: right unless NVML means by its
// units or version enum other than its header says.
constexpr double kNvmlConfidence = 0.9;

// The physical bound of one row of `m`, GB/s; < 0 unknown.
double cap_of(const Mode& m, const Observation& o, const node::Node& n) {
  return p2p::physical_gbs(m, n, p2p::index_of(o, "device"), p2p::index_of(o, "peer"));
}

// The rows a mode's parameter is read from: pairs, devices, or the node's total.
bool feeds_value(const Mode& m, const Observation& o) {
  const bool dev = p2p::index_of(o, "device") >= 0, peer = p2p::index_of(o, "peer") >= 0;
  if (p2p::is_pair(m)) return dev && peer;
  if (m.pattern == Pattern::all_pairs) return !dev && !peer;
  return dev && !peer;
}

// What the links allow against what the mode's rows show, for the method text; `impossible`
// when a row passes it.
std::string cap_check(const Mode& m, const std::vector<Observation>& rows, const node::Node& n, bool* impossible) {
  double worst = 0, cap_at_worst = -1, lowest_cap = -1;
  for (const auto& o : rows) {
    const double cap = cap_of(m, o, n);
    if (!(cap > 0)) continue;
    lowest_cap = lowest_cap > 0 ? std::min(lowest_cap, cap) : cap;
    if (o.value / cap > worst) {
      worst = o.value / cap;
      cap_at_worst = cap;
    }
  }
  *impossible = worst > 1 + kCapSlack;
  if (cap_at_worst < 0) return "";
  if (*impossible)
    return "; IMPOSSIBLE: " + analysis::num(worst * cap_at_worst, 4) + " GB/s is above the " +
           analysis::num(cap_at_worst, 4) + " GB/s the links can carry (NVML's links x rate): the timing is wrong";
  return "; at most " + analysis::num(100 * worst, 3) + " % of the links' physical rate (" +
         analysis::num(lowest_cap, 4) + " GB/s where lowest: NVML's links x rate)";
}

std::string spread_note(const std::vector<double>& v, const char* what) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  if (v.size() < 2 || !(*lo > 0) || *hi / *lo - 1 <= kUnevenSpread) return "";
  return "; the " + std::string(what) + " differ by " + analysis::num(100 * (*hi / *lo - 1), 3) +
         " %: see the matrix in p2p.csv";
}

bool mode_parameter(const Mode& m, const std::vector<Observation>& obs, const node::Node& n, Parameter* out) {
  std::vector<Observation> rows;
  for (const auto& o : select(obs, m.probe, "GB/s"))
    if (o.value > 0 && std::isfinite(o.value)) rows.push_back(o);
  std::vector<double> v;
  double conf = 1;
  const Observation* total = nullptr;
  for (const auto& o : rows) {
    if (!feeds_value(m, o)) continue;
    v.push_back(o.value);
    conf = std::min(conf, analysis::spread_confidence(o));
    total = &o;
  }
  if (v.empty()) return false;
  const std::string label = m.engine == p2p::Engine::copy_engine ? "copy_engine" : "sm_copy";
  std::string how;
  if (m.pattern == Pattern::all_pairs) {
    *out = analysis::measured(p2p::parameter_name(m), *total, "", "p2p.csv");
    how = "every GPU with every other at once on " + analysis::num(total->param("gpus"), 3) +
          " GPUs: the node's total, bytes of all over the time until the last copy ends (interval: "
          "p05..p95 of the repetitions)";
  } else {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    const bool pairs = p2p::is_pair(m);
    *out = {p2p::parameter_name(m), median(v), "GB/s", *lo, *hi, conf, "", "p2p.csv"};
    how = "median over " + std::to_string(v.size()) + (pairs ? " GPU pairs" : " GPUs as the one") +
          " (low/high: the slowest and fastest" + (pairs ? " pair)" : ")") + spread_note(v, pairs ? "pairs" : "GPUs");
  }
  bool impossible = false;
  const std::string cap = cap_check(m, rows, n, &impossible);
  if (impossible) out->confidence = std::min(out->confidence, kImpossibleConfidence);
  out->method = label + ": " + how +
                (m.nvbandwidth_name[0] ? std::string("; nvbandwidth's ") + m.nvbandwidth_name : "") + cap;
  analysis::widen_to_repeat(*out, kRunToRun, "what runs in a row on one host moved");
  return true;
}

// nvlink_links, nvlink_link_bandwidth, nvlink_bandwidth: median over the GPUs NVML described.
void link_parameters(const node::Node& n, std::vector<Parameter>& out) {
  std::vector<double> links, rate, total;
  for (const auto& g : n.gpus) {
    if (!g.nvlink) continue;
    links.push_back(g.links);
    if (g.link_gbs > 0) rate.push_back(g.link_gbs);
    if (node::gpu_nvlink_gbs(g) > 0) total.push_back(node::gpu_nvlink_gbs(g));
  }
  auto add = [&](const char* name, const std::vector<double>& v, const char* unit, const std::string& what) {
    if (v.empty()) return;
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    out.push_back({name, median(v), unit, *lo, *hi, kNvmlConfidence,
                   "nvml_query: " + what + ", median over " + std::to_string(v.size()) +
                       " GPUs (low/high: the fewest and most); read from the driver, not measured",
                   "p2p.csv"});
  };
  add(param::nvlink_links, links, "links",
      "active NVLink links per GPU (nvmlDeviceGetNvLinkState)");
  add(param::nvlink_link_bandwidth, rate, "GB/s",
      "one link's rate per direction (NVML_FI_DEV_NVLINK_GET_SPEED, MB/s / 1000): raw signalling");
  add(param::nvlink_bandwidth, total, "GB/s",
      "a GPU's NVLink links x the link rate, per direction: the physical rate");
}

}  // namespace

std::vector<Parameter> analyze_p2p(const std::vector<Observation>& obs, const Metadata& meta) {
  std::vector<Parameter> out;
  const node::Node n = node::from_metadata(meta);
  for (const auto& m : p2p::modes()) {
    Parameter p;
    if (mode_parameter(m, obs, n, &p)) out.push_back(p);
  }
  std::vector<double> lat;
  double conf = 1;
  for (const auto& o : select(obs, p2p::kLatencyProbe, "ns")) {
    if (!(o.value > 0)) continue;
    lat.push_back(o.value);
    conf = std::min(conf, analysis::spread_confidence(o));
  }
  if (!lat.empty()) {
    const auto [lo, hi] = std::minmax_element(lat.begin(), lat.end());
    out.push_back({param::p2p_latency, median(lat), "ns", *lo, *hi, conf,
                   "pointer_chase: one thread's loads through the peer's memory, median over " +
                       std::to_string(lat.size()) +
                       " GPU pairs (low/high: the fastest and slowest pair)" +
                       spread_note(lat, "pairs") + "; nvbandwidth's device_to_device_latency_sm",
                   "p2p.csv"});
  }
  link_parameters(n, out);
  return out;
}

GPUPROBE_REGISTER_ANALYZER(p2p::kFamily, analyze_p2p);

}  // namespace gpuprobe
