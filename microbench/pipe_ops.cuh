#pragma once
// The operations the execution-pipe probes time (pipes.cu, dual_issue.cu, ilp_occupancy.cu),
// one struct per operation, and the host helpers that time them per SM.
//
// An operation is one step of a chain: `apply(state, args)` issues exactly the PTX
// instruction(s) named, through inline asm so that NVVM can neither fold nor fuse them, with
// operands that come from kernel parameters so that nothing is a compile-time constant.
// Whether ptxas kept them is checked on the SASS (harness/gpu/sass_check.hpp) against the
// expectations in harness/analysis/pipes.cpp.
//
//   using State;                 what a chain carries
//   kName                        probe name (and parameter prefix)
//   kType                        the struct's name, for the kernel's name in code checks
//   kMinCC                       lowest compute capability that has the instruction
//   kResultsPerWarp              results one warp gets from one apply()
//   kChainSteps                  dependent instructions in one apply()
//   kShared, kGlobal             whether init() needs a shared or a global word per chain
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "analysis/pipes.hpp"
#include "block_timing.cuh"
#include "gpu/cuda.cuh"
#include "base/stats.hpp"

namespace gpuprobe::pipes {

// Runtime operands, passed by value as a kernel parameter.
struct OpArgs {
  float f32_a = 0.999f, f32_b = 1e-3f;
  double f64_a = 0.999, f64_b = 1e-3;
  uint32_t u32_a = 0x9E3779B9u, u32_b = 0x7F4A7C15u;
  uint32_t h2_a = 0x3BFF3BFFu, h2_b = 0x14001400u;  // half2 (0.9995, 0.00098) each; also bf16x2 bits
  uint32_t lane_mask = 1;                            // shuffle partner: lane ^ 1
};

// A word of shared and of global memory that belongs to one chain of one thread.
struct ChainSlot {
  uint32_t* shared;
  uint64_t* global;
};

#ifdef __CUDA_ARCH__
constexpr int kDeviceArch = __CUDA_ARCH__;
#else
constexpr int kDeviceArch = 0;
#endif

__device__ __forceinline__ uint32_t sm_id() {
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

template <class T>
__device__ __forceinline__ T seed_value(uint32_t seed) {
  if constexpr (sizeof(T) == 4 && !std::is_integral_v<T>) return static_cast<T>(seed) * 1e-3f;
  else return static_cast<T>(seed);
}

// One PTX instruction on one register: the state is the destination and the first source.
#define GPUPROBE_PIPE_OP(Type, probe, T, C, A, B, min_cc, results_per_lane, ptx)           \
  struct Type {                                                                            \
    using State = T;                                                                       \
    static constexpr const char* kName = probe;                                            \
    static constexpr const char* kType = #Type;                                            \
    static constexpr int kMinCC = min_cc;                                                  \
    static constexpr double kResultsPerWarp = 32.0 * (results_per_lane);                   \
    static constexpr int kChainSteps = 1;                                                  \
    static constexpr bool kShared = false, kGlobal = false;                                \
    __device__ static State init(uint32_t seed, ChainSlot, const OpArgs&) {                \
      return seed_value<T>(seed);                                                          \
    }                                                                                      \
    __device__ static void apply(State& s, const OpArgs& a) {                              \
      if constexpr (kDeviceArch >= (min_cc) * 10)                                          \
        asm volatile(ptx : "+" C(s) : C(a.A), C(a.B));                                     \
      else                                                                                 \
        __trap();                                                                          \
    }                                                                                      \
  }

GPUPROBE_PIPE_OP(Fp32Fma, kFp32FmaProbe, float, "f", f32_a, f32_b, 0, 1,
                 "fma.rn.f32 %0, %0, %1, %2;");
GPUPROBE_PIPE_OP(Fp32Add, kFp32AddProbe, float, "f", f32_a, f32_b, 0, 1, "add.rn.f32 %0, %0, %1;");
GPUPROBE_PIPE_OP(Fp32Mul, kFp32MulProbe, float, "f", f32_a, f32_b, 0, 1, "mul.rn.f32 %0, %0, %1;");
GPUPROBE_PIPE_OP(Fp64Fma, kFp64FmaProbe, double, "d", f64_a, f64_b, 0, 1,
                 "fma.rn.f64 %0, %0, %1, %2;");
GPUPROBE_PIPE_OP(Fp16x2Fma, kFp16x2FmaProbe, uint32_t, "r", h2_a, h2_b, 53, 2,
                 "fma.rn.f16x2 %0, %0, %1, %2;");
GPUPROBE_PIPE_OP(Bf16x2Fma, kBf16x2FmaProbe, uint32_t, "r", h2_a, h2_b, 80, 2,
                 "fma.rn.bf16x2 %0, %0, %1, %2;");
GPUPROBE_PIPE_OP(Int32Mad, kInt32MadProbe, uint32_t, "r", u32_a, u32_b, 0, 1,
                 "mad.lo.u32 %0, %0, %1, %2;");
GPUPROBE_PIPE_OP(SfuSin, kSfuSinProbe, float, "f", f32_a, f32_b, 0, 1,
                 "sin.approx.ftz.f32 %0, %0;");
GPUPROBE_PIPE_OP(SfuEx2, kSfuEx2Probe, float, "f", f32_a, f32_b, 0, 1,
                 "ex2.approx.ftz.f32 %0, %0;");
GPUPROBE_PIPE_OP(SfuRsqrt, kSfuRsqrtProbe, float, "f", f32_a, f32_b, 0, 1,
                 "rsqrt.approx.ftz.f32 %0, %0;");
// Negated on the way in (a free operand modifier in SASS): ptxas folds rcp(rcp(x)) to x.
GPUPROBE_PIPE_OP(SfuRcp, kSfuRcpProbe, float, "f", f32_a, f32_b, 0, 1,
                 "{ .reg .f32 t; neg.f32 t, %0; rcp.approx.ftz.f32 %0, t; }");
// float -> int, the result's bits read back as the next float: one F2I per step.
GPUPROBE_PIPE_OP(Conversion, kConversionProbe, uint32_t, "r", u32_a, u32_b, 0, 1,
                 "cvt.rzi.s32.f32 %0, %0;");
GPUPROBE_PIPE_OP(Shuffle, kShuffleProbe, uint32_t, "r", lane_mask, lane_mask, 30, 1,
                 "shfl.sync.bfly.b32 %0, %0, %1, 0x1f, 0xffffffff;");

#undef GPUPROBE_PIPE_OP

// Two registers that feed each other (a += b; b += a), so that every result is read twice and
// ptxas cannot merge two adds into one three-input IADD3.
struct Int32Add {
  struct State {
    uint32_t a, b;
  };
  static constexpr const char* kName = kInt32AddProbe;
  static constexpr const char* kType = "Int32Add";
  static constexpr int kMinCC = 0;
  static constexpr double kResultsPerWarp = 64;
  static constexpr int kChainSteps = 2;
  static constexpr bool kShared = false, kGlobal = false;
  __device__ static State init(uint32_t seed, ChainSlot, const OpArgs&) { return {seed, 3 * seed}; }
  __device__ static void apply(State& s, const OpArgs&) {
    asm volatile("add.u32 %0, %0, %1;" : "+r"(s.a) : "r"(s.b));
    asm volatile("add.u32 %0, %0, %1;" : "+r"(s.b) : "r"(s.a));
  }
};

// Same idea for logic: a majority (LUT 0xE8) of five distinct inputs over two steps, which no
// single LOP3 can compute, so ptxas keeps both.
struct Int32Logic {
  struct State {
    uint32_t a, b;
  };
  static constexpr const char* kName = kInt32LogicProbe;
  static constexpr const char* kType = "Int32Logic";
  static constexpr int kMinCC = 50;  // lop3 is Maxwell's
  static constexpr double kResultsPerWarp = 64;
  static constexpr int kChainSteps = 2;
  static constexpr bool kShared = false, kGlobal = false;
  __device__ static State init(uint32_t seed, ChainSlot, const OpArgs&) { return {seed, ~seed}; }
  __device__ static void apply(State& s, const OpArgs& x) {
    if constexpr (kDeviceArch >= kMinCC * 10) {
      asm volatile("lop3.b32 %0, %0, %1, %2, 0xE8;" : "+r"(s.a) : "r"(s.b), "r"(x.u32_a));
      asm volatile("lop3.b32 %0, %0, %1, %2, 0xE8;" : "+r"(s.b) : "r"(s.a), "r"(x.u32_b));
    } else {
      __trap();
    }
  }
};

// Shared-memory load whose address is the previous load's result: each chain's word holds its
// own address. Consecutive threads read consecutive words, so no bank conflicts.
struct LdShared {
  using State = uint32_t;
  static constexpr const char* kName = kLdstProbe;
  static constexpr const char* kType = "LdShared";
  static constexpr int kMinCC = 0;
  static constexpr double kResultsPerWarp = 32;
  static constexpr int kChainSteps = 1;
  static constexpr bool kShared = true, kGlobal = false;
  __device__ static State init(uint32_t, ChainSlot slot, const OpArgs&) {
    auto addr = static_cast<uint32_t>(__cvta_generic_to_shared(slot.shared));
    *slot.shared = addr;
    return addr;
  }
  __device__ static void apply(State& s, const OpArgs&) {
    asm volatile("ld.shared.u32 %0, [%0];" : "+r"(s));
  }
};

// Global load through L1 whose address is the previous load's result (an L1 hit after the
// first): the load/store pipe for global memory.
struct LdGlobal {
  using State = uint64_t;
  static constexpr const char* kName = kLdGlobalProbe;
  static constexpr const char* kType = "LdGlobal";
  static constexpr int kMinCC = 0;
  static constexpr double kResultsPerWarp = 32;
  static constexpr int kChainSteps = 1;
  static constexpr bool kShared = false, kGlobal = true;
  __device__ static State init(uint32_t, ChainSlot slot, const OpArgs&) {
    auto addr = reinterpret_cast<uint64_t>(slot.global);
    *slot.global = addr;
    return addr;
  }
  __device__ static void apply(State& s, const OpArgs&) {
    asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(s));
  }
};

// Tensor cores through mma.sync: the accumulator is the chain; A and B come from parameters.
// One result is one multiply-add, M*N*K per warp-wide mma.
struct Acc4f {
  float v[4];
};
struct Acc4i {
  int v[4];
};
struct Acc2d {
  double v[2];
};

#define GPUPROBE_MMA_OP(Type, probe, Acc, C, M, N, K, ptx)                                  \
  struct Type {                                                                            \
    using State = Acc;                                                                     \
    static constexpr const char* kName = probe;                                            \
    static constexpr const char* kType = #Type;                                            \
    static constexpr int kMinCC = 80;                                                      \
    static constexpr double kResultsPerWarp = double(M) * (N) * (K);                       \
    static constexpr int kChainSteps = 1;                                                  \
    static constexpr bool kShared = false, kGlobal = false;                                \
    __device__ static State init(uint32_t seed, ChainSlot, const OpArgs&) {                \
      State s{};                                                                           \
      s.v[0] = static_cast<decltype(s.v[0] + 0)>(seed);                                    \
      return s;                                                                            \
    }                                                                                      \
    __device__ static void apply(State& s, const OpArgs& a) {                              \
      if constexpr (kDeviceArch >= 800)                                                    \
        asm volatile(ptx                                                                   \
                     : "+" C(s.v[0]), "+" C(s.v[1]), "+" C(s.v[2]), "+" C(s.v[3])          \
                     : "r"(a.h2_a), "r"(a.h2_b));                                          \
      else                                                                                 \
        __trap();                                                                          \
    }                                                                                      \
  }

GPUPROBE_MMA_OP(MmaF16, kTensorMmaF16Probe, Acc4f, "f", 16, 8, 16,
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                "{%4,%5,%4,%5}, {%4,%5}, {%0,%1,%2,%3};");
GPUPROBE_MMA_OP(MmaBf16, kTensorMmaBf16Probe, Acc4f, "f", 16, 8, 16,
                "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                "{%4,%5,%4,%5}, {%4,%5}, {%0,%1,%2,%3};");
GPUPROBE_MMA_OP(MmaTf32, kTensorMmaTf32Probe, Acc4f, "f", 16, 8, 8,
                "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                "{%4,%5,%4,%5}, {%4,%5}, {%0,%1,%2,%3};");
GPUPROBE_MMA_OP(MmaInt8, kTensorMmaInt8Probe, Acc4i, "r", 16, 8, 32,
                "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, "
                "{%4,%5,%4,%5}, {%4,%5}, {%0,%1,%2,%3};");

#undef GPUPROBE_MMA_OP

struct MmaFp64 {
  using State = Acc2d;
  static constexpr const char* kName = kTensorMmaFp64Probe;
  static constexpr const char* kType = "MmaFp64";
  static constexpr int kMinCC = 80;
  static constexpr double kResultsPerWarp = 8.0 * 8 * 4;
  static constexpr int kChainSteps = 1;
  static constexpr bool kShared = false, kGlobal = false;
  __device__ static State init(uint32_t seed, ChainSlot, const OpArgs&) { return {{double(seed), 0}}; }
  __device__ static void apply(State& s, const OpArgs& a) {
    if constexpr (kDeviceArch >= 800)
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                   : "+d"(s.v[0]), "+d"(s.v[1])
                   : "d"(a.f64_a), "d"(a.f64_b));
    else
      __trap();
  }
};

// The last n of `v`: the repetitions that followed measure()'s warm-up.
inline std::vector<double> last(const std::vector<double>& v, int n) {
  size_t k = std::min(v.size(), static_cast<size_t>(std::max(n, 0)));
  return std::vector<double>(v.end() - static_cast<long>(k), v.end());
}

// Records the summary of values taken beside a measured point (the same launches seen
// through another clock, say).
inline void record_values(RunContext& ctx, const std::string& probe, const Params& params,
                          const std::string& unit, const std::vector<double>& values) {
  if (values.empty()) return;
  Summary s = summarize(values);
  Observation o;
  o.probe = probe;
  o.params = params;
  o.value = s.p50;
  o.unit = unit;
  o.p05 = s.p05;
  o.p50 = s.p50;
  o.p95 = s.p95;
  o.reps = s.n;
  ctx.record(o);
}

// Throughput of a whole-chip launch whose blocks each do `work_per_trip` results per loop trip:
// the point is each SM's own rate from clock64; beside it, the same launches timed with events
// at the SM clock measured before the family.
template <class Launch>
void measure_chip_throughput(RunContext& ctx, const std::string& probe, Launch& launch, int blocks,
                             double work_per_trip) {
  const DeviceInfo& dev = ctx.device();
  int iters = calibrate_iterations([&](int n) { return launch.seconds(n); },
                                   ctx.quick() ? 0.3e-3 : 2e-3);
  double per_block = work_per_trip * iters;
  double clock_hz = ctx.sm_clock_mhz() * 1e6;
  std::vector<double> by_events;
  Point p{probe,
          {{kModeColumn, "throughput"}, {kTimingColumn, "cycles"}},
          "results/clk/SM",
          ctx.quick() ? 3 : 11};
  ctx.measure(p, [&] {
    double s = launch.seconds(iters);
    by_events.push_back(per_block * blocks / (s * clock_hz * dev.sm_count));
    return Sample{sm_rate(launch.spans(), per_block), s};
  });
  record_values(ctx, probe, {{kModeColumn, "throughput"}, {kTimingColumn, "events"}},
                "results/clk/SM", last(by_events, p.reps));
}

// Cycles per dependent step of a one-block launch that runs `steps_per_trip` steps per loop trip.
template <class Launch>
void measure_step_latency(RunContext& ctx, const std::string& probe, Launch& launch,
                          double steps_per_trip) {
  int iters = calibrate_iterations([&](int n) { return launch.seconds(n); },
                                   ctx.quick() ? 0.1e-3 : 0.3e-3);
  double steps = double(iters) * steps_per_trip;
  Point p{probe, {{kModeColumn, kLatencyMode}}, "cycles", ctx.quick() ? 3 : 11};
  ctx.measure(p, [&] {
    double s = launch.seconds(iters);
    return Sample{median_sm_cycles(launch.spans()) / steps, s};
  });
}

// Hopper's warpgroup MMA (microbench/tensor_wgmma.cu, a translation unit of its own because it
// is compiled for the architecture-specific target sm_90a): its probes, and their run.
std::vector<ProbeInfo> wgmma_probes();
void run_wgmma(RunContext& ctx);

// A kernel the energy family runs back to back: `enqueue(trips)` puts one launch of that many
// loop trips on the default stream; `results_per_trip` is what one trip gives over all blocks
// (multiply-adds). The kernel's buffers live as long as the closure.
struct RepeatedKernel {
  std::function<void(int trips)> enqueue;
  double results_per_trip = 0;
};
// The wgmma throughput kernel of `probe` (a wgmma_probes() name) on `blocks` SMs, its A and B
// tiles hashed bytes or all zero; nullopt where the probe was skipped, or marked invalid (its
// SASS, or a kernel that is not the sm_90a code).
std::optional<RepeatedKernel> wgmma_repeated(RunContext& ctx, const std::string& probe, int blocks,
                                             bool zero_tiles);
// The energy family's held-out tiled matrix multiply (microbench/tensor_wgmma.cu): bf16 wgmma,
// A and B packed as operand tiles in global memory and staged through shared memory with
// ld.global.cg. Per trip: multiply-adds (results_per_trip), bytes read from global memory and
// written to shared memory; per launch, the bytes of C written.
struct GemmCounts {
  double global_bytes_per_trip = 0, shared_bytes_per_trip = 0, c_bytes_per_launch = 0;
  double footprint_bytes = 0;
};
std::optional<RepeatedKernel> wgmma_gemm(RunContext& ctx, const std::string& probe,
                                         GemmCounts* counts);

}  // namespace gpuprobe::pipes
