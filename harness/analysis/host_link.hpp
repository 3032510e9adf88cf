#pragma once
// The host link: copies between host and device memory by the copy engines (cudaMemcpyAsync)
// and by SM kernels on mapped host memory, over transfer sizes, and the latency of one load
// from mapped host memory.
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe {

namespace host_link {

// The names of host_link.csv, written by the driver and read by the analyzer and the tests.
// Copies (GB/s) by copy engine, pinned or pageable, by SM kernels on mapped host memory, and
// by the host's memcpy:
constexpr const char* kCeH2dPinnedProbe = "ce_h2d_pinned";
constexpr const char* kCeD2hPinnedProbe = "ce_d2h_pinned";
constexpr const char* kCeBidirPinnedProbe = "ce_bidir_pinned";  // both ways at once
constexpr const char* kCeH2dPageableProbe = "ce_h2d_pageable";
constexpr const char* kCeD2hPageableProbe = "ce_d2h_pageable";
constexpr const char* kHostMemcpyProbe = "host_memcpy";
constexpr const char* kSmH2dProbe = "sm_h2d";
constexpr const char* kSmD2hProbe = "sm_d2h";
constexpr const char* kMappedLatencyProbe = "mapped_latency";  // a chase in mapped host memory
constexpr const char* kPcieLinkProbe = "pcie_link";            // the link during a copy (NVML)
constexpr const char* kPcieLinkMaxProbe = "pcie_link_max";     // the most the device supports
constexpr const char* kBytesColumn = "bytes";                  // bytes per copy
constexpr const char* kPassColumn = "pass";                    // a size measured again: 1, 2, ...
constexpr const char* kHopsColumn = "hops";                    // loads of the chase
constexpr const char* kStrideColumn = "stride_bytes";          // bytes between its lines
constexpr const char* kOffsetColumn = "offset_bytes";          // where in the buffer it runs
constexpr const char* kGenerationColumn = "generation";        // PCIe generation
constexpr const char* kLanesColumn = "lanes";                  // PCIe lanes

// Transfer sizes in bytes: 4 KiB to 1 GiB in steps of 4 (to 64 MiB with --quick).
std::vector<long long> transfer_sizes(bool quick);

// A size whose rate lies outside the span of its two neighbours' by more than this (a dip or a
// spike that a copy's smooth rise to the link's rate does not have), or the largest size
// falling this far below the one before it, disagrees with its neighbours: the probe measures
// it again (up to kMaxPasses in all, within a time budget) and the analysis merges the passes.
constexpr double kNeighbourTolerance = 0.1;
constexpr int kMaxPasses = 3;
// Indices of `rates` (one per size, ascending) that disagree with their neighbours: dips
// first, the deepest first (a disturbed copy is slow, and a dip makes the size before it look
// like a spike), then spikes.
std::vector<size_t> disagreeing(const std::vector<double>& rates);
// The size the probe measures next: of those that disagree (each size's passes merged by their
// median), in that order, the first with fewer than kMaxPasses passes whose last measurement
// took no longer than `budget` seconds (`cost`, per size); -1 when none.
int size_to_repeat(const std::vector<std::vector<double>>& passes, const std::vector<double>& cost,
                   double budget);

// One transfer size of a probe, its passes (rows of the size) merged.
struct SizeRate {
  long long bytes = 0;
  double value = 0;          // GB/s: the median over the passes' medians
  double low = 0, high = 0;  // the lowest p05 and the highest p95 of the passes
  int passes = 0;
  double confidence = 0;     // analysis::spread_confidence of low, value, high
};
// Ascending by size; rows without a size are left out.
std::vector<SizeRate> size_rates(const std::vector<Observation>& rows);

// The bandwidth a link settles at: the median of the sizes within kPlateauFraction of the
// best one (small transfers pay a fixed launch cost and never reach it).
struct Plateau {
  double value = 0, low = 0, high = 0;  // GB/s: median on the plateau, lowest from its first size
                                        // on (larger copies may fall off it), highest
  int points = 0;
  long long first_size = 0;  // smallest transfer on the plateau
  bool at_largest = false;   // one point on it, the largest transfer measured: may still rise
  double confidence = 0;
};
constexpr double kPlateauFraction = 0.9;  // within 10 %: run-to-run noise of a PCIe/C2C link
bool plateau(const std::vector<Observation>& rows, Plateau* out);

// Pageable copies go through the host's memory: the driver copies between the user's pages
// and pinned staging buffers with the CPU. Small copies re-read a source that the host's
// caches still hold and reach a peak that copies from host DRAM never do; the sustained rate
// is read from transfers of kSustainedFrom bytes and more, whose source and destination no
// host cache holds.
constexpr long long kSustainedFrom = 256ll << 20;
struct Sustained {
  double value = 0, low = 0, high = 0;  // GB/s: median over those sizes, lowest p05, highest p95
  int sizes = 0, passes = 0;
  double confidence = 0;
};
bool sustained(const std::vector<Observation>& rows, Sustained* out);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"host_link", "host_link.gp"};

// h2d/d2h/bidir_bandwidth_pinned, h2d/d2h_bandwidth_pageable (sustained) and their _peak,
// h2d/d2h_bandwidth_sm (GB/s), host_mapped_latency (ns).
std::vector<Parameter> analyze_host_link(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace host_link
}  // namespace gpuprobe
