#pragma once
// The plateau-and-knee segmentation of a curve that steps from level to level: latency
// against footprint (the latency ladder), TLB reach, L1 size per carve-out. Plain functions
// over points, so that any family whose curve steps can read it:
//
//   segmentation::Segmentation s = segmentation::segment_curve(points);  // plateaus, knees
//   s.plateaus[0].level                        // e.g. the L1 hit latency
//   s.knees[0].low, s.knees[0].high            // the sweep points around the first capacity
//   segmentation::refinement_points(points, opt)  // footprints worth measuring next
//
// Levels are compared in log space, so tolerances are relative (0.03 = 3 %).
#include <cstddef>
#include <vector>

namespace gpuprobe {
namespace segmentation {

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

// The knee from plateau k to plateau k + 1 of `s`; `jump` and `tol` (log) scale what a clear
// step is (a caller that appends a plateau of its own joins it with this).
Knee make_knee(const Segmentation& s, size_t k, double jump, double tol);

}  // namespace segmentation
}  // namespace gpuprobe
