#pragma once
// Thread block clusters (sm_90+): the latency of another SM's shared memory read through the
// cluster's distributed shared memory (DSM) against cluster size, DSM bandwidth per SM, the
// cost of cluster.sync(), and the largest cluster the device launches.
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe {

namespace clusters {

constexpr int kChainEntries = 256;   // DSM chase: entries in the target block's shared memory
constexpr int kChainStride = 16;     // bytes between entries
constexpr int kSyncIterations = 256; // cluster.sync() calls timed per launch
constexpr int kSyncWarmup = 16;      // untimed ones before them: the first barrier pays more
constexpr int kBandwidthUnroll = 16; // 16 B DSM loads per loop trip and thread

// The names of clusters.csv, written by the driver and read by the analyzer and the tests.
// Probes named as the parameters they give (the smallest cluster's row of each):
constexpr const char* kDsmLatencyProbe = "dsm_latency";
constexpr const char* kClusterSizeMaxProbe = "cluster_size_max";
constexpr const char* kDsmBandwidthProbe = "dsm_bandwidth";     // B/clk/SM reading the next rank
constexpr const char* kClusterSyncProbe = "cluster_sync";       // one barrier, median over places
constexpr const char* kClusterSyncAtProbe = "cluster_sync_at";  // one barrier at one place
constexpr const char* kSharedPerBlockColumn = "shared_bytes_per_block";  // each block's shared
constexpr const char* kClusterSizeColumn = "cluster_size";               // blocks per cluster
constexpr const char* kTargetColumn = "target";      // whose shared memory: other_sm, own_sm
constexpr const char* kClustersColumn = "clusters";  // clusters launched at once
constexpr const char* kBarrierColumn = "barrier";    // release or relaxed
constexpr const char* kClusterColumn = "cluster";    // the place: a cluster's index
constexpr const char* kSmColumn = "sm";              // the SM of the place's rank 0
// A count of clusters, as l2_topology's cluster_capacity rows give it.
constexpr const char* kClustersUnit = "clusters";

std::string latency_kernel();
std::string bandwidth_kernel();
std::string sync_kernel(bool relaxed);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"clusters", "clusters.gp"};

// dsm_latency (other SM, the smallest cluster), dsm_latency_own_sm, dsm_latency_largest_cluster,
// dsm_bandwidth_per_sm, cluster_sync_latency (smallest cluster), cluster_sync_latency_largest_cluster,
// cluster_sync_relaxed_latency, cluster_size_max.
std::vector<Parameter> analyze_clusters(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace clusters
}  // namespace gpuprobe
