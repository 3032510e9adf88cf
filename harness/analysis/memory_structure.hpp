#pragma once
// How the memory hierarchy is built, inferred from chases: fetch granularity (sector) and
// allocation granularity (line) of each level, L1 sets and ways, L1 capacity per shared-memory
// carve-out, and TLB reach. Analyzers of the granularity, fine_grained, carveout and tlb
// families, and the small pieces they share with the probes that drive the sweeps (the
// boundary search, the hit/miss split), so that what a probe decides during a run and what
// the analysis concludes from the CSV afterwards cannot drift apart.
#include <optional>
#include <string>
#include <vector>

#include "analysis/latency.hpp"
#include "core/observation.hpp"

namespace gpuprobe {

// ---------------------------------------------------------------------------------------
// Shared pieces

// The cycle count that best separates two groups of latencies (Otsu's criterion: the split
// with the largest between-group variance). NaN for fewer than two distinct values.
double split_threshold(std::vector<double> latencies);

// Search for the largest x that still "fits" (no misses): grows x geometrically from `start`
// until one point does not fit (or shrinks it when `start` already misses), then bisects
// between the largest fitting and the smallest missing point until they are less than
// max(quantum, resolution * x) apart. Every x is a multiple of `quantum`.
class BoundarySearch {
 public:
  BoundarySearch(double start, double min_x, double max_x, double growth, double quantum,
                 double resolution);
  // The next x to measure; nullopt when the boundary is pinned or the range is exhausted.
  std::optional<double> next() const;
  void add(double x, bool fits);
  bool bracketed() const;  // a fitting and a missing point were both seen
  double last_fit() const { return lo_; }    // NaN when none fitted
  double first_miss() const { return hi_; } // NaN when none missed

