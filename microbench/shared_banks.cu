// Shared memory banks: how many there are and how wide, what an N-way conflict costs,
// whether broadcast and multicast are free, and the peak bandwidth per SM.
//
// Every probe is one warp's access pattern: 32 lane byte offsets built by the functions the
// bank model in analysis/shared_banks reads, so what is measured and what is predicted are
// the same pattern. Two kernels run a pattern:
//  - latency: one warp; each lane's slot holds its own .shared address, so each load's
//    result is the next load's address and nothing but the load sits on the chain;
//  - requests: every warp of several blocks per SM issues independent loads of the pattern,
//    and each SM is timed with clock64 from its earliest block start to its latest block
//    end; cycles per warp request = that window / the requests issued on the SM.
// The conflict ladder and the multicast probes are built on the bank geometry the stride
// sweep revealed (not on an assumed one), so that an N-way pattern is N-way on any machine.
#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "analysis/shared_banks.hpp"
#include "block_timing.cuh"
#include "gpu/sass_check.hpp"

namespace gpuprobe {
// Kernels in a named namespace, so that the code checks (analysis/shared_banks.cpp) can name
// them: "shared_banks::chase_kernel<4>".
namespace shared_banks {

constexpr int kBlockThreads = 256;

struct LaneOffsets {
  unsigned v[kWarpLanes];
};

template <int Bytes>
struct Words {
  unsigned w[Bytes / 4];
};

// One ld.shared of Bytes at `addr` (a .shared window address), in its vector form.
template <int Bytes>
__device__ __forceinline__ Words<Bytes> lds(unsigned addr) {
  Words<Bytes> v;
  if constexpr (Bytes == 4) {
    asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v.w[0]) : "r"(addr) : "memory");
  } else if constexpr (Bytes == 8) {
    asm volatile("ld.volatile.shared.v2.u32 {%0, %1}, [%2];"
                 : "=r"(v.w[0]), "=r"(v.w[1])
                 : "r"(addr)
                 : "memory");
  } else {
    static_assert(Bytes == 16, "access width is 4, 8 or 16 bytes");
    asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3])
                 : "r"(addr)
                 : "memory");
  }
  return v;
}

template <int Bytes>
__device__ __forceinline__ unsigned fold(const Words<Bytes>& v) {
  unsigned x = 0;
#pragma unroll
  for (int i = 0; i < Bytes / 4; ++i) x ^= v.w[i];
  return x;
}

__device__ __forceinline__ unsigned shared_base(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

template <int Bytes>
__global__ void chase_kernel(LaneOffsets off, unsigned buffer_bytes, int iters, long long* cycles,
                             unsigned* sink, int flag) {
  extern __shared__ __align__(16) unsigned smem[];
  const unsigned lane = threadIdx.x;
  for (unsigned i = lane; i < buffer_bytes / 4; i += kWarpLanes) smem[i] = 0;
  __syncwarp();
  unsigned addr = shared_base(smem) + off.v[lane];
  smem[off.v[lane] / 4] = addr;
  __syncwarp();
  unsigned rest = 0;
  long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    // The whole access is folded into `rest` after the group, off the chain, so that every
    // byte loaded stays live while only the first word feeds the next address.
    Words<Bytes> v[kLoadsPerTrip];
#pragma unroll
    for (int j = 0; j < kLoadsPerTrip; ++j) {
      v[j] = lds<Bytes>(addr);
      addr = v[j].w[0];
    }
#pragma unroll
    for (int j = 0; j < kLoadsPerTrip; ++j) rest ^= fold(v[j]);
  }
  // This store needs the chain's last address, so the clock below waits for the chain.
  asm volatile("st.shared.u32 [%0], %0;" ::"r"(addr) : "memory");
  long long end = clock64();
  if (lane == 0) *cycles = end - start;
  keep(rest, sink, flag);
}

