// ILP against occupancy (Volkov): fp32 FMAs and DRAM loads with 1, 2, 4 or 8 independent
// operations per thread, at exactly W warps per SM for W = 1 .. the SM's maximum. Occupancy is
// set, not hoped for: W warps in one block per SM (two past the block size limit), with enough
// dynamic shared memory that no further block fits, checked with the occupancy API and again
// from the SM ids the blocks recorded.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/ilp_occupancy.hpp"
#include "gpu/sass_check.hpp"
#include "pipe_ops.cuh"

namespace gpuprobe::ilp {

using ilp_occupancy::kFmaSteps;

// Two resident blocks of 1024 threads cap registers so that a full SM of 2048 threads fits
// (sm_70, sm_80, sm_90); SMs that hold fewer threads (Turing 1024, sm_86/89 1536) reject the
// bound, and there one block is the most that can be asked for.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 700 && __CUDA_ARCH__ != 800 && __CUDA_ARCH__ != 900
#define GPUPROBE_ILP_MIN_BLOCKS 1
#else
#define GPUPROBE_ILP_MIN_BLOCKS 2
#endif

template <int ILP>
__global__ void __launch_bounds__(1024, GPUPROBE_ILP_MIN_BLOCKS)
    fma(pipes::OpArgs args, int iters, BlockSpan* spans, float* sink, int flag) {
  float x[ILP];
#pragma unroll
  for (int k = 0; k < ILP; ++k) x[k] = (threadIdx.x * ILP + k + 1) * 1e-3f;
  __syncthreads();
  long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kFmaSteps / ILP; ++u) {
#pragma unroll
      for (int k = 0; k < ILP; ++k) pipes::Fp32Fma::apply(x[k], args);
    }
  }
  __syncthreads();
  long long end = clock64();
  record_span(spans, start, end);
#pragma unroll
  for (int k = 0; k < ILP; ++k) keep(x[k], sink + k, flag);
}

// Each warp reads ILP coalesced 128-byte rows per trip, all issued before any is used; the
// grid walks through a buffer several times the L2, so every row comes from DRAM.
template <int ILP>
__global__ void __launch_bounds__(1024, GPUPROBE_ILP_MIN_BLOCKS)
    load(const float* data, uint64_t mask, int iters, BlockSpan* spans, float* sink, int flag) {
  const uint64_t thread = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t step = uint64_t(gridDim.x) * blockDim.x * ILP;
  uint64_t idx = (thread / 32) * 32 * ILP + thread % 32;
  float acc[ILP] = {};
  __syncthreads();
  long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    float v[ILP];
#pragma unroll
    for (int k = 0; k < ILP; ++k)
      asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v[k]) : "l"(data + ((idx + 32 * k) & mask)));
#pragma unroll
    for (int k = 0; k < ILP; ++k) acc[k] += v[k];
    idx += step;
  }
  __syncthreads();
  long long end = clock64();
  record_span(spans, start, end);
#pragma unroll
  for (int k = 0; k < ILP; ++k) keep(acc[k], sink + k, flag);
}

namespace {

struct Residency {
  int blocks_per_sm = 0, threads = 0;
  size_t shared = 0;
  std::string why;  // empty when exactly `warps` warps per SM can be had
};

// Makes `kernel` run exactly `warps` warps per SM when launched with the returned shape.
Residency exact_residency(const void* kernel, const DeviceInfo& dev, int warps) {
  Residency r;
  int max_block_warps = dev.max_threads_per_block / dev.warp_size;
  r.blocks_per_sm = (warps + max_block_warps - 1) / max_block_warps;
  while (warps % r.blocks_per_sm) ++r.blocks_per_sm;
  r.threads = warps / r.blocks_per_sm * dev.warp_size;
  long long dyn = ilp_occupancy::exclusive_shared_bytes(dev.shared_per_sm, dev.reserved_shared_per_block,
                                                        dev.shared_per_block_optin, r.blocks_per_sm);
  if (dyn < 0) {
    r.why = "no shared-memory size admits exactly " + std::to_string(r.blocks_per_sm) + " blocks";
    return r;
  }
  r.shared = size_t(dyn);
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dyn)));
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared));
  int resident = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, r.threads, r.shared));
  if (resident != r.blocks_per_sm)
    r.why = std::to_string(resident) + " blocks of " + std::to_string(r.threads) +
            " threads resident instead of " + std::to_string(r.blocks_per_sm);
  return r;
}

// Whether every SM ran exactly `blocks_per_sm` blocks.
bool occupancy_as_set(const std::vector<BlockSpan>& spans, int blocks_per_sm) {
  std::map<int32_t, int> per_sm;
  for (const auto& s : spans) ++per_sm[s.sm];
  for (const auto& [sm, n] : per_sm)
    if (n != blocks_per_sm) return false;
  return true;
}

class IlpOccupancyFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(ilp_occupancy::kFamily.name); }
  std::string description() const override {
    return "throughput against warps per SM and independent operations per thread (Volkov)";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{ilp_occupancy::kFmaProbe, "fp32 FMA results/clk/SM against warps per SM and ILP"},
            {ilp_occupancy::kLoadProbe, "DRAM load bytes/clk/SM against warps per SM and ILP"}};
  }
  void run(RunContext& ctx) override {
    const DeviceInfo& dev = ctx.device();
    warps_ = ilp_occupancy::warp_counts(dev.max_threads_per_sm / dev.warp_size);
    if (ctx.enabled(ilp_occupancy::kFmaProbe) &&
        checked(ctx, ilp_occupancy::kFmaProbe, &ilp_occupancy::fma_kernel_name))
      sweep<FmaKind>(ctx, std::integer_sequence<int, 1, 2, 4, 8>{});
    if (ctx.enabled(ilp_occupancy::kLoadProbe) &&
        checked(ctx, ilp_occupancy::kLoadProbe, &ilp_occupancy::load_kernel_name)) {
      // Four times the L2 (a power of two, for the index mask), within half the free memory.
      size_t elems = 1;
      while (elems * sizeof(float) < size_t(4 * dev.l2_bytes)) elems *= 2;
      while (elems > 1024 && elems * sizeof(float) > size_t(dev.free_mem_bytes / 2)) elems /= 2;
      buffer_ = DeviceBuffer<float>(elems);
      CUDA_CHECK(cudaMemset(buffer_.get(), 0, buffer_.bytes()));
      sweep<LoadKind>(ctx, std::integer_sequence<int, 1, 2, 4, 8>{});
      buffer_ = DeviceBuffer<float>();
    }
  }

 private:
  struct FmaKind {
    static constexpr const char* kProbe = ilp_occupancy::kFmaProbe;
    static constexpr const char* kUnit = "results/clk/SM";
    template <int ILP>
    static const void* kernel() { return reinterpret_cast<const void*>(&fma<ILP>); }
    template <int ILP>
    static void launch(const Residency& r, int blocks, int iters, BlockSpan* spans, float* sink,
                       const DeviceBuffer<float>&) {
      fma<ILP><<<blocks, r.threads, r.shared>>>(pipes::OpArgs{}, iters, spans, sink, 0);
    }
    template <int ILP>
    static double work_per_warp(int iters) { return double(iters) * kFmaSteps * 32; }
    // Each SM's pipes are its own: the rate of a typical SM.
    static double rate(const std::vector<BlockSpan>& spans, double per_block) { return sm_rate(spans, per_block); }
  };
  struct LoadKind {
    static constexpr const char* kProbe = ilp_occupancy::kLoadProbe;
    static constexpr const char* kUnit = "B/clk/SM";
    template <int ILP>
    static const void* kernel() { return reinterpret_cast<const void*>(&load<ILP>); }
    template <int ILP>
    static void launch(const Residency& r, int blocks, int iters, BlockSpan* spans, float* sink,
                       const DeviceBuffer<float>& data) {
      load<ILP><<<blocks, r.threads, r.shared>>>(data.get(), data.size() - 1, iters, spans, sink, 0);
    }
    template <int ILP>
    static double work_per_warp(int iters) { return double(iters) * ILP * 32 * sizeof(float); }
    // DRAM is shared: an SM that gets more than its share finishes early, so the chip's rate.
    static double rate(const std::vector<BlockSpan>& spans, double per_block) { return chip_rate(spans, per_block); }
  };

  bool checked(RunContext& ctx, const std::string& probe, std::string (*name)(int)) {
    std::vector<std::string> names;
    for (int ilp : ilp_occupancy::kIlps) names.push_back(name(ilp));
    return sass_allows(ctx, probe, names);
  }

  template <class Kind, int... ILP>
  void sweep(RunContext& ctx, std::integer_sequence<int, ILP...>) {
    (sweep_ilp<Kind, ILP>(ctx), ...);
  }

  template <class Kind, int ILP>
  void sweep_ilp(RunContext& ctx) {
    const DeviceInfo& dev = ctx.device();
    DeviceBuffer<float> sink(ILP);
    for (int w : warps_) {
      std::string point = " at ILP " + std::to_string(ILP) + ", " + std::to_string(w) + " warps/SM";
      Residency r = exact_residency(Kind::template kernel<ILP>(), dev, w);
      if (!r.why.empty()) {
        ctx.progress(std::string(Kind::kProbe) + ": not measured" + point + ": " + r.why);
        continue;
      }
      int blocks = dev.sm_count * r.blocks_per_sm;
      SpanRecorder spans(blocks);
      auto seconds = [&](int iters) {
        return time_seconds([&] { Kind::template launch<ILP>(r, blocks, iters, spans.get(), sink.get(), buffer_); });
      };
      int iters = calibrate_iterations(seconds, ctx.quick() ? 0.2e-3 : 1e-3);
      if (!occupancy_as_set(spans.fetch(), r.blocks_per_sm)) {
        ctx.invalid(Kind::kProbe, "not measured" + point + ": blocks did not spread " +
                                      std::to_string(r.blocks_per_sm) + " per SM");
        continue;
      }
      double per_block = Kind::template work_per_warp<ILP>(iters) * (r.threads / dev.warp_size);
      Point p{Kind::kProbe,
              {{ilp_occupancy::kIlpColumn, std::to_string(ILP)},
               {ilp_occupancy::kWarpsColumn, std::to_string(w)}},
              Kind::kUnit,
              ctx.quick() ? 3 : 5};
      ctx.measure(p, [&] {
        double s = seconds(iters);
        return Sample{Kind::rate(spans.fetch(), per_block), s};
      });
    }
  }

  std::vector<int> warps_;
  DeviceBuffer<float> buffer_;
};

GPUPROBE_REGISTER_FAMILY(IlpOccupancyFamily);

}  // namespace

}  // namespace gpuprobe::ilp
