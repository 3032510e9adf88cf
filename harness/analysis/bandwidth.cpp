#include "analysis/bandwidth.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

#include "analysis/analyzer.hpp"
#include "analysis/common/memory_chase.hpp"
#include "analysis/common/util.hpp"
#include "analysis/dram_read_order.hpp"
#include "base/csv.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe::bandwidth {

namespace {

std::string mib(double bytes) { return format_printf("%.4g", bytes / (1024.0 * 1024.0)) + " MiB"; }

std::vector<Observation> rows_where(const std::vector<Observation>& obs, const std::string& probe,
                                    const std::string& unit,
                                    const std::function<bool(const Observation&)>& keep) {
  std::vector<Observation> out;
  for (const auto& o : select(obs, probe, unit))
    if (keep(o)) out.push_back(o);
  return out;
}

// The row with the highest median (a copy: callers often pass a temporary selection).
std::optional<Observation> best_of(const std::vector<Observation>& rows) {
  std::optional<Observation> best;
  for (const auto& o : rows)
    if (std::isfinite(o.p50) && (!best || o.p50 > best->p50)) best = o;
  return best;
}

// "16 B ld.global.cg, ILP 4" (", warp slices" for the read_slices layout)
std::string describe(const Observation& o) {
  if (o.param_text(kOpColumn) == "cp.async.bulk")
    return o.param_text(kWidthColumn) + " B cp.async.bulk chunks, " + o.param_text(kIlpColumn) +
           " in flight per block";
  std::string s = o.param_text(kWidthColumn) + " B " + o.param_text(kOpColumn);
  if (!o.param_text(kIlpColumn).empty()) s += ", ILP " + o.param_text(kIlpColumn);
  if (o.probe == kReadSlicesProbe) s += ", warp slices";
  return s;
}

Parameter peak_parameter(const std::string& name, const Observation& best, const std::string& unit,
                         const std::string& method, const std::string& evidence) {
  return {name, best.p50, unit, best.p05, best.p95, analysis::spread_confidence(best), method, evidence};
}

// Above the theoretical peak by more than the memory clock's rounding: not DRAM alone.
constexpr double kAboveTheoretical = 1.02;
// What a figure known to be contaminated (L2 hits, a wrong clock) may claim at most.
constexpr double kSuspectCap = 0.3;
// l2_read_bandwidth from one footprint alone: nothing shows it is the shelf, not a bump.
constexpr double kOneFootprintCap = 0.6;
// l2_read_bandwidth without round_bytes: merged requests could inflate the shelf.
constexpr double kNoRoundCap = 0.7;
// The best of the L2 reads moved by up to 3.3 % over three full runs in a row on one H200 (one
// run low, its L2 latencies unmoved) and 1.8 % on one H100, past each run's own p05..p95
// (docs/repeatability.md, "Floors"). The 5 % between two H100 cards is not covered.
constexpr double kL2ReadRunToRun = 0.035;

// The DRAM figures quote their fraction of the theoretical peak; one above it means the
// buffer was partly served from L2, and the figure cannot be trusted.

void against_theoretical(Parameter& p, double theoretical) {
  if (!(theoretical > 0)) return;
  const double frac = p.value / theoretical;
  p.method += "; " + format_printf("%.1f", 100 * frac) + " % of the theoretical " + format_printf("%.0f", theoretical) +
              " GB/s (2 x memory clock x bus width)";
  if (frac > kAboveTheoretical) {
    p.confidence = std::min(p.confidence, kSuspectCap);
    p.method += ", ABOVE the theoretical peak: L2 or a wrong memory clock?";
  }
}

// Rows whose footprint is `lo` < footprint / L2 <= `hi`, and at least what one round of the
// grid reads (round_bytes, where recorded): below that, threads read the same data at once
// and the memory system merges their requests (the H100 reads "16 TB/s" from 0.4 MiB), which
// is not the L2 delivering.
std::function<bool(const Observation&)> l2_fraction_in(double lo, double hi) {
  return [lo, hi](const Observation& o) {
    const double f = o.param(kL2FractionColumn);
    const double round = o.param(kRoundColumn);
    return f > lo && f <= hi && !(o.param(memory_chase::kFootprintColumn) < round);
  };
}

// The smallest value of `key` whose rows' best rate is within kShelfBand of the best rate at
// the largest value of `key`, going down without a gap: the shelf the largest footprints reach.
// NaN when no row has a finite `key` (at least `min_key`).
constexpr double kShelfBand = 0.05;
double shelf_start(const std::vector<Observation>& rows, const std::string& key, double min_key) {
  std::map<double, double> best;  // key -> best rate
  for (const auto& o : rows) {
    const double f = o.param(key);
    if (std::isfinite(f) && f >= min_key && std::isfinite(o.p50)) best[f] = std::max(best[f], o.p50);
  }
  if (best.empty()) return std::nan("");
  const double top = best.rbegin()->second;
  double lowest = best.rbegin()->first;
  for (auto it = best.rbegin(); it != best.rend(); ++it) {
    if (std::fabs(it->second / top - 1) > kShelfBand) break;
    lowest = it->first;
  }
  return lowest;
}

// Without round_bytes (a converted curve), which small footprints the memory system inflated
// by merging requests is not known; the L2's own rate is the shelf the largest footprints up to
// half of L2 reach. The rows returned are those footprints' rows.
std::vector<Observation> l2_shelf(const std::vector<Observation>& rows) {
  const double lowest = shelf_start(rows, memory_chase::kFootprintColumn, 0);
  std::vector<Observation> out;
  for (const auto& o : rows)
    if (o.param(memory_chase::kFootprintColumn) >= lowest) out.push_back(o);
  return out;
}

// The DRAM rows: those over every footprint of at least 8x L2 on the largest footprint's shelf
// (so a noisy largest point does not decide alone). A smaller footprint reread within a
// repetition could still find part of itself in L2, whatever the replacement policy, and read
// faster than DRAM can deliver.
constexpr double kDramMinFraction = 8;
std::vector<Observation> dram_rows(const std::vector<Observation>& obs, const std::string& probe) {
  const double lowest =
      shelf_start(select(obs, probe, "GB/s"), kL2FractionColumn, kDramMinFraction);
  if (!std::isfinite(lowest)) return {};
  return rows_where(obs, probe, "GB/s", [lowest](const Observation& o) {
    return o.param(kL2FractionColumn) >= lowest;
  });
}

const std::string kEvidence = std::string(kFamily.name) + ".csv";

// dram_read_bandwidth: the grid sweeping the buffer together, each warp streaming its own
// slice, and the bulk-copy engine, best of all.
std::optional<Parameter> dram_read(const std::vector<Observation>& obs, double theoretical) {
  auto dram = dram_rows(obs, kReadProbe);
  for (const char* probe : {kReadSlicesProbe, kReadBulkProbe})
    for (const auto& o : dram_rows(obs, probe)) dram.push_back(o);
  auto b = best_of(dram);
  if (!b) return std::nullopt;
  Parameter p = peak_parameter(
      param::dram_read_bandwidth, *b, "GB/s",
      "best of " + std::to_string(dram.size()) +
          " streaming reads (width, ILP, cache operator and hints, layout, bulk copies) " +
          "at full occupancy over " + mib(b->param(memory_chase::kFootprintColumn)) + " (" +
          format_printf("%.0f", b->param(kL2FractionColumn)) + "x L2), events, median of " +
          std::to_string(b->reps) + ": " + describe(*b),
      kEvidence);
  against_theoretical(p, theoretical);
  return p;
}

// dram_write_bandwidth or dram_copy_bandwidth (`name`, of `probe`): the best store, and by how
// much it beat the best with the other store.
std::optional<Parameter> dram_store(const std::vector<Observation>& obs, const std::string& probe,
                                    const char* name, double theoretical) {
  auto rows = dram_rows(obs, probe);
  if (probe == kWriteProbe)
    for (const auto& o : dram_rows(obs, kWriteBulkProbe)) rows.push_back(o);
  auto b = best_of(rows);
  if (!b) return std::nullopt;
  std::string method =
      std::string(probe == kCopyProbe ? "load + store over two buffers, bytes read "
                                        "and written both counted; "
                                      : "streaming stores; ") +
      "best of " + std::to_string(rows.size()) + " over " +
      mib(b->param(memory_chase::kFootprintColumn)) + ": " + describe(*b);
  std::vector<Observation> others;
  for (const auto& o : rows)
    if (o.param_text(kOpColumn) != b->param_text(kOpColumn)) others.push_back(o);
  if (auto other = best_of(others))
    method += " won (" + other->param_text(kOpColumn) + " best " +
              format_printf("%.0f", other->p50) + " GB/s)";
  Parameter p = peak_parameter(name, *b, "GB/s", method, kEvidence);
  against_theoretical(p, theoretical);
  return p;
}

// l2_read_bandwidth: reads through L2 only up to half of L2, from one round of the grid's reads
// (or, without round_bytes, the shelf the largest of them reach).
std::optional<Parameter> l2_read(const std::vector<Observation>& obs) {
  auto near = rows_where(obs, kReadProbe, "GB/s", l2_fraction_in(0, 0.5));
  const bool rounds_known = std::any_of(near.begin(), near.end(), [](const Observation& o) {
    return std::isfinite(o.param(kRoundColumn));
  });
  if (!rounds_known) near = l2_shelf(near);
  auto b = best_of(near);
  if (!b) return std::nullopt;
  Parameter p = peak_parameter(
      param::l2_read_bandwidth, *b, "GB/s",
      std::string(rounds_known ? "streaming reads through L2 only (ld.global.cg), footprints from "
                                 "one round of the grid's reads up to half of L2 (one partition "
                                 "of a split L2), best of "
                               : "streaming reads through L2 only (ld.global.cg), no round_bytes "
                                 "recorded: the footprints up to half of L2 whose rate is within "
                                 "5 % of the largest one's (smaller ones may be inflated by merged "
                                 "requests), best of ") +
          std::to_string(near.size()) + ": " + describe(*b) + " at " +
          mib(b->param(memory_chase::kFootprintColumn)),
      kEvidence);
  if (near.size() < 2) p.confidence = std::min(p.confidence, kOneFootprintCap);
  // without the round, a shelf of inflated rows could pass for the L2's
  if (!rounds_known) p.confidence = std::min(p.confidence, kNoRoundCap);
  if (auto both = best_of(rows_where(obs, kReadProbe, "GB/s", l2_fraction_in(0.5, 0.9))))
    p.method += "; across both partitions (0.5-0.9x L2) " + format_printf("%.0f", both->p50) + " GB/s";
  analysis::widen_to_repeat(p, kL2ReadRunToRun, "what runs in a row moved it");
  return p;
}

// l1_bandwidth_per_sm: each block rereading its own slice through L1.
std::optional<Parameter> l1_read(const std::vector<Observation>& obs) {
  auto l1 = select(obs, kL1ReadProbe, "B/clk/SM");
  auto b = best_of(l1);
  if (!b) return std::nullopt;
  return peak_parameter(param::l1_bandwidth_per_sm, *b, "B/clk/SM",
                        "each block rereads its own 16 KiB slice through L1, " +
                            b->param_text(kThreadsPerSmColumn) +
                            " threads/SM; clock64 window per SM (blocks grouped by %smid), median "
                            "over SMs; best of " +
                            std::to_string(l1.size()) + ": " + describe(*b),
                        kEvidence);
}

}  // namespace

std::vector<Parameter> analyze_bandwidth(const std::vector<Observation>& obs, const Metadata&) {
  using namespace bandwidth;
  double theoretical = std::nan("");
  if (auto t = best_of(select(obs, dram_read_order::kTheoreticalProbe, "GB/s")))
    theoretical = t->p50;
  std::vector<Parameter> out;
  for (auto p : {dram_read(obs, theoretical),
                 dram_store(obs, kWriteProbe, param::dram_write_bandwidth, theoretical),
                 dram_store(obs, kCopyProbe, param::dram_copy_bandwidth, theoretical), l2_read(obs),
                 l1_read(obs)})
    if (p) out.push_back(*p);
  return out;
}

GPUPROBE_REGISTER_ANALYZER(bandwidth::kFamily, analyze_bandwidth);

}  // namespace gpuprobe::bandwidth
