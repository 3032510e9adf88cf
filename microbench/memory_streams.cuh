#pragma once
// What the bandwidth, bytes-in-flight, loaded-latency, concurrency and energy families share:
// loads and stores with an explicit cache operator, the grid-stride streaming read and store,
// occupancy and buffer sizes taken from the device, and a pointer chase over lines that no
// access has touched yet.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpu/cuda.cuh"

namespace gpuprobe {

// The register type that carries one access of W bytes.
template <int W>
struct Access;
template <>
struct Access<4> {
  using T = uint32_t;
};
template <>
struct Access<8> {
  using T = uint2;
};
template <>
struct Access<16> {
  using T = uint4;
};

// PTX cache operators. plain is the default weak load (cached in L1 on sm_70 and later); on
// sm_90 ptxas makes ca a strong SM-scope load (still served by L1) and cg a strong GPU-scope
// one (never served by L1); cs marks the line evict-first; nc takes the read-only path.
// The streaming hints of PTX 7.4+ (sm_80+): na = .L1::no_allocate (no L1 line for data read
// once); cg_256 and nc_na_256 add .L2::256B, a prefetch-size hint that lets the L2 fetch
// 256 B of DRAM around a miss instead of only the sectors asked for; na_ef marks the line
// evict-first in L2 through a createpolicy cache hint.
enum class Load { plain, ca, cg, cs, nc, na, cg_256, nc_na_256, na_ef };
enum class Store { wb, cs, na, ef };

// The streaming hints need sm_80 (PTX ISA 7.4): on an older device those variants are not run,
// and their code there is a trap rather than a different instruction under the same name.
__host__ __device__ constexpr bool needs_sm80(Load op) {
  return op == Load::na || op == Load::cg_256 || op == Load::nc_na_256 || op == Load::na_ef;
}
__host__ __device__ constexpr bool needs_sm80(Store op) { return op == Store::na || op == Store::ef; }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define GPUPROBE_HAVE_SM80_HINTS 0
#else
#define GPUPROBE_HAVE_SM80_HINTS 1
#endif

inline const char* ptx_name(Load op) {
  switch (op) {
    case Load::plain:
      return "ld.global";
    case Load::ca:
      return "ld.global.ca";
    case Load::cg:
      return "ld.global.cg";
    case Load::cs:
      return "ld.global.cs";
    case Load::nc:
      return "ld.global.nc";
    case Load::na:
      return "ld.global.L1::no_allocate";
    case Load::cg_256:
      return "ld.global.cg.L2::256B";
    case Load::nc_na_256:
      return "ld.global.nc.L1::no_allocate.L2::256B";
    case Load::na_ef:
      return "ld.global.L1::no_allocate.L2::evict_first";
  }
  return "?";
}
inline const char* ptx_name(Store op) {
  switch (op) {
    case Store::wb:
      return "st.global";
    case Store::cs:
      return "st.global.cs";
    case Store::na:
      return "st.global.L1::no_allocate";
    case Store::ef:
      return "st.global.L2::evict_first";
  }
  return "?";
}

// An L2 evict-first policy for the whole line, for the .L2::cache_hint forms.
#define GPUPROBE_EVICT_FIRST \
  "{ .reg .b64 pol; createpolicy.fractional.L2::evict_first.b64 pol, 1.0;\n"

// Inline PTX, volatile, so that the access is issued exactly as written: never merged with
// another, hoisted out of a loop or dropped, whatever the compiler proves about the data.
// POLICY_IN / POLICY_ARG / POLICY_OUT: empty, or the evict-first policy block, its operand
// and the brace closing the block.
#define GPUPROBE_LD(Q, POLICY_IN, POLICY_ARG, POLICY_OUT)                                   \
  if constexpr (W == 4)                                                                     \
    asm volatile(POLICY_IN "ld.global" Q ".u32 %0, [%1]" POLICY_ARG ";" POLICY_OUT          \
                 : "=r"(v)                                                                  \
                 : "l"(p));                                                                 \
  else if constexpr (W == 8)                                                                \
    asm volatile(POLICY_IN "ld.global" Q ".v2.u32 {%0, %1}, [%2]" POLICY_ARG ";" POLICY_OUT \
                 : "=r"(v.x), "=r"(v.y)                                                     \
                 : "l"(p));                                                                 \
  else                                                                                      \
    asm volatile(POLICY_IN "ld.global" Q ".v4.u32 {%0, %1, %2, %3}, [%4]" POLICY_ARG        \
                           ";" POLICY_OUT                                                   \
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)                               \
                 : "l"(p));

