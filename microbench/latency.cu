// The latency ladder. One thread follows pointers through a random single cycle of lines one
// cache line apart (Sattolo), so every load depends on the one before and every line is
// visited once before any is reused; cycles per load against footprint show each level of
// the memory hierarchy as a plateau and each capacity as a knee.
//
// Warming a 200 MB footprint with the chase itself would take about a second per point, so
// the block first touches every line in parallel, in the cycle's order (threads interleaved):
// the caches then hold what a chase that had just gone round the whole cycle would leave, and
// thread 0 starts timing at the line touched longest ago, as in the steady state.
//
// Every chase runs on one and the same SM (chosen_block), because L2 latency depends on where
// the SM sits relative to the L2 slices; the SM is recorded in the `sm` column.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analysis/latency.hpp"
#include "gpu/cuda.cuh"
#include "gpu/sass_check.hpp"

namespace gpuprobe {

// Kernels live in a named namespace: the code checks find them by name
// (latency::latency_kernels).
namespace latency {

constexpr uint32_t kLineBytes = 128;    // spacing of global and shared pointers
constexpr uint32_t kConstantLine = 64;  // spacing in the constant bank (smaller cache lines)
constexpr uint32_t kConstantBytes = 64 * 1024;
constexpr int kTouchThreadsMax = 1024;
constexpr int kWarmLoads = 64;  // untimed loads before timing: instruction cache, pipeline

__constant__ uint32_t c_chain[kConstantBytes / sizeof(uint32_t)];

// --- device side --------------------------------------------------------------------------

// The load instruction of each path, spelled out in PTX so the cache operator is the one meant.
// The default ld.global (weak, cached in L1: LDG.E.64) rather than an explicit ld.global.ca,
// which sm_70+ compiles to a strong SM-scope load (LDG.E.64.STRONG.SM) that user code rarely
// issues.
#define GPUPROBE_GLOBAL_LOAD(NAME, OP)                                 \
  struct NAME {                                                        \
    __device__ __forceinline__ uint64_t operator()(uint64_t a) const { \
      uint64_t v;                                                      \
      asm volatile(OP " %0, [%1];" : "=l"(v) : "l"(a));                \
      return v;                                                        \
    }                                                                  \
  }
GPUPROBE_GLOBAL_LOAD(LoadDefault, "ld.global.u64");
GPUPROBE_GLOBAL_LOAD(LoadCg, "ld.global.cg.u64");
GPUPROBE_GLOBAL_LOAD(LoadNc, "ld.global.nc.u64");
#undef GPUPROBE_GLOBAL_LOAD

struct LoadShared {
  __device__ __forceinline__ uint32_t operator()(uint32_t a) const {
    uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a));
    return v;
  }
};

// Byte offsets into c_chain; the compiler emits ld.const with the offset in a register.
struct LoadConstant {
  __device__ __forceinline__ uint32_t operator()(uint32_t off) const {
    return *reinterpret_cast<const uint32_t*>(reinterpret_cast<const char*>(c_chain) + off);
  }
};

// What every chase kernel is told: the SM it must run on, how far to chase, where results go.
struct ChaseArgs {
  unsigned sm;        // the one SM that chases
  unsigned* claimed;  // 0 at launch; set by the block that chases
  int warm, steps;    // untimed, then timed dependent loads
  long long* cycles;  // cycles of the timed loads; left as it was when no block reached `sm`
  uint64_t* sink;     // keep()'s target (flag is 0 at run time)
  int flag;
};

// L2 latency differs from SM to SM (distance to the L2 slices and partitions), so every launch
// chases on the same SM: the grid covers every SM and the first block to reach the chosen one
// runs; the others leave at once.
__device__ __forceinline__ bool chosen_block(const ChaseArgs& a) {
  __shared__ unsigned mine;
  if (threadIdx.x == 0) mine = sm_id() == a.sm && atomicCAS(a.claimed, 0u, 1u) == 0u;
  __syncthreads();
  return mine != 0;
}

__global__ void lowest_sm(unsigned* sm) {
  if (threadIdx.x == 0) atomicMin(sm, sm_id());
}

