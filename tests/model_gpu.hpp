#pragma once
// Model GPUs: a declared memory hierarchy turned into the observations a gpuprobe run writes
// (the latency family's chase curves and the bandwidth family's read rows, with the run's
// `# key=value` metadata), with seeded measurement noise. The model-GPU bench
// (test_model_gpus.cpp) analyses them and checks the inferred parameters against the truth.
//
// Every figure of a model carries where it comes from: a citation (the row of
// results/reference/documented_figures.csv it was taken from), or a text starting `assumed:`
// where no source gives it. Assumed figures make a plausible GPU to test inference on; they
// are never presented as documented.
#include <string>
#include <utility>
#include <vector>

#include "base/observation.hpp"

namespace gpuprobe {
namespace model {

struct Figure {
  double value = 0;
  std::string source;  // citation, or "assumed: why"
  bool assumed() const { return source.rfind("assumed:", 0) == 0; }
};

// One cache level. A chase over F bytes hits it with probability 1 / (1 + (F / size)^sharpness):
// a large sharpness is an LRU-like cliff at the size, a small one the gradual step of a
// non-LRU replacement; either way the step is half done at the size.
struct Level {
  std::string name;  // canonical prefix: l1, mid_cache, l2, llc
  Figure size, latency;
  double sharpness = 40;
  // A split L2: `latency` is the near partition's, `far_latency` the far one's; the near
  // partition holds half of `size`.
  Figure far_latency;
  bool split() const { return far_latency.value > 0; }
};

// A TLB level: past `reach` bytes each load pays `walk` more cycles.
struct TlbStep {
  Figure reach, walk;
};

// A level of address translation as the TLB family sees it: `reach` bytes of `entry`-byte
// entries; past its reach each access pays `miss` more cycles (the next level's lookup, or the
// page walk after the last).
struct TlbLevel {
  Figure reach, entry, miss;
};

// What the families bench (tests/model_families.cpp) models beside the hierarchy: fetch
// granularity, execution pipes and instruction issue. A figure of value 0 is not declared, and
// what needs it is not generated (a probe the model's GPU cannot run is recorded as skipped).
struct FamilyFigures {
  Figure l1_fetch;     // bytes an L1 miss fetches: the whole 128 B line (Kepler) or a 32 B sector
  Figure l2_fetch;     // bytes an L2 miss fetches at the driver's default fetch-granularity limit
  Figure l2_sector;    // ... and at the smallest limit (32 B): the L2 sector
  Figure l2_line;      // the L2's allocation unit (bytes), as the l2_capacity probe sees it
  Figure readonly_fetch;  // bytes a read-only (ld.global.nc) miss fetches; 0: the path not modelled
  // The constant cache (ld.const): its line, and the cycles of a hit and of a miss to the L1.5.
  Figure constant_fetch, constant_hit, constant_miss;
  // Results per clock per SM as pipes.csv counts them (fp16x2: two per lane).
  Figure fp32, fp64, int32_logic, sfu, fp16x2, ldst, ld_global, tensor_f16;
  Figure schedulers;   // warp schedulers per SM
  Figure issue_width;  // instructions a scheduler issues per clock (2: dual issue)
  bool dual_issue_same_pipe = false;  // the second instruction may go to the first one's pipe
  bool fp32_int32_shared = false;     // fp32 and int32 run on the same cores (before Volta)
  bool declared() const { return fp32.value > 0; }
};

struct Gpu {
  std::string key;   // short name used in test output and the calibration table
  std::string name;  // the part modelled
  std::string arch, cc;
  std::vector<Level> levels;  // in order from the SM; past the last one, DRAM
  Figure dram_latency;
  std::vector<TlbStep> tlb;
  // What the run's metadata says: l2_bytes as the runtime reports it (0: absent, as in a
  // converted curve; one die's share on a multi-die part).
  double l2_bytes_meta = 0;
  // ... and shared_per_sm_bytes, the largest shared memory per SM (0: absent, as in a converted
  // curve): the CUDA C++ Programming Guide's figure for the compute capability.
  double shared_per_sm_meta = 0;
  Figure sm_clock_mhz;
  Figure dram_read_gbs, dram_theoretical_gbs, l2_read_gbs;
  bool round_bytes = true;  // the bandwidth rows carry round_bytes
  // Shared memory (LDS on AMD): banks of bank_width bytes; a warp request costs one pass per
  // conflict-free wavefront (analysis/shared_banks.hpp's bank model).
  Figure shared_banks, shared_bank_width;
  bool cold_climb = false;  // the first level climbs slowly (cold misses over the chase)
  // The run has ld.global.cg's curve, which skips the L1 (an NVIDIA run). Another vendor's curve,
  // converted from a public chase, has one: ld_global's alone.
  bool cg_probe = true;
  // The TLB family's levels, from the SM out (`tlb` above is only what the latency ladder's
  // chase adds), and the device memory its plain chase may sweep.
  std::vector<TlbLevel> tlb_levels;
  Figure memory_bytes;
  FamilyFigures fam;  // set by declare_family_figures (tests/model_families.cpp)
};

// The model GPUs of the bench (at least 14).
const std::vector<Gpu>& model_gpus();

// What one seed's measurement noise is: per-point jitter, each level's shelf wobble (a slow
// swing along the plateau), the first level's cold-miss climb, an error in the clock used to
// convert to cycles, and outliers.
struct Noise {
  double jitter = 0;         // relative sigma per point
  std::vector<double> wobble;  // relative amplitude per level
  std::vector<double> phase;
  double climb = 0;          // relative climb of the first level across its span
  double clock_offset = 0;   // relative error of every cycle figure
  double outlier_rate = 0;
};
Noise noise_for(const Gpu& g, unsigned seed);

struct Run {
  Metadata meta;
  std::vector<Observation> latency, bandwidth, shared_banks;
};
// The observations a run on the model writes: the latency sweep as the family makes it
// (latency::global_footprints, then refinement rounds), the bandwidth read sweep and the
// shared_banks family's stride sweeps.
Run generate(const Gpu& g, unsigned seed);

// A latency sweep on a grid of its own, as a public pointer-chase curve converted to a run has
// it: footprints `ratio` apart from `min_bytes` to `max_bytes`, not refined, those inside a gap
// (open interval, bytes) left out; one chase (ld_global), ld_cg too where `cg` and the model's
// run has it. The model's metadata and noise as generate() makes them.
struct Grid {
  double ratio = 1.375;
  double min_bytes = 1024, max_bytes = 4.0 * 1024 * 1024 * 1024;
  std::vector<std::pair<double, double>> gaps;
  bool cg = false;
  double noise = 1;  // the seed's jitter, wobble and outliers scaled by this
};
Run generate_on_grid(const Gpu& g, unsigned seed, const Grid& grid);

// The noise-free latency a chase over `footprint` bytes sees; `skip_l1` for ld.global.cg.
double chase_latency(const Gpu& g, double footprint, bool skip_l1);
// The same with the data's pages always translated (the ladder's TLB steps `tlb` left out): what
// the TLB family's chase sees at the footprint of the lines it touches, before its own TLB levels.
double cache_latency(const Gpu& g, double footprint, bool skip_l1);

// The tlb.csv rows a full run on the model writes (microbench/tlb.cu's sweeps: the first step
// at twelve strides, the coverage sweep over most of device memory, the aliased sweeps over 1 TiB
// of virtual addresses), and the parameters the TLB analysis should report from them.
std::vector<Observation> generate_tlb(const Gpu& g, unsigned seed, Metadata* meta);
// The noise-free cycles per access of a chase `stride` bytes apart over `footprint` bytes,
// touching `data_bytes` of distinct lines.
double tlb_latency(const Gpu& g, double footprint, double stride, double data_bytes);

// A parameter the analysis should report, and what counts as right.
struct Truth {
  std::string name;
  double value = 0;
  std::string unit;
  double tolerance = 0;  // relative
  bool interval_ok = false;  // right also when [low, high] covers the value (sizes)
  std::string source;
};
std::vector<Truth> truths(const Gpu& g);
// What the TLB analysis should report: tlb_l1_coverage, tlb_l2_coverage where the aliased sweep
// goes twice past it, and tlb_miss_latency summed over every level it goes twice past.
std::vector<Truth> tlb_truths(const Gpu& g);

// The names of parameters the latency and bandwidth analyses may write for a hierarchy: any
// such name not in truths() is invented.
std::vector<std::string> ladder_names();

// ---- The families bench (tests/model_families.cpp) ---------------------------------------
// The documented fetch, pipe and issue figures of `g` (by its key), into g.fam.
void declare_family_figures(Gpu& g);
// Models on the pipes and dual-issue benches only (more fp64 rates: GK104 1:24, GP104 1:32),
// their hierarchies not modelled.
const std::vector<Gpu>& pipe_only_models();

// A probe the model's GPU cannot run, as the run's skipped.csv records it.
struct Skip {
  std::string family, probe, reason;
};
// granularity.csv (the stride probe's l1 and l2 paths, as microbench/granularity.cu records
// them), pipes.csv (microbench/pipes.cu) and dual_issue.csv (microbench/dual_issue.cu) rows of a
// run on the model, with seeded noise; `skipped` gets what the probes would skip.
std::vector<Observation> generate_granularity(const Gpu& g, unsigned seed, Metadata* meta);
std::vector<Observation> generate_pipes(const Gpu& g, unsigned seed, Metadata* meta,
                                        std::vector<Skip>* skipped);
std::vector<Observation> generate_dual_issue(const Gpu& g, unsigned seed, Metadata* meta,
                                             std::vector<Skip>* skipped);
// Noise-free paired and solo rates (warp instructions/clk/SM) of two streams of `a` and `b`
// instructions per round under the model's pipes and issue.
double issue_rate(const Gpu& g, const std::string& op_a, double a, const std::string& op_b, double b);
// What the analyses should report from them, per family; `absent`: names they must not write
// (a pipe the model lacks).
std::vector<Truth> family_truths(const Gpu& g, const std::string& family);
std::vector<std::string> family_absent(const Gpu& g, const std::string& family);

}  // namespace model
}  // namespace gpuprobe
