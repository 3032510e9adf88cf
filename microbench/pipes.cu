// Execution pipes: how many results per clock each pipe delivers per SM, and how many cycles
// a dependent instruction waits for the one before it. One kernel template serves every
// operation of pipe_ops.cuh: launched over the whole chip with 8 independent chains per
// thread it measures throughput; launched as one warp with one chain, latency.
#include <string>
#include <vector>

#include "analysis/pipes.hpp"
#include "base/stats.hpp"
#include "gpu/sass_check.hpp"
#include "pipe_ops.cuh"

namespace gpuprobe::pipes {

// Each thread runs ILP independent chains of Op, UNROLL steps of each per loop trip; the
// loop is not unrolled further, so the code holds ILP * UNROLL steps exactly (code-checked).
template <class Op, int ILP, int UNROLL>
__global__ void throughput(OpArgs args, int iters, BlockSpan* spans, typename Op::State* sink,
                           int flag, uint64_t* global_slots) {
  extern __shared__ uint32_t shared_slots[];
  typename Op::State s[ILP];
#pragma unroll
  for (int k = 0; k < ILP; ++k) {
    unsigned slot = k * blockDim.x + threadIdx.x;
    ChainSlot cs{shared_slots + slot,
                 global_slots + size_t(blockIdx.x) * blockDim.x * ILP + slot};
    s[k] = Op::init(threadIdx.x * ILP + k + 1, cs, args);
  }
  __syncthreads();
  long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int k = 0; k < ILP; ++k) Op::apply(s[k], args);
    }
  }
  __syncthreads();
  long long end = clock64();
  record_span(spans, start, end);
#pragma unroll
  for (int k = 0; k < ILP; ++k) keep(s[k], sink + k, flag);
}

namespace {

// One configuration of the kernel with the buffers it needs.
template <class Op, int ILP, int UNROLL>
class PipeLaunch {
 public:
  PipeLaunch(int blocks, int threads)
      : blocks_(blocks),
        threads_(threads),
        shared_bytes_(shared_bytes(threads)),
        sink_(ILP),
        global_(Op::kGlobal ? size_t(blocks) * threads * ILP : 1),
        spans_(blocks) {}

  static auto kernel() { return &throughput<Op, ILP, UNROLL>; }
  static size_t shared_bytes(int threads) {
    return Op::kShared ? size_t(ILP) * threads * sizeof(uint32_t) : 0;
  }

  double seconds(int iters) {
    return time_seconds([&] {
      kernel()<<<blocks_, threads_, shared_bytes_>>>(OpArgs{}, iters, spans_.get(), sink_.get(), 0,
                                                     global_.get());
    });
  }
  const std::vector<BlockSpan>& spans() { return spans_.fetch(); }

 private:
  int blocks_, threads_;
  size_t shared_bytes_;
  DeviceBuffer<typename Op::State> sink_;
  DeviceBuffer<uint64_t> global_;
  SpanRecorder spans_;
};

constexpr int kThreads = 256;
constexpr int kMaxBlocksPerSm = 4;  // 32 warps per SM: 8 per scheduler, each with 8 chains

class PipesFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(pipes::kFamily.name); }
  std::string description() const override {
    return "results per clock per SM and dependent-issue latency of each execution pipe";
  }
  std::vector<ProbeInfo> probes() const override {
    std::vector<ProbeInfo> out;
    for (const auto& op : ops()) out.push_back({op.probe, op.what});
    for (auto& probe : wgmma_probes()) out.push_back(std::move(probe));
    return out;
  }
  void run(RunContext& ctx) override {
    run_ops<Fp32Fma, Fp32Add, Fp32Mul, Fp64Fma, Fp16x2Fma, Bf16x2Fma, Int32Add, Int32Mad,
            Int32Logic, SfuSin, SfuEx2, SfuRsqrt, SfuRcp, Conversion, Shuffle, LdShared, LdGlobal, MmaF16,
            MmaBf16, MmaTf32, MmaInt8, MmaFp64>(ctx);
    run_wgmma(ctx);
  }

 private:
  template <class... Ops>
  void run_ops(RunContext& ctx) {
    (run_op<Ops>(ctx), ...);
  }

  template <class Op>
  void run_op(RunContext& ctx) {
    if (!ctx.enabled(Op::kName)) return;
    const OpInfo* info = find_op(Op::kName);
    if (!info || info->min_cc != Op::kMinCC)  // the trait table and the analysis table agree
      throw std::logic_error(std::string(Op::kName) + ": kMinCC differs from pipes::ops()");
    if (ctx.device().cc() < Op::kMinCC) {
      ctx.skip(Op::kName, "needs compute capability " + std::to_string(Op::kMinCC / 10) + "." +
                              std::to_string(Op::kMinCC % 10));
      return;
    }
    if (!sass_allows(ctx, Op::kName,
                     {kernel_name(Op::kType, kThroughputIlp, kThroughputUnroll),
                      kernel_name(Op::kType, 1, kLatencyUnroll)}))
      return;
    ctx.progress(Op::kName);
    measure_throughput<Op>(ctx);
    measure_latency<Op>(ctx);
  }

  template <class Op>
  void measure_throughput(RunContext& ctx) {
    using Launch = PipeLaunch<Op, kThroughputIlp, kThroughputUnroll>;
    const DeviceInfo& dev = ctx.device();
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Launch::kernel(), kThreads,
                                                             Launch::shared_bytes(kThreads)));
    if (per_sm < 1) throw std::runtime_error(std::string(Op::kName) + ": kernel cannot be resident");
    int blocks = dev.sm_count * std::min(per_sm, kMaxBlocksPerSm);
    Launch launch(blocks, kThreads);
    measure_chip_throughput(ctx, Op::kName, launch, blocks,
                            double(kThreads / dev.warp_size) * kThroughputIlp * kThroughputUnroll *
                                Op::kResultsPerWarp);
  }

  template <class Op>
  void measure_latency(RunContext& ctx) {
    PipeLaunch<Op, 1, kLatencyUnroll> launch(1, ctx.device().warp_size);
    measure_step_latency(ctx, Op::kName, launch, double(kLatencyUnroll) * Op::kChainSteps);
  }
};

GPUPROBE_REGISTER_FAMILY(PipesFamily);

}  // namespace

}  // namespace gpuprobe::pipes
