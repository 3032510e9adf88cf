// Atomics on shared and global memory: what atomicAdd and atomicCAS cost when 1..32 lanes of
// a warp hit one address, and when every lane has its own (native shared atomics since
// Maxwell; Kepler emulated them with a lock loop).
//
// Latency: one warp, a dependent chain per lane: each atomic's operand (add) or compare value
// (CAS, which swaps in that value + 1: one integer add on the chain) is the previous atomic's
// result; the cycles of the chain over its length, with `lanes` active lanes on `addresses`
// words (global: each step on the next of kChainLines lines, over the L2's slices). Throughput: every warp of several blocks per SM, each lane running kAtomicsPerTrip
// independent chains on its warp's own 32-word region (so warps do not contend with each other);
// shared is timed per SM with clock64, global (an L2 matter, chip-wide) with events and converted
// to cycles with the SM clock measured for this run.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "analysis/atomics.hpp"
#include "block_timing.cuh"
#include "gpu/sass_check.hpp"

namespace gpuprobe {
// Kernels in a named namespace, so that the code checks (analysis/atomics.cpp) can name
// them: "atomics::chain_kernel<true, false>" is the shared atomicAdd chain.
namespace atomics {

constexpr int kBlockThreads = 256;
constexpr int kWarpsPerBlock = kBlockThreads / kWarpLanes;

template <bool Cas>
__device__ __forceinline__ unsigned atomic_step(unsigned* p, unsigned v) {
  if constexpr (Cas)
    return atomicCAS(p, v, v + 1);
  else
    return atomicAdd(p, v);
}

// The word lane `lane` works on: `addresses` consecutive words of `region`, lanes spread over
// them in turn (addresses == 1: all on one word).
__device__ __forceinline__ unsigned* word_of(unsigned* region, int lane, int addresses) {
  return region + lane % addresses;
}

template <bool Shared, bool Cas>
__global__ void chain_kernel(unsigned* global_words, int lanes, int addresses, int iters,
                             long long* cycles, unsigned* sink, int flag) {
  __shared__ unsigned words[kWarpLanes];
  __shared__ unsigned scratch;
  const int lane = threadIdx.x;
  words[lane] = 0;
  __syncwarp();
  if (lane >= lanes) return;
  unsigned* p;
  if constexpr (Shared)
    p = word_of(words, lane, addresses);
  else
    p = word_of(global_words, lane, addresses);
  unsigned v = Cas ? 0u : 1u;
  constexpr int kStrideWords = kChainStrideBytes / sizeof(unsigned);
  constexpr int kTripsPerRound = kChainLines / kAtomicsPerTrip;
  long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    // Global: the trip's lines of the round (shared memory has no slices to average over).
    unsigned* q = Shared ? p : p + (i % kTripsPerRound) * kAtomicsPerTrip * kStrideWords;
#pragma unroll
    for (int j = 0; j < kAtomicsPerTrip; ++j) v = atomic_step<Cas>(Shared ? q : q + j * kStrideWords, v);
  }
  // This store needs the chain's last result, so the clock below waits for the chain.
  asm volatile(
      "st.shared.u32 [%0], %1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(&scratch))),
      "r"(v)
      : "memory");
  long long end = clock64();
  if (lane == 0) *cycles = end - start;
  keep(v, sink, flag);
}

// kAtomicsPerTrip independent chains per lane, on the warp's own 32-word region.
template <bool Shared, bool Cas>
__global__ void stream_kernel(unsigned* global_words, int lanes, int addresses, int iters,
                              BlockSpan* spans, unsigned* sink, int flag) {
  __shared__ unsigned words[kBlockThreads];
  const int warp = threadIdx.x / kWarpLanes, lane = threadIdx.x % kWarpLanes;
  words[threadIdx.x] = 0;
  unsigned* p;
  if constexpr (Shared)
    p = word_of(words + warp * kWarpLanes, lane, addresses);
  else
    p = word_of(
        global_words + (static_cast<size_t>(blockIdx.x) * kWarpsPerBlock + warp) * kWarpLanes, lane,
        addresses);
  unsigned v[kAtomicsPerTrip];
#pragma unroll
  for (int j = 0; j < kAtomicsPerTrip; ++j) v[j] = Cas ? 0u : j + 1u;
  __syncthreads();
  long long start = clock64();
  if (lane < lanes) {
#pragma unroll 1
    for (int i = 0; i < iters; ++i) {
#pragma unroll
      for (int j = 0; j < kAtomicsPerTrip; ++j) v[j] = atomic_step<Cas>(p, v[j]);
    }
  }
  unsigned acc = 0;
#pragma unroll
  for (int j = 0; j < kAtomicsPerTrip; ++j) acc ^= v[j];
  __syncthreads();
  record_span(spans, start, clock64());
  keep(acc, sink, flag);
}

}  // namespace atomics

