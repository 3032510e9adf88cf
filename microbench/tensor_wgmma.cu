// Hopper's warpgroup tensor-core MMA (wgmma.mma_async): multiply-adds per clock per SM and the
// latency of one wgmma, for f16, bf16, tf32, fp8 (e4m3) and int8 inputs. The documented H100
// tensor peaks assume this path; warp-level mma.sync (pipes.cu) reaches two thirds of them.
// The probes belong to the pipes family (pipes.cu runs them after its own).
//
// wgmma exists only in the architecture-specific target sm_90a, which a whole-target list of
// architectures never builds. Where the build targets Hopper, CMakeLists.txt compiles this file
// for sm_90a alone, so that its fat binary holds no sm_90 twin of these kernels for the loader to
// pick; every other target compiles the guarded kernel bodies away. Whichever code the loader
// runs, a kernel proves that its sm_90a body ran by writing kSm90aRan, and a probe whose kernel
// did not is reported invalid, never measured.
#include <string>
#include <vector>

#include <memory>

#include "analysis/energy.hpp"
#include "analysis/pipes.hpp"
#include "gpu/sass_check.hpp"
#include "memory_streams.cuh"
#include "pipe_ops.cuh"

namespace gpuprobe::pipes {

namespace {

constexpr int kWarpgroupThreads = 128;
constexpr uint32_t kSm90aRan = 0x90a;
// The A and B tiles hold hashed bytes with the top two bits clear: finite, non-zero values in
// every input type, so that the tensor cores switch as they would on real data. The energy
// family also runs them all-zero (mask 0).
constexpr uint32_t kTileMask = 0x3F3F3F3Fu;

// The energy family's held-out GEMM (wgmma_gemm below): kWgmmaWarpgroups warpgroups per block,
// each with its own 64 rows of A, sharing kWgmmaN rows of B. A stage holds kGemmStageK of K for
// all of them, 32 bytes of K (one bf16 k-step of 16) per row per step, copied as 16-byte
// vectors, energy::kGemmCopyBatch in flight per thread.
constexpr int kGemmStepsPerStage = energy::kGemmStageK / 16;
constexpr int kGemmStages = energy::kGemmK / energy::kGemmStageK;
constexpr int kGemmStageAVec = kGemmStepsPerStage * 64 * 32 / 16;  // one warpgroup's A
constexpr int kGemmStageBVec = kGemmStepsPerStage * kWgmmaN * 32 / 16;
constexpr int kGemmStageVec = kWgmmaWarpgroups * kGemmStageAVec + kGemmStageBVec;

// m64n256kK: each of a warpgroup's 128 threads holds 64 * 256 / 128 accumulators.
constexpr int kAccRegs = 64 * kWgmmaN / kWarpgroupThreads;

}  // namespace

// The accumulator fragment as operands %0..%127 of the asm that issues a wgmma.
#define GPUPROBE_WGMMA_D                                                                     \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                  \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "         \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "         \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "         \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "         \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "         \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "   \
  "%111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, "     \
  "%125, %126, %127}"
#define GPUPROBE_WGMMA_D8(C, d, i)                                                          \
  "+" C(d[i]), "+" C(d[i + 1]), "+" C(d[i + 2]), "+" C(d[i + 3]), "+" C(d[i + 4]),          \
      "+" C(d[i + 5]), "+" C(d[i + 6]), "+" C(d[i + 7])
#define GPUPROBE_WGMMA_D128(C, d)                                                           \
  GPUPROBE_WGMMA_D8(C, d, 0), GPUPROBE_WGMMA_D8(C, d, 8), GPUPROBE_WGMMA_D8(C, d, 16),       \
      GPUPROBE_WGMMA_D8(C, d, 24), GPUPROBE_WGMMA_D8(C, d, 32), GPUPROBE_WGMMA_D8(C, d, 40), \
      GPUPROBE_WGMMA_D8(C, d, 48), GPUPROBE_WGMMA_D8(C, d, 56), GPUPROBE_WGMMA_D8(C, d, 64), \
      GPUPROBE_WGMMA_D8(C, d, 72), GPUPROBE_WGMMA_D8(C, d, 80), GPUPROBE_WGMMA_D8(C, d, 88), \
      GPUPROBE_WGMMA_D8(C, d, 96), GPUPROBE_WGMMA_D8(C, d, 104),                            \
      GPUPROBE_WGMMA_D8(C, d, 112), GPUPROBE_WGMMA_D8(C, d, 120)

// One op per input type: D (registers) += A (shared, descriptor %128) x B (shared, %129), the
// scale and transpose immediates of each type's form ("1": add to D, A and B as they are).
// Multiply-adds per wgmma: 64 * 256 * K. Only the sm_90a kernel bodies below call apply().
#define GPUPROBE_WGMMA_OP(Type, probe, T, C, K, ptx, immediates)                            \
  struct Type {                                                                            \
    using Acc = T;                                                                         \
    static constexpr const char* kName = probe;                                            \
    static constexpr const char* kType = #Type;                                            \
    static constexpr double kMultiplyAdds = 64.0 * kWgmmaN * (K);                          \
    __device__ static void apply(Acc (&d)[kAccRegs], uint64_t a, uint64_t b) {             \
      asm volatile(ptx " " GPUPROBE_WGMMA_D ", %128, %129, " immediates ";"                \
                   : GPUPROBE_WGMMA_D128(C, d)                                             \
                   : "l"(a), "l"(b));                                                      \
    }                                                                                      \
  }

GPUPROBE_WGMMA_OP(WgmmaF16, kTensorWgmmaF16Probe, float, "f", 16,
                  "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", "1, 1, 1, 0, 0");
GPUPROBE_WGMMA_OP(WgmmaBf16, kTensorWgmmaBf16Probe, float, "f", 16,
                  "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", "1, 1, 1, 0, 0");
GPUPROBE_WGMMA_OP(WgmmaTf32, kTensorWgmmaTf32Probe, float, "f", 8,
                  "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32", "1, 1, 1");
GPUPROBE_WGMMA_OP(WgmmaFp8E4m3, kTensorWgmmaFp8E4m3Probe, float, "f", 32,
                  "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3", "1, 1, 1");
GPUPROBE_WGMMA_OP(WgmmaInt8, kTensorWgmmaInt8Probe, int, "r", 32,
                  "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8", "1");

#undef GPUPROBE_WGMMA_OP
#undef GPUPROBE_WGMMA_D128
#undef GPUPROBE_WGMMA_D8
#undef GPUPROBE_WGMMA_D

// The sm_90a code: everything below up to #else exists only in the sm_90a device pass.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

namespace {

// One wgmma reads a 64 x K tile of A and a 256 x K tile of B, 32 bytes of K per row for every
// type. Both are K-major without swizzle: 8-row x 16-byte core matrices of 128 contiguous bytes,
// the two along K 128 bytes apart, consecutive groups of 8 rows 256 bytes apart. Read either
// way round (which offset the descriptor calls leading), every address stays inside the tile.
constexpr uint32_t kRowBytes = 32;
constexpr uint32_t kCoreStrideK = 128, kCoreStrideRows = 256;
constexpr int kTileAWords = 64 * kRowBytes / 4;
constexpr int kTileBWords = kWgmmaN * kRowBytes / 4;

// The 64-bit shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start
// address, leading and stride byte offsets, each >> 4 in 14 bits; base offset 0, no swizzle.
__device__ __forceinline__ uint64_t smem_descriptor(const void* tile) {
  auto addr = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
  return uint64_t((addr >> 4) & 0x3FFF) | uint64_t((kCoreStrideK >> 4) & 0x3FFF) << 16 |
         uint64_t((kCoreStrideRows >> 4) & 0x3FFF) << 32;
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}
// Pins a register between asm statements: no write of an accumulator moves past the clock read
// that opens the timed region, and no read of it above the wait that makes it readable.
__device__ __forceinline__ void pin(float& x) { asm volatile("" : "+f"(x)::"memory"); }
__device__ __forceinline__ void pin(int& x) { asm volatile("" : "+r"(x)::"memory"); }

}  // namespace

// Each warpgroup runs one accumulator chain, kWgmmaUnroll wgmmas per loop trip. Throughput:
// the trip's wgmmas go out back to back as one commit group and the next trip is issued while
// it runs (wait_group 1), as a GEMM mainloop does; wgmmas into one accumulator are ordered by
// the hardware. Latency: every wgmma is committed and waited for (wait_group 0) before the next.
template <class Op, bool kEachWaits>
__device__ __forceinline__ void wgmma_chain(int iters, BlockSpan* spans, typename Op::Acc* sink,
                                            int flag, uint32_t* ran, uint32_t tile_mask) {
  __shared__ alignas(128) uint32_t tiles[kTileAWords + kTileBWords];
  for (int i = threadIdx.x; i < kTileAWords + kTileBWords; i += blockDim.x)
    tiles[i] = (uint32_t(i) * 0x9E3779B9u) & tile_mask;
  // Generic-proxy stores become visible to the async proxy that wgmma reads through.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  uint64_t a = smem_descriptor(tiles), b = smem_descriptor(tiles + kTileAWords);
  typename Op::Acc d[kAccRegs];
#pragma unroll
  for (int k = 0; k < kAccRegs; ++k) {
    d[k] = 0;
    pin(d[k]);  // zeroed before the clock starts
  }
  long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    wgmma_fence();
#pragma unroll
    for (int u = 0; u < kWgmmaUnroll; ++u) {
      Op::apply(d, a, b);
      if constexpr (kEachWaits) {
        wgmma_commit();
        wgmma_wait<0>();
      }
    }
    if constexpr (!kEachWaits) {
      wgmma_commit();
      wgmma_wait<1>();
    }
  }
  if constexpr (!kEachWaits) wgmma_wait<0>();
#pragma unroll
  for (int k = 0; k < kAccRegs; ++k) pin(d[k]);
  __syncthreads();
  long long end = clock64();
  record_span(spans, start, end);
  if (blockIdx.x == 0 && threadIdx.x == 0) *ran = kSm90aRan;
#pragma unroll
  for (int k = 0; k < kAccRegs; ++k) keep(d[k], sink + k, flag);
}