template <Load Op, int W>
__device__ __forceinline__ typename Access<W>::T load(const void* p) {
  typename Access<W>::T v{};
  if constexpr (Op == Load::plain) {
    GPUPROBE_LD("", "", "", "")
  } else if constexpr (Op == Load::ca) {
    GPUPROBE_LD(".ca", "", "", "")
  } else if constexpr (Op == Load::cg) {
    GPUPROBE_LD(".cg", "", "", "")
  } else if constexpr (Op == Load::cs) {
    GPUPROBE_LD(".cs", "", "", "")
  } else if constexpr (Op == Load::nc) {
    GPUPROBE_LD(".nc", "", "", "")
  } else {
#if GPUPROBE_HAVE_SM80_HINTS
    if constexpr (Op == Load::na) {
      GPUPROBE_LD(".L1::no_allocate", "", "", "")
    } else if constexpr (Op == Load::cg_256) {
      GPUPROBE_LD(".cg.L2::256B", "", "", "")
    } else if constexpr (Op == Load::nc_na_256) {
      GPUPROBE_LD(".nc.L1::no_allocate.L2::256B", "", "", "")
    } else {
      GPUPROBE_LD(".L1::no_allocate.L2::cache_hint", GPUPROBE_EVICT_FIRST, ", pol", " }")
    }
#else
    __trap();
#endif
  }
  return v;
}
#undef GPUPROBE_LD

