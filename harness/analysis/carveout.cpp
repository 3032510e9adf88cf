#include "analysis/carveout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"
#include "base/stats.hpp"

namespace gpuprobe::carveout {

namespace {

using namespace memory_chase;
using analysis::num;

}  // namespace

std::vector<CarveoutCapacity> l1_capacity_by_carveout(const std::vector<Observation>& obs) {
  std::vector<CarveoutCapacity> out;
  std::map<double, double> request;
  for (const auto& o : select(obs, kChaseProbe, "cycles"))
    request[o.param(kPercentColumn)] = o.param(kRequestColumn);
  for (const auto& [pct, pts] :
       grouped(obs, kChaseProbe, "cycles", {}, kPercentColumn, kFootprintColumn)) {
    double hit = pts.front().second;
    for (const auto& p : pts) hit = std::min(hit, p.second);
    auto b = first_miss_bracket(pts, kL1FitFactor * hit);
    if (!b || !b->found()) continue;
    out.push_back({pct, request[pct], b->fit, b->miss});
  }
  return out;
}

std::vector<Parameter> analyze_carveout(const std::vector<Observation>& obs, const Metadata&) {
  auto caps = l1_capacity_by_carveout(obs);
  if (caps.empty()) return {};
  const CarveoutCapacity* best = &caps.front();
  for (const auto& c : caps)
    if (c.l1_bytes > best->l1_bytes) best = &c;
  double resolution = (best->miss_bytes - best->l1_bytes) / best->l1_bytes;
  double conf = 0.95 - std::min(0.4, 4 * resolution) - (caps.size() < 2 ? 0.1 : 0.0);
  // The onset of misses, not the capacity: with a replacement that is not LRU, misses begin
  // before the cache is full (H100: 218 KiB against the 256 KiB the ladder's half step reads),
  // so it has its own name and never stands in for l1_size.
  return {make_parameter(
      param::l1_size_no_miss, best->l1_bytes, "bytes", best->l1_bytes, best->miss_bytes, conf,
      "one-thread ld.global chase, 32 B spacing, quasi-random cyclic order; "
      "footprint bisected to where cycles/access exceed " +
          num(kL1FitFactor) + "x the hit level; largest over " + std::to_string(caps.size()) +
          " carve-out preferences (at " + num(best->percent) + " %)",
      std::string(kFamily.name) + ".csv")};
}

// ---------------------------------------------------------------------------------------
// Code checks

namespace {

std::vector<CodeExpectation> expectations() {
  std::vector<CodeExpectation> out;
  out.push_back(expectation(std::string(kFamily.name), chase_kernel(false, loader(kL1, 8)),
                            kChaseProbe, ptx_load(kL1, 8, true), sass_load(kL1)));
  // Chain layout: stores of the next element's offset.
  out.push_back(expectation(std::string(kFamily.name), kWriteChain64, kChaseProbe,
                            {R"(^st\.global\.u64 )", -1, false}, {R"(^STG\.E)", -1, false}));
  return out;
}

}  // namespace

std::vector<std::string> kernels(const std::string& probe) {
  if (probe == kChaseProbe || probe == kL1SizeProbe)
    return {chase_kernel(false, loader(kL1, 8)), kWriteChain64};
  return {};
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(expectations);
GPUPROBE_REGISTER_ANALYZER(carveout::kFamily, analyze_carveout);

}  // namespace gpuprobe::carveout
