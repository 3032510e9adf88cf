// How much each level fetches and allocates at a time.
//  stride:       one thread walks lines that are not in the level under test (but are in the
//                next one) at strides 4 B-1 KiB; only accesses that start a new fetch unit
//                miss, so cycles per access saturate at the stride equal to the fetch unit:
//                the L1 sector (ld.global), the read-only path's line (.nc), the L2 sector
//                (.cg with L2 flushed, at the default and the smallest L2 fetch granularity
//                limit) and the L1 constant cache line. The same walk over lines that are
//                resident gives the hit level beside it.
//  l2_capacity:  footprint at which many chains fall out of L2, at odd multiples of 32 B:
//                it grows as stride / line above the L2 line (allocation) size.
//  warp_pattern: the transaction view of Micikevicius (GTC 2013): effective bandwidth of warp
//                requests with aligned, offset, permuted, strided and scattered addresses,
//                from L2 and from DRAM, and the bytes each request must have moved.
#include <algorithm>
#include <cmath>
#include <memory>

#include "analysis/granularity.hpp"
#include "base/csv.hpp"
#include "gpu/sass_check.hpp"
#include "memory_chase.cuh"

// 32 KiB: the walked region (<= 8 KiB), the resident region, and 16 KiB to evict the L1
// constant cache with while the walked lines stay in the level behind it.
GPUPROBE_CONSTANT_CHAIN(gpuprobe_granularity_chain, GranularityConstLoader, 8192);

namespace gpuprobe {
// Kernels live in a named namespace: the code checks find them by name.
namespace granularity {

constexpr double kKiB = 1024;
constexpr uint32_t kColdAccesses = 1024;  // averages the L2 slices' different latencies
constexpr int kSlots = 4;                  // walked regions rotate: never warm from a previous rep
constexpr uint64_t kConstRegion = 8 * 1024, kConstResident = 8 * 1024, kConstEvict = 16 * 1024;

struct StrideArgs {
  uint64_t cold_start = 0, res_start = 0, evict_start = 0;
  uint32_t cold_n = 0, res_n = 0, evict_n = 0;
  bool prepare = false;  // one pass over the cold chain with the preparing loader first
  const char* flush = nullptr;  // read by the whole block with ld.global: L1 flushed
  uint64_t flush_bytes = 0;
  unsigned long long* out = nullptr;  // cycles of the cold pass, of the resident pass
  uint64_t* sink = nullptr;
  int flag = 0;
};

// Thread 0 walks: (prepare: the cold chain through the next level; evict the level under
// test), the cold chain timed, the resident chain twice with the second pass timed.
template <class Loader, class Prepare>
__global__ void stride_walk(Loader ld, Prepare prep, StrideArgs a) {
  if (a.flush_bytes) {
    uint64_t acc = 0;
    for (uint64_t off = threadIdx.x * 32ull; off < a.flush_bytes; off += blockDim.x * 32ull)
      acc ^= load_next<Path::l1, 4>(a.flush + off);
    keep(acc, a.sink, a.flag);
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  uint64_t cur = a.cold_start;
  if (a.prepare) pass(prep, cur, a.cold_n);
  if (a.evict_n) {
    uint64_t e = a.evict_start;
    pass(ld, e, a.evict_n);
    wait_for(e);
  }
  a.out[0] = timed_pass(ld, cur, a.cold_n);
  uint64_t r = a.res_start;
  pass(ld, r, a.res_n);
  a.out[1] = timed_pass(ld, r, a.res_n);
  keep(cur ^ r, a.sink, a.flag);
}

// Streams ld.global.cg over a buffer several times the L2: what was in L2 is evicted.
__global__ void flush_l2(const uint4* p, uint64_t n, uint64_t* sink, int flag) {
  uint64_t acc = 0;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x) {
    uint4 v;
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p + i));
    acc += v.x ^ v.w;
  }
  keep(acc, sink, flag);
}

enum class Pattern { aligned, offset, permuted, strided, scattered };