// Follows p for `warm` untimed loads, then `steps` timed ones. One loop runs both passes, so
// the timed pass runs from a warm instruction cache.
template <class T, class Load>
__device__ __forceinline__ void chase(T& p, const ChaseArgs& a, Load load) {
  long long cycles = 0;
#pragma unroll 1
  for (int pass = 0; pass < 2; ++pass) {
    const int n = pass == 0 ? a.warm : a.steps;
    const long long t0 = clock64();
    for (int i = 0; i < n; ++i) p = load(p);
    cycles = clock64() - t0;
  }
  *a.cycles = cycles;
  keep(uint64_t(p), a.sink, a.flag);
}

// Touches every line in the cycle's order (`order[k]` is the k-th line of the cycle), then
// thread 0 chases from order[0], the line touched longest ago.
template <class Load>
__global__ void __launch_bounds__(kTouchThreadsMax)
    chase_global(const char* base, const uint32_t* order, uint32_t lines, uint32_t stride,
                 ChaseArgs a) {
  if (!chosen_block(a)) return;
  const Load load;
  auto line = [&](uint32_t i) { return reinterpret_cast<uint64_t>(base + size_t(i) * stride); };
  uint64_t acc = 0;
  // The next index is fetched (evict-first, so it does not crowd the lines out) while this
  // line's load is in flight.
  uint32_t k = threadIdx.x;
  uint32_t idx = k < lines ? __ldcs(order + k) : 0;
  for (; k < lines; k += blockDim.x) {
    const uint32_t next = k + blockDim.x < lines ? __ldcs(order + k + blockDim.x) : 0;
    acc ^= load(line(idx));
    idx = next;
  }
  keep(acc, a.sink, a.flag);
  __syncthreads();
  if (threadIdx.x != 0) return;
  uint64_t p = line(order[0]);
  chase(p, a, load);
}

__global__ void link_lines(char* base, const uint32_t* next, uint32_t lines, uint32_t stride) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < lines)
    *reinterpret_cast<uint64_t*>(base + size_t(i) * stride) =
        reinterpret_cast<uint64_t>(base + size_t(next[i]) * stride);
}

// Copies the cycle into dynamic shared memory as shared-window addresses, then chases it.
__global__ void chase_shared(const uint32_t* next, uint32_t lines, uint32_t stride, ChaseArgs a) {
  if (!chosen_block(a)) return;
  extern __shared__ __align__(16) unsigned char smem[];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  for (uint32_t i = threadIdx.x; i < lines; i += blockDim.x)
    *reinterpret_cast<uint32_t*>(smem + size_t(i) * stride) = base + next[i] * stride;
  __syncthreads();
  if (threadIdx.x != 0) return;
  uint32_t p = base;
  chase(p, a, LoadShared{});
}

// The constant caches are warmed by the chase itself: `a.warm` covers the cycle twice.
__global__ void chase_constant(ChaseArgs a) {
  if (!chosen_block(a) || threadIdx.x != 0) return;
  uint32_t p = 0;
  chase(p, a, LoadConstant{});
}

}  // namespace latency