namespace {

using namespace atomics;

// The runtime (shared, cas) pair as a type, for a generic lambda to instantiate kernels with.
template <bool S, bool C>
struct Kind {
  static constexpr bool shared = S;
  static constexpr bool cas = C;
};

// Calls f(Kind<shared, cas>{}) for the runtime pair.
template <class F>
auto with_kind(bool shared, bool cas, F&& f) {
  if (shared) return cas ? f(Kind<true, true>{}) : f(Kind<true, false>{});
  return cas ? f(Kind<false, true>{}) : f(Kind<false, false>{});
}

const char* space_text(bool shared) { return shared ? "shared" : "global"; }
const char* op_text(bool cas) { return cas ? "cas" : "add"; }

class AtomicRunner {
 public:
  AtomicRunner(const DeviceInfo& dev, double sm_clock_mhz, bool quick)
      : dev_(dev), clock_hz_(sm_clock_mhz * 1e6), quick_(quick), cycles_(1), sink_(1) {}

  // Cycles per atomic of one warp's dependent chains.
  Sample latency(bool shared, bool cas, int lanes, int addresses) {
    const int iters = quick_ ? 16 : 64;
    if (chain_words_.size() == 0) {
      chain_words_ = DeviceBuffer<unsigned>(size_t(kChainLines) * kChainStrideBytes / sizeof(unsigned));
      CUDA_CHECK(cudaMemset(chain_words_.get(), 0, chain_words_.bytes()));
    }
    return with_kind(shared, cas, [&](auto kind) {
      Sample r;
      r.seconds = time_seconds([&] {
        chain_kernel<decltype(kind)::shared, decltype(kind)::cas><<<1, kWarpLanes>>>(
            chain_words_.get(), lanes, addresses, iters, cycles_.get(), sink_.get(), 0);
      });
      long long c = 0;
      CUDA_CHECK(cudaMemcpy(&c, cycles_.get(), sizeof c, cudaMemcpyDeviceToHost));
      r.value = static_cast<double>(c) / (static_cast<double>(iters) * kAtomicsPerTrip);
      return r;
    });
  }

  int warps_per_sm(bool shared, bool cas) { return resident_blocks(shared, cas) * kWarpsPerBlock; }

  // Lane atomics per clock per SM, every SM full of warps.
  Sample throughput(bool shared, bool cas, int lanes, int addresses) {
    const int per_sm = resident_blocks(shared, cas);
    const int blocks = dev_.sm_count * per_sm;
    // About 2^16 (shared) or 2^17 (global) warp atomics per SM, a quarter in quick mode: global
    // atomics are an L2 matter, timed with events around the whole launch, and 2^15 (about
    // 0.35 ms on an H100) repeated to 1.41-1.65 per clk per SM between runs.
    const int warp_ops = (shared ? 1 << 16 : 1 << 17) / (quick_ ? 4 : 1);
    const int iters = std::max(1, warp_ops / (per_sm * kWarpsPerBlock * kAtomicsPerTrip));
    SpanRecorder& spans = recorder_for(spans_, blocks);
    const size_t words = static_cast<size_t>(blocks) * kBlockThreads;
    if (stream_words_.size() < words) {
      stream_words_ = DeviceBuffer<unsigned>(words);
      CUDA_CHECK(cudaMemset(stream_words_.get(), 0, stream_words_.bytes()));
    }
    const double ops_per_block =
        static_cast<double>(kWarpsPerBlock) * lanes * iters * kAtomicsPerTrip;
    return with_kind(shared, cas, [&](auto kind) {
      Sample r;
      r.seconds = time_seconds([&] {
        stream_kernel<decltype(kind)::shared, decltype(kind)::cas><<<blocks, kBlockThreads>>>(
            stream_words_.get(), lanes, addresses, iters, spans.get(), sink_.get(), 0);
      });
      if (shared) {
        r.value = sm_rate(spans.fetch(), ops_per_block);
      } else {
        r.value = ops_per_block * blocks / (r.seconds * clock_hz_ * dev_.sm_count);
      }
      return r;
    });
  }

