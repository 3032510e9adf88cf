#pragma once
// Pointer chases for the memory-structure families (granularity, fine_grained, carveout,
// tlb): loads on a chosen path (L1-cached, read-only, L2-only), chains laid out on the device,
// and one chase kernel that either times whole passes or every single access (Mei & Chu's
// fine-grained chase), for one thread or one lane in each of many warps.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "analysis/common/memory_chase.hpp"
#include "gpu/cuda.cuh"
#include "base/observation.hpp"

namespace gpuprobe {

// Which cache a global load goes through: the default ld.global (weak, cached in L1; an
// explicit .ca compiles to a strong SM-scope load on sm_70+, which user code rarely issues),
// ld.global.nc (read-only path) or ld.global.cg (L2 only).
enum class Path { l1, readonly, l2 };

template <Path P, int W>
__device__ uint64_t load_next(const char* p);

// W is the access width in bytes; the first 4 or 8 bytes hold the next element's offset.
// Volatile asm: the compiler can neither drop, merge nor reorder the loads.
#define GPUPROBE_CHASE_LOADS(P, Q)                                                         \
  template <>                                                                              \
  __device__ __forceinline__ uint64_t load_next<P, 4>(const char* p) {                     \
    uint32_t v;                                                                            \
    asm volatile(Q ".u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");                       \
    return v;                                                                              \
  }                                                                                        \
  template <>                                                                              \
  __device__ __forceinline__ uint64_t load_next<P, 8>(const char* p) {                     \
    uint64_t v;                                                                            \
    asm volatile(Q ".u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");                       \
    return v;                                                                              \
  }                                                                                        \
  template <>                                                                              \
  __device__ __forceinline__ uint64_t load_next<P, 16>(const char* p) {                    \
    uint64_t v;                                                                            \
    asm volatile("{ .reg .u64 t; " Q ".v2.u64 {%0, t}, [%1]; }"                             \
                 : "=l"(v) : "l"(p) : "memory");                                           \
    return v;                                                                              \
  }
GPUPROBE_CHASE_LOADS(Path::l1, "ld.global")
GPUPROBE_CHASE_LOADS(Path::readonly, "ld.global.nc")
GPUPROBE_CHASE_LOADS(Path::l2, "ld.global.cg")
#undef GPUPROBE_CHASE_LOADS

// Element at base + cur holds the byte offset (from base) of the next element.
template <Path P, int W>
struct GlobalLoader {
  const char* base;
  __device__ __forceinline__ uint64_t operator()(uint64_t cur) const {
    return load_next<P, W>(base + cur);
  }
};

// Declares `__constant__ uint32_t NAME[WORDS]` and LOADER, which chases through it with
// volatile ld.const (byte offsets, like the global chains). At global scope: the asm names
// the array's unmangled symbol.
#define GPUPROBE_CONSTANT_CHAIN(NAME, LOADER, WORDS)                                       \
  __constant__ uint32_t NAME[WORDS];                                                       \
  struct LOADER {                                                                          \
    __device__ __forceinline__ uint64_t operator()(uint64_t cur) const {                   \
      uint32_t v;                                                                          \
      asm volatile("{ .reg .u64 a; mov.u64 a, " #NAME "; add.u64 a, a, %1; ld.const.u32 %0, [a]; }" \
                   : "=r"(v) : "l"(cur) : "memory");                                      \
      return v;                                                                            \
    }                                                                                      \
  }

__device__ __forceinline__ uint64_t clock_now() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

// A branch on `v` that is never taken: what follows cannot issue before the load that
// produced `v` has returned, so a clock read after it includes that load's latency. The low
// word is tested so that a zero-extended 32-bit load cannot be proven to skip the test.
__device__ __forceinline__ void wait_for(uint64_t v) {
  if (static_cast<uint32_t>(v) == 0xffffffffu) asm volatile("trap;");
}

template <class Loader>
__device__ __forceinline__ void pass(const Loader& ld, uint64_t& cur, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) cur = ld(cur);
}

// Cycles of n dependent accesses, from the first issue to the last arrival.
template <class Loader>
__device__ __forceinline__ uint64_t timed_pass(const Loader& ld, uint64_t& cur, uint32_t n) {
  wait_for(cur);
  const uint64_t t0 = clock_now();
  pass(ld, cur, n);
  wait_for(cur);
  return clock_now() - t0;
}

