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

// Probes named as the parameters they give (the smallest cluster's row of each).
constexpr const char* kDsmLatencyProbe = "dsm_latency";
constexpr const char* kClusterSizeMaxProbe = "cluster_size_max";

std::string latency_kernel();
std::string bandwidth_kernel();
std::string sync_kernel(bool relaxed);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"clusters", "clusters.gp"};

}  // namespace clusters

// dsm_latency (other SM, the smallest cluster), dsm_latency_own_sm, dsm_latency_largest_cluster,
// dsm_bandwidth_per_sm, cluster_sync_latency (smallest cluster), cluster_sync_latency_largest_cluster,
// cluster_sync_relaxed_latency, cluster_size_max.
std::vector<Parameter> analyze_clusters(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace gpuprobe
