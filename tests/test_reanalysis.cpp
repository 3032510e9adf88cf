// Re-analysing a committed run gives the parameters committed with it: every run under
// results/<gpu>/<run-id>/ (full and quick, every GPU) goes through `gpuprobe analyze`'s code
// (analyze_run_dir) and is compared with its parameters.csv: the same names, and value, low,
// high and confidence equal within kRelTolerance. A refactoring of the analysis must not move
// a number; a deliberate change says so below, in one of two short tables, with its reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "committed_runs.hpp"
#include "base/catalog.hpp"
#include "base/observation.hpp"
#include "app/run_analysis.hpp"
#include "analysis/common/util.hpp"

namespace gpuprobe {
namespace {

// Equal up to the text round trip of a CSV number (format_number keeps 17 digits or fewer).
constexpr double kRelTolerance = 1e-9;

// The latency and bandwidth families' inference was reworked into the ladder (8f06830 and
// the commits after it): their parameters are held to the ladder's gate instead, the value
// within 1 % (latencies, sizes, bandwidths); their intervals and confidences moved with it.
// The tlb family too: its steps are cut by the ladder's segmentation
// (segmentation::segment_curve), which the rework changed (H100 tlb_miss_latency 896.6 -> 904.5).
constexpr double kReworkTolerance = 0.01;
const std::set<std::string> kReworkedEvidence = {"latency.csv", "bandwidth.csv", "tlb.csv"};

// Parameters renamed since a run was committed whose old name is still a name (of another
// quantity): the old name as written by the family of `evidence`, its new name, and why. A name
// that is no name any more is the catalog's alias (base/parameters/), read as the new one by
// read_parameters.
struct Rename {
  const char* from;
  const char* evidence;
  const char* to;
  const char* why;
};
const std::vector<Rename> kRenames = {
    {param::l1_size, "carveout.csv", param::l1_size_no_miss,
     "carveout's onset of L1 misses (H100: 218 KiB) is not the capacity the latency ladder reads "
     "(256 KiB); one name meant two quantities, whichever won the merge (3e1f899)"},
    {param::h2d_bandwidth_pageable, "host_link.csv", param::h2d_bandwidth_pageable_peak,
     "the best sizes of a pageable sweep are the peak, named so; the name is now the "
     "sustained rate of copies of 256 MiB and more (H100: 18.7 -> 8.6 GB/s)"},
    {param::d2h_bandwidth_pageable, "host_link.csv", param::d2h_bandwidth_pageable_peak,
     "as h2d_bandwidth_pageable: the peak under its own name, the sustained rate under the old"},
};

// Parameters whose committed figure is knowingly not what the analysis gives today: `name`,
// in the runs whose id starts with `runs` ("": every run), written by the family of `evidence`
// ("": any), differs in its confidence only, in its interval (low, high) only, is written now
// and was not then (added), or differs in everything; and why. Keep this list short:
// each entry is a number of a committed run that its own observations no longer reproduce.
enum class Differs { confidence, interval, interval_and_confidence, added, everything };
struct Changed {
  const char* name;
  const char* runs;
  const char* evidence;
  Differs what;
  const char* why;
};
// The runs of 2026-11-22 were analysed by d0cf282, before the ladder (8f06830 and the
// commits after it) and bc98421's TLB curves.
constexpr const char* kBeforeLadder = "20261122T";
// Each interval reaches at least what three full runs in a row on one 2 x H200 host moved the
// figure (docs/repeatability.md); `why` names the floor.
#define GPUPROBE_RUN_TO_RUN(floor) \
  "the interval reaches at least " floor ", what runs in a row moved it"
const std::vector<Changed> kChanged = {
    {param::kernel_launch_overhead, "", "", Differs::interval_and_confidence,
     "on the one spread scale of docs/parameters.md (analysis::spread_confidence, 1e8a691) since; " GPUPROBE_RUN_TO_RUN(
         "+-15 %, the host's enqueue")},
    {"atomic_global_", "", "atomics.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-0.6 % (latencies) and +-8 % (throughput), the lines' L2 slices")},
    {"p2p_", "", "p2p.csv", Differs::interval, GPUPROBE_RUN_TO_RUN("+-1 %")},
    {"fp32_fma_ceiling_", "", "ilp_occupancy.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-0.05 %, the FMA pipe's own rate")},
    {"dram_load_ceiling_", "", "ilp_occupancy.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-3 %, the DRAM-load peak's lone spikes")},
    {param::dram_read_bandwidth_best, "", "dram_read_order.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-1 %")},
    {param::dram_read_peak_fraction, "", "dram_read_order.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-1 %")},
    {param::h2d_bandwidth_pageable, "", "host_link.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-20 %, the host's staging")},
    {param::h2d_bandwidth_pageable_peak, "", "host_link.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-20 %, the host's staging")},
    {param::d2h_bandwidth_pageable, "", "host_link.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-20 %, the host's staging")},
    {param::d2h_bandwidth_pageable_peak, "", "host_link.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-20 %, the host's staging")},
    {param::tlb_miss_latency, "", "tlb.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-3 %, the page walk")},
    {param::dram_read_energy_per_byte, "", "energy.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-10 % for every energy fit")},
    {param::dram_write_energy_per_byte, "", "energy.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-10 % for every energy fit")},
    {param::all_reduce_busbw, "", "collectives.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-0.5 %")},
    {param::all_gather_busbw, "", "collectives.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-0.5 %")},
    {param::reduce_scatter_busbw, "", "collectives.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-0.5 %")},
    {param::broadcast_busbw, "", "collectives.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-0.5 %")},
    {param::all_to_all_busbw, "", "collectives.csv", Differs::interval,
     GPUPROBE_RUN_TO_RUN("+-0.5 %")},
    {param::all_reduce_latency, "", "collectives.csv", Differs::interval_and_confidence,
     GPUPROBE_RUN_TO_RUN("+-30 % at confidence 0.5 at most, the host's launch path")},
    {param::all_gather_latency, "", "collectives.csv", Differs::interval_and_confidence,
     GPUPROBE_RUN_TO_RUN("+-30 % at confidence 0.5 at most, the host's launch path")},
    {param::reduce_scatter_latency, "", "collectives.csv", Differs::interval_and_confidence,
     GPUPROBE_RUN_TO_RUN("+-30 % at confidence 0.5 at most, the host's launch path")},
    {param::broadcast_latency, "", "collectives.csv", Differs::interval_and_confidence,
     GPUPROBE_RUN_TO_RUN("+-30 % at confidence 0.5 at most, the host's launch path")},
    {param::all_to_all_latency, "", "collectives.csv", Differs::interval_and_confidence,
     GPUPROBE_RUN_TO_RUN("+-30 % at confidence 0.5 at most, the host's launch path")},
    {param::l1_size, "", "latency.csv", Differs::added,
     "the ladder's l1_size lost the merge to carveout's before the rename above; it is written now"},
    {param::l1_size_no_miss, "", "carveout.csv", Differs::added,
     "carveout's value under its own name: before the rename it lost the merge to the ladder's"},
    {param::cache_levels, kBeforeLadder, "", Differs::added,
     "a parameter the ladder added (8f06830)"},
    {param::l2_size, kBeforeLadder, "", Differs::everything,
     "read where half the step is climbed since the ladder, at 10 % of the step before (+3.5-7 %)"},
    {param::l2_segment_size, kBeforeLadder, "", Differs::everything,
     "read where half the step is climbed since the ladder, at 10 % of the step before (+6-7 %)"},
    {param::tlb_l1_coverage, kBeforeLadder, "", Differs::everything,
     "TLB steps are cut with the ladder's segmentation, reworked with it, on curves built anew "
     "(bc98421): H100 302 -> 292 MiB, H200 280 -> 306 MiB (one stride's knee moved)"},
    {"l2_near_sm_count_0", "", "", Differs::everything,
     "partitions are numbered by the lowest SM near each since the quick and full runs of one "
     "H100 named them in opposite order (62/70 against 70/62); before, in the order found"},
    {"l2_near_sm_count_1", "", "", Differs::everything, "the same numbering as l2_near_sm_count_0"},
    {param::fp64_fp32_throughput_ratio, "", "pipes.csv", Differs::added,
     "a parameter the families bench added: fp64 over fp32 FMA rate, with interval"},
    {param::dual_issue_gain, "", "dual_issue.csv", Differs::added,
     "a parameter the families bench added: fastest pair over fastest solo stream"},
    {param::l1_sets, "", "associativity.csv", Differs::interval,
     "a set count's interval is the whole counts around the fit's range (two H200 "
     "runs fitted 312.8-313 and 312-312.2: one count apart, each interval a fifth of one)"},
    {"dual_issue_", "", "dual_issue.csv", Differs::interval,
     "every dual_issue_<a>_<b>: the interval from both rows' quantiles, at least +-0.13 %, the "
     "windows' fixed cost that runs in a row showed (up to 0.066 % apart, intervals 0.01 %)"},
    {"divergence_slowdown_", "", "divergence.csv", Differs::interval,
     "t(P)/t(1) had no interval (low = high); now both rows' quantiles give it one"},
    {param::fp32_fma_in_flight_90pct, "", "ilp_occupancy.csv", Differs::interval,
     "warps x ILP at the knees: low from the sweep point below the lowest knee "
     "(H200 runs gave 160, 160 and 192 warp-ops/SM where the interval was 160-160)"},
    {param::dram_load_in_flight_90pct, "", "ilp_occupancy.csv", Differs::interval,
     "as fp32_fma_in_flight_90pct"},
    {param::h2d_bandwidth_pageable, "", "host_link.csv", Differs::added,
     "the sustained rate of pageable copies of 256 MiB and more, where the old name's "
     "figure, the sweep's peak, is h2d_bandwidth_pageable_peak now"},
    {param::d2h_bandwidth_pageable, "", "host_link.csv", Differs::added,
     "as h2d_bandwidth_pageable: the sustained rate, the peak under d2h_bandwidth_pageable_peak"},
    {param::gpc_count, "", "l2_topology.csv", Differs::everything,
     "read from the domain partition that the occupancy counts c(k) fit (H100: "
     "18,18,16x5,8 and four one-TPC domains, 8 in [8, 12] at 0.4); before, the groups (12, 0.3)"},
    {param::tpc_count, "", "l2_topology.csv", Differs::added,
     "a parameter added with the domain partition: the SM pairs every cluster of 2 takes (H100: 66)"},
};