// The held-out GEMM of the energy family: C (128 x 256 per block) += A (128 x K) B (256 x K)^T
// in bf16, each warpgroup 64 rows. A (each block its own rows) and B (shared by all blocks) lie
// in global memory packed as the operand tiles the descriptors read, one stage after another,
// so that a stage is copied to shared memory as it is; each trip runs the whole K again into
// the same accumulators, and C is written once at the end.
__device__ __forceinline__ void gemm_tiles(const uint4* a, const uint4* b, float4* c, int trips,
                                           uint32_t* ran) {
  __shared__ alignas(128) uint4 stage[kGemmStageVec];
  constexpr int kStageVec = kGemmStageVec, kAVec = kWgmmaWarpgroups * kGemmStageAVec;
  const int wg = static_cast<int>(threadIdx.x) / kWarpgroupThreads;
  float d[kAccRegs];
#pragma unroll
  for (int k = 0; k < kAccRegs; ++k) {
    d[k] = 0;
    pin(d[k]);
  }
  const uint4* my_a = a + static_cast<size_t>(blockIdx.x) * kGemmStages * kAVec;
#pragma unroll 1
  for (int t = 0; t < trips; ++t) {
#pragma unroll 1
    for (int s = 0; s < kGemmStages; ++s) {
      const uint4* ga = my_a + static_cast<size_t>(s) * kAVec;
      const uint4* gb = b + static_cast<size_t>(s) * kGemmStageBVec;
#pragma unroll 1
      for (int i0 = threadIdx.x; i0 < kStageVec; i0 += blockDim.x * energy::kGemmCopyBatch) {
        uint4 v[energy::kGemmCopyBatch];
#pragma unroll
        for (int u = 0; u < energy::kGemmCopyBatch; ++u) {
          const int i = i0 + u * static_cast<int>(blockDim.x);
          if (i < kStageVec) v[u] = load<Load::cg, 16>(i < kAVec ? ga + i : gb + (i - kAVec));
        }
#pragma unroll
        for (int u = 0; u < energy::kGemmCopyBatch; ++u) {
          const int i = i0 + u * static_cast<int>(blockDim.x);
          if (i < kStageVec) stage[i] = v[u];
        }
      }
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      __syncthreads();
      wgmma_fence();
#pragma unroll
      for (int j = 0; j < kGemmStepsPerStage; ++j)
        WgmmaBf16::apply(d, smem_descriptor(stage + wg * kGemmStageAVec + j * (kTileAWords / 4)),
                         smem_descriptor(stage + kAVec + j * (kTileBWords / 4)));
      wgmma_commit();
      wgmma_wait<0>();
#pragma unroll
      for (int k = 0; k < kAccRegs; ++k) pin(d[k]);
      __syncthreads();  // every wgmma has read the stage before it is overwritten
    }
  }
  float4* out = c + (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) * (kAccRegs / 4);
#pragma unroll
  for (int q = 0; q < kAccRegs / 4; ++q)
    out[q] = make_float4(d[4 * q], d[4 * q + 1], d[4 * q + 2], d[4 * q + 3]);
  if (blockIdx.x == 0 && threadIdx.x == 0) *ran = kSm90aRan;
}