 private:
  int resident_blocks(bool shared, bool cas) {
    return with_kind(shared, cas, [&](auto kind) {
      int n = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &n, stream_kernel<decltype(kind)::shared, decltype(kind)::cas>, kBlockThreads, 0));
      if (n < 1) throw std::runtime_error("atomics: no block of the stream kernel fits on an SM");
      return n;
    });
  }

  const DeviceInfo& dev_;
  double clock_hz_;
  bool quick_;
  DeviceBuffer<long long> cycles_;
  DeviceBuffer<unsigned> sink_;
  DeviceBuffer<unsigned> chain_words_, stream_words_;
  std::optional<SpanRecorder> spans_;
};

class AtomicsFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(atomics::kFamily.name); }
  std::string description() const override {
    return "shared and global atomicAdd/atomicCAS latency and throughput, 1..32 lanes on one "
           "address and every lane on its own";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{kAtomicLatency, "one warp, dependent chains: cycles per atomic"},
            {kAtomicThroughput, "all warps, independent chains: lane atomics per clock per SM"}};
  }

  void run(RunContext& ctx) override {
    AtomicRunner runner(ctx.device(), ctx.sm_clock_mhz(), ctx.quick());
    const int reps = ctx.quick() ? 3 : 11;
    // (lanes, addresses): 1..32 lanes on one word, then 32 lanes on 32 words (no contention).
    std::vector<std::pair<int, int>> patterns;
    for (int lanes : ctx.quick() ? std::vector<int>{1, 2, 8, 32}
                                 : std::vector<int>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32})
      patterns.push_back({lanes, 1});
    patterns.push_back({kWarpLanes, kWarpLanes});

    // A probe runs only when its kernels' code holds what it means to time.
    std::vector<std::string> chains, streams;
    for (bool shared : {true, false})
      for (bool cas : {false, true}) {
        chains.push_back(chain_kernel_name(shared, cas));
        streams.push_back(stream_kernel_name(shared, cas));
      }
    const bool lat = ctx.enabled(kAtomicLatency) && sass_allows(ctx, kAtomicLatency, chains);
    const bool tput =
        ctx.enabled(kAtomicThroughput) && sass_allows(ctx, kAtomicThroughput, streams);

    for (bool shared : {true, false})
      for (bool cas : {false, true})
        for (const auto& pattern : patterns) {
          const int lanes = pattern.first, addresses = pattern.second;
          ctx.progress(std::string(space_text(shared)) + " atomic " + op_text(cas) + ", " +
                       std::to_string(lanes) + " lanes on " + std::to_string(addresses) + " words");
          Params p = {{kSpaceColumn, space_text(shared)},
                      {kOpColumn, op_text(cas)},
                      {kLanesColumn, std::to_string(lanes)},
                      {kAddressesColumn, std::to_string(addresses)}};
          if (lat) {
            Params pl = p;
            if (!shared) {  // the lines the global chain steps over
              pl.emplace_back(kLinesColumn, std::to_string(kChainLines));
              pl.emplace_back(kLineStrideColumn, std::to_string(kChainStrideBytes));
            }
            ctx.measure({kAtomicLatency, pl, "cycles", reps, 0},
                        [&] { return runner.latency(shared, cas, lanes, addresses); });
          }
          if (tput) {
            Params pt = p;
            pt.emplace_back(kWarpsPerSmColumn, std::to_string(runner.warps_per_sm(shared, cas)));
            ctx.measure({kAtomicThroughput, pt, kPerClockPerSm, reps, 0},
                        [&] { return runner.throughput(shared, cas, lanes, addresses); });
          }
        }
  }
};

}  // namespace

GPUPROBE_REGISTER_FAMILY(AtomicsFamily);

}  // namespace gpuprobe
