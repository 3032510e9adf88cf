#pragma once
// Per-SM timing of a whole-chip launch: what each block records (BlockSpan) and the rates
// formed from it. Shared by every probe that times blocks with clock64 (harness/gpu/cuda.cuh
// records the spans) and by their analyses. Pure C++.
#include <cstdint>
#include <vector>

namespace gpuprobe {

// One block's timing as a kernel records it: clock64() after the opening barrier and after
// the closing one, and the SM it ran on (%smid).
struct BlockSpan {
  int64_t start, end;
  int32_t sm, reserved;
};

// Work per cycle on each SM: the work of the blocks that ran there over the cycles from its
// first block's start to its last block's end (clock64 counts per SM, so only spans of one SM
// are compared). One entry per SM that ran a block, in SM order.
std::vector<double> per_sm_rates(const std::vector<BlockSpan>& spans, double work_per_block);
// Median of per_sm_rates: the rate of a typical SM, robust to one that started late.
double sm_rate(const std::vector<BlockSpan>& spans, double work_per_block);
// Work per cycle per SM for a resource the SMs share (DRAM): all blocks' work over the longest
// SM's span, per SM that ran. SMs that get more than their share finish early, so the median
// SM's own rate would overstate what the chip delivers.
double chip_rate(const std::vector<BlockSpan>& spans, double work_per_block);
// Cycles from the first block's start to the last block's end, median over the SMs.
double median_sm_cycles(const std::vector<BlockSpan>& spans);

}  // namespace gpuprobe
