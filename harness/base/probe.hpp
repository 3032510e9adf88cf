#pragma once
// The interface every probe family implements, and the registry that holds them.
// Host-only on purpose: families keep their kernels in their own .cu file and talk to the
// harness through this header, so the harness never needs to know a kernel.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/observation.hpp"
#include "base/stats.hpp"

namespace gpuprobe {

// What the harness read off the device (cudaDeviceGetAttribute, cudaMemGetInfo, NVML).
// Families size their sweeps from this, never from a table of GPUs.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  std::string pci_bus_id;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int warp_size = 32;
  int max_threads_per_sm = 0, max_threads_per_block = 0, max_blocks_per_sm = 0;
  int regs_per_sm = 0, regs_per_block = 0;
  long long l2_bytes = 0;
  long long persisting_l2_max_bytes = 0;
  long long shared_per_sm = 0, shared_per_block = 0, shared_per_block_optin = 0;
  long long reserved_shared_per_block = 0;
  long long const_bytes = 0;
  long long global_mem_bytes = 0, free_mem_bytes = 0;
  int mem_clock_khz = 0;        // attribute value: the memory's peak clock
  int bus_width_bits = 0;
  int nominal_sm_clock_khz = 0; // recorded for reference only; conversions use the measured clock
  bool ecc = false;
  bool concurrent_kernels = false;
  int async_engines = 0;
  int driver_version = 0, runtime_version = 0;

  int cc() const { return cc_major * 10 + cc_minor; }
  // Theoretical DRAM bandwidth in GB/s from the memory clock and bus width (DDR: x2).
  double theoretical_dram_gbs() const {
    return 2.0 * mem_clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
  }
};

// One timed repetition of a sweep point.
struct Sample {
  double value = 0;    // in the point's unit (cycles per access, GB/s, ops/clk/SM, ...)
  double seconds = 0;  // GPU time the repetition took, for Google Benchmark's manual timer
};

struct Point {
  std::string probe;   // e.g. "ld_global"; the benchmark is named family/probe/k:v/...
  Params params;
  std::string unit;    // unit of Sample::value; "cycles" also yields an "ns" row
  int reps = 11;
  double bytes_per_rep = 0;  // bytes moved per repetition, shown as Google Benchmark's rate
};

// A row for RunContext::record of `probe` at `params` from the summary of its samples: the
// median, and p05/p95 as its spread (the runner fills in the family).
Observation summary_row(const std::string& probe, Params params, const Summary& s,
                        const std::string& unit);

class RunContext {
 public:
  virtual ~RunContext() = default;
  virtual const DeviceInfo& device() const = 0;
  virtual bool quick() const = 0;
  // SM clock measured (clock64 against %globaltimer) just before this family started.
  virtual double sm_clock_mhz() const = 0;
  // Whether the user's --filter selects family/probe.
  virtual bool enabled(const std::string& probe) const = 0;
  // Runs `rep` once to warm up, then point.reps times as one Google Benchmark benchmark,
  // records the observation (p05/p50/p95 over the repetitions) and returns it.
  // Throws (after recording nothing) when `rep` throws.
  virtual Observation measure(const Point& point, const std::function<Sample()>& rep) = 0;
  // Records a row that is not itself a timed repetition (a count, a derived size, ...).
  virtual void record(const Observation& obs) = 0;
  // Progress text for the status line ("footprint 4 MiB").
  virtual void progress(const std::string& what) = 0;
  // Marks a probe invalid (its code check failed, say): it is listed in the run's
  // invalid.csv and on stderr, and must not be measured or reported as a number.
  virtual void invalid(const std::string& probe, const std::string& why) = 0;
  // Records that this device cannot run a probe (or some of its variants): listed once per
  // reason in the run's skipped.csv, so that a missing number is never silent.
  virtual void skip(const std::string& probe, const std::string& why) = 0;
};

struct ProbeInfo {
  std::string name;
  std::string description;
};

class ProbeFamily {
 public:
  virtual ~ProbeFamily() = default;
  virtual std::string name() const = 0;  // observations go to <name>.csv
  virtual std::string description() const = 0;
  virtual std::vector<ProbeInfo> probes() const = 0;
  // Capability filter: false (with the reason) when this device cannot run the family.
  virtual bool supported(const DeviceInfo&, std::string* /*why*/) const { return true; }
  virtual void run(RunContext& ctx) = 0;
};

std::vector<std::unique_ptr<ProbeFamily>>& probe_families();

template <class F>
struct RegisterFamily {
  RegisterFamily() { probe_families().push_back(std::make_unique<F>()); }
};

}  // namespace gpuprobe

// Registers a family at static-initialisation time: GPUPROBE_REGISTER_FAMILY(LatencyFamily);
// [[maybe_unused]]: CUDA 11's front end warns (#177-D) on the otherwise unreferenced variable.
#define GPUPROBE_REGISTER_FAMILY(F) \
  [[maybe_unused]] static ::gpuprobe::RegisterFamily<F> gpuprobe_family_##F