#define GPUPROBE_ST(Q, POLICY_IN, POLICY_ARG, POLICY_OUT)                                    \
  if constexpr (W == 4)                                                                      \
    asm volatile(POLICY_IN "st.global" Q ".u32 [%0], %1" POLICY_ARG ";" POLICY_OUT ::"l"(p), \
                 "r"(v)                                                                      \
                 : "memory");                                                                \
  else if constexpr (W == 8)                                                                 \
    asm volatile(POLICY_IN "st.global" Q ".v2.u32 [%0], {%1, %2}" POLICY_ARG                 \
                           ";" POLICY_OUT ::"l"(p),                                          \
                 "r"(v.x), "r"(v.y)                                                          \
                 : "memory");                                                                \
  else                                                                                       \
    asm volatile(POLICY_IN "st.global" Q ".v4.u32 [%0], {%1, %2, %3, %4}" POLICY_ARG         \
                           ";" POLICY_OUT ::"l"(p),                                          \
                 "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)                                      \
                 : "memory");

template <Store Op, int W>
__device__ __forceinline__ void store(void* p, typename Access<W>::T v) {
  if constexpr (Op == Store::cs) {
    GPUPROBE_ST(".cs", "", "", "")
  } else if constexpr (needs_sm80(Op)) {
#if GPUPROBE_HAVE_SM80_HINTS
    if constexpr (Op == Store::na) {
      GPUPROBE_ST(".L1::no_allocate", "", "", "")
    } else {
      GPUPROBE_ST(".L2::cache_hint", GPUPROBE_EVICT_FIRST, ", pol", " }")
    }
#else
    __trap();
#endif
  } else {
    GPUPROBE_ST("", "", "", "")
  }
}
#undef GPUPROBE_ST
#undef GPUPROBE_EVICT_FIRST
#undef GPUPROBE_HAVE_SM80_HINTS

// Random-looking bits from an index (murmur3's finaliser): data whose bits toggle as real
// data's do.
__host__ __device__ __forceinline__ uint32_t scramble(uint32_t x) {
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  x ^= x >> 16;
  return x;
}

__device__ __forceinline__ uint32_t fold(uint32_t v) { return v; }
__device__ __forceinline__ uint32_t fold(uint2 v) { return v.x ^ v.y; }
__device__ __forceinline__ uint32_t fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

template <int W>
__device__ __forceinline__ typename Access<W>::T splat(uint32_t x) {
  if constexpr (W == 4)
    return x;
  else if constexpr (W == 8)
    return make_uint2(x, x + 1);
  else
    return make_uint4(x, x + 1, x + 2, x + 3);
}

// Streaming read of a buffer of n accesses of W bytes, wrapping at n. Thread t starts at
// (first + t) mod n and moves `step` = (threads in the grid) mod n accesses at a time, so a
// warp's 32 accesses stay contiguous and the grid sweeps the buffer front to back. Each round
// issues U independent loads before any result is used: U x W bytes in flight per thread,
// and no more: `zero` (0 at run time) ties each round's addresses to the last round's data,
// or ptxas would unroll the rounds and issue the next round's loads early.
// With Slices, warp w instead streams its own slice [w step, (w + 1) step) front to back
// (`step`: a multiple of 32 U accesses; `first` unused): each warp keeps to a few DRAM rows at
// a time instead of the grid moving through the buffer together.
template <int W, int U, Load Op, bool Slices = false>
__global__ void stream_read(const typename Access<W>::T* buf, uint64_t n, uint64_t first,
                            uint64_t step, uint32_t rounds, uint32_t zero, uint32_t* sink,
                            int flag) {
  const uint64_t t = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t span = Slices ? step : n, stride = Slices ? 32 : step;
  const typename Access<W>::T* base = Slices ? buf + t / 32 * step : buf;
  uint64_t i = Slices ? t % 32 : (first + t) % n;
  uint32_t acc = 0;
  for (uint32_t r = 0; r < rounds; ++r) {
    i += acc & zero;
    typename Access<W>::T v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      v[u] = load<Op, W>(base + i);
      i += stride;
      if (i >= span) i -= span;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= fold(v[u]);
  }
  keep(acc, sink, flag);
}

// stream_read<W, U, Op, Slices> chosen at run time: its address for the occupancy calculator
// and a launcher (on the default stream).
struct StreamRead {
  const void* kernel = nullptr;
  void (*launch)(const void* buf, uint64_t n, uint64_t first, uint64_t step, uint32_t rounds,
                 uint32_t* sink, int grid, int threads) = nullptr;
  int width = 0, ilp = 0;
  Load op = Load::cg;
  bool slices = false;
};

template <int W, int U, Load Op, bool Slices = false>
StreamRead stream_read_of() {
  StreamRead s;
  s.kernel = reinterpret_cast<const void*>(&stream_read<W, U, Op, Slices>);
  s.launch = [](const void* buf, uint64_t n, uint64_t first, uint64_t step, uint32_t rounds,
                uint32_t* sink, int grid, int threads) {
    stream_read<W, U, Op, Slices><<<grid, threads>>>(static_cast<const typename Access<W>::T*>(buf),
                                                     n, first, step, rounds, 0, sink, 0);
  };
  s.width = W;
  s.ilp = U;
  s.op = Op;
  s.slices = Slices;
  return s;
}

// `passes` stores of a full buffer, each front to back: U independent W-byte stores per
// thread and round, warp-contiguous (a warp stores whole 128-byte lines). With Copy, each
// value is first loaded (through L2) from `src`; else it is a scramble of `seed` and the
// thread's index (random-looking bits), or zero where `seed` is 0 (the energy family's
// all-zero data).
constexpr uint32_t kStoreSeed = 0x9e3779b9u;

template <int W, int U, Store Op, bool Copy>
__global__ void stream_store(const typename Access<W>::T* src, typename Access<W>::T* dst,
                             uint32_t rounds, uint32_t passes, uint32_t seed) {
  const uint64_t threads = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  const uint64_t first = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const auto fill =
      seed ? splat<W>(scramble(seed ^ static_cast<uint32_t>(first))) : typename Access<W>::T{};
  for (uint32_t pass = 0; pass < passes; ++pass) {
    uint64_t i = first;
    for (uint32_t r = 0; r < rounds; ++r) {
      typename Access<W>::T v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        if constexpr (Copy) v[u] = load<Load::cg, W>(src + i + u * threads);
        else v[u] = fill;
      }
#pragma unroll
      for (int u = 0; u < U; ++u) store<Op, W>(dst + i + u * threads, v[u]);
      i += U * threads;
    }
  }
}

struct StreamStore {
  const void* kernel = nullptr;
  void (*launch)(const void* src, void* dst, uint32_t rounds, uint32_t passes, uint32_t seed,
                 int grid, int threads) = nullptr;
  int width = 0, ilp = 0;
  Store op = Store::wb;
  bool copy = false;
};

template <int W, int U, Store Op, bool Copy>
StreamStore stream_store_of() {
  StreamStore s;
  s.kernel = reinterpret_cast<const void*>(&stream_store<W, U, Op, Copy>);
  s.launch = [](const void* src, void* dst, uint32_t rounds, uint32_t passes, uint32_t seed,
                int grid, int threads) {
    using T = typename Access<W>::T;
    stream_store<W, U, Op, Copy>
        <<<grid, threads>>>(static_cast<const T*>(src), static_cast<T*>(dst), rounds, passes, seed);
  };
  s.width = W;
  s.ilp = U;
  s.op = Op;
  s.copy = Copy;
  return s;
}