namespace {

using namespace latency;
using segmentation::CurvePoint;
using segmentation::RefineOptions;

// --- host side ----------------------------------------------------------------------------

struct Budget {
  int reps;
  int steps;           // timed dependent loads per repetition
  double ratio;        // coarse footprint step of the global and constant sweeps
  double small_ratio;  // coarse step of the shared sweep (flat: no cache in the way)
  int refine_rounds;
  size_t refine_points;  // new points per probe and round
};

// Full: the H100 took 3.5 s with 4096 steps and a 2^(1/4) step; this should take about 8 s
// (estimate; the run records the real time). Quick: about 1 s. The timed loads are most of the
// time: 8192 of them average a point over twice as many lines (L2 slices, DRAM banks), and the
// 2^(1/6) step puts 8-9 points instead of 6 on the far L2 plateau between its two knees.
constexpr Budget kFull{9, 8192, 1.122462048, 1.414213562, 3, 10};  // 2^(1/6), 2^(1/2)
constexpr Budget kQuick{3, 1024, 1.414213562, 2.0, 2, 6};

struct Sweep {
  uint64_t min_bytes, max_bytes;
  uint32_t stride;
  double ratio;
  uint64_t tail_bytes = 0;  // past max_bytes, a sparse tail up to this (latency::coarse_footprints)
};

// The chosen SM (see chosen_block) and the launch bookkeeping around it.
class Pin {
 public:
  explicit Pin(const DeviceInfo& dev) : blocks_(2 * std::max(1, dev.sm_count)) {
    CUDA_CHECK(cudaMemset(claimed_.get(), 0xff, sizeof(unsigned)));
    lowest_sm<<<blocks_, 32>>>(claimed_.get());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(&sm_, claimed_.get(), sizeof sm_, cudaMemcpyDeviceToHost));
  }
  unsigned sm() const { return sm_; }
  // Enough blocks that one lands on every SM.
  int blocks() const { return blocks_; }
  ChaseArgs args(int warm, int steps) const {
    return {sm_, claimed_.get(), warm, steps, cycles_.get(), sink_.get(), 0};
  }
  // Times `launch` (a chase kernel given args()) and returns cycles per timed load.
  Sample run(const std::function<void()>& launch, int steps) {
    long long cycles = -1;
    double seconds = 0;
    // A launch in which no block reached the chosen SM is repeated.
    for (int attempt = 0; attempt < 3 && cycles < 0; ++attempt) {
      CUDA_CHECK(cudaMemset(claimed_.get(), 0, sizeof(unsigned)));
      CUDA_CHECK(cudaMemset(cycles_.get(), 0xff, sizeof(long long)));
      seconds = time_seconds(launch);
      CUDA_CHECK(cudaMemcpy(&cycles, cycles_.get(), sizeof cycles, cudaMemcpyDeviceToHost));
    }
    if (cycles < 0)
      throw std::runtime_error(std::string(kFamily.name) + ": none of " + std::to_string(blocks_) +
                               " blocks ran on SM " + std::to_string(sm_));
    return {double(cycles) / steps, seconds};
  }

 private:
  int blocks_;
  unsigned sm_ = 0;
  DeviceBuffer<unsigned> claimed_{1};
  DeviceBuffer<long long> cycles_{1};
  DeviceBuffer<uint64_t> sink_{1};
};

// Measures every probe at each coarse footprint (prepare(f) builds the chain once for all of
// them), then, probe by probe, bisects the gaps around the knees its curve shows.
void sweep(RunContext& ctx, const Budget& b, const Pin& pin, const Sweep& s,
           const std::vector<std::string>& probes, const std::function<void(uint64_t)>& prepare,
           const std::function<Sample(const std::string&, uint64_t)>& rep) {
  std::map<std::string, std::vector<CurvePoint>> curves;
  auto measure = [&](const std::string& probe, uint64_t f) {
    Point pt;
    pt.probe = probe;
    pt.params = {{memory_chase::kFootprintColumn, std::to_string(f)},
                 {kStrideColumn, std::to_string(s.stride)},
                 {kSmColumn, std::to_string(pin.sm())}};
    pt.unit = "cycles";
    pt.reps = b.reps;
    Observation o = ctx.measure(pt, [&] { return rep(probe, f); });
    curves[probe].push_back({double(f), o.value});
  };
  for (uint64_t f :
       latency::coarse_footprints(s.min_bytes, s.max_bytes, s.stride, s.ratio, s.tail_bytes)) {
    prepare(f);
    for (const auto& probe : probes) measure(probe, f);
  }
  RefineOptions ro;
  ro.min_ratio = 1.0 + (s.ratio - 1.0) / 16;
  ro.max_points = b.refine_points;
  for (const auto& probe : probes) {
    for (int round = 0; round < b.refine_rounds; ++round) {
      auto& curve = curves[probe];
      std::vector<uint64_t> next;
      for (double x : segmentation::refinement_points(curve, ro)) {
        const uint64_t f = latency::round_to_lines(x, s.stride);
        const bool seen = std::any_of(curve.begin(), curve.end(),
                                      [&](const CurvePoint& q) { return uint64_t(q.x) == f; });
        if (!seen && f >= s.min_bytes && f <= std::max(s.max_bytes, s.tail_bytes) &&
            std::find(next.begin(), next.end(), f) == next.end())
          next.push_back(f);
      }
      if (next.empty()) break;
      for (uint64_t f : next) {
        prepare(f);
        measure(probe, f);
      }
    }
  }
}