#else

// Other targets, and the host pass: no wgmma. The kernels do nothing, so never prove sm_90a.
template <class Op, bool kEachWaits>
__device__ __forceinline__ void wgmma_chain(int, BlockSpan*, typename Op::Acc*, int, uint32_t*,
                                            uint32_t) {}
__device__ __forceinline__ void gemm_tiles(const uint4*, const uint4*, float4*, int, uint32_t*) {}

#endif

template <class Op>
__global__ void __launch_bounds__(kWgmmaWarpgroups* kWarpgroupThreads, 1)
    wgmma_throughput(int iters, BlockSpan* spans, typename Op::Acc* sink, int flag, uint32_t* ran,
                     uint32_t tile_mask) {
  wgmma_chain<Op, false>(iters, spans, sink, flag, ran, tile_mask);
}

__global__ void __launch_bounds__(kWgmmaWarpgroups* kWarpgroupThreads, 1)
    heldout_gemm(const uint4* a, const uint4* b, float4* c, int trips, uint32_t* ran) {
  gemm_tiles(a, b, c, trips, ran);
}

template <class Op>
__global__ void __launch_bounds__(kWarpgroupThreads, 1)
    wgmma_latency(int iters, BlockSpan* spans, typename Op::Acc* sink, int flag, uint32_t* ran,
                  uint32_t tile_mask) {
  wgmma_chain<Op, true>(iters, spans, sink, flag, ran, tile_mask);
}