// Where the elements of a chain lie: visit v goes to slot (v mod n) * step mod n of round
// v / n; slots are `stride` apart and each round is shifted by `round_offset` (another line of
// the same page, say). `step` coprime with n makes one cycle that jumps across the footprint.
// Chain c lies `chain_span` bytes after chain c - 1, the first at `origin`.
struct ChainLayout {
  uint64_t n = 1, step = 1, stride = 0, rounds = 1, round_offset = 0, chain_span = 0, origin = 0;
  uint32_t chains = 1;
  __host__ __device__ uint64_t length() const { return n * rounds; }
  __host__ __device__ uint64_t offset(uint32_t chain, uint64_t v) const {
    const uint64_t r = v / n, i = v % n;
    return origin + chain * chain_span + (i * step % n) * stride + r * round_offset;
  }
  uint64_t footprint() const { return n * stride * chains; }
};

// A step near 0.618 n that is coprime with n: consecutive visits land far apart.
inline uint64_t coprime_step(uint64_t n) {
  if (n <= 2) return 1;
  uint64_t s = static_cast<uint64_t>(0.618 * static_cast<double>(n));
  while (std::gcd(s, n) != 1) ++s;
  return s;
}

// Kernels live in a named namespace: the code checks find them by name
// (kernels() in analysis/<family>.hpp).
namespace memory_chase {

// Offsets stored as T (uint32_t for 4-byte elements, uint64_t otherwise).
template <class T>
__global__ void write_chain(char* base, ChainLayout c) {
  const uint64_t len = c.length(), total = len * c.chains;
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < total;
       k += uint64_t(gridDim.x) * blockDim.x) {
    const uint32_t chain = static_cast<uint32_t>(k / len);
    const uint64_t v = k % len;
    *reinterpret_cast<T*>(base + c.offset(chain, v)) = static_cast<T>(c.offset(chain, (v + 1) % len));
  }
}

}  // namespace memory_chase

template <class T>
void build_chain(char* base, const ChainLayout& c) {
  const uint64_t total = c.length() * c.chains;
  const unsigned blocks = static_cast<unsigned>(std::min<uint64_t>(4096, (total + 255) / 256));
  memory_chase::write_chain<T><<<blocks, 256>>>(base, c);
  CUDA_CHECK_LAUNCH();
}

struct ChaseArgs {
  uint64_t start = 0;       // chain c starts at c * chain_span + start
  uint64_t chain_span = 0;
  uint32_t n = 0;           // accesses per pass
  uint32_t passes = 2, warm = 1;  // passes run; the first `warm` are not counted
  uint32_t threshold = 0;   // per-access mode: a counted access slower than this is a miss
  uint32_t chains = 1;
  unsigned long long* cycles = nullptr;  // [chains] cycles of the counted accesses
  unsigned int* misses = nullptr;        // [chains]
  uint16_t* trace = nullptr;             // latencies of the first trace_len counted accesses
  uint32_t trace_len = 0;                //   (chain 0; dynamic shared memory during the run)
  uint32_t shared_bytes = 0;             // dynamic shared memory to hold (>= 2 * trace_len),
                                         //   which selects the carve-out the run sees
  uint64_t* sink = nullptr;
  int flag = 0;                          // 0 at run time: keep() stores nothing
};

