#include "analysis/p2p.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/stats.hpp"

namespace gpuprobe {

namespace p2p {

const std::vector<Measure>& measures() {
  static const std::vector<Measure> p = {
      {"ce_write", "GB/s", "device_to_device_memcpy_write_ce",
       "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)", "p2p_write_bandwidth_ce"},
      // nvbandwidth's bidirectional cases report one direction under load; these report both.
      {"ce_write_bidir", "GB/s", "", "", "p2p_bidir_bandwidth_ce"},
      {"sm_read", "GB/s", "device_to_device_memcpy_read_sm",
       "memcpy SM GPU(row) <- GPU(column) bandwidth (GB/s)", "p2p_read_bandwidth_sm"},
      {"sm_read_bidir", "GB/s", "", "", "p2p_bidir_bandwidth_sm"},
      {"latency", "ns", "device_to_device_latency_sm",
       "Device to Device Latency SM GPU(row) <-> GPU(column) (ns)", "p2p_latency"},
  };
  return p;
}

bool matrix(const std::vector<Observation>& obs, const std::string& probe, const std::string& unit,
            Matrix* out) {
  std::map<std::pair<int, int>, double> cells;
  int n = 0;
  for (const auto& o : select(obs, probe, unit)) {
    const double d = o.param("device"), p = o.param("peer");
    if (!(d >= 0 && d < 1024 && p >= 0 && p < 1024)) continue;
    cells[{int(d), int(p)}] = o.value;
    n = std::max(n, std::max(int(d), int(p)) + 1);
  }
  if (cells.empty()) return false;
  Matrix m{probe, unit, std::vector<std::vector<double>>(size_t(n), std::vector<double>(size_t(n), NAN))};
  for (const auto& [k, v] : cells) m.value[size_t(k.first)][size_t(k.second)] = v;
  *out = m;
  return true;
}

}  // namespace p2p

std::vector<Parameter> analyze_p2p(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  for (const auto& info : p2p::measures()) {
    std::vector<double> v;
    double conf = 1;
    for (const auto& o : select(obs, info.probe, info.unit)) {
      if (!(o.value > 0)) continue;
      v.push_back(o.value);
      conf = std::min(conf, analysis::spread_confidence(o));
    }
    if (v.empty()) continue;
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    out.push_back({info.parameter, median(v), info.unit, *lo, *hi, conf,
                   std::string(info.probe[0] == 'c' ? "copy_engine" : info.probe[0] == 's' ? "sm_copy" : "pointer_chase") +
                       ": median over " + std::to_string(v.size()) +
                       " GPU pairs (low/high: the slowest and fastest pair)" +
                       (info.nvbandwidth_name[0] ? std::string("; nvbandwidth's ") + info.nvbandwidth_name : ""),
                   "p2p.csv"});
  }
  return out;
}

GPUPROBE_REGISTER_ANALYZER(p2p::kFamily, analyze_p2p);

}  // namespace gpuprobe
