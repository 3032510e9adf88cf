#pragma once
// The roofline model of one run, from its parameters alone: the time roofline of Williams,
// Waterman and Patterson (CACM 2009: one bandwidth roof per memory level, one compute roof per
// pipe) and the energy roofline of Choi, Czechowski and Vuduc (IPDPS 2013: energy per flop and
// per byte, constant power, and the power cap that bounds time where rate x energy + constant
// power would pass it). Every ceiling carries the interval of the parameters it comes from.
// The model predicts a kernel's time and energy from the counts the roofline family records
// (analysis/roofline.hpp) and says which roof binds. Pure C++: no GPU.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/roofline.hpp"
#include "base/observation.hpp"

namespace gpuprobe::roofline {

// One roof bounds a kernel when its time exceeds the next roof's by this factor; nearer, two
// roofs share the time and the max() of the model is not what the hardware does.
constexpr double kOneRoofMargin = 1.5;
// A kernel measured this many times slower than every roof allows waits on latency (atomics
// on one address, a dependent chain), not on a rate: no roof explains it.
constexpr double kLatencyFactor = 3.0;
constexpr double kFlopsPerFma = 2.0;

// Missing or malformed inputs that leave no model at all (no SM count, no measured clock, no
// roof): one line for the user.
struct ModelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A time ceiling's kind (Ceiling::what, the `what` column of `gpuprobe roofline`'s ceilings).
constexpr const char* kBandwidthCeiling = "bandwidth";  // bytes per second of a level
constexpr const char* kComputeCeiling = "compute";      // operations per second of a pipe
constexpr const char* kAtomicsCeiling = "atomics";      // atomics per second

struct Ceiling {
  std::string name;  // "dram", "l2", "fp32", "tensor_wgmma_bf16", "static_power", ...
  std::string kind;  // kTime or kEnergy: what it bounds
  std::string what;  // bandwidth, compute, atomics | op_energy, byte_energy, static, cap
  double value = 0, low = 0, high = 0;
  std::string unit;    // GB/s, GFLOP/s, GOP/s, Gatomic/s | pJ/flop, pJ/B, W
  std::string source;  // the parameters (and metadata) it comes from, ' + ' between them
};

struct Missing {
  std::string name, why;  // a roof left out, and the parameter it lacks
};

struct Model {
  std::string gpu;
  double sm_count = 0;
  double clock_hz = 0;  // sm_clock_measured
  std::vector<Ceiling> ceilings;
  std::vector<Missing> missing;
  std::optional<double> launch_overhead_s;
  std::string no_energy;  // why the energy roofline is left out; "" when it is drawn
  // The ceiling of that name and kind, or nullptr.
  const Ceiling* find(const std::string& name, const std::string& kind = kTime) const;
};

// The value of metadata `key`, "" when absent.
std::string meta_value_of(const Metadata& meta, const std::string& key);

// Builds the model; throws ModelError when the run has no sm_count, no sm_clock_measured or
// not one roof. `meta` gives sm_count and power_limit_w.
Model build_model(const std::vector<Parameter>& params, const Metadata& meta,
                  const std::string& gpu);

struct Kernel {
  std::string name;
  Counts counts;  // roofline.hpp's: an item (fp32_fma, dram_read, l2_read, ...) per launch
  std::optional<double> time_s, energy_j;  // measured per launch
};

struct Prediction {
  std::string kernel;
  double flops = 0, bytes = 0;  // flops (2 per FMA, every pipe) and DRAM bytes
  double intensity = 0;         // flops / DRAM bytes (0 without DRAM bytes)
  double time_s = 0;            // binding roof + launch overhead
  std::optional<double> measured_time_s, measured_energy_j;
  std::optional<double> energy_j;
  std::optional<double> time_error, energy_error;  // (predicted - measured) / measured
  std::string binding;                             // the roof that binds
  std::string bound;                               // one roof | two roofs at once | ...
  std::string reason;
};

// Kernels of a roofline.csv: count rows, measured time and energy (analysis/roofline.hpp).
std::vector<Kernel> kernels_of(const std::vector<Observation>& obs);

// The prediction. The energy's static part uses the measured time (when there is one): the
// energy check then tests the energies, not the time model twice.
Prediction predict(const Model& m, const Kernel& k);

// The class names.
constexpr const char* kOneRoof = "one roof";
constexpr const char* kTwoRoofs = "two roofs at once";
constexpr const char* kLatencyBound = "latency bound";
constexpr const char* kPowerCapped = "power cap";
constexpr const char* kUnpredicted = "not predicted";

// Choi et al.'s curves at arithmetic intensity `i` (flops per byte of `level`) for one pipe:
// attainable GFLOP/s under the time roofs, the same under the power cap too, and GFLOP/J
// ("the arch line"). Returns false when the run lacks a ceiling the curve needs.
struct CurvePoint {
  double gflops = 0, gflops_capped = 0, gflops_per_joule = 0;
};
bool curve_at(const Model& m, const std::string& pipe, const std::string& level, double i,
              CurvePoint* out);

}  // namespace gpuprobe::roofline