__device__ __forceinline__ uint64_t pattern_word(Pattern p, uint32_t k, uint64_t r, uint32_t lane,
                                                 uint64_t words) {
  switch (p) {
    case Pattern::aligned: return r * 32 + lane;
    case Pattern::offset: return r * 32 + lane + 1;
    case Pattern::permuted: return r * 32 + ((lane * 7 + 3) & 31);
    case Pattern::strided: return (r * 32 + lane) * k;
    case Pattern::scattered: {
      uint64_t z = (r * 32 + lane + 1) * 0x9E3779B97F4A7C15ull;  // splitmix64 finaliser
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return (z ^ (z >> 31)) % words;
    }
  }
  return 0;
}

// Every warp issues requests r, r + warps, ...: lane t reads one 4-byte word of the pattern.
__global__ void warp_pattern(const uint32_t* buf, uint64_t words, Pattern p, uint32_t k,
                             uint64_t requests, uint32_t iters, uint64_t* sink, int flag) {
  const uint64_t warps = uint64_t(gridDim.x) * blockDim.x / 32;
  const uint64_t warp = (blockIdx.x * uint64_t(blockDim.x) + threadIdx.x) / 32;
  const uint32_t lane = threadIdx.x % 32;
  uint32_t acc = 0;
  for (uint32_t it = 0; it < iters; ++it) {
#pragma unroll 4
    for (uint64_t r = warp; r < requests; r += warps)
      acc += static_cast<uint32_t>(load_next<Path::l2, 4>(
          reinterpret_cast<const char*>(buf + pattern_word(p, k, r, lane, words))));
  }
  keep(static_cast<uint64_t>(acc), sink, flag);
}

}  // namespace granularity

