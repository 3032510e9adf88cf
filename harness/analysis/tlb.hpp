#pragma once
// TLB reach, page-entry size and miss cost, from ld.global.cg chases with one access per
// stride over growing footprints.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/common/memory_chase.hpp"
#include "analysis/common/segmentation.hpp"
#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::tlb {

// The names of tlb.csv, written by the driver and read by the analyzer, the tests and the
// model GPUs; the footprint column is memory_chase::kFootprintColumn. Rows are cycles per access.
constexpr const char* kChaseProbe = "chase";                 // a buffer in device memory
constexpr const char* kChaseAliasedProbe = "chase_aliased";  // one chunk mapped over and over
constexpr const char* kStrideColumn = "stride_bytes";        // bytes between accesses

// microbench/tlb.cu looks for the first step (an L1 TLB running out) at each stride up to
// kFirstStepSlots pages, or kFirstStepBytes at the small strides (what 2048 pages of the
// 256 KiB stride reach, past the H100's 256 MiB first step), whichever is more. A first step
// past kFirstStepSlots entries is not an L1 TLB's that the sweep was made to find.
inline constexpr double kFirstStepSlots = 2048;
inline constexpr double kFirstStepBytes = 512.0 * 1024 * 1024;
// The strides of the plain chase (microbench/tlb.cu), from 64 KiB: below the 128 KiB entries
// of Kepler's and Maxwell's L1 TLBs (Jia et al. 2018), so that the first step stays put at two
// strides at least.
std::vector<double> entry_strides(bool quick);
// The coverage sweep (over most of device memory) runs at the largest stride still below the
// entry size, but at no smaller stride than this: its longest chase stays at most the
// 320 Ki accesses (80 GB / 256 KiB) it could take before the strides went down to 64 KiB.
inline constexpr double kMinCoverageStride = 256.0 * 1024;

// The chases touch a line (kChaseLine bytes apart) per access; the plain chase makes at least
// kMinAccesses accesses a pass: small footprints visit other lines of each page in further
// rounds, so that the mix of near and far L2 slices averages out as it does for large ones.
inline constexpr double kChaseLine = 128;
inline constexpr double kMinAccesses = 512;
// The aliased chase: one physical chunk (holding a distinct line for each access up to
// kAliasChunk / kChaseLine of them) mapped over kAliasSpace bytes of virtual addresses, at least
// kAliasMinAccesses accesses a pass (without rounds, fewer would each find a different mix of
// near and far L2 slices).
inline constexpr double kAliasChunk = 32.0 * 1024 * 1024;
inline constexpr double kAliasSpace = 1024.0 * 1024 * 1024 * 1024;
inline constexpr double kAliasMinAccesses = 64;
// So the data outgrows the L2 where a small L2 meets a long chase (the aliased one touches up to
// 32 MiB): a rise past that is the data's misses, not translation's. Only the points whose
// lines fill at most this share of the reported L2 are read: a split L2 serves past half of it
// from the far partition, and a gradual (non-LRU) L2 misses a few % already at half of it.
inline constexpr double kL2ShareForData = 0.25;
// The most accesses a point may make and be read (infinite where the L2 size is unknown).
double max_accesses_in_l2(double l2_bytes);

// TLB curves are cut into plateaus and knees by the shared segmentation (as latency curves); a TLB
// step may be as small as 2 % of an L2 hit.
segmentation::SegmentOptions tlb_segment_options();
// One stride's chase: footprint_bytes against cycles per access, of kChaseProbe (a buffer in
// device memory) or kChaseAliasedProbe (one physical chunk mapped over a large virtual range).
std::vector<segmentation::CurvePoint> tlb_curve(const std::vector<Observation>& obs, double stride,
                                                const std::string& probe = kChaseProbe);

// The first TLB knee at each stride: (stride, largest footprint still on the first plateau).
std::vector<std::pair<double, double>> first_tlb_steps(const std::vector<Observation>& obs);

// Page-entry size from the first step at several strides: reach is entries * max(stride,
// entry size), so it stays put while the stride is below the entry size and grows with it
// above. Also the stride to sweep coverage at: the largest one still below the entry size.
// The reach is anchored at the smallest stride whose step the next stride's confirms (the
// smallest stride's when none is): a lone step that noise made does not anchor it.
struct PageEntryFit {
  double entry_size = 0;
  double entries = 0;
  double reach = 0;         // entries * entry_size: the L1 TLB coverage (median over strides)
  double reach_low = 0, reach_high = 0;  // range of the first steps below the entry size
  double agree = 0;         // fraction of those within 10 % of `reach`
  double sweep_stride = 0;  // largest stride whose first step is at `reach`
  int strides_below = 0, strides_above = 0;
  double above_agree = 0;  // fraction of the strides above whose entry count is within 25 % of `entries`
  int strides_astray = 0;  // steps that fit neither: at the reach nor above the entry size
  // Only the smallest stride is below the entry size, and larger ones move the step: the entry
  // may be that stride or any smaller size, the reach that step or any less.
  bool entry_at_or_below_smallest = false;
};
std::optional<PageEntryFit> fit_page_entry(const std::vector<std::pair<double, double>>& steps);

std::vector<Parameter> analyze_tlb(const std::vector<Observation>& obs, const Metadata& meta);

// Code checks (base/code_check.hpp): the kernels that measure `probe` as the checks name them;
// empty for an unknown probe. Each has a registered expectation.
std::vector<std::string> kernels(const std::string& probe);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"tlb", "tlb.gp"};

}  // namespace gpuprobe::tlb
