// Dual issue: can one warp keep two pipes busy at once? Two independent streams of
// instructions (for example fp32 FMAs and integer logic), each of several independent chains,
// are interleaved in one warp. Each stream is timed alone, then both together in the mix that
// makes them equally long alone; analysis/dual_issue.cpp judges how much the two overlapped.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "analysis/dual_issue.hpp"
#include "gpu/sass_check.hpp"
#include "pipe_ops.cuh"

namespace gpuprobe::dual_issue {

using pipes::ChainSlot;
using pipes::OpArgs;

template <class A, class B, int NA, int NB>
__global__ void paired(OpArgs args, int iters, BlockSpan* spans, typename A::State* sink_a,
                       typename B::State* sink_b, int flag, uint64_t* global_slots) {
  constexpr int kA = NA > 0 ? NA : 1, kB = NB > 0 ? NB : 1;
  extern __shared__ uint32_t shared_slots[];
  const size_t base = size_t(blockIdx.x) * blockDim.x * (kA + kB);
  auto slot = [&](int chain) {
    unsigned i = chain * blockDim.x + threadIdx.x;
    return ChainSlot{shared_slots + i, global_slots + base + i};
  };
  typename A::State a[kA];
  typename B::State b[kB];
#pragma unroll
  for (int k = 0; k < kA; ++k) a[k] = A::init(threadIdx.x * kA + k + 1, slot(k), args);
#pragma unroll
  for (int k = 0; k < kB; ++k) b[k] = B::init(threadIdx.x * kB + k + 1, slot(kA + k), args);
  __syncthreads();
  long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int r = 0; r < kRounds; ++r) {
#pragma unroll
      for (int k = 0; k < (NA > NB ? NA : NB); ++k) {
        if (k < NA) A::apply(a[k], args);
        if (k < NB) B::apply(b[k], args);
      }
    }
  }
  __syncthreads();
  long long end = clock64();
  record_span(spans, start, end);
#pragma unroll
  for (int k = 0; k < kA; ++k) keep(a[k], sink_a + k, flag);
#pragma unroll
  for (int k = 0; k < kB; ++k) keep(b[k], sink_b + k, flag);
}

namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocksPerSm = 4;
constexpr int kMaxChains = 16;  // kA + kB of any mix

template <class A, class B>
class PairProbe {
 public:
  using Kernel = void (*)(OpArgs, int, BlockSpan*, typename A::State*, typename B::State*, int,
                          uint64_t*);
  static constexpr bool kShared = A::kShared || B::kShared;

  PairProbe(RunContext& ctx, const char* name) : ctx_(ctx), name_(name) {}

