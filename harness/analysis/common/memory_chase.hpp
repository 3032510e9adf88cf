#pragma once
// The analysis side of the pointer chases that the granularity, fine_grained, carveout and tlb
// families share (microbench/memory_chase.cuh): the pieces that both a probe driving a sweep
// and the analysis of its CSV use (the boundary search, the hit/miss split), so that what a
// probe decides during a run and what the analysis concludes afterwards cannot drift apart;
// the helpers of those four analyzers; and the chase kernels' names and loads for their code
// expectations.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/code_check.hpp"
#include "base/observation.hpp"

namespace gpuprobe {

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

namespace memory_chase {

using XY = std::vector<std::pair<double, double>>;

bool is_pow2(double v);
double round_pow2(double v);

// Rows of `probe` in `unit` whose text parameters match every (key, value) of `where`,
// grouped by the numeric parameter `group_key` (one group when it is "") and returned as
// (x_key, value) points sorted by x.
std::map<double, XY> grouped(const std::vector<Observation>& obs, const std::string& probe,
                             const std::string& unit, const Params& where,
                             const std::string& group_key, const std::string& x_key);

// A parameter with its confidence clamped to [0, 1].
Parameter make_parameter(const std::string& name, double value, const std::string& unit, double low,
                         double high, double confidence, const std::string& method,
                         const std::string& evidence);

// Kernel names as the code checks name them (kernel_name() of base/code_check.hpp).
constexpr int kL1 = 0, kReadonly = 1, kL2 = 2;  // Path in microbench/memory_chase.cuh
std::string templ(const std::string& name, const std::vector<std::string>& args);
std::string loader(int path, int width);
std::string chase_kernel(bool per_access, const std::string& ld);
// The column of every chase's rows: the bytes the chain spans.
constexpr const char* kFootprintColumn = "footprint_bytes";
// The hit/miss calibration of a chase (microbench/memory_chase.cuh: calibration_row): cycles
// of each level, hit, miss and the threshold between them.
constexpr const char* kCalibrationProbe = "calibration";
constexpr const char* kLevelColumn = "level";

constexpr const char* kWriteChain64 = "memory_chase::write_chain<unsigned long>";
constexpr const char* kWriteChain32 = "memory_chase::write_chain<unsigned int>";

// The load of each path and width: PTX as written; SASS as sm_70-sm_90 spell it (the default
// load weak, .nc CONSTANT, .cg STRONG.GPU), lenient about the size modifier.
InstructionRule ptx_load(int path, int width, bool chained);
InstructionRule sass_load(int path);
// One expectation: `kernel` of microbench/<source>.cu, measuring `probe`, holds one PTX and one
// SASS rule.
CodeExpectation expectation(const std::string& source, const std::string& kernel,
                            const std::string& probe, InstructionRule ptx, InstructionRule sass);

}  // namespace memory_chase
}  // namespace gpuprobe
