#pragma once
// Instruction-level parallelism against occupancy (Volkov, "Better performance at lower
// occupancy"): the same work with ILP independent operations per thread and W warps per SM.
// While latency-bound the rate grows with W * ILP (operations in flight); the knee where it
// stops growing tells how much parallelism hides the latency, and whether ILP can stand in
// for warps.
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::ilp_occupancy {

constexpr int kIlps[] = {1, 2, 4, 8};
// Independent FMAs per loop trip (ILP chains x 256/ILP steps), the same for every ILP.
constexpr int kFmaSteps = 256;

// Warps per SM swept: 1..max, denser where the knee is expected; `max_warps` from the device.
// A quick run sweeps the same counts (in shorter windows): on a coarser grid the knee lands on
// the next point up (H200, ILP 4: 64 warps on 1, 2, 4 .. 64 against 40).
std::vector<int> warp_counts(int max_warps);

std::string fma_kernel_name(int ilp);
std::string load_kernel_name(int ilp);

// Dynamic shared memory per block that lets exactly `blocks` blocks share an SM of
// `shared_per_sm` bytes (each block also costs `reserved` bytes): more than a (blocks+1)-th,
// at most a blocks-th, within `per_block_max`. -1 when no size does.
long long exclusive_shared_bytes(long long shared_per_sm, long long reserved, long long per_block_max,
                                 int blocks);

struct Knee {
  bool found = false;
  int warps = 0;       // fewest warps per SM reaching `fraction` of the peak
  int warps_below = 0; // the sweep point before it (the knee lies between)
  double rate = 0;     // the rate there
};

// The highest rate that a second point confirms within `tolerance` (a plateau is seen more
// than once; a lone spike above it is not the peak); the maximum if none does.
double confirmed_peak(std::vector<double> rates, double tolerance = 0.03);

// rates[i] measured at warps[i] (ascending); peak over the whole sweep.
Knee knee(const std::vector<int>& warps, const std::vector<double>& rates, double peak,
          double fraction = 0.9);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"ilp_occupancy", "ilp_occupancy.gp"};

// The names of ilp_occupancy.csv, each written by the driver and read by the analyzer and tests.
constexpr const char* kFmaProbe = "fp32_fma";    // fp32 FMA results/clk/SM
constexpr const char* kLoadProbe = "dram_load";  // DRAM load bytes/clk/SM
constexpr const char* kIlpColumn = "ilp";        // independent chains per thread
constexpr const char* kWarpsColumn = "warps_per_sm";

// <kind>_warps_90pct_ilp<k> (warps/SM reaching 90 % of the kind's peak at ILP k) and
// <kind>_in_flight_90pct (warps x ILP at the knee, median over ILP) for kind = fp32_fma and
// dram_load. An ILP that never reaches 90 % gives <kind>_ceiling_ilp<k> instead: its best rate
// over the peak, and whether it was still rising at the SM's last warp (more warps than the
// SM holds would be needed) or flat (a limit of its own that warps do not lift).
std::vector<Parameter> analyze_ilp_occupancy(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace gpuprobe::ilp_occupancy
