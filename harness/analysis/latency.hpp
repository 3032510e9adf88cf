#pragma once
// Reading a latency ladder: the plateaus and knees of a curve of latency against footprint,
// and the cache levels, sizes and latencies that the pointer-chase family's curves reveal.
//
// The segmentation is plain functions over points so that any family whose curve steps from
// level to level (latency against footprint, TLB reach, L1 size per carve-out) can reuse it:
//
//   latency::Segmentation s = latency::segment_curve(points);  // plateaus, and knees between
//   s.plateaus[0].level                        // e.g. the L1 hit latency
//   s.knees[0].low, s.knees[0].high            // the sweep points around the first capacity
//   latency::refinement_points(points, opt)     // footprints worth measuring next
//
// Levels are compared in log space, so tolerances are relative (0.03 = 3 %).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/family.hpp"
#include "core/observation.hpp"

namespace gpuprobe {
namespace latency {

// One measured point: x is the swept size (bytes), y the latency; both > 0.
struct CurvePoint {
  double x = 0;
  double y = 0;
};

struct SegmentOptions {
  // Two levels closer than this (relative) are one level: a knee must step by more.
  double min_jump = 0.10;
  // Smallest relative band a plateau's points may wander within around its level ...
  double min_tolerance = 0.025;
  // ... widened to noise_factor times the curve's own point-to-point noise when that is larger,
  double noise_factor = 4.0;
  // ... but never beyond this, so that a noisy curve still shows its steps.
  double max_tolerance = 0.12;
  // Fewest points that make a plateau, and the least factor in x it must span (refinement
  // packs points closely inside a ramp; a few of them must not pass for a level).
  size_t min_points = 3;
  double min_span = 1.3;
  // The first plateau may climb (cold misses spread over the chase, fewer the smaller the
  // footprint) and is then read at the climb's start; off for a curve cut inside its first
  // level (ld.cg from L2/64), whose first point is no such start.
  bool first_level_climbs = true;
  // Levels read as shelves that wobble (the latency ladder's): the (trimmed) mean of the flat
  // part, the transitions' members stripped, a first level's climb taken when it passes its
  // standard error. Off: the median of the members away from the ends, as the TLB family's
  // steps are read.
  bool shelf_levels = false;
};

// A run of points at one level. Indices are into Segmentation::points (sorted by x), inclusive;
// isolated outliers inside the run are skipped from `level` but keep the run whole.
struct Plateau {
  size_t first = 0, last = 0;
  double level = 0;         // median y of the members
  double min = 0, max = 0;  // range of the members' y
  size_t members = 0;       // points that count towards the level
  double rise = 0;          // climb of the fitted log-log line across the run (0: flat)
  double confidence = 0;    // in [0, 1]: more points and a flatter run give more
};

// The step from plateau `lower` to plateau `lower + 1`. A capacity is where the curve leaves
// the lower level: `low` is the last footprint still on it, `high` the first one off it.
// `arrive` is the first footprint on the upper plateau (== high for a sharp step; larger for
// a gradual knee, e.g. a cache with random replacement).
struct Knee {
  size_t lower = 0;
  double low = 0, high = 0, arrive = 0;
  double x = 0;           // estimate of the capacity: geometric mean of low and high
  double ratio = 0;       // upper level / lower level
  double confidence = 0;  // in [0, 1]: a larger, sharper step, closer bracketed, gives more
};

struct Segmentation {
  std::vector<CurvePoint> points;  // the input, sorted by x
  std::vector<Plateau> plateaus;   // in order of x
  std::vector<Knee> knees;         // knees[i] joins plateaus[i] and plateaus[i + 1]
  double noise = 0;                // robust relative point-to-point noise of the curve
  double tolerance = 0;            // the relative band plateaus were grown with
};

// Robust relative noise (sigma of log y) of a curve of plateaus and ramps: the median
// distance of each point from the line through its neighbours. 0 for fewer than three points.
double curve_noise(const std::vector<CurvePoint>& sorted_points);

// Splits a curve into plateaus and knees. Points need not be sorted; points with a
// non-positive or non-finite x or y are dropped. Gradual ramps and lone outliers do not make
// plateaus; adjacent plateaus closer than min_jump are merged.
Segmentation segment_curve(std::vector<CurvePoint> points, const SegmentOptions& opt = {});

struct RefineOptions {
  SegmentOptions segment;
  double min_ratio = 1.03;  // never split a gap narrower than this factor in x
  size_t max_points = 12;   // at most this many new points per call
};

// Footprints to measure next so that each knee is bracketed more tightly: the geometric
// midpoints of the gaps around every knee (the plateau's last point and the first point off
// it, the last point before the next plateau and its first) and of every other gap where the
// curve jumps by more than the tolerance. At most max_points (knee gaps first, then the
// largest jumps), returned in increasing order.
std::vector<double> refinement_points(const std::vector<CurvePoint>& points,
                                      const RefineOptions& opt = {});

// `bytes` rounded to a whole number of `stride`-byte lines, at least two.
uint64_t round_to_lines(double bytes, uint32_t stride);

// The coarse footprints of a sweep: geometric from min_bytes to max_bytes in steps of about
// `ratio`, each nudged by up to 30 % of a step (fixed seed, so a rerun measures the same
// footprints) so that the sweep is not only powers of two; then, past max_bytes, a sparse tail
// (steps of 4x) up to tail_bytes. Multiples of `stride`, increasing.
std::vector<uint64_t> coarse_footprints(uint64_t min_bytes, uint64_t max_bytes, uint32_t stride,
                                        double ratio, uint64_t tail_bytes = 0);

// The global chase's range: the fine sweep to 4.5x the L2 the runtime reports (at least
// 1 MiB), then the sparse tail to 1 GiB so that a last-level cache of up to 256 MiB (AMD's
// Infinity Cache) shows past its size; both within a quarter of free memory.
struct GlobalSweep {
  uint64_t max_bytes = 0, tail_bytes = 0;
};
GlobalSweep global_sweep(double l2_bytes, double free_bytes, uint32_t stride);

// The kernels that measure `probe` of the latency family, as the code checks name them
// (core/code_check.hpp registers what each must hold); empty for an unknown probe.
std::vector<std::string> latency_kernels(const std::string& probe);

// The latency family's curve for one probe: footprint_bytes against cycles per load.
std::vector<CurvePoint> latency_curve(const std::vector<Observation>& obs,
                                      const std::string& probe);

// Infers the latency ladder from the latency family's observations (see DESIGN.md for the
// names). Uses the metadata's l2_bytes and shared_per_sm_bytes, when present, only to tell
// which step is which; every value comes from the curves.
std::vector<Parameter> infer_latency(const std::vector<Observation>& obs, const Metadata& meta);

// The family, declared once (core/family.hpp).
inline constexpr FamilyDescriptor kFamily{"latency", "latency.gp"};

}  // namespace latency

}  // namespace gpuprobe