// The probes the user selected whose kernels pass the SASS check (a failing one is reported
// invalid by sass_allows and not measured).
std::vector<std::string> runnable(RunContext& ctx, const std::vector<std::string>& probes) {
  std::vector<std::string> out;
  for (const auto& p : probes)
    if (ctx.enabled(p) && sass_allows(ctx, p, latency::latency_kernels(p))) out.push_back(p);
  return out;
}

// Host copy of a random single cycle over `lines` (next[i] follows i) and its visiting order.
struct Cycle {
  std::vector<uint32_t> next, order;
  explicit Cycle(uint32_t lines) : next(sattolo_cycle(lines, 0x9e3779b97f4a7c15ULL ^ lines)) {
    order.resize(lines);
    uint32_t i = 0;
    for (uint32_t k = 0; k < lines; ++k, i = next[i]) order[k] = i;
  }
};

void run_global(RunContext& ctx, const Budget& b, Pin& pin) {
  const auto probes = runnable(ctx, {kLdGlobalProbe, kLdCgProbe, kLdNcProbe});
  if (probes.empty()) return;
  const DeviceInfo& dev = ctx.device();
  const auto range =
      latency::global_sweep(double(dev.l2_bytes), double(dev.free_mem_bytes), kLineBytes);
  const uint64_t max_bytes = std::max(range.max_bytes, range.tail_bytes);
  const uint32_t max_lines = uint32_t(max_bytes / kLineBytes);
  DeviceBuffer<char> buf(max_bytes);
  DeviceBuffer<uint32_t> next(max_lines), order(max_lines);
  // The largest L1 (the memory-structure family measures each carve-out).
  const auto carveout = cudaFuncAttributePreferredSharedMemoryCarveout;
  CUDA_CHECK(cudaFuncSetAttribute(chase_global<LoadDefault>, carveout, 0));
  CUDA_CHECK(cudaFuncSetAttribute(chase_global<LoadCg>, carveout, 0));
  CUDA_CHECK(cudaFuncSetAttribute(chase_global<LoadNc>, carveout, 0));

  uint32_t lines = 0;
  auto prepare = [&](uint64_t f) {
    lines = uint32_t(f / kLineBytes);
    Cycle c(lines);
    const size_t bytes = lines * sizeof(uint32_t);
    CUDA_CHECK(cudaMemcpy(next.get(), c.next.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(order.get(), c.order.data(), bytes, cudaMemcpyHostToDevice));
    link_lines<<<(lines + 255) / 256, 256>>>(buf.get(), next.get(), lines, kLineBytes);
    CUDA_CHECK_LAUNCH();
  };
  auto rep = [&](const std::string& probe, uint64_t) {
    // About 64 lines per touching thread keeps the touch close to the cycle's order.
    const int threads =
        int(std::clamp<uint32_t>((lines / 64 + 31) / 32 * 32, 32, kTouchThreadsMax));
    auto launch = [&](auto kernel) {
      return [&, kernel] {
        kernel<<<pin.blocks(), threads>>>(buf.get(), order.get(), lines, kLineBytes,
                                          pin.args(kWarmLoads, b.steps));
      };
    };
    if (probe == kLdGlobalProbe) return pin.run(launch(chase_global<LoadDefault>), b.steps);
    if (probe == kLdCgProbe) return pin.run(launch(chase_global<LoadCg>), b.steps);
    return pin.run(launch(chase_global<LoadNc>), b.steps);
  };
  sweep(ctx, b, pin, {1024, range.max_bytes, kLineBytes, b.ratio, range.tail_bytes}, probes,
        prepare, rep);
}

void run_shared(RunContext& ctx, const Budget& b, Pin& pin) {
  const auto probes = runnable(ctx, {kSharedProbe});
  if (probes.empty()) return;
  // The opt-in limit, less what the kernel declares statically.
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, chase_shared));
  const long long usable = ctx.device().shared_per_block_optin - (long long)attr.sharedSizeBytes;
  const uint64_t max_bytes = uint64_t(usable) / kLineBytes * kLineBytes;
  CUDA_CHECK(cudaFuncSetAttribute(chase_shared, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  int(max_bytes)));
  DeviceBuffer<uint32_t> next(max_bytes / kLineBytes);
  uint32_t lines = 0;
  auto prepare = [&](uint64_t f) {
    lines = uint32_t(f / kLineBytes);
    Cycle c(lines);
    CUDA_CHECK(
        cudaMemcpy(next.get(), c.next.data(), lines * sizeof(uint32_t), cudaMemcpyHostToDevice));
  };
  auto rep = [&](const std::string&, uint64_t f) {
    return pin.run(
        [&] {
          chase_shared<<<pin.blocks(), 256, size_t(f)>>>(next.get(), lines, kLineBytes,
                                                         pin.args(kWarmLoads, b.steps));
        },
        b.steps);
  };
  sweep(ctx, b, pin, {1024, max_bytes, kLineBytes, b.small_ratio}, probes, prepare, rep);
}

