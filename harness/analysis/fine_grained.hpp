#pragma once
// Per-access latencies of one thread's chase: L1 line, sets and ways, and the latency levels
// of a fine-grained trace.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/common/memory_chase.hpp"
#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::fine_grained {

// The names of fine_grained.csv, written by the driver and read by the analyzer and the tests;
// the hit/miss calibration rows are memory_chase::kCalibrationProbe's.
constexpr const char* kCapacityProbe = "capacity";        // misses per pass of K lines
constexpr const char* kReplacementProbe = "replacement";  // misses per access over ways+1 lines
constexpr const char* kResidentLinesProbe = "resident_lines";  // lines held per stride (derived)
constexpr const char* kTraceProbe = "trace";           // the latency of every access of a chase
constexpr const char* kSeriesColumn = "series";        // line (odd strides) or sets (powers of 2)
constexpr const char* kStrideColumn = "stride_bytes";  // bytes between the lines
constexpr const char* kLinesColumn = "lines";          // K: lines chased
constexpr const char* kTraceColumn = "trace";          // which trace: l1_cold, set_conflict, ...
constexpr const char* kPassColumn = "pass";            // a trace's pass over its chain
constexpr const char* kIndexColumn = "index";          // an access's place in the trace
constexpr const char* kOffsetColumn = "offset_bytes";  // the accessed byte's offset
constexpr const char* kLinesUnit = "lines";            // resident_lines' unit

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

// Code checks (base/code_check.hpp): the kernels that measure `probe` as the checks name them;
// empty for an unknown probe. Each has a registered expectation.
std::vector<std::string> kernels(const std::string& probe);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"fine_grained", "fine_grained.gp"};

}  // namespace gpuprobe::fine_grained
