#pragma once
// The chip's on-chip network seen from every SM: the latency of the first read of each of a
// set of L2-resident lines from each SM (SM x line map), the L2 partitions that the lines fall
// into, which partition is near for each SM, each SM's near and far latency, and the SMs that
// cluster launches put together (a cluster's blocks share a GPC; analysis/gpcs.hpp counts
// the GPCs).
#include <string>
#include <utility>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe {

namespace l2_topology {

// The names of l2_topology.csv, written by the driver and read by the analyzer and the tests.
constexpr const char* kFirstReadProbe = "first_read";  // cycles of an SM's first read of a line
constexpr const char* kSmLevelProbe = "sm_level";      // an SM's near or far median
constexpr const char* kRereadProbe = "reread";         // an SM's second reads, median
constexpr const char* kClusterCapacityProbe = "cluster_capacity";    // c(k): clusters that fit
constexpr const char* kClusterPlacementProbe = "cluster_placement";  // the SM of each block
constexpr const char* kGpcContentionProbe = "gpc_contention";        // an L2 chase while SMs stream
constexpr const char* kSmColumn = "sm";                              // the SM that reads
constexpr const char* kLineColumn = "line";                          // the line it reads
constexpr const char* kSmOrderColumn = "sm_order";                   // the heat map's row
constexpr const char* kLineOrderColumn = "line_order";               // the heat map's column
constexpr const char* kLevelColumn = "level";                        // near or far
constexpr const char* kWriterColumn = "writer";                      // the SM that wrote the lines
constexpr const char* kLaunchColumn = "launch";                      // one launch of clusters
constexpr const char* kClusterSizeColumn = "cluster_size";           // blocks per cluster
constexpr const char* kClusterColumn = "cluster";                    // a cluster of the launch
constexpr const char* kRankColumn = "rank";         // a block's rank in its cluster
constexpr const char* kProbeSmColumn = "probe_sm";  // the SM that chases
constexpr const char* kHogSmColumn = "hog_sm";      // the lowest SM of the group streaming
constexpr const char* kHogSmsColumn = "hog_sms";    // how many SMs stream
constexpr const char* kSmUnit = "sm";               // a placement row's value: an SM id

// The map: the first kLines of the lines each SM reads, kept per SM x line (what the figure
// draws and the line groups are found in). Each SM's near and far latency is the median over
// all kLevelLines it reads, which a map row of kLines would leave to a few dozen lines.
constexpr int kLines = 64;
constexpr int kLevelLines = 1024;

// lat[i][j]: cycles of SM sms[i]'s first read of line j.
struct LatencyMap {
  std::vector<int> sms;
  std::vector<std::vector<double>> lat;
};

struct Topology {
  int partitions = 0;                 // groups of lines near for the same SMs
  std::vector<int> line_group;        // per line: its group, 0..partitions-1
  std::vector<int> sm_group;          // per SM (index into sms): the group near to it, -1: unknown
  std::vector<double> near_median;    // per SM: median latency of its near group's lines
  std::vector<double> far_median;     // per SM: median over the other groups' lines (NaN: not
                                      // seen, every line answered nearby)
  int split_sms = 0;                  // SMs whose lines fall in two latency levels
  double gap_min = 0;                 // smallest near/far gap over the split SMs, cycles
};

// A gap between latency levels smaller than this is noise, not a second partition: a timed
// load on one idle SM varies by a few cycles, the near/far step on A100/H100 is ~100.
constexpr double kMinLevelGap = 20;
// Two lines belong to one group when their near/far pattern differs on at most this share of
// the SMs (a few SMs' timing glitches must not split a group).
constexpr double kGroupMismatch = 0.2;
// Share of SMs that must see two levels for a confident partition count: the SMs on the side
// the lines were written from see every line near (their partition keeps copies).
constexpr double kSplitShareSure = 0.25;

// The threshold between two latency levels of one SM's row: the middle of the widest gap
// between sorted values with at least 10 % of the lines on either side; NaN when that gap is
// under kMinLevelGap. *gap gets the widest gap.
double split_threshold(std::vector<double> row, double* gap);

// One SM's reads split at its threshold: (near values, far values); all near when it has
// one level.
std::pair<std::vector<double>, std::vector<double>> split_levels(const std::vector<double>& row);

// Groups lines by the SMs they are near for; one partition when no SM sees two levels.
bool infer(const LatencyMap& m, Topology* out);

// Reads the SM x line map out of first_read rows.
bool latency_map(const std::vector<Observation>& obs, LatencyMap* out);

// Orders for the heat map: lines by group, then by mean latency; SMs by near group, then by
// SM id. Returned as the position of each line / SM.
std::vector<int> line_order(const LatencyMap& m, const Topology& t);
std::vector<int> sm_order(const LatencyMap& m, const Topology& t);

// SMs that cluster launches placed together, merged (union-find): each group lies within one
// GPC, and a GPC may show as several groups when no cluster bridged them.
std::vector<std::vector<int>> co_scheduled_groups(const std::vector<std::vector<int>>& clusters);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"l2_topology", "l2_topology.gp"};

// l2_partitions, l2_near_hit_latency_sm_spread, l2_far_hit_latency_sm_spread,
// l2_near_sm_count_<g>, gpc_count, tpc_count.
std::vector<Parameter> analyze_l2_topology(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace l2_topology
}  // namespace gpuprobe
