#pragma once
// The index chase of the papers (Mei & Chu 2016; Jia et al. 2018): one thread follows indices,
// j = a[j], so that every step holds the load and the address arithmetic that turns the index
// into an address, as Kepler-Volta latency tables were measured. Beside the pure pointer chase
// (latency family, the headline figures) it gives each documented latency a twin measured the
// documented way. Jia et al.'s atomic latency as they describe it: an atomic A whose result
// indexes a load B of known latency, latency(A) = latency(A, B) - latency(B) (label result_pair,
// not dependent_pair: their V100 figures are shorter than any L2 round trip, so their timing
// must differ in a way the paper does not say, and no ratio to them is formed).
#include <string>
#include <vector>

#include "base/code_check.hpp"
#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::index_chase {

constexpr int kSteps = 16;  // dependent steps per unrolled loop trip (the code check counts them)
// The global pair's atomics step over kPairLines lines kPairStrideBytes apart: a line's L2 slice
// is near the SM or far from it (H100: 281 or 438 cycles, by where the chain landed), many lines
// spread over pages average over both. Only kPairLines lines of the identity array are loaded:
// they stay in L1.
constexpr int kPairLines = 256;
constexpr int kPairStrideBytes = 4096 + 128;

// The names of index_chase.csv, written by the driver and read by the analyzer and the tests.
constexpr const char* kSharedProbe = "shared";  // j = s[j] in shared memory
constexpr const char* kL1Probe = "l1";          // j = a[j] over lines that stay in L1
constexpr const char* kL2Probe = "l2";          // j = a[j] with ld.cg, L1 bypassed
constexpr const char* kDramProbe = "dram";      // j = a[j], every step a new line, L2 flushed
constexpr const char* kAtomicSharedPairProbe = "atomic_shared_pair";  // atomic, then its load
constexpr const char* kAtomicGlobalPairProbe = "atomic_global_pair";  // the same in global
constexpr const char* kSassProbe = "sass";     // the SASS of one step, as evidence
constexpr const char* kStepsColumn = "steps";  // a point's timed steps
constexpr const char* kLinesColumn = "lines";  // the lines the global pair's atomics step over
constexpr const char* kLineStrideColumn = "line_stride_bytes";  // and the bytes between them
constexpr const char* kOfColumn = "of";                         // a sass row's probe
constexpr const char* kStepColumn = "step";  // a sass row's instructions, "; "-separated

struct Variant {
  const char* probe;      // observations' probe
  const char* kernel;     // kernel_name() of its kernel
  const char* load;       // SASS pattern of the step's load (one per step)
  const char* parameter;  // canonical name; what one step holds: docs/parameters.md
};
const std::vector<Variant>& variants();

// The instructions of one step of a timed region: after the first match of `load_pattern`
// through the second, as "IMAD.SHL.U32 R3, R2, 0x4, RZ; LDS R2, [R3]"; "" with fewer than two.
std::string one_step(const std::vector<Instruction>& region, const std::string& load_pattern);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"index_chase", "index_chase.gp"};

// shared_latency_index_chase, l1_hit_latency_index_chase, l2_hit_latency_index_chase,
// dram_latency_index_chase (cycles per step), and atomic_shared_latency_result_pair,
// atomic_global_latency_result_pair (pair minus the chase of the same load B).
std::vector<Parameter> analyze_index_chase(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace gpuprobe::index_chase