template <int Bytes>
__global__ void request_kernel(LaneOffsets off, unsigned buffer_bytes, int iters, BlockSpan* spans,
                               unsigned* sink, int flag) {
  extern __shared__ __align__(16) unsigned smem[];
  for (unsigned i = threadIdx.x; i < buffer_bytes / 4; i += blockDim.x) smem[i] = i;
  const unsigned addr = shared_base(smem) + off.v[threadIdx.x % kWarpLanes];
  unsigned acc = 0;
  __syncthreads();
  long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    // All loads of the group are issued before any result is used: kLoadsPerTrip requests in
    // flight per warp, whatever order the compiler keeps.
    Words<Bytes> v[kLoadsPerTrip];
#pragma unroll
    for (int j = 0; j < kLoadsPerTrip; ++j) v[j] = lds<Bytes>(addr);
#pragma unroll
    for (int j = 0; j < kLoadsPerTrip; ++j) acc ^= fold(v[j]);
  }
  __syncthreads();
  record_span(spans, start, clock64());
  keep(acc, sink, flag);
}

}  // namespace shared_banks

namespace {

using namespace shared_banks;

constexpr int kMaxStride = 64;
constexpr int kWidths[] = {4, 8, 16};

// Calls f(std::integral_constant<int, W>) for the access width `bytes`.
template <class F>
auto with_width(int bytes, F&& f) {
  switch (bytes) {
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 8:
      return f(std::integral_constant<int, 8>{});
    case 16:
      return f(std::integral_constant<int, 16>{});
  }
  throw std::invalid_argument("shared access width must be 4, 8 or 16 bytes, not " +
                              std::to_string(bytes));
}

LaneOffsets lanes_of(const std::vector<long long>& offsets) {
  LaneOffsets l{};
  for (int t = 0; t < kWarpLanes; ++t) l.v[t] = static_cast<unsigned>(offsets.at(t));
  return l;
}

unsigned bytes_needed(const std::vector<long long>& offsets, int access_bytes) {
  return static_cast<unsigned>(*std::max_element(offsets.begin(), offsets.end()) + access_bytes);
}

// Runs patterns through the two kernels; one per family run, holding its device buffers.
class PatternRunner {
 public:
  PatternRunner(const DeviceInfo& dev, bool quick)
      : dev_(dev), quick_(quick), cycles_(1), sink_(1) {}

  // Cycles per access of one warp's dependent chain.
  Sample latency(int bytes, const std::vector<long long>& offsets, unsigned buffer_bytes) {
    const int iters = quick_ ? 32 : 128;
    LaneOffsets l = lanes_of(offsets);
    return with_width(bytes, [&](auto w) {
      auto* k = chase_kernel<decltype(w)::value>;
      allow_shared(k, buffer_bytes);
      Sample s;
      s.seconds = time_seconds([&] {
        k<<<1, kWarpLanes, buffer_bytes>>>(l, buffer_bytes, iters, cycles_.get(), sink_.get(), 0);
      });
      long long c = 0;
      CUDA_CHECK(cudaMemcpy(&c, cycles_.get(), sizeof c, cudaMemcpyDeviceToHost));
      s.value = static_cast<double>(c) / (static_cast<double>(iters) * kLoadsPerTrip);
      return s;
    });
  }

  // Blocks of kBlockThreads that fit on one SM at once with this buffer.
  int resident_blocks(int bytes, unsigned buffer_bytes) {
    return with_width(bytes, [&](auto w) {
      auto* k = request_kernel<decltype(w)::value>;
      allow_shared(k, buffer_bytes);
      int n = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, kBlockThreads, buffer_bytes));
      if (n < 1)
        throw std::runtime_error("shared_banks: no block of the request kernel fits on an SM");
      return n;
    });
  }

  // Cycles per warp request with `blocks_per_sm` blocks on every SM, median over SMs.
  Sample per_request(int bytes, const std::vector<long long>& offsets, unsigned buffer_bytes,
                     int blocks_per_sm) {
    const int warps_per_sm = blocks_per_sm * kBlockThreads / kWarpLanes;
    // About 2^17 requests per SM (2^15 quick): a window of 10^5 cycles or more, so that
    // block launch skew stays under a percent.
    const int iters = std::max(1, (quick_ ? 1 << 15 : 1 << 17) / (warps_per_sm * kLoadsPerTrip));
    const int blocks = dev_.sm_count * blocks_per_sm;
    SpanRecorder& spans = recorder_for(spans_, blocks);
    LaneOffsets l = lanes_of(offsets);
    return with_width(bytes, [&](auto w) {
      auto* k = request_kernel<decltype(w)::value>;
      allow_shared(k, buffer_bytes);
      Sample s;
      s.seconds = time_seconds([&] {
        k<<<blocks, kBlockThreads, buffer_bytes>>>(l, buffer_bytes, iters, spans.get(),
                                                   sink_.get(), 0);
      });
      double requests_per_block =
          static_cast<double>(kBlockThreads / kWarpLanes) * iters * kLoadsPerTrip;
      s.value = 1.0 / sm_rate(spans.fetch(), requests_per_block);
      return s;
    });
  }

 private:
  template <class K>
  void allow_shared(K* kernel, unsigned bytes) {
    const long long most = std::max(dev_.shared_per_block, dev_.shared_per_block_optin);
    if (most > 0 && bytes > static_cast<unsigned long long>(most))
      throw std::runtime_error("shared_banks: pattern needs " + std::to_string(bytes) +
                               " B of shared memory, more than a block may have");
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes)));
  }

  const DeviceInfo& dev_;
  bool quick_;
  DeviceBuffer<long long> cycles_;
  DeviceBuffer<unsigned> sink_;
  std::optional<SpanRecorder> spans_;
};