void run_constant(RunContext& ctx, const Budget& b, Pin& pin) {
  const auto probes = runnable(ctx, {kConstantProbe});
  if (probes.empty()) return;
  const uint64_t max_bytes =
      std::min<uint64_t>(uint64_t(ctx.device().const_bytes), kConstantBytes) / kConstantLine *
      kConstantLine;
  uint32_t lines = 0;
  auto prepare = [&](uint64_t f) {
    lines = uint32_t(f / kConstantLine);
    Cycle c(lines);
    std::vector<uint32_t> words(f / sizeof(uint32_t), 0);
    for (uint32_t i = 0; i < lines; ++i)
      words[size_t(i) * kConstantLine / sizeof(uint32_t)] = c.next[i] * kConstantLine;
    CUDA_CHECK(cudaMemcpyToSymbol(c_chain, words.data(), f));
  };
  auto rep = [&](const std::string&, uint64_t) {
    return pin.run(
        [&] {
          chase_constant<<<pin.blocks(), 32>>>(pin.args(2 * int(lines) + kWarmLoads, b.steps));
        },
        b.steps);
  };
  sweep(ctx, b, pin, {256, max_bytes, kConstantLine, b.ratio}, probes, prepare, rep);
}

}  // namespace

class LatencyFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(latency::kFamily.name); }
  std::string description() const override {
    return "pointer-chase latency ladder: L1, L2 (near/far partition), DRAM, shared, constant, "
           "read-only path; cache sizes from the knees";
  }
  std::vector<ProbeInfo> probes() const override {
    return {
        {kLdGlobalProbe,
         "default ld.global chase (L1-cached, largest L1 carve-out), 1 KiB to 4.5x L2, then 4x steps to 1 GiB"},
        {kLdCgProbe, "ld.global.cg chase (L2 only), 1 KiB to 4.5x L2, then 4x steps to 1 GiB"},
        {kLdNcProbe,
         "ld.global.nc chase (read-only path), 1 KiB to 4.5x L2, then 4x steps to 1 GiB"},
        {kSharedProbe, "ld.shared chase, 1 KiB to the opt-in shared memory per block"},
        {kConstantProbe, "ld.const chase, 256 B to the 64 KiB constant bank"}};
  }
  void run(RunContext& ctx) override {
    const Budget& b = ctx.quick() ? kQuick : kFull;
    Pin pin(ctx.device());
    run_global(ctx, b, pin);
    run_shared(ctx, b, pin);
    run_constant(ctx, b, pin);
  }
};

GPUPROBE_REGISTER_FAMILY(LatencyFamily);

}  // namespace gpuprobe