 private:
  double round(double x) const;
  double start_, min_, max_, growth_, quantum_, resolution_;
  double lo_, hi_;
};

// One sweep's boundary: the largest x that fits and the smallest larger x that does not.
struct Bracket {
  double fit = 0, miss = 0;  // miss is NaN when every point fitted
  bool found() const;
};
// Over points sorted by x: the first x that does not fit, and the largest fitting x below it.
// Nothing when the first point already misses or no point fits.
std::optional<Bracket> first_miss_bracket(std::vector<std::pair<double, double>> xy,
                                          double limit);

// Latency levels seen in a fine-grained trace, fastest first, each with the address period at
// which accesses at least that slow recur (the line or sector of the level above it).
struct LatencyLevel {
  double latency = 0;          // median of the level
  double lowest = 0, highest = 0;  // range of the latencies that belong to the level
  int count = 0;
  double period = 0;      // bytes between consecutive accesses this slow or slower; 0: none
  double regularity = 0;  // fraction of those gaps equal to `period`
};
// Levels are separated where sorted latencies jump by more than max(12 cycles, 20 %);
// clusters too small to be a level (an interruption) take part in no period.
std::vector<LatencyLevel> latency_levels(const std::vector<double>& offsets,
                                         const std::vector<double>& latencies);

// ---------------------------------------------------------------------------------------
// granularity: cold chases at strides 4 B .. 1 KiB on each load path

// avg cycles per access = base + penalty * min(1, stride / granularity): every access that
// starts a new fetch unit misses. Candidates are powers of two.
struct GranularityFit {
  double granularity = 0, base = 0, penalty = 0;
  double rms = 0;
  double separation = 0;  // 1 - SSE(best) / SSE(runner-up), in [0, 1]
  double runner_up = 0;
  int points = 0;
};
std::optional<GranularityFit> fit_fetch_granularity(
    const std::vector<std::pair<double, double>>& stride_cycles);

// Bytes a warp request moves, from effective bandwidths: the aligned pattern moves exactly
// the 128 useful bytes, so a pattern reaching fraction f of its bandwidth moves 128 / f.
double bytes_per_request(double aligned_gbs, double pattern_gbs);

// Allocation granularity from capacity at several strides: the footprint that still fits,
// relative to the one at the smallest stride, is max(1, stride / line).
struct LineFit {
  double line = 0;
  double rms = 0;         // of log2(relative capacity)
  double separation = 0;  // as in GranularityFit
  double runner_up = 0;
  double low = 0, high = 0;  // spread of stride / relative capacity above the line
  int points = 0;
};
// `stride_capacity`: (stride, capacity in bytes at that stride).
std::optional<LineFit> fit_line_size(const std::vector<std::pair<double, double>>& stride_capacity);

std::vector<Parameter> analyze_granularity(const std::vector<Observation>& obs,
                                           const Metadata& meta);

// ---------------------------------------------------------------------------------------
// fine_grained: per-access latencies of one thread's chase

// Misses per pass of a capacity row at or above which the lines did not all stay resident.
constexpr double kMissesPerPassLimit = 0.5;

// Largest number of lines that stay resident at each stride of a `capacity` series.
struct StrideCapacity {
  double stride = 0;
  double lines = 0;       // largest count with no misses
  double miss_lines = 0;  // smallest larger count with misses (NaN: none seen)
};
std::vector<StrideCapacity> capacity_by_stride(const std::vector<Observation>& obs,
                                               const std::string& series);

// Sets and ways from power-of-two strides: resident lines halve as the stride doubles until
// the stride spans every set once (sets * line), then stay at the number of ways.
struct SetFit {
  double plateau_stride = 0;  // smallest stride of the plateau: sets * line
  double ways = 0;
  bool halving_before = false;  // the capacity halved with each doubling below the plateau
  int plateau_points = 0;
};
std::optional<SetFit> fit_sets(const std::vector<StrideCapacity>& caps);

// Allocation granularity of a cache whose set index may be hashed, so that some strides
// conflict more than others: conflicts only ever lower what stays resident, so each stride s
// whose resident bytes B(s) exceed those at the smallest stride (C) bounds the line from above,
// line <= C * s / B(s), and a larger stride whose resident bytes stay at C bounds it from
// below, line >= s. The line is the largest power of two within both bounds.
struct LineBound {
  double line = 0;
  double low = 0, high = 0;  // the bounds
  int tight = 0;             // strides whose upper bound is within 5 % of `high`
  bool unique = false;       // `line` is the only power of two within the bounds
  int points = 0;
};
// `stride_capacity`: (stride, resident bytes at that stride); nothing without growth, or
// when no power of two lies within the bounds.
std::optional<LineBound> fit_line_bound(const std::vector<std::pair<double, double>>& stride_capacity);

std::vector<Parameter> analyze_fine_grained(const std::vector<Observation>& obs,
                                            const Metadata& meta);

// ---------------------------------------------------------------------------------------
// carveout: L1 capacity at each shared-memory carve-out preference

// A footprint fits in L1 while its cycles per access stay below this multiple of the hit
// level (the smallest footprint's).
constexpr double kL1FitFactor = 1.25;

struct CarveoutCapacity {
  double percent = 0;
  double shared_request = 0;  // bytes of shared memory the preference asks for
  double l1_bytes = 0;        // largest footprint that stayed resident
  double miss_bytes = 0;      // smallest larger footprint that did not
};
std::vector<CarveoutCapacity> l1_capacity_by_carveout(const std::vector<Observation>& obs);

std::vector<Parameter> analyze_carveout(const std::vector<Observation>& obs,
                                        const Metadata& meta);

// ---------------------------------------------------------------------------------------
// tlb: ld.global.cg chases with one access per stride over growing footprints

// TLB curves are cut into plateaus and knees by the latency family's segmentation; a TLB
// step may be as small as 2 % of an L2 hit.
ladder::SegmentOptions tlb_segment_options();
// One stride's chase: footprint_bytes against cycles per access, of probe "chase" (a buffer
// in device memory) or "chase_aliased" (one physical chunk mapped over a large virtual range).
std::vector<ladder::CurvePoint> tlb_curve(const std::vector<Observation>& obs, double stride,
                                          const std::string& probe = "chase");

// The first TLB knee at each stride: (stride, largest footprint still on the first plateau).
std::vector<std::pair<double, double>> first_tlb_steps(const std::vector<Observation>& obs);

// Page-entry size from the first step at several strides: reach is entries * max(stride,
// entry size), so it stays put while the stride is below the entry size and grows with it
// above. Also the stride to sweep coverage at: the largest one still below the entry size.
struct PageEntryFit {
  double entry_size = 0;
  double entries = 0;
  double reach = 0;         // entries * entry_size: the L1 TLB coverage (median over strides)
  double reach_low = 0, reach_high = 0;  // range of the first steps below the entry size
  double agree = 0;         // fraction of those within 10 % of `reach`
  double sweep_stride = 0;  // largest stride whose first step is at `reach`
  int strides_below = 0, strides_above = 0;
};
std::optional<PageEntryFit> fit_page_entry(const std::vector<std::pair<double, double>>& steps);

std::vector<Parameter> analyze_tlb(const std::vector<Observation>& obs, const Metadata& meta);

// ---------------------------------------------------------------------------------------
// Code checks (core/code_check.hpp): the kernels that measure `probe` of `family`
// (granularity, fine_grained, carveout, tlb) as the checks name them; empty for an unknown
// probe. Each has a registered expectation: the load of its path, on the previous one where
// it is one chain.
std::vector<std::string> memory_structure_kernels(const std::string& family,
                                                  const std::string& probe);

}  // namespace gpuprobe
