#pragma once
// Little's law: the bytes each SM must keep in flight to reach 90 % of a level's peak (the
// bytes_in_flight family), checked against latency x bandwidth.
#include <optional>
#include <vector>

#include "analysis/common/segmentation.hpp"  // CurvePoint
#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::bytes_in_flight {

using segmentation::CurvePoint;  // x: bytes in flight per SM, y: the rate they reach

// The names of bytes_in_flight.csv, written by the driver and read by the analyzer and the
// tests; the footprint column is memory_chase::kFootprintColumn (analysis/common/). A level's
// probe is also its name in the level column of the chase and Little's law rows.
constexpr const char* kDramProbe = "dram";    // GB/s from DRAM against bytes in flight per SM
constexpr const char* kL2Probe = "l2";        // GB/s from L2 against bytes in flight per SM
constexpr const char* kChaseProbe = "chase";  // cycles per step of one thread's unloaded chase
constexpr const char* kLittlesLawProbe = "littles_law";  // B/SM that latency x peak asks for
constexpr const char* kWarpsPerSmColumn = "warps_per_sm";
constexpr const char* kIlpColumn = "ilp";                          // accesses in flight per thread
constexpr const char* kWidthColumn = "width_bytes";                // bytes per access
constexpr const char* kInFlightColumn = "bytes_in_flight_per_sm";  // warps x 32 x ILP x width
constexpr const char* kLevelColumn = "level";         // the chase's or Little's law's level
constexpr const char* kStepsColumn = "steps";         // the chase's steps per repetition
constexpr const char* kLatencyColumn = "latency_ns";  // Little's law: the chase's latency
constexpr const char* kPeakColumn = "peak_gbs";       // Little's law: the sweep's best GB/s

struct Saturation {
  double x = 0, low = 0, high = 0;
  double peak = 0, peak_x = 0;
  bool plateau = false;  // the envelope stopped rising before the largest x
  double confidence = 0;
};
// Where a saturating curve first reaches `fraction` of its peak (its largest y). Read on the
// upper envelope, the best y at or below each x, so that of several configurations with the
// same x the best one counts and a dip past the knee does not move it. x is interpolated in
// log x between the last envelope point below the target (low) and the first at or above it
// (high). Nothing when there are fewer than three distinct x, or when the smallest x already
// reaches the target (the knee lies below the sweep).
std::optional<Saturation> saturation_point(std::vector<CurvePoint> curve, double fraction);

// Little's law: the bytes each of `sms` SMs keeps in flight to sustain `gbs` GB/s when every
// access takes `latency_ns` (ns x GB/s = bytes).
double littles_law_bytes_per_sm(double latency_ns, double gbs, int sms);

// dram_bytes_in_flight_90pct and l2_bytes_in_flight_90pct (bytes per SM).
std::vector<Parameter> analyze_bytes_in_flight(const std::vector<Observation>& obs,
                                               const Metadata& meta);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"bytes_in_flight", "littles_law.gp"};

}  // namespace gpuprobe::bytes_in_flight
