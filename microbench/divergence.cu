// Warp divergence: lane l of every warp takes path l % P, for P = 1..32 distinct paths of the
// same work (64 FMAs). If the SM runs each path with the others' lanes masked off, one loop
// trip costs P times as much as with one path. Each path's FMAs carry a different immediate, so
// the compiler cannot merge two paths into one (the code check counts all 32 x 64).
#include <string>
#include <vector>

#include "analysis/divergence.hpp"
#include "gpu/sass_check.hpp"
#include "pipe_ops.cuh"

namespace gpuprobe::divergence {

#define GPUPROBE_PATH(k, hex)                                                          \
  case k:                                                                              \
    _Pragma("unroll") for (int u = 0; u < kStepsPerPath / ILP; ++u) {                  \
      _Pragma("unroll") for (int c = 0; c < ILP; ++c)                                  \
          asm volatile("fma.rn.f32 %0, %0, %1, 0f3F8000" #hex ";" : "+f"(x[c]) : "f"(a)); \
    }                                                                                  \
    break;

template <int ILP>
__global__ void paths(pipes::OpArgs args, int npaths, int iters, BlockSpan* spans, float* sink,
                      int flag) {
  float x[ILP];
#pragma unroll
  for (int c = 0; c < ILP; ++c) x[c] = (threadIdx.x * ILP + c + 1) * 1e-3f;
  const float a = args.f32_a;
  const int path = int(threadIdx.x % 32) % npaths;
  __syncthreads();
  long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    switch (path) {
      GPUPROBE_PATH(0, 00) GPUPROBE_PATH(1, 01) GPUPROBE_PATH(2, 02) GPUPROBE_PATH(3, 03)
      GPUPROBE_PATH(4, 04) GPUPROBE_PATH(5, 05) GPUPROBE_PATH(6, 06) GPUPROBE_PATH(7, 07)
      GPUPROBE_PATH(8, 08) GPUPROBE_PATH(9, 09) GPUPROBE_PATH(10, 0A) GPUPROBE_PATH(11, 0B)
      GPUPROBE_PATH(12, 0C) GPUPROBE_PATH(13, 0D) GPUPROBE_PATH(14, 0E) GPUPROBE_PATH(15, 0F)
      GPUPROBE_PATH(16, 10) GPUPROBE_PATH(17, 11) GPUPROBE_PATH(18, 12) GPUPROBE_PATH(19, 13)
      GPUPROBE_PATH(20, 14) GPUPROBE_PATH(21, 15) GPUPROBE_PATH(22, 16) GPUPROBE_PATH(23, 17)
      GPUPROBE_PATH(24, 18) GPUPROBE_PATH(25, 19) GPUPROBE_PATH(26, 1A) GPUPROBE_PATH(27, 1B)
      GPUPROBE_PATH(28, 1C) GPUPROBE_PATH(29, 1D) GPUPROBE_PATH(30, 1E) GPUPROBE_PATH(31, 1F)
    }
  }
  __syncthreads();
  long long end = clock64();
  record_span(spans, start, end);
#pragma unroll
  for (int c = 0; c < ILP; ++c) keep(x[c], sink + c, flag);
}

#undef GPUPROBE_PATH

namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocksPerSm = 4;

class DivergenceFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(divergence::kFamily.name); }
  std::string description() const override {
    return "cost of 1..32 distinct paths in a warp against paying every path in full";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{kFullSmProbe, "cycles per loop trip with every SM full of diverging warps"},
            {kOneWarpProbe, "cycles per loop trip of one diverging warp alone"}};
  }
  void run(RunContext& ctx) override {
    const DeviceInfo& dev = ctx.device();
    if (ctx.enabled(kFullSmProbe) && sass_allows(ctx, kFullSmProbe, {kernel_name(4)})) {
      int per_sm = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, &paths<4>, kThreads, 0));
      if (per_sm < 1) throw std::runtime_error("divergence: kernel cannot be resident");
      sweep<4>(ctx, kFullSmProbe, dev.sm_count * std::min(per_sm, kMaxBlocksPerSm), kThreads);
    }
    if (ctx.enabled(kOneWarpProbe) && sass_allows(ctx, kOneWarpProbe, {kernel_name(1)}))
      sweep<1>(ctx, kOneWarpProbe, 1, dev.warp_size);
  }

 private:
  template <int ILP>
  void sweep(RunContext& ctx, const std::string& probe, int blocks, int threads) {
    DeviceBuffer<float> sink(ILP);
    SpanRecorder spans(blocks);
    for (int p : path_counts(ctx.quick())) {
      auto seconds = [&](int iters) {
        return time_seconds([&] {
          paths<ILP><<<blocks, threads>>>(pipes::OpArgs{}, p, iters, spans.get(), sink.get(), 0);
        });
      };
      int iters = calibrate_iterations(seconds, ctx.quick() ? 0.2e-3 : 1e-3);
      Point pt{probe, {{kPathsColumn, std::to_string(p)}}, "cycles", ctx.quick() ? 3 : 5};
      ctx.measure(pt, [&] {
        double s = seconds(iters);
        return Sample{median_sm_cycles(spans.fetch()) / iters, s};
      });
    }
  }
};

GPUPROBE_REGISTER_FAMILY(DivergenceFamily);

}  // namespace

}  // namespace gpuprobe::divergence