namespace {

template <class Op, bool kLatency>
class WgmmaLaunch {
 public:
  WgmmaLaunch(int blocks, int threads, uint32_t tile_mask = kTileMask)
      : blocks_(blocks), threads_(threads), tile_mask_(tile_mask), sink_(kAccRegs), ran_(1),
        spans_(blocks) {
    CUDA_CHECK(cudaMemset(ran_.get(), 0, ran_.bytes()));
  }

  static auto kernel() { return kLatency ? &wgmma_latency<Op> : &wgmma_throughput<Op>; }

  void enqueue(int iters) {
    kernel()<<<blocks_, threads_>>>(iters, spans_.get(), sink_.get(), 0, ran_.get(), tile_mask_);
  }
  double seconds(int iters) {
    return time_seconds([&] { enqueue(iters); });
  }
  const std::vector<BlockSpan>& spans() { return spans_.fetch(); }
  // Whether a launch ran the sm_90a body (and not the empty one of another target).
  bool ran_sm90a() {
    uint32_t v = 0;
    CUDA_CHECK(cudaMemcpy(&v, ran_.get(), sizeof v, cudaMemcpyDeviceToHost));
    return v == kSm90aRan;
  }

 private:
  int blocks_, threads_;
  uint32_t tile_mask_;
  DeviceBuffer<typename Op::Acc> sink_;
  DeviceBuffer<uint32_t> ran_;
  SpanRecorder spans_;
};

// Launches once and reads the proof; without it, marks the probe invalid.
template <class Launch>
bool proves_sm90a(RunContext& ctx, const std::string& probe, Launch& launch) {
  launch.seconds(1);
  if (launch.ran_sm90a()) return true;
  ctx.invalid(probe, "the kernel that ran is not the sm_90a code (no sm_90a cubin for it in this "
                     "binary: build with 90 among CMAKE_CUDA_ARCHITECTURES)");
  return false;
}

template <class Op>
void run_wgmma_op(RunContext& ctx) {
  if (!ctx.enabled(Op::kName)) return;
  const DeviceInfo& dev = ctx.device();
  if (dev.cc() != 90) {  // sm_90a code runs on compute capability 9.0 only
    ctx.skip(Op::kName, "needs sm_90a (compute capability 9.0)");
    return;
  }
  if (!sass_allows(ctx, Op::kName,
                   {wgmma_kernel_name(Op::kType, false), wgmma_kernel_name(Op::kType, true)}))
    return;
  ctx.progress(Op::kName);

  const int threads = kWgmmaWarpgroups * kWarpgroupThreads;
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, WgmmaLaunch<Op, false>::kernel(), threads, 0));
  if (per_sm < 1) throw std::runtime_error(std::string(Op::kName) + ": kernel cannot be resident");
  // One block per SM: its accumulators take more than half the register file.
  WgmmaLaunch<Op, false> throughput(dev.sm_count, threads);
  WgmmaLaunch<Op, true> latency(1, kWarpgroupThreads);
  if (!proves_sm90a(ctx, Op::kName, throughput) || !proves_sm90a(ctx, Op::kName, latency)) return;
  measure_chip_throughput(ctx, Op::kName, throughput, dev.sm_count,
                          kWgmmaWarpgroups * kWgmmaUnroll * Op::kMultiplyAdds);
  measure_step_latency(ctx, Op::kName, latency, kWgmmaUnroll);
}