// A committed name renamed since; a run that writes the new name too is of the new naming (the
// pageable copies' sustained rate took the old name of their peak).
std::string renamed(const Parameter& p, const std::set<std::string>& committed) {
  for (const auto& r : kRenames)
    if (p.name == r.from && p.evidence == r.evidence && !committed.count(r.to)) return r.to;
  return p.name;
}

// What the kChanged entries naming `p` (named `name`) in run `run` excuse: every entry that
// matches counts (a parameter added by one change may have its interval widened by another).
std::set<Differs> excused(const std::string& run, const std::string& name, const Parameter& p) {
  std::set<Differs> out;
  for (const auto& c : kChanged) {
    const std::string n = c.name;  // a name ending in '_' stands for every name it begins
    const bool named = n.back() == '_' ? name.rfind(n, 0) == 0 : name == n;
    if (named && run.rfind(c.runs, 0) == 0 && (!*c.evidence || p.evidence == c.evidence))
      out.insert(c.what);
  }
  return out;
}

bool close(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)) ||
         (std::isnan(a) && std::isnan(b));
}

std::string field(const char* what, double then, double now) {
  return close(then, now, kRelTolerance)
             ? ""
             : std::string(what) + " " + format_number(then) + " -> " + format_number(now) + "; ";
}

// "" when `now` reproduces `then`, else what differs. `confidence`, `interval`: compare the
// confidence, the interval too. A confidence capped because the interval reaches past the
// parameter's tolerance (analysis::cap_confidence_by_width, whose method text says so) is
// today's rule, not a moved number: its confidence is not compared.
std::string difference(const Parameter& then, const Parameter& now, bool confidence, bool interval) {
  if (now.method.find(analysis::kCappedByWidthText) != std::string::npos) confidence = false;
  const bool reworked = kReworkedEvidence.count(then.evidence) || kReworkedEvidence.count(now.evidence);
  if (reworked)
    return close(then.value, now.value, kReworkTolerance)
               ? ""
               : "value " + format_number(then.value) + " -> " + format_number(now.value) +
                     " (beyond the ladder's 1 %)";
  return field("value", then.value, now.value) + (interval ? field("low", then.low, now.low) : "") +
         (interval ? field("high", then.high, now.high) : "") +
         (confidence ? field("confidence", then.confidence, now.confidence) : "") +
         (then.evidence == now.evidence ? "" : "evidence " + then.evidence + " -> " + now.evidence);
}

}  // namespace

