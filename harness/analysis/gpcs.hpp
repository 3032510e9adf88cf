#pragma once
// GPCs from thread block clusters (sm_90+), for the l2_topology family. A cluster's blocks
// always run in one GPC, so three things the probe reads bound how the SMs divide into GPCs:
// - c(k), the driver's count of clusters of k blocks (one block per SM) that fit at once
//   (cudaOccupancyMaxActiveClusters; the driver knows the floorswept configuration);
// - where launched clusters land (%smid per cluster rank): SMs that shared a cluster share a
//   GPC;
// - the latency of an L2 chase on one SM while the SMs of one co-scheduled group stream from
//   L2: a GPC's SMs share its link to the crossbar, so streaming from the chasing SM's own GPC
//   should slow the chase more than streaming from another.
// Clusters are formed within "domains": on an H100 SXM, c(k) for k = 2..16 fit exactly one
// multiset of domain sizes, 18,18,16,16,16,16,16,8 SMs and four domains of one TPC (2 SMs),
// which no cluster of more than 2 blocks reaches. The published figure is 8 GPCs: the lone
// TPCs lie in GPCs whose other TPCs form a domain. Domains of one TPC are therefore not
// counted as GPCs unless the contention reading says they stand apart.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::l2_topology {

// Multisets of domain sizes (SMs, largest first) that sum to `sm_count`, are multiples of
// `unit` SMs, satisfy c(k) = sum over domains of floor(size / k) for every k = 2..K of
// `capacity` (K: the largest k with every smaller one present), and can hold each of
// `group_sizes` (SMs seen together in clusters) inside one domain.
struct PartitionSearch {
  std::vector<std::vector<int>> partitions;  // the first that fit (at most a few dozen kept)
  size_t count = 0;                          // how many fit
  std::map<int, size_t> by_multi;            // domains larger than one TPC -> partitions
  int fewest_multi = 0, most_domains = 0;    // over every partition that fits
  bool lone_domains = false;                 // some partition has a domain of one TPC
  bool complete = true;  // false: the search stopped at its budget, more partitions may fit
};
PartitionSearch domain_partitions(const std::map<int, int>& capacity, int sm_count, int unit,
                                  const std::vector<int>& group_sizes);

// c(k) of a multiset of domain sizes (the floor model above), k = 1..largest.
std::map<int, int> capacity_of(const std::vector<int>& domains, int largest);

// One cell of the contention probe: cycles per load of the chase on `probe_sm` while the
// group whose lowest SM is `hog_sm` streams from L2 (-1: nothing streams).
struct ContentionCell {
  int probe_sm = 0;
  int hog_sm = -1;
  double cycles = 0;
};

// What the contention cells say about the co-scheduled groups. Calibration: a probe's own
// group streaming (its other TPCs) against other multi-TPC groups streaming. Informative when
// every own-group slowdown clearly exceeds the typical other-group one and few other-group
// pairs reach it; then a one-TPC group joins the one multi-TPC group whose streaming slows it
// like its own.
struct ContentionReading {
  bool informative = false;
  double own_min = 0;        // smallest slowdown from a probe's own group, cycles per load
  double cross_median = 0;   // median slowdown from another multi-TPC group
  double threshold = 0;      // slowdowns at or above it read as "same GPC"
  int own_pairs = 0, cross_pairs = 0, cross_links = 0;
  std::vector<std::pair<size_t, size_t>> joins;  // (one-TPC group, multi-TPC group) indices
  int ambiguous = 0;         // one-TPC groups near the threshold or linked to several groups
  std::string why;           // why not informative
};
ContentionReading read_contention(const std::vector<std::vector<int>>& groups,
                                  const std::vector<ContentionCell>& cells, int unit);

struct GpcInput {
  int sm_count = 0;
  int unit = 1;                            // SMs per TPC: 2 where clusters of 2 pair every SM
  std::map<int, int> capacity;             // c(k), k = cluster size
  std::vector<std::vector<int>> groups;    // co-scheduled groups (SM ids), from placements
  std::vector<ContentionCell> contention;  // may be empty
};

struct GpcEstimate {
  int value = 0, low = 0, high = 0;
  double confidence = 0;
  std::vector<int> sizes;       // SMs per GPC in the value's reading, largest first
  std::vector<int> domains;     // domain sizes (the partition, or the groups where none fits)
  size_t partitions = 0;        // domain partitions that fit c(k) and the placements
  bool complete = true;         // the partition search ran to its end
  bool contention_used = false; // the contention reading decided the lone TPCs
  std::string reading;          // how the value was read, for the method text
};
std::optional<GpcEstimate> estimate_gpcs(const GpcInput& in);

// The SMs per TPC that the placements show: 2 when c(2) pairs every SM and every cluster of an
// even size is made of the pairs the clusters of 2 use (ranks 2i, 2i+1), 1 otherwise.
// `clusters`: (cluster size, SMs by rank) of every launched cluster.
int tpc_unit(const std::vector<std::pair<int, std::vector<int>>>& clusters, int sm_count,
             const std::map<int, int>& capacity);

}  // namespace gpuprobe::l2_topology