template <class... Ops>
void run_wgmma_ops(RunContext& ctx) {
  (run_wgmma_op<Ops>(ctx), ...);
}

}  // namespace

std::vector<ProbeInfo> wgmma_probes() {
  std::vector<ProbeInfo> out;
  for (const auto& op : wgmma_ops()) out.push_back({op.probe, op.what});
  return out;
}

void run_wgmma(RunContext& ctx) {
  run_wgmma_ops<WgmmaF16, WgmmaBf16, WgmmaTf32, WgmmaFp8E4m3, WgmmaInt8>(ctx);
}

namespace {

// The sm_90a gate every energy use of these kernels passes first.
bool sm90a_device(RunContext& ctx, const std::string& probe) {
  if (ctx.device().cc() == 90) return true;
  ctx.skip(probe, "needs sm_90a (compute capability 9.0)");
  return false;
}

template <class Op>
std::optional<RepeatedKernel> repeated_of(RunContext& ctx, int blocks, bool zero_tiles) {
  if (!sm90a_device(ctx, Op::kName) ||
      !sass_allows(ctx, Op::kName, {wgmma_kernel_name(Op::kType, false)}))
    return std::nullopt;
  auto launch = std::make_shared<WgmmaLaunch<Op, false>>(
      blocks, kWgmmaWarpgroups * kWarpgroupThreads, zero_tiles ? 0u : kTileMask);
  if (!proves_sm90a(ctx, Op::kName, *launch)) return std::nullopt;
  return RepeatedKernel{[launch](int trips) { launch->enqueue(trips); },
                        double(blocks) * kWgmmaWarpgroups * kWgmmaUnroll * Op::kMultiplyAdds};
}

template <class... Ops>
std::optional<RepeatedKernel> repeated_by_name(RunContext& ctx, const std::string& probe,
                                               int blocks, bool zero_tiles) {
  std::optional<RepeatedKernel> out;
  ((probe == Ops::kName ? (out = repeated_of<Ops>(ctx, blocks, zero_tiles), true) : false) || ...);
  return out;
}

// The GEMM's operands, C and proof of sm_90a, alive as long as a closure holds them.
struct GemmBuffers {
  DeviceBuffer<uint4> a, b;
  DeviceBuffer<float4> c;
  DeviceBuffer<uint32_t> ran;
  int blocks = 0;
  GemmBuffers(int blocks_, size_t a_vec, size_t b_vec)
      : a(a_vec), b(b_vec),
        c(static_cast<size_t>(blocks_) * kWgmmaWarpgroups * kWarpgroupThreads * kAccRegs / 4),
        ran(1), blocks(blocks_) {}
};

// Random bf16 operands as the chain's tiles hold them (hashed bytes, top two bits clear).
void fill_operand(DeviceBuffer<uint4>& buf, uint32_t seed) {
  std::vector<uint32_t> words(buf.size() * 4);
  for (size_t i = 0; i < words.size(); ++i)
    words[i] = scramble(seed ^ static_cast<uint32_t>(i)) & kTileMask;
  CUDA_CHECK(cudaMemcpy(buf.get(), words.data(), buf.bytes(), cudaMemcpyHostToDevice));
}

}  // namespace