TEST(Reanalysis, TablesAreWellFormed) {
  for (const auto& r : kRenames) EXPECT_GT(std::string(r.why).size(), 20u) << r.from << ": say why";
  for (const auto& c : kChanged) EXPECT_GT(std::string(c.why).size(), 20u) << c.name << ": say why";
  EXPECT_FALSE(close(1.0, 1.0 + 1e-6, kRelTolerance));
  EXPECT_TRUE(close(1.0, 1.0 + 1e-12, kRelTolerance));
}

TEST(Reanalysis, EveryCommittedRunGivesItsCommittedParameters) {
  const auto runs = committed_run_dirs();
  // Committed data missing (moved, renamed) must fail, not pass on nothing.
  ASSERT_GE(runs.size(), 4u) << "committed runs under results/<gpu>/<run-id>/";
  for (const auto& dir : runs) {
    SCOPED_TRACE(dir);
    const std::string run = std::filesystem::path(dir).filename().string();
    const std::vector<Parameter> committed = read_parameters(dir + "/parameters.csv");
    std::set<std::string> committed_names;
    for (const auto& p : committed) committed_names.insert(p.name);
    ASSERT_FALSE(committed.empty());
    const RunAnalysis now = analyze_run_dir(dir);
    for (const auto& e : now.errors) ADD_FAILURE() << e;
    std::map<std::string, const Parameter*> by_name;
    for (const auto& p : now.params) by_name[p.name] = &p;
    std::set<std::string> seen;
    const bool quick = std::filesystem::exists(std::filesystem::path(dir) / "not_measured.csv");
    for (const auto& then : committed) {
      const std::string name = renamed(then, committed_names);
      seen.insert(name);
      // What a quick run leaves out is today's list (docs/parameters.md), grown since.
      if (quick && catalog().not_in_quick.count(name)) continue;
      const std::set<Differs> c = excused(run, name, then);
      if (c.count(Differs::everything)) continue;
      const bool both = c.count(Differs::interval_and_confidence) > 0;
      const bool interval = !c.count(Differs::interval) && !both;
      const bool confidence = !c.count(Differs::confidence) && !both;
      auto it = by_name.find(name);
      if (it == by_name.end()) {
        ADD_FAILURE() << then.name << " (" << then.evidence << ") committed, not re-analysed";
        continue;
      }
      const std::string diff = difference(then, *it->second, confidence, interval);
      if (!diff.empty()) ADD_FAILURE() << name << " (" << then.evidence << "): " << diff;
    }
    for (const auto& p : now.params)
      if (const std::set<Differs> c = excused(run, p.name, p);
          !seen.count(p.name) && !c.count(Differs::added) && !c.count(Differs::everything))
        ADD_FAILURE() << p.name << " (" << p.evidence << ") re-analysed, not committed";
  }
}

}  // namespace gpuprobe