// Reads `bytes` of `buf` once, 16 B at a time through L2: what it leaves in L2 is this buffer,
// so a buffer several times the L2 flushes it.
// (A template only so that a file that never calls it does not get its kernel.)
template <int = 0>
void read_through_l2(const void* buf, size_t bytes, const DeviceInfo& d, uint32_t* sink) {
  const StreamRead once = stream_read_of<16, 4, Load::cg>();
  const int threads = 256, grid = 4 * d.sm_count;
  const uint64_t n = bytes / 16, total = static_cast<uint64_t>(grid) * threads;
  once.launch(buf, n, 0, total % n, static_cast<uint32_t>((n + 4 * total - 1) / (4 * total)), sink,
              grid, threads);
  CUDA_CHECK_LAUNCH();
}

// Blocks of `threads` that fit on one SM at once.
inline int resident_blocks(const void* kernel, int threads, size_t dynamic_smem = 0) {
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic_smem));
  return blocks;
}

// A buffer that cannot live in L2: 32x L2 and at least 1 GiB, so that a pass over it takes
// long against a launch, but never more than a quarter of the free memory.
inline size_t dram_buffer_bytes(const DeviceInfo& d) {
  size_t want = std::max<size_t>(32 * static_cast<size_t>(d.l2_bytes), size_t(1) << 30);
  size_t cap = static_cast<size_t>(d.free_mem_bytes) / 4;
  return (std::min(want, cap) >> 20) << 20;
}

// Writes link i of a compact chain into the first word of line i.
template <int = 0>
__global__ void spread_links(const uint32_t* next, uint32_t* lines, uint32_t n, uint32_t words) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) lines[static_cast<size_t>(i) * words] = next[i];
}

// A random single cycle (Sattolo) over `lines` lines of `line_bytes`, each line's first word
// holding the index of the next line. Walks continue where the last one stopped, so until
// `lines` steps have been taken every step reaches a line no walk has touched: after the
// chain is flushed from L2, each step goes to DRAM.
class LineChain {
 public:
  template <int = 0>  // instantiated (with its kernel) only in files that build a chain
  LineChain(uint32_t lines, uint32_t line_bytes, uint64_t seed)
      : lines_(lines),
        line_words_(line_bytes / 4),
        buf_(static_cast<size_t>(lines) * (line_bytes / 4)) {
    std::vector<uint32_t> next = sattolo_cycle(lines, seed);
    DeviceBuffer<uint32_t> compact(lines);
    CUDA_CHECK(cudaMemset(buf_.get(), 0, buf_.bytes()));
    CUDA_CHECK(cudaMemcpy(compact.get(), next.data(), compact.bytes(), cudaMemcpyHostToDevice));
    spread_links<<<(lines + 255) / 256, 256>>>(compact.get(), buf_.get(), lines, line_words_);
    CUDA_CHECK_LAUNCH();
  }
  const uint32_t* data() const { return buf_.get(); }
  uint32_t line_words() const { return line_words_; }
  uint32_t lines() const { return lines_; }
  size_t bytes() const { return buf_.bytes(); }
  // Where the next walk starts; `advance` records where a walk of `steps` stopped.
  uint32_t cursor() const { return cursor_; }
  void advance(uint32_t stopped_at, uint64_t steps) {
    cursor_ = stopped_at;
    walked_ += steps;
  }
  // Whether every step so far reached a line not visited before.
  bool fresh() const { return walked_ <= lines_; }

 private:
  uint32_t lines_, line_words_;
  DeviceBuffer<uint32_t> buf_;
  uint32_t cursor_ = 0;
  uint64_t walked_ = 0;
};

// One thread follows `steps` links of a LineChain from `start` through L2 (ld.global.cg) and
// returns where it stopped; *cycles gets the SM cycles the walk took. Each load's address is
// the previous load's value, so the loads cannot overlap: cycles / steps is the latency.
__device__ __forceinline__ uint32_t chase(const uint32_t* chain, uint32_t line_words,
                                          uint32_t start, uint32_t steps, long long* cycles) {
  uint32_t p = start;
  const long long t0 = clock64();
  for (uint32_t s = 0; s < steps; ++s)
    p = load<Load::cg, 4>(chain + static_cast<size_t>(p) * line_words);
  *cycles = clock64() - t0;
  return p;
}

}  // namespace gpuprobe