std::optional<RepeatedKernel> wgmma_repeated(RunContext& ctx, const std::string& probe, int blocks,
                                             bool zero_tiles) {
  return repeated_by_name<WgmmaF16, WgmmaBf16, WgmmaTf32, WgmmaFp8E4m3, WgmmaInt8>(
      ctx, probe, blocks, zero_tiles);
}

std::optional<RepeatedKernel> wgmma_gemm(RunContext& ctx, const std::string& probe,
                                         GemmCounts* counts) {
  if (!sm90a_device(ctx, probe) || !sass_allows(ctx, probe, {"pipes::heldout_gemm"}))
    return std::nullopt;
  const int blocks = ctx.device().sm_count;  // one per SM: its accumulators fill half the registers
  constexpr size_t kStageBytes = size_t(kGemmStageVec) * 16;
  auto buf = std::make_shared<GemmBuffers>(
      blocks, size_t(blocks) * kGemmStages * kWgmmaWarpgroups * kGemmStageAVec,
      size_t(kGemmStages) * kGemmStageBVec);
  fill_operand(buf->a, 0xA11CEu);
  fill_operand(buf->b, 0xB0Bu);
  CUDA_CHECK(cudaMemset(buf->ran.get(), 0, buf->ran.bytes()));
  auto enqueue = [buf](int trips) {
    heldout_gemm<<<buf->blocks, kWgmmaWarpgroups * kWarpgroupThreads>>>(
        buf->a.get(), buf->b.get(), buf->c.get(), trips, buf->ran.get());
  };
  time_seconds([&] { enqueue(1); });
  uint32_t ran = 0;
  CUDA_CHECK(cudaMemcpy(&ran, buf->ran.get(), sizeof ran, cudaMemcpyDeviceToHost));
  if (ran != kSm90aRan) {
    ctx.invalid(probe,
                "the kernel that ran is not the sm_90a code (build with 90 among "
                "CMAKE_CUDA_ARCHITECTURES)");
    return std::nullopt;
  }
  counts->global_bytes_per_trip = double(blocks) * kGemmStages * kStageBytes;
  counts->shared_bytes_per_trip = counts->global_bytes_per_trip;
  counts->c_bytes_per_launch = static_cast<double>(buf->c.bytes());
  counts->footprint_bytes = static_cast<double>(buf->a.bytes() + buf->b.bytes());
  return RepeatedKernel{enqueue, double(blocks) * kWgmmaWarpgroups * 64 * kWgmmaN * energy::kGemmK};
}

}  // namespace gpuprobe::pipes
