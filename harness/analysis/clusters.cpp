#include "analysis/clusters.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"
#include "base/stats.hpp"

namespace gpuprobe {

namespace clusters {

std::string latency_kernel() { return "clusters::dsm_chase"; }
std::string bandwidth_kernel() { return "clusters::dsm_read"; }
std::string sync_kernel(bool relaxed) {
  return std::string("clusters::sync_cost<") + (relaxed ? "true" : "false") + ">";
}

namespace {

// Thread block clusters are Hopper's: below sm_90 the kernels compile empty and the family is
// skipped (its capability gate).
constexpr int kClusterMinArch = 90;

std::vector<CodeExpectation> clusters_expectations() {
  CodeExpectation chase{std::string(kFamily.name), latency_kernel(), kDsmLatencyProbe, {}, {}};
  // One DSM load per hop in each of the two passes (warm, timed), address from the last load.
  chase.ptx = {{R"(^ld\.shared::cluster\.u32 )", 2, false}};
  chase.sass = {{R"(^LD)", -1, false}};  // the DSM form is checked in the PTX
  CodeExpectation read{std::string(kFamily.name), bandwidth_kernel(), kDsmBandwidthProbe, {}, {}};
  read.ptx = {{R"(^ld\.shared::cluster\.v4\.u32 )", kBandwidthUnroll, false}};
  read.sass = {{R"(^LD)", -1, false}};
  // Each variant's arrive as its name says (the release one is the plain arrive), and a wait.
  CodeExpectation sync{std::string(kFamily.name), sync_kernel(false), kClusterSyncProbe, {}, {}};
  sync.ptx = {{R"(^barrier\.cluster\.arrive;?$)", -1, false}, {R"(^barrier\.cluster\.wait)", -1, false}};
  sync.sass = {{R"(BAR)", -1, false}};
  CodeExpectation relaxed{std::string(kFamily.name), sync_kernel(true), kClusterSyncProbe, {}, {}};
  relaxed.ptx = {{R"(^barrier\.cluster\.arrive\.relaxed)", -1, false}, {R"(^barrier\.cluster\.wait)", -1, false}};
  relaxed.sass = {{R"(BAR)", -1, false}};
  for (CodeExpectation* e : {&chase, &read, &sync, &relaxed}) e->min_arch = kClusterMinArch;
  return {chase, read, sync, relaxed};
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(clusters_expectations);

}  // namespace

namespace {
// cluster_size_max is a launch that succeeded, not a timing: near-certain, short of 1 because
// the occupancy API may offer less than the hardware allows.
constexpr double kLaunchedConfidence = 0.95;

// The file every parameter of the family is read from.
std::string evidence() { return std::string(clusters::kFamily.name) + ".csv"; }
}  // namespace

namespace {

// Rows of `probe` in `unit` by cluster size (2..64), those of `target` only where given.
std::map<int, Observation> by_size(const std::vector<Observation>& obs, const std::string& probe,
                                   const std::string& unit, const std::string& key, const std::string& target) {
  std::map<int, Observation> rows;
  for (const auto& o : select(obs, probe, unit)) {
    const double s = o.param(clusters::kClusterSizeColumn);
    if (!(s >= 2 && s <= 64)) continue;
    if (!target.empty() && o.param_text(key) != target) continue;
    rows[int(s)] = o;
  }
  return rows;
}

// cluster_sync rows of one barrier kind; runs before the kinds were told apart have only the
// release one, without a "barrier" column.
std::map<int, Observation> sync_rows(const std::vector<Observation>& obs, const std::string& barrier) {
  std::vector<Observation> kind;
  for (const auto& o : select(obs, clusters::kClusterSyncProbe, "cycles")) {
    const std::string b = o.param_text(clusters::kBarrierColumn);
    if (b == barrier || (b.empty() && barrier == "release")) kind.push_back(o);
  }
  return by_size(kind, clusters::kClusterSyncProbe, "cycles", "", "");
}

std::string sync_method(const Observation& o, const std::string& what) {
  const bool places = !o.param_text(clusters::kBarrierColumn).empty();
  return "dependent_chain: " + what +
         ", back to back, 128 threads per block, one block per SM, cluster of " +
         o.param_text(clusters::kClusterSizeColumn) +
         (places ? "; " + std::to_string(clusters::kSyncWarmup) +
                       " untimed first; median over the " + std::to_string(o.reps) +
                       " places a cluster lands (each timed alone), interval p05-p95 of the places"
                 : "; one launch of one cluster");
}

void sync_parameters(const std::vector<Observation>& obs, std::vector<Parameter>& out) {
  const auto release = sync_rows(obs, "release");
  if (!release.empty()) {
    const std::string what = "barrier.cluster.arrive (release) + wait (acquire), as cluster.sync()";
    out.push_back(analysis::measured(param::cluster_sync_latency, release.begin()->second,
                                     sync_method(release.begin()->second, what), evidence()));
    out.push_back(analysis::measured(param::cluster_sync_latency_largest_cluster,
                                     release.rbegin()->second,
                                     sync_method(release.rbegin()->second, what), evidence()));
  }
  const auto relaxed = sync_rows(obs, "relaxed");
  if (!relaxed.empty())
    out.push_back(analysis::measured(
        param::cluster_sync_relaxed_latency, relaxed.begin()->second,
        sync_method(relaxed.begin()->second,
                    "barrier.cluster.arrive.relaxed + wait: the meeting alone, no "
                    "release of earlier writes"),
        evidence()));
}

}  // namespace

std::vector<Parameter> analyze_clusters(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  auto add = [&](const std::string& name, const Observation& o, const std::string& method) {
    out.push_back(analysis::measured(name, o, method, evidence()));
  };
  const auto other =
      by_size(obs, clusters::kDsmLatencyProbe, "cycles", clusters::kTargetColumn, "other_sm");
  if (!other.empty()) {
    add(param::dsm_latency, other.begin()->second,
        "pointer_chase: rank 0 of a cluster of " + std::to_string(other.begin()->first) +
            " (one block per SM) follows byte offsets through another SM's shared memory "
            "(mapa + ld.shared::cluster), median over the other ranks");
    add(param::dsm_latency_largest_cluster, other.rbegin()->second,
        "pointer_chase: as dsm_latency, cluster of " + std::to_string(other.rbegin()->first) +
            " blocks, median over the other ranks");
  }
  const auto own =
      by_size(obs, clusters::kDsmLatencyProbe, "cycles", clusters::kTargetColumn, "own_sm");
  if (!own.empty())
    add(param::dsm_latency_own_sm, own.begin()->second,
        "pointer_chase: as dsm_latency, through the block's own shared memory by its "
        "shared::cluster address");
  const auto bw = by_size(obs, clusters::kDsmBandwidthProbe, "B/clk/SM", "", "");
  if (!bw.empty()) {
    const Observation* best = nullptr;
    for (const auto& [s, o] : bw)
      if (!best || o.value > best->value) best = &o;
    add(param::dsm_bandwidth_per_sm, *best,
        "throughput_loop: 1024 threads per block, 16 B ld.shared::cluster from the next rank, "
        "every SM busy, median per block; best cluster size " +
            best->param_text(clusters::kClusterSizeColumn));
  }
  sync_parameters(obs, out);
  for (const auto& o : select(obs, clusters::kClusterSizeMaxProbe, "blocks"))
    out.push_back({param::cluster_size_max, o.value, "blocks", o.value, o.value,
                   kLaunchedConfidence,
                   "cluster_launch: the largest cluster (one block per SM) that "
                   "cudaOccupancyMaxPotentialClusterSize offers and that then launched",
                   evidence()});
  return out;
}

GPUPROBE_REGISTER_ANALYZER(clusters::kFamily, analyze_clusters);

}  // namespace clusters
}  // namespace gpuprobe