namespace memory_chase {

// One chain per warp, run by its lane 0 so that every access is one address. kPerAccess
// brackets each load with clock reads (its latency then includes a few cycles of timing);
// otherwise the counted passes are timed as a whole.
template <bool kPerAccess, class Loader>
__global__ void chase(Loader ld, ChaseArgs a) {
  extern __shared__ uint16_t trace_smem[];
  const uint32_t chain = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (threadIdx.x % 32 != 0 || chain >= a.chains) return;
  uint64_t cur = chain * a.chain_span + a.start;
  unsigned long long total = 0;
  unsigned int misses = 0;
  uint32_t traced = 0;
  for (uint32_t p = 0; p < a.passes; ++p) {
    const bool counted = p >= a.warm;
    if constexpr (!kPerAccess) {
      if (counted)
        total += timed_pass(ld, cur, a.n);
      else
        pass(ld, cur, a.n);
    } else {
      for (uint32_t i = 0; i < a.n; ++i) {
        const uint64_t t0 = clock_now();
        cur = ld(cur);
        wait_for(cur);
        const uint32_t lat = static_cast<uint32_t>(clock_now() - t0);
        if (!counted) continue;
        total += lat;
        misses += lat > a.threshold;
        if (chain == 0 && traced < a.trace_len)
          trace_smem[traced++] = static_cast<uint16_t>(min(lat, 65535u));
      }
    }
  }
  a.cycles[chain] = total;
  a.misses[chain] = misses;
  for (uint32_t i = 0; i < traced; ++i) a.trace[i] = trace_smem[i];
  keep(cur, a.sink, a.flag);
}

}  // namespace memory_chase

// One level of a hit/miss calibration (hit, miss, the threshold between them) as a row of
// memory_chase::kCalibrationProbe, from `reps` timed accesses.
inline Observation calibration_row(const std::string& family, const std::string& level,
                                   double cycles, int reps) {
  Observation o;
  o.family = family;
  o.probe = memory_chase::kCalibrationProbe;
  o.params = {{memory_chase::kLevelColumn, level}};
  o.value = o.p05 = o.p50 = o.p95 = cycles;
  o.unit = "cycles";
  o.reps = reps;
  return o;
}

struct ChaseResult {
  double cycles_per_access = 0;  // mean over the counted accesses of all chains
  double misses_per_pass = 0;    // per chain, per counted pass
  double seconds = 0;
  std::vector<uint16_t> trace;
};

// Device-side counters for chase launches; reused across launches of a family.
class ChaseRunner {
 public:
  explicit ChaseRunner(uint32_t max_chains = 1, uint32_t max_trace = 0)
      : cycles_(max_chains), misses_(max_chains), trace_(max_trace ? max_trace : 1), sink_(1) {}

  // `warps_per_block` chains share a block; blocks spread the chains over the SMs.
  template <bool kPerAccess, class Loader>
  ChaseResult run(const Loader& ld, ChaseArgs a, uint32_t warps_per_block = 1) {
    if (a.chains > cycles_.size() || a.trace_len > trace_.size())
      throw std::logic_error("ChaseRunner: more chains or trace than allocated");
    a.cycles = cycles_.get();
    a.misses = misses_.get();
    a.trace = trace_.get();
    a.sink = sink_.get();
    a.flag = 0;
    const unsigned blocks = (a.chains + warps_per_block - 1) / warps_per_block;
    const size_t smem = std::max<size_t>(a.shared_bytes, a.trace_len * sizeof(uint16_t));
    ChaseResult r;
    r.seconds = time_seconds(
        [&] { memory_chase::chase<kPerAccess><<<blocks, 32 * warps_per_block, smem>>>(ld, a); });
    std::vector<unsigned long long> cyc(a.chains);
    std::vector<unsigned int> mis(a.chains);
    CUDA_CHECK(cudaMemcpy(cyc.data(), a.cycles, a.chains * sizeof(cyc[0]), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(mis.data(), a.misses, a.chains * sizeof(mis[0]), cudaMemcpyDeviceToHost));
    const double counted_passes = a.passes - a.warm;
    double c = 0, m = 0;
    for (uint32_t i = 0; i < a.chains; ++i) c += static_cast<double>(cyc[i]), m += mis[i];
    r.cycles_per_access = c / (static_cast<double>(a.chains) * a.n * counted_passes);
    r.misses_per_pass = m / (a.chains * counted_passes);
    if (a.trace_len) {
      r.trace.resize(std::min<size_t>(a.trace_len, static_cast<size_t>(a.n) * counted_passes));
      CUDA_CHECK(cudaMemcpy(r.trace.data(), a.trace, r.trace.size() * sizeof(uint16_t),
                            cudaMemcpyDeviceToHost));
    }
    return r;
  }

 private:
  DeviceBuffer<unsigned long long> cycles_;
  DeviceBuffer<unsigned int> misses_;
  DeviceBuffer<uint16_t> trace_;
  DeviceBuffer<uint64_t> sink_;
};

}  // namespace gpuprobe