  void run() {
    const DeviceInfo& dev = ctx_.device();
    if (!ctx_.enabled(name_)) return;
    const int min_cc = std::max(A::kMinCC, B::kMinCC);
    if (dev.cc() < min_cc) {
      ctx_.skip(name_, "needs compute capability " + std::to_string(min_cc / 10) + "." +
                           std::to_string(min_cc % 10));
      return;
    }
    std::vector<std::string> names;
    for (const Mix& m : kMixes) names.push_back(kernel_name(A::kType, B::kType, m.a, m.b));
    if (!sass_allows(ctx_, name_, names)) return;
    ctx_.progress(name_);

    int per_sm = kMaxBlocksPerSm;
    for (Kernel k : kernels()) {
      int n = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, kThreads, shared_bytes()));
      per_sm = std::min(per_sm, n);
    }
    if (per_sm < 1) throw std::runtime_error(name_ + ": kernels cannot be resident");
    blocks_ = dev.sm_count * per_sm;
    sink_a_ = DeviceBuffer<typename A::State>(kMaxChains);
    sink_b_ = DeviceBuffer<typename B::State>(kMaxChains);
    global_ = DeviceBuffer<uint64_t>(A::kGlobal || B::kGlobal ? size_t(blocks_) * kThreads * kMaxChains : 1);

    double rate_a = measure(0, "a");
    double rate_b = measure(1, "b");
    int mix = balanced_mix(rate_a, rate_b, A::kChainSteps, B::kChainSteps);
    if (mix < 0) {
      ctx_.invalid(name_, "solo rates " + std::to_string(rate_a) + " and " + std::to_string(rate_b) +
                              " leave no mix to pair them in");
      return;
    }
    measure(mix, "pair");
  }

 private:
  template <size_t... I>
  static std::array<Kernel, kMixCount> table(std::index_sequence<I...>) {
    return {&paired<A, B, kMixes[I].a, kMixes[I].b>...};
  }
  static const std::array<Kernel, kMixCount>& kernels() {
    static const auto all = table(std::make_index_sequence<kMixCount>{});
    return all;
  }
  static size_t shared_bytes() { return kShared ? size_t(kMaxChains) * kThreads * sizeof(uint32_t) : 0; }

  double seconds(int mix, int iters, SpanRecorder& spans) {
    return time_seconds([&] {
      kernels()[mix]<<<blocks_, kThreads, shared_bytes()>>>(OpArgs{}, iters, spans.get(), sink_a_.get(),
                                                            sink_b_.get(), 0, global_.get());
    });
  }

  // Instructions of both streams per clock per SM.
  double measure(int mix, const std::string& stream) {
    const Mix& m = kMixes[mix];
    int a_per_round = m.a * A::kChainSteps, b_per_round = m.b * B::kChainSteps;
    SpanRecorder spans(blocks_);
    int iters = calibrate_iterations([&](int n) { return seconds(mix, n, spans); },
                                     ctx_.quick() ? 0.3e-3 : 1.5e-3);
    double per_block = double(kThreads / ctx_.device().warp_size) * iters * kRounds *
                       (a_per_round + b_per_round);
    Point p{name_,
            {{kStreamColumn, stream},
             {kAPerRoundColumn, std::to_string(a_per_round)},
             {kBPerRoundColumn, std::to_string(b_per_round)}},
            "inst/clk/SM",
            ctx_.quick() ? 3 : 7};
    return ctx_
        .measure(p, [&] {
          double s = seconds(mix, iters, spans);
          return Sample{sm_rate(spans.fetch(), per_block), s};
        })
        .value;
  }

  RunContext& ctx_;
  std::string name_;
  int blocks_ = 0;
  DeviceBuffer<typename A::State> sink_a_;
  DeviceBuffer<typename B::State> sink_b_;
  DeviceBuffer<uint64_t> global_;
};

class DualIssueFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(dual_issue::kFamily.name); }
  std::string description() const override {
    return "whether two instruction streams for different pipes overlap in one warp";
  }
  std::vector<ProbeInfo> probes() const override {
    std::vector<ProbeInfo> out;
    for (const auto& p : pairs())
      out.push_back({p.name, std::string(p.a) + " and " + p.b + " interleaved in one warp"});
    return out;
  }
  void run(RunContext& ctx) override {
    using namespace pipes;
    // The same pairs, in the same order, as dual_issue::pairs().
    PairProbe<Fp32Fma, Int32Logic>(ctx, kFp32Int32Pair).run();
    PairProbe<Fp32Fma, Fp64Fma>(ctx, kFp32Fp64Pair).run();
    PairProbe<Fp32Fma, SfuEx2>(ctx, kFp32SfuPair).run();
    PairProbe<Fp32Fma, LdGlobal>(ctx, kFp32LdstPair).run();
    PairProbe<Fp32Fma, LdShared>(ctx, kFp32SharedPair).run();
    PairProbe<Fp16x2Fma, Fp32Fma>(ctx, kFp16Fp32Pair).run();
    PairProbe<Fp32Fma, MmaF16>(ctx, kFp32TensorPair).run();
  }
};

GPUPROBE_REGISTER_FAMILY(DualIssueFamily);

}  // namespace

}  // namespace gpuprobe::dual_issue