std::string num(long long v) { return std::to_string(v); }

class SharedBanksFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(shared_banks::kFamily.name); }
  std::string description() const override {
    return "shared memory banks: count and width from strided access, N-way conflict cost, "
           "broadcast/multicast, peak bandwidth per SM";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{kStrideLatency,
             "one warp, lane t loads element stride*t (4/8/16 B): cycles per dependent load"},
            {kStrideThroughput, "all warps, same pattern: cycles per warp request per SM"},
            {kConflictLatency,
             "one warp, N distinct words per bank, m lanes per word: cycles per load"},
            {kConflictThroughput, "all warps, same patterns: cycles per warp request per SM"},
            {kBandwidth, "conflict-free ld.shared (4/8/16 B), warps per SM swept: B/clk/SM"}};
  }

  void run(RunContext& ctx) override {
    PatternRunner runner(ctx.device(), ctx.quick());
    const int reps = ctx.quick() ? 3 : 11;
    // One buffer size (and so one occupancy) for the whole stride sweep.
    const unsigned sweep_bytes = 16 * (kMaxStride * (kWarpLanes - 1) + 1);

    // A probe runs only when its kernels' code holds what it means to time.
    std::vector<std::string> chase, request;
    for (int bytes : kWidths) {
      chase.push_back(chase_kernel_name(bytes));
      request.push_back(request_kernel_name(bytes));
    }
    const bool lat = ctx.enabled(kStrideLatency) && sass_allows(ctx, kStrideLatency, chase);
    const bool tput =
        ctx.enabled(kStrideThroughput) && sass_allows(ctx, kStrideThroughput, request);

    std::vector<Observation> sweep;
    for (int bytes : kWidths) {
      const int per_sm = runner.resident_blocks(bytes, sweep_bytes);
      for (int stride : strides(ctx.quick())) {
        ctx.progress(std::to_string(bytes) + " B, stride " + std::to_string(stride));
        auto offsets = stride_offsets(bytes, stride);
        Params p = {{kAccessBytesColumn, num(bytes)}, {kStrideColumn, num(stride)}};
        if (lat)
          sweep.push_back(ctx.measure({kStrideLatency, p, "cycles", reps, 0},
                                      [&] { return runner.latency(bytes, offsets, sweep_bytes); }));
        if (tput) {
          Params pt = p;
          pt.emplace_back(kWarpsPerSmColumn, num(per_sm * kBlockThreads / kWarpLanes));
          sweep.push_back(ctx.measure({kStrideThroughput, pt, kPerRequest, reps, 0}, [&] {
            return runner.per_request(bytes, offsets, sweep_bytes, per_sm);
          }));
        }
      }
    }

    run_conflicts(ctx, runner, sweep, reps);

    if (ctx.enabled(kBandwidth) && sass_allows(ctx, kBandwidth, request))
      for (int bytes : kWidths) {
        auto offsets = stride_offsets(bytes, 1);
        const unsigned buffer = bytes_needed(offsets, bytes);
        const int most = runner.resident_blocks(bytes, buffer);
        for (int per_sm : {1, 2, 4, 8}) {
          if (per_sm > most) break;
          run_bandwidth(ctx, runner, bytes, offsets, buffer, per_sm, reps);
        }
        if (most > 8 || (most & (most - 1)))  // the full occupancy, when not already swept
          run_bandwidth(ctx, runner, bytes, offsets, buffer, most, reps);
      }
  }

 private:
  static std::vector<int> strides(bool quick) {
    if (quick) return {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 24, 31, 32, 33, 48, 64};
    std::vector<int> all;
    for (int s = 0; s <= kMaxStride; ++s) all.push_back(s);
    return all;
  }

  static void run_bandwidth(RunContext& ctx, PatternRunner& runner, int bytes,
                            const std::vector<long long>& offsets, unsigned buffer, int per_sm,
                            int reps) {
    const int warps = per_sm * kBlockThreads / kWarpLanes;
    ctx.progress("bandwidth " + std::to_string(bytes) + " B, " + std::to_string(warps) +
                 " warps/SM");
    Params p = {{kAccessBytesColumn, num(bytes)}, {kWarpsPerSmColumn, num(warps)}};
    ctx.measure({kBandwidth, p, "B/clk/SM", reps, 0}, [&] {
      Sample s = runner.per_request(bytes, offsets, buffer, per_sm);
      s.value = kWarpLanes * bytes / s.value;
      return s;
    });
  }

  // The N-way ladder (N distinct words per bank, one lane each), multicast without conflict
  // (m lanes per word, distinct banks; m = 32 is the broadcast) and multicast inside one bank
  // (N words, 32/N lanes each), all on the geometry the stride sweep settled.
  static void run_conflicts(RunContext& ctx, PatternRunner& runner,
                            const std::vector<Observation>& sweep, int reps) {
    const bool lat =
        ctx.enabled(kConflictLatency) && sass_allows(ctx, kConflictLatency, {chase_kernel_name(4)});
    const bool tput = ctx.enabled(kConflictThroughput) &&
                      sass_allows(ctx, kConflictThroughput, {request_kernel_name(4)});
    if (!lat && !tput) return;
    auto fit = fit_bank_geometry(sweep);
    if (!fit || !bank_geometry_settled(*fit)) {
      const std::string why = "needs the bank geometry, which the stride sweep did not settle";
      if (lat) ctx.invalid(kConflictLatency, why);
      if (tput) ctx.invalid(kConflictThroughput, why);
      return;
    }
    const BankModel m = fit->model;
    std::vector<std::pair<int, int>> patterns;  // (ways, lanes_per_word)
    for (int n = 1; n <= kWarpLanes; ++n)
      if (!ctx.quick() || n <= 4 || (n & (n - 1)) == 0) patterns.push_back({n, 1});
    for (int k = 2; k <= kWarpLanes; k *= 2) patterns.push_back({1, k});
    for (int n = 2; n < kWarpLanes; n *= 2) patterns.push_back({n, kWarpLanes / n});

    std::vector<std::vector<long long>> all;
    for (auto [ways, lanes] : patterns) all.push_back(conflict_offsets(m, ways, lanes));
    unsigned buffer = 16;
    for (const auto& o : all)
      if (!o.empty()) buffer = std::max(buffer, bytes_needed(o, 4));
    const int per_sm = runner.resident_blocks(4, buffer);

    for (size_t i = 0; i < patterns.size(); ++i) {
      const auto [ways, lanes] = patterns[i];
      if (all[i].empty()) continue;  // more lanes than banks x ways can place
      ctx.progress("conflict " + std::to_string(ways) + "-way, " + std::to_string(lanes) +
                   " lanes/word");
      Params p = {{kWaysColumn, num(ways)},
                  {kLanesPerWordColumn, num(lanes)},
                  {kBanksColumn, num(m.banks)},
                  {kBankWidthColumn, num(m.width)}};
      if (lat)
        ctx.measure({kConflictLatency, p, "cycles", reps, 0},
                    [&] { return runner.latency(4, all[i], buffer); });
      if (tput) {
        Params pt = p;
        pt.emplace_back(kWarpsPerSmColumn, num(per_sm * kBlockThreads / kWarpLanes));
        ctx.measure({kConflictThroughput, pt, kPerRequest, reps, 0},
                    [&] { return runner.per_request(4, all[i], buffer, per_sm); });
      }
    }
  }
};

}  // namespace

GPUPROBE_REGISTER_FAMILY(SharedBanksFamily);

}  // namespace gpuprobe