namespace {

using namespace granularity;

struct PathCase {
  const char* name;
  Path path;
  bool constant;
};

class GranularityFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(granularity::kFamily.name); }
  std::string description() const override {
    return "fetch and allocation granularity of L1, read-only path, L2 and constant cache; "
           "bytes moved per warp request";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{kStrideProbe, "cycles per access of a walk at strides 4 B-1 KiB, cold and resident"},
            {kL2CapacityProbe, "cycles per access of many chains against footprint, per stride"},
            {kWarpPatternProbe, "effective bandwidth (GB/s) and bytes moved per warp request"}};
  }

  void run(RunContext& ctx) override {
    ctx_ = &ctx;
    sink_ = DeviceBuffer<uint64_t>(1);
    auto allowed = [&](const std::string& probe) {
      return ctx.enabled(probe) && sass_allows(ctx, probe, granularity::kernels(probe));
    };
    if (allowed(kStrideProbe)) strides();
    if (allowed(kWarpPatternProbe)) patterns();
    if (allowed(kL2CapacityProbe)) l2_capacity();
    sink_ = DeviceBuffer<uint64_t>();
  }

 private:
  // ---- stride ---------------------------------------------------------------------------

  void strides() {
    const DeviceInfo& d = ctx_->device();
    const double l1_bound = 2.0 * (static_cast<double>(d.shared_per_sm) + 64 * kKiB);
    l1_flush_ = DeviceBuffer<char>(static_cast<size_t>(l1_bound));
    CUDA_CHECK(cudaMemset(l1_flush_.get(), 0, l1_flush_.bytes()));
    l2_flush_ = DeviceBuffer<uint4>(static_cast<size_t>(3 * d.l2_bytes / sizeof(uint4)));
    CUDA_CHECK(cudaMemset(l2_flush_.get(), 0, l2_flush_.bytes()));
    slot_bytes_ = kColdAccesses * granularity::kMaxWalkStride;
    walk_ = DeviceBuffer<char>(static_cast<size_t>((kSlots + 1) * slot_bytes_));
    out_ = DeviceBuffer<unsigned long long>(2);

    const std::vector<PathCase> paths = {{"l1", Path::l1, false},
                                         {"readonly", Path::readonly, false},
                                         {"l2", Path::l2, false},
                                         {"constant", Path::l1, true}};
    size_t limit_default = 0;
    const bool has_limit =
        cudaDeviceGetLimit(&limit_default, cudaLimitMaxL2FetchGranularity) == cudaSuccess;
    cudaGetLastError();
    for (const auto& pc : paths) {
      // L2 also at the smallest fetch granularity, where it fills only what a miss asks for
      // (0: the limit as the driver set it).
      std::vector<size_t> limits = {0};
      if (pc.path == Path::l2 && has_limit && limit_default > 32 && !ctx_->quick())
        limits.push_back(32);
      for (size_t limit : limits) {
        size_t applied = limit_default;
        if (limit) {
          if (cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, limit) != cudaSuccess) {
            cudaGetLastError();
            continue;
          }
          CUDA_CHECK(cudaDeviceGetLimit(&applied, cudaLimitMaxL2FetchGranularity));
          if (applied == limit_default) continue;
        }
        const size_t shown = pc.path == Path::l2 && has_limit ? applied : 0;
        for (int w : granularity::kWalkWidths)
          if (pc.constant ? w == 4 : !ctx_->quick() || w == 8)
            for (double s = w; s <= granularity::kMaxWalkStride; s *= 2)
              if (!ctx_->quick() || s >= 8) walk(pc, w, s, shown);
      }
      if (limits.size() > 1)
        CUDA_CHECK(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, limit_default));
    }
    l1_flush_ = DeviceBuffer<char>();
    l2_flush_ = DeviceBuffer<uint4>();
    walk_ = DeviceBuffer<char>();
  }

  // One stride on one path: builds the walks, then measures the cold and the resident pass.
  void walk(const PathCase& pc, int width, double stride, size_t l2_limit) {
    const DeviceInfo& d = ctx_->device();
    ctx_->progress(std::string(pc.name) + " " + std::to_string(width) + " B, stride " +
                   format_number(stride));
    const uint64_t s = static_cast<uint64_t>(stride);
    // Resident walk: small enough for the level under test (8 KiB fits every L1; 1/8 of L2).
    const double fits = pc.constant ? 1 * kKiB
                        : pc.path == Path::l2 ? static_cast<double>(d.l2_bytes) / 8
                                              : 8 * kKiB;
    ChainLayout cold, res;
    cold.stride = res.stride = s;
    cold.n = pc.constant ? std::min<uint64_t>(kColdAccesses, kConstRegion / s) : kColdAccesses;
    res.n = std::clamp<uint64_t>(static_cast<uint64_t>(fits / stride), 4, cold.n);
    ChainLayout evict;
    if (pc.constant) {
      res.origin = kConstRegion;
      evict.origin = kConstRegion + kConstResident;
      evict.n = kConstEvict / 32;
      evict.stride = 32;
      std::vector<uint32_t> words(sizeof(gpuprobe_granularity_chain) / 4);
      for (const ChainLayout* c : {&cold, &res, &evict})
        for (uint64_t v = 0; v < c->n; ++v)
          words[c->offset(0, v) / 4] = static_cast<uint32_t>(c->offset(0, (v + 1) % c->n));
      CUDA_CHECK(cudaMemcpyToSymbol(gpuprobe_granularity_chain, words.data(), words.size() * 4));
    } else {
      cold.chains = kSlots;
      cold.chain_span = static_cast<uint64_t>(slot_bytes_);
      res.origin = kSlots * static_cast<uint64_t>(slot_bytes_);
      build(width, cold);
      build(width, res);
    }
    StrideArgs a;
    a.cold_n = static_cast<uint32_t>(cold.n);
    a.res_n = static_cast<uint32_t>(res.n);
    a.res_start = res.origin;
    a.out = out_.get();
    a.sink = sink_.get();
    if (pc.constant) {
      a.prepare = true;
      a.evict_start = evict.origin;
      a.evict_n = static_cast<uint32_t>(evict.n);
    } else if (pc.path != Path::l2) {
      a.prepare = true;  // ld.global.cg: in L2, not in L1
      a.flush = l1_flush_.get();
      a.flush_bytes = l1_flush_.bytes();
    }
    Params params = {{kPathColumn, pc.name},
                     {kWidthColumn, std::to_string(width)},
                     {kStrideColumn, format_number(stride)}};
    if (l2_limit) params.emplace_back(kFetchLimitColumn, std::to_string(l2_limit));
    for (const char* residency : {"cold", "resident"}) {
      Params p = params;
      p.emplace_back(kResidencyColumn, residency);
      const int which = std::string(residency) == "cold" ? 0 : 1;
      ctx_->measure(Point{kStrideProbe, p, "cycles", ctx_->quick() ? 1 : 3}, [&] {
        a.cold_start = pc.constant ? 0 : cold.offset(slot_++ % kSlots, 0);
        double seconds = launch_walk(pc, width, a);
        unsigned long long cycles[2];
        CUDA_CHECK(cudaMemcpy(cycles, out_.get(), sizeof cycles, cudaMemcpyDeviceToHost));
        const double n = which == 0 ? a.cold_n : a.res_n;
        return Sample{static_cast<double>(cycles[which]) / n, seconds};
      });
    }
  }

  void build(int width, const ChainLayout& c) {
    if (width == 4)
      build_chain<uint32_t>(walk_.get(), c);
    else
      build_chain<uint64_t>(walk_.get(), c);
  }

  double launch_walk(const PathCase& pc, int width, const StrideArgs& a) {
    if (pc.constant) return launch(GranularityConstLoader{}, GranularityConstLoader{}, a, 1);
    if (pc.path == Path::l2) {
      const unsigned blocks = static_cast<unsigned>(ctx_->device().sm_count) * 4;
      flush_l2<<<blocks, 256>>>(l2_flush_.get(), l2_flush_.size(), sink_.get(), 0);
      CUDA_CHECK_LAUNCH();
    }
    switch (width) {
      case 4: return launch_width<4>(pc.path, a);
      case 8: return launch_width<8>(pc.path, a);
      default: return launch_width<16>(pc.path, a);
    }
  }

  template <int W>
  double launch_width(Path p, const StrideArgs& a) {
    const GlobalLoader<Path::l2, W> prep{walk_.get()};
    const unsigned threads = a.flush_bytes ? 1024 : 32;
    switch (p) {
      case Path::l1: return launch(GlobalLoader<Path::l1, W>{walk_.get()}, prep, a, threads);
      case Path::readonly:
        return launch(GlobalLoader<Path::readonly, W>{walk_.get()}, prep, a, threads);
      default: return launch(GlobalLoader<Path::l2, W>{walk_.get()}, prep, a, threads);
    }
  }

  template <class Loader, class Prepare>
  double launch(const Loader& ld, const Prepare& prep, const StrideArgs& a, unsigned threads) {
    // No shared memory and a preference for L1: the largest L1 the device offers.
    CUDA_CHECK(cudaFuncSetAttribute(stride_walk<Loader, Prepare>,
                                    cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    return time_seconds([&] { stride_walk<<<1, threads>>>(ld, prep, a); });
  }

  // ---- warp_pattern -----------------------------------------------------------------------

  void patterns() {
    const DeviceInfo& d = ctx_->device();
    struct Case {
      const char* name;
      Pattern p;
      uint32_t k;
    };
    const std::vector<Case> cases = {
        {"aligned", Pattern::aligned, 1},  {"offset", Pattern::offset, 1},
        {"permuted", Pattern::permuted, 1}, {"strided", Pattern::strided, 2},
        {"strided", Pattern::strided, 4},  {"strided", Pattern::strided, 8},
        {"strided", Pattern::strided, 16}, {"strided", Pattern::strided, 32},
        {"scattered", Pattern::scattered, 1}};
    // From L2: a quarter of it, read many times. From DRAM: eight times L2, read once.
    const double l2 = static_cast<double>(d.l2_bytes);
    struct Level {
      const char* name;
      double bytes;
      uint32_t iters;
    };
    const std::vector<Level> levels = {{"l2", l2 / 4, ctx_->quick() ? 8u : 64u},
                                       {"dram", 8 * l2, 1}};
    DeviceBuffer<uint32_t> buf(static_cast<size_t>(8 * l2 / 4) + 32);
    CUDA_CHECK(cudaMemset(buf.get(), 0, buf.bytes()));
    // Every thread slot of every SM: enough requests in flight to reach DRAM's bandwidth.
    const unsigned blocks =
        static_cast<unsigned>(d.sm_count) * std::max(1u, static_cast<unsigned>(d.max_threads_per_sm) / 256);
    for (const auto& lv : levels) {
      const uint64_t words = static_cast<uint64_t>(lv.bytes / 4);
      double aligned = 0;
      for (const auto& c : cases) {
        if (ctx_->quick() && c.p == Pattern::strided && c.k != 32) continue;
        const uint64_t requests =
            c.p == Pattern::strided ? words / (32ull * c.k) : words / 32 - 1;
        const double useful = static_cast<double>(requests) * 128.0 * lv.iters;
        ctx_->progress(std::string("warp pattern ") + c.name + " from " + lv.name);
        Point pt{kWarpPatternProbe,
                 {{kLevelColumn, lv.name},
                  {kPatternColumn, c.name},
                  {kStrideWordsColumn, std::to_string(c.k)}},
                 "GB/s",
                 ctx_->quick() ? 2 : 5,
                 useful};
        Observation o = ctx_->measure(pt, [&] {
          const double t = time_seconds([&] {
            warp_pattern<<<blocks, 256>>>(buf.get(), words, c.p, c.k, requests, lv.iters,
                                          sink_.get(), 0);
          });
          return Sample{useful / t / 1e9, t};
        });
        if (c.p == Pattern::aligned) aligned = o.value;
        Observation moved = o;
        moved.unit = "bytes";
        moved.value = moved.p50 = bytes_per_request(aligned, o.p50);
        moved.p05 = bytes_per_request(aligned, o.p95);  // faster: fewer bytes
        moved.p95 = bytes_per_request(aligned, o.p05);
        ctx_->record(moved);
      }
    }
  }

  // ---- l2_capacity --------------------------------------------------------------------------

  void l2_capacity() {
    const DeviceInfo& d = ctx_->device();
    const std::vector<double> strides = granularity::capacity_strides(ctx_->quick());
    const uint32_t chains = static_cast<uint32_t>(d.sm_count) * granularity::kCapacityChainsPerSm;
    const double l2 = static_cast<double>(d.l2_bytes);
    // Past the L2 at every stride even if a line were as small as the smallest stride.
    const double want = 4 * l2 * strides.back() / strides.front();
    const double bytes = std::min(want, static_cast<double>(d.free_mem_bytes) / 4);
    DeviceBuffer<char> buf(static_cast<size_t>(bytes));
    ChaseRunner runner(chains);
    double limit = 0;
    for (double stride : strides) {
      const double quantum = stride * chains;
      auto cycles_at = [&](double footprint) {
        ChainLayout c;
        c.n = static_cast<uint64_t>(footprint / quantum);
        c.step = coprime_step(c.n);
        c.stride = static_cast<uint64_t>(stride);
        c.chains = chains;
        c.chain_span = c.n * c.stride;
        build_chain<uint64_t>(buf.get(), c);
        ChaseArgs a;
        a.n = static_cast<uint32_t>(c.n);
        a.passes = 2;
        a.warm = 1;
        a.chains = chains;
        a.chain_span = c.chain_span;
        Point pt{
            kL2CapacityProbe,
            {{kStrideColumn, format_number(stride)},
             {memory_chase::kFootprintColumn, format_number(static_cast<double>(c.footprint()))}},
            "cycles",
            ctx_->quick() ? 1 : 2};
        return ctx_->measure(pt, [&] {
                 ChaseResult r = runner.run<false>(GlobalLoader<Path::l2, 8>{buf.get()}, a, 8);
                 return Sample{r.cycles_per_access, r.seconds};
               }).value;
      };
      ctx_->progress("L2 capacity, stride " + format_number(stride) + " B");
      granularity::search_capacity(l2, bytes, stride, strides.front(), quantum, limit, cycles_at);
    }
  }

  RunContext* ctx_ = nullptr;
  DeviceBuffer<uint64_t> sink_;
  DeviceBuffer<char> l1_flush_, walk_;
  DeviceBuffer<uint4> l2_flush_;
  DeviceBuffer<unsigned long long> out_;
  double slot_bytes_ = 0;
  uint64_t slot_ = 0;
};

GPUPROBE_REGISTER_FAMILY(GranularityFamily);

}  // namespace
}  // namespace gpuprobe
