#pragma once
// Per-SM timing of a whole-chip launch, for every family that times blocks with clock64: each
// block records its span (record_span), the host reads them back (SpanRecorder) and forms
// rates per SM (analysis/common/sm_timing.hpp); calibrate_iterations sizes a launch to a target time.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/common/sm_timing.hpp"
#include "gpu/cuda.cuh"

namespace gpuprobe {

// Where a kernel records its block's timing; `spans[blockIdx.x]` after the closing barrier.
__device__ __forceinline__ void record_span(BlockSpan* spans, long long start, long long end) {
  if (threadIdx.x == 0) spans[blockIdx.x] = BlockSpan{start, end, static_cast<int32_t>(sm_id()), 0};
}

// Block timings of one launch: device buffer, and the copy read back after it ran.
class SpanRecorder {
 public:
  explicit SpanRecorder(int blocks) : dev_(static_cast<size_t>(blocks)), host_(static_cast<size_t>(blocks)) {
    CUDA_CHECK(cudaMemset(dev_.get(), 0, dev_.bytes()));
  }
  BlockSpan* get() const { return dev_.get(); }
  size_t blocks() const { return host_.size(); }
  // Throws when a block left no span (still zeroed) or an empty one: a rate formed without it
  // would be silently wrong.
  const std::vector<BlockSpan>& fetch() {
    CUDA_CHECK(cudaMemcpy(host_.data(), dev_.get(), dev_.bytes(), cudaMemcpyDeviceToHost));
    for (size_t b = 0; b < host_.size(); ++b)
      if (host_[b].end <= host_[b].start)
        throw std::runtime_error("block " + std::to_string(b) + " recorded no clock64 span");
    return host_;
  }

 private:
  DeviceBuffer<BlockSpan> dev_;
  std::vector<BlockSpan> host_;
};

// `kept`, made anew only when a launch has another number of blocks: a recorder per
// repetition would add a cudaMalloc and a synchronising cudaFree to every one.
inline SpanRecorder& recorder_for(std::optional<SpanRecorder>& kept, int blocks) {
  if (!kept || kept->blocks() != static_cast<size_t>(blocks)) kept.emplace(blocks);
  return *kept;
}

// Iterations for which `seconds(iters)` (one timed launch) takes about `target` seconds. Two
// launches 16x apart give the cost of an iteration without the launch overhead, which would
// otherwise make short kernels look slow per iteration and come out too short.
template <class F>
int calibrate_iterations(F&& seconds, double target, int max_iters = 1 << 22) {
  int lo = 2;
  double t_lo = seconds(lo);
  for (;;) {
    int hi = lo * 16;
    double t_hi = seconds(hi);
    if (t_hi >= target / 4 || hi >= max_iters / 16) {
      double per_iter = (t_hi - t_lo) / (hi - lo);
      if (!(per_iter > 0)) per_iter = t_hi / hi;
      return static_cast<int>(std::clamp(target / per_iter, 1.0, static_cast<double>(max_iters)));
    }
    lo = hi;
    t_lo = t_hi;
  }
}

}  // namespace gpuprobe
