// Energy per operation and per byte, and the idle and static power (analysis/energy.hpp says
// how they are inferred). Each kernel runs back to back on the default stream for one window
// of NVML energy-counter steps while the host polls the counter every half millisecond; the
// kernel's rate comes from CUDA events around the same launches. The ALU kernels reuse the
// pipes family's operations (pipe_ops.cuh), the tensor pipe its wgmma kernels
// (tensor_wgmma.cu), the memory levels the streaming kernels of memory_streams.cuh. The GPU's
// settings are never changed: clocks and power limit are read, not set.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "analysis/energy.hpp"
#include "analysis/pipes.hpp"
#include "base/operating_point.hpp"
#include "base/signals.hpp"
#include "base/stats.hpp"
#include "energy_windows.cuh"
#include "gpu/nvml.hpp"
#include "gpu/sass_check.hpp"
#include "memory_streams.cuh"
#include "pipe_ops.cuh"

namespace gpuprobe::energy {

// --- Kernels ---------------------------------------------------------------------------------

constexpr int kBlockThreads = 1024;       // one block per SM holds 32 warps: every scheduler busy
constexpr uint32_t kRestNs = 50000;       // a resting warp wakes this often to look at the time
constexpr uint64_t kRestTripNs = 100000;  // the static windows' launches: this long per trip
constexpr int kSharedVec = 2 * kBlockThreads;  // 32 KiB of 16-byte words per block
constexpr uint32_t kFiniteMask = 0x3FFFFFFFu;  // fp32 bits of a finite value in [0, 2)

// Two operand sets per thread, the second undoing the first (x -> a x + b -> x), so that a
// chain swings between two random values for as long as it runs: its operands toggle as real
// data's do instead of settling on a fixed point. seed 0: every operand zero.
__device__ void make_args(uint32_t seed, uint32_t id, pipes::OpArgs (&args)[2]) {
  for (auto& a : args) {
    a.f32_a = a.f32_b = 0;
    a.f64_a = a.f64_b = 0;
    a.u32_a = a.u32_b = a.h2_a = a.h2_b = 0;
  }
  if (seed == 0) return;
  const uint32_t r0 = scramble(seed ^ id), r1 = scramble(r0 + 1), r2 = scramble(r0 + 2),
                 r3 = scramble(r0 + 3);
  const float scale = 2.3283064e-10f;  // 2^-32
  // Approximate reciprocals (MUFU, not FMA or DFMA code outside the loop): the pair undoes
  // itself to a part in 10^7, which in a launch's trips moves a chain by a few per cent at most.
  const float a = (r0 & 1 ? -1.f : 1.f) * (0.75f + 0.5f * (r1 * scale)), b = r2 * scale - 0.5f;
  const float ra = __fdividef(1.f, a);
  args[0].f32_a = a, args[0].f32_b = b, args[1].f32_a = ra, args[1].f32_b = -b * ra;
  args[0].f64_a = a, args[0].f64_b = b, args[1].f64_a = ra, args[1].f64_b = -b * ra;
  uint32_t inv = r1 | 1u, m = r1 | 1u;
  for (int i = 0; i < 4; ++i) inv *= 2u - m * inv;  // Newton: 3 -> 48 correct bits mod 2^32
  args[0].u32_a = m, args[0].u32_b = r2, args[1].u32_a = inv, args[1].u32_b = 0u - inv * r2;
  // Half-precision pairs (and their bits as bf16, tf32 and int8): exponents 13..16, any sign and
  // mantissa, so every type reads a finite value near 1.
  auto halves = [](uint32_t r) {
    auto h = [](uint32_t x) { return (x & 0x83FFu) | ((13u + ((x >> 10) & 3u)) << 10); };
    return h(r) | (h(r >> 16) << 16);
  };
  args[0].h2_a = halves(r2), args[0].h2_b = halves(r3);
  args[1].h2_a = halves(scramble(r3)), args[1].h2_b = halves(scramble(r3 + 1));
}

// ILP chains of Op per thread, UNROLL steps each per loop trip, the two operand sets taking
// turns. The pipes family's own throughput kernel passes one operand set to every thread.
template <class Op, int ILP, int UNROLL>
__global__ void __launch_bounds__(kBlockThreads, 1)
    alu(int iters, uint32_t seed, typename Op::State* sink, int flag) {
  static_assert(UNROLL % 2 == 0, "the operand sets take turns");
  const uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
  pipes::OpArgs args[2];
  make_args(seed, id, args);
  typename Op::State s[ILP];
#pragma unroll
  for (int k = 0; k < ILP; ++k)
    s[k] = Op::init(seed ? scramble(seed + id * ILP + k) : 0u, {}, args[0]);
  // The clock reads only mark the loop for the code checks (base/code_check.hpp).
  const long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int k = 0; k < ILP; ++k) Op::apply(s[k], args[u & 1]);
    }
  }
  const long long t1 = clock64();
#pragma unroll
  for (int k = 0; k < ILP; ++k) keep(s[k], sink + k, flag);
  keep(t1 - t0, reinterpret_cast<long long*>(sink), flag);
}

// Warps that hold their SM and issue nothing: asleep until `ns` after they started, or until
// the host sets *stop.
__global__ void __launch_bounds__(kBlockThreads, 1) rest(uint64_t ns, const volatile int* stop) {
  const uint64_t until = global_timer_ns() + ns;
  while (global_timer_ns() < until && !(stop && *stop)) pause_ns(kRestNs);
}

__device__ __forceinline__ uint4 ld_shared(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr));
  return v;
}
__device__ __forceinline__ void st_shared(uint32_t addr, uint4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w)
               : "memory");
}

// 16-byte shared loads (XOR-folded) or stores, conflict-free (a warp's 32 words are
// consecutive), the index moving every trip so that no access repeats the last one's address.
// The data: hashed words, or zero (seed 0); stores alternate two values.
template <bool Write>
__global__ void __launch_bounds__(kBlockThreads, 1)
    shared_stream(int iters, uint32_t seed, uint32_t* sink, int flag) {
  __shared__ uint4 buf[kSharedVec];
  for (int i = threadIdx.x; i < kSharedVec; i += blockDim.x) {
    const uint32_t h = seed ? scramble(seed ^ (blockIdx.x * kSharedVec + i)) : 0u;
    buf[i] = make_uint4(h, seed ? scramble(h) : 0u, seed ? scramble(h + 1) : 0u,
                        seed ? scramble(h + 2) : 0u);
  }
  __syncthreads();
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(buf));
  const uint4 w0 = buf[threadIdx.x], w1 = buf[kSharedVec - 1 - threadIdx.x];
  uint32_t acc = 0, idx = threadIdx.x;
  const long long t0 = clock64();  // marks the loop for the code checks
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kSharedUnroll; ++u) {
      const uint32_t addr = base + ((idx + u * 64u) % kSharedVec) * 16u;
      if constexpr (Write) {
        st_shared(addr, u & 1 ? w1 : w0);
      } else {
        const uint4 v = ld_shared(addr);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
      }
    }
    idx += 32;
  }
  const long long t1 = clock64();
  keep(acc + static_cast<uint32_t>(t1 - t0), sink, flag);
}

// Words of hashed bits under `mask`, or zero (seed 0).
__global__ void fill_words(uint32_t* p, size_t n, uint32_t seed, uint32_t mask) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    p[i] = seed ? scramble(seed ^ static_cast<uint32_t>(i) ^ static_cast<uint32_t>(i >> 32)) & mask
                : 0u;
}

// Held out: a[i] = b[i] + s c[i] over float4s, `passes` times (loads through L2, as the DRAM
// read fits read).
__global__ void __launch_bounds__(kBlockThreads, 1)
    triad(const float4* b, const float4* c, float4* a, uint64_t n, float s, uint32_t passes) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
#pragma unroll 1
  for (uint32_t p = 0; p < passes; ++p) {
#pragma unroll 1
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += stride) {
      const uint4 bu = load<Load::cg, 16>(b + i), cu = load<Load::cg, 16>(c + i);
      const float4 bv = make_float4(__uint_as_float(bu.x), __uint_as_float(bu.y),
                                    __uint_as_float(bu.z), __uint_as_float(bu.w));
      const float4 cv = make_float4(__uint_as_float(cu.x), __uint_as_float(cu.y),
                                    __uint_as_float(cu.z), __uint_as_float(cu.w));
      const uint4 r =
          make_uint4(__float_as_uint(fmaf(s, cv.x, bv.x)), __float_as_uint(fmaf(s, cv.y, bv.y)),
                     __float_as_uint(fmaf(s, cv.z, bv.z)), __float_as_uint(fmaf(s, cv.w, bv.w)));
      store<Store::wb, 16>(a + i, r);
    }
  }
}

// Held out: each float read from DRAM seeds kMixedFmasPerWord dependent FMAs and one more into
// the thread's sum: FMA and DRAM traffic at once.
__global__ void __launch_bounds__(kBlockThreads, 1)
    fma_dram(const float4* buf, uint64_t n, float m, uint32_t passes, float* sink, int flag) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  float acc = 0;
#pragma unroll 1
  for (uint32_t p = 0; p < passes; ++p) {
#pragma unroll 1
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += stride) {
      const uint4 q = load<Load::cg, 16>(buf + i);
      float t[4] = {__uint_as_float(q.x), __uint_as_float(q.y), __uint_as_float(q.z),
                    __uint_as_float(q.w)};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float v = t[j];
#pragma unroll
        for (int f = 0; f < kMixedFmasPerWord; ++f) t[j] = fmaf(t[j], m, v);
        acc = fmaf(t[j], m, acc);
      }
    }
  }
  keep(acc, sink, flag);
}

namespace {

// The companion of the link windows: one resting block until the host sets *stop.
void rest_beside(cudaStream_t side, const volatile int* stop) {
  rest<<<1, kBlockThreads, 0, side>>>(uint64_t(kWindowTimeoutS * 2e9), stop);
}

// --- The plan --------------------------------------------------------------------------------

std::string alu_kernel_name(const std::string& type, int ilp) {
  return "energy::alu<pipes::" + type + ", " + std::to_string(ilp) + ", " +
         std::to_string(kAluUnroll) + ">";
}

// Pinned host memory owned by scope (the host link's other end).
struct HostBuffer {
  void* p = nullptr;
  size_t bytes = 0;
  explicit HostBuffer(size_t n) : bytes(n) { CUDA_CHECK(cudaMallocHost(&p, n)); }
  ~HostBuffer() { cudaFreeHost(p); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
};

constexpr uint32_t kRandomSeed = 0x5eed1234u;
constexpr size_t kHostChunk = size_t(64) << 20;  // one copy: long against its launch
constexpr size_t kL1Accesses = 3000;             // 48 000 B read again and again: L1-resident
constexpr double kL2NearFraction = 0.25, kL2FarFraction = 0.75;  // of L2, as bandwidth.cu reads
constexpr float kTriadScale = 0.5f, kMixedMultiplier = 0.5f;

class EnergyRun {
 public:
  explicit EnergyRun(RunContext& ctx)
      : ctx_(ctx), dev_(ctx.device()), nvml_(dev_.pci_bus_id), t0_(Clock::now()),
        meter_({&nvml_}, t0_, rest_beside), sink_(1024) {}

  void run() {
    idle();
    baselines(true);
    for (const auto& op : alu_ops()) measure_alu(op, alu_fractions(), kRandom);
    baselines(false);
    measure_tensor(kRandom, tensor_fractions());
    baselines(true);
    measure_levels(kRandom, alu_fractions());
    baselines(false);
    measure_heldout();
    measure_links();
    baselines(true);
    // All-zero operands last, at one rate each: the budget cuts these first.
    for (const auto& op : alu_ops()) measure_alu(op, {alu_fractions().back()}, kZero);
    measure_tensor(kZero, {tensor_fractions().back()});
    measure_levels(kZero, {alu_fractions().back()});
    baselines(false);
    idle();
  }

 private:
  int sms(double fraction) const {
    return std::max(1, static_cast<int>(std::lround(fraction * dev_.sm_count)));
  }
  bool over_budget(const std::string& probe) {
    if (meter_.elapsed() < kFamilyBudgetS) return false;
    ctx_.skip(probe, "the family's time budget (" + format_printf("%.0f", kFamilyBudgetS) +
                         " s) was spent");
    return true;
  }

  // Sizes one launch to about kLaunchS, runs the window and records it. The baselines run
  // whatever --filter selects: every fit needs them.
  void window(Work l, Meter& meter, const std::vector<int>& companions = {}) {
    const bool baseline =
        l.probe == kStatic || l.probe == kStaticOneSm || l.probe == kNvlinkBaseline;
    if ((!baseline && !ctx_.enabled(l.probe)) || over_budget(l.probe)) return;
    ctx_.progress(l.probe + " " + l.operands + " on " + std::to_string(l.active_sms) + " SMs");
    if (l.enqueue) {
      l.enqueue(1);  // module load, first touch
      CUDA_CHECK_LAUNCH();
      l.trips = calibrate_iterations([&](int n) { return time_seconds([&] { l.enqueue(n); }); },
                                     kLaunchS);
    }
    const WindowResult r = meter.run(l, companions);
    record(l, r);
  }

  void record(const Work& l, const WindowResult& r) {
    const Params base = {{kOperandsColumn, l.operands.empty() ? "-" : l.operands},
                         {kActiveSmsColumn, std::to_string(l.active_sms)},
                         {kWindowColumn, std::to_string(next_id_++)},
                         {kReasonsColumn, throttle_reason_text(r.reasons & kLimitingReasons)}};
    // One figure per row; only the power has a spread (its counter intervals').
    auto row = [&](const std::string& unit, double v, int reps, const Params& extra = {},
                   double sd = 0) {
      if (!std::isfinite(v)) return;
      Observation o{"", l.probe, base, v, unit, v - kSpreadZ * sd, v, v + kSpreadZ * sd, reps};
      o.params.insert(o.params.end(), extra.begin(), extra.end());
      ctx_.record(o);
    };
    row("W", r.watts, r.intervals, {}, r.sd);
    if (l.enqueue && r.gpu_s > 0) {
      const double trips = double(r.launches) * l.trips;
      const double per_s = 1 / (r.gpu_s * kRateScale);  // recorded in Gop/s and GB/s
      if (l.work_per_trip > 0) row(rate_unit(l.probe), l.work_per_trip * trips * per_s, r.launches);
      for (const auto& [c, w] : l.components)
        row(rate_unit(c), w * trips * per_s, r.launches, {{kComponentColumn, c}});
      for (const auto& [c, w] : l.per_launch)
        row(rate_unit(c), w * r.launches * per_s, r.launches, {{kComponentColumn, c}});
      row("s/launch", r.gpu_s / r.launches, r.launches);
    }
    row("MHz", r.sm_mhz, 1);
    row("C", r.temp_c, 1);
    row("s", r.t_mid, 1);
  }

  void idle() {
    if (!ctx_.enabled(kIdle) || over_budget(kIdle)) return;
    CUDA_CHECK(cudaDeviceSynchronize());
    std::this_thread::sleep_for(std::chrono::duration<double>(kIdleSettleS));
    Work l;
    l.probe = kIdle;
    record(l, meter_.run(l, {}));
  }

  // The static windows: every SM resting (and, with `one_sm`, one SM resting alone).
  void baselines(bool one_sm) {
    if (!sass_allows(ctx_, kStatic, {"energy::rest"})) return;
    for (int k : one_sm ? std::vector<int>{dev_.sm_count, 1} : std::vector<int>{dev_.sm_count}) {
      Work l;
      l.probe = k == 1 ? kStaticOneSm : kStatic;
      l.active_sms = k;
      l.enqueue = [k](int trips) {
        rest<<<k, kBlockThreads>>>(uint64_t(trips) * kRestTripNs, nullptr);
      };
      window(l, meter_);
    }
  }

  template <class Op, int ILP>
  void alu_window(const std::string& operands, int k) {
    Work l;
    l.probe = Op::kName;
    l.operands = operands;
    l.active_sms = k;
    l.work_per_trip =
        double(k) * kBlockThreads / dev_.warp_size * ILP * kAluUnroll * Op::kResultsPerWarp;
    auto* sink = reinterpret_cast<typename Op::State*>(sink_.get());
    const uint32_t seed = operands == kZero ? 0u : kRandomSeed;
    l.enqueue = [k, seed, sink](int trips) {
      alu<Op, ILP, kAluUnroll><<<k, kBlockThreads>>>(trips, seed, sink, 0);
    };
    window(l, meter_);
  }

  template <class Op, int ILP>
  bool alu_if(const std::string& probe, const std::vector<double>& fractions,
              const std::string& operands) {
    if (probe != Op::kName) return false;
    if (dev_.cc() < Op::kMinCC) {
      ctx_.skip(probe, "needs compute capability " + std::to_string(Op::kMinCC / 10) + "." +
                           std::to_string(Op::kMinCC % 10));
      return true;
    }
    if (!ctx_.enabled(probe) || !sass_allows(ctx_, probe, {alu_kernel_name(Op::kType, ILP)}))
      return true;
    for (double f : fractions) alu_window<Op, ILP>(operands, sms(f));
    return true;
  }

  void measure_alu(const std::string& probe, const std::vector<double>& fractions,
                   const std::string& operands) {
    using namespace pipes;
    const bool known = alu_if<Fp32Fma, kAluIlp>(probe, fractions, operands) ||
                       alu_if<Fp64Fma, kAluIlp>(probe, fractions, operands) ||
                       alu_if<Int32Mad, kAluIlp>(probe, fractions, operands) ||
                       alu_if<SfuSin, kAluIlp>(probe, fractions, operands) ||
                       alu_if<MmaF16, kMmaIlp>(probe, fractions, operands) ||
                       alu_if<MmaBf16, kMmaIlp>(probe, fractions, operands) ||
                       alu_if<MmaTf32, kMmaIlp>(probe, fractions, operands) ||
                       alu_if<MmaInt8, kMmaIlp>(probe, fractions, operands);
    if (!known) throw std::logic_error("energy: no ALU kernel for " + probe);
  }

  // The tensor pipe: Hopper's wgmma (what its GEMMs use), else warp-level mma.sync.
  void measure_tensor(const std::string& operands, const std::vector<double>& fractions) {
    if (dev_.cc() != 90) {
      for (const auto& op : mma_ops()) measure_alu(op, fractions, operands);
      return;
    }
    for (const auto& op : pipes::wgmma_ops()) {
      if (!ctx_.enabled(op.probe)) continue;
      for (double f : fractions) {
        auto kernel = pipes::wgmma_repeated(ctx_, op.probe, sms(f), operands == kZero);
        if (!kernel) break;
        Work l;
        l.probe = op.probe;
        l.operands = operands;
        l.active_sms = sms(f);
        l.work_per_trip = kernel->results_per_trip;
        l.enqueue = kernel->enqueue;
        window(l, meter_);
      }
    }
  }

  void fill(void* p, size_t bytes, bool zero, uint32_t mask = 0xFFFFFFFFu) {
    fill_words<<<4 * dev_.sm_count, 256>>>(static_cast<uint32_t*>(p), bytes / 4,
                                           zero ? 0u : kRandomSeed, mask);
    CUDA_CHECK_LAUNCH();
  }

  Work level(const std::string& probe, const std::string& operands, int k) {
    Work l;
    l.probe = probe;
    l.operands = operands;
    l.active_sms = k;
    return l;
  }

  // A streaming read of n 16-byte words of big_ (through L1 for l1_read).
  void read_window(const std::string& probe, const std::string& operands, int k, uint64_t n) {
    const StreamRead r = probe == kL1Read ? stream_read_of<16, kStreamIlp, Load::plain>()
                                          : stream_read_of<16, kStreamIlp, Load::cg>();
    Work l = level(probe, operands, k);
    const uint64_t threads = uint64_t(k) * kBlockThreads;
    l.work_per_trip = double(threads) * kStreamIlp * 16;
    uint32_t* sink = reinterpret_cast<uint32_t*>(sink_.get());
    const void* buf = big_.get();
    l.enqueue = [r, buf, n, threads, sink, k](int trips) {
      r.launch(buf, n, 0, threads % n, static_cast<uint32_t>(trips), sink, k, kBlockThreads);
    };
    window(l, meter_);
  }

  void measure_levels(const std::string& operands, const std::vector<double>& fractions) {
    const bool zero = operands == kZero;
    if (!sass_allows(ctx_, kSharedRead,
                     {"energy::shared_stream<false>", "energy::shared_stream<true>"}))
      return;
    if (big_.size() == 0) big_ = DeviceBuffer<uint8_t>(dram_buffer_bytes(dev_));
    fill(big_.get(), big_.bytes(), zero);
    const uint64_t l2 = static_cast<uint64_t>(dev_.l2_bytes);
    for (double f : fractions) {
      const int k = sms(f);
      for (bool write : {false, true}) {
        Work l = level(write ? kSharedWrite : kSharedRead, operands, k);
        l.work_per_trip = double(k) * kBlockThreads * kSharedUnroll * 16;
        const uint32_t seed = zero ? 0u : kRandomSeed;
        uint32_t* sink = reinterpret_cast<uint32_t*>(sink_.get());
        l.enqueue = [k, seed, sink, write](int trips) {
          if (write) shared_stream<true><<<k, kBlockThreads>>>(trips, seed, sink, 0);
          else shared_stream<false><<<k, kBlockThreads>>>(trips, seed, sink, 0);
        };
        window(l, meter_);
      }
      read_window(kL1Read, operands, k, kL1Accesses);
      read_window(kL2NearRead, operands, k,
                  static_cast<uint64_t>(kL2NearFraction * l2) / 4096 * 256);
      read_window(kL2FarRead, operands, k, static_cast<uint64_t>(kL2FarFraction * l2) / 4096 * 256);
      read_window(kDramRead, operands, k, big_.bytes() / 16);
      write_window(operands, k);
    }
  }

  void write_window(const std::string& operands, int k) {
    const StreamStore st = stream_store_of<16, kStreamIlp, Store::wb, false>();
    Work l = level(kDramWrite, operands, k);
    const uint64_t per_round = uint64_t(k) * kBlockThreads * kStreamIlp;
    const auto rounds = static_cast<uint32_t>(big_.bytes() / 16 / per_round);
    if (rounds == 0) return;
    l.work_per_trip = double(rounds) * per_round * 16;
    const uint32_t seed = operands == kZero ? 0u : kRandomSeed;
    void* dst = big_.get();
    l.enqueue = [st, dst, rounds, seed, k](int trips) {
      st.launch(nullptr, dst, rounds, static_cast<uint32_t>(trips), seed, k, kBlockThreads);
    };
    window(l, meter_);
  }

  // Kernels the fits never saw, on every SM, random data.
  void measure_heldout() {
    if (!ctx_.enabled(kHeldOutTriad) && !ctx_.enabled(kHeldOutFmaDram) &&
        !ctx_.enabled(kHeldOutGemm))
      return;
    if (!sass_allows(ctx_, kHeldOutTriad, {"energy::triad"}) ||
        !sass_allows(ctx_, kHeldOutFmaDram, {"energy::fma_dram"}))
      return;
    if (big_.size() == 0) big_ = DeviceBuffer<uint8_t>(dram_buffer_bytes(dev_));
    fill(big_.get(), big_.bytes(), false, kFiniteMask);
    const int k = dev_.sm_count;
    const uint64_t n3 = big_.bytes() / 3 / 16, n = big_.bytes() / 16;
    auto* f4 = reinterpret_cast<float4*>(big_.get());
    Work t = level(kHeldOutTriad, kRandom, k);
    t.components = {{kDramRead, 32.0 * n3}, {kDramWrite, 16.0 * n3}, {kFp32Fma, 4.0 * n3}};
    t.enqueue = [f4, n3, k](int trips) {
      triad<<<k, kBlockThreads>>>(f4 + n3, f4 + 2 * n3, f4, n3, kTriadScale,
                                  static_cast<uint32_t>(trips));
    };
    window(t, meter_);
    Work m = level(kHeldOutFmaDram, kRandom, k);
    m.components = {{kDramRead, 16.0 * n}, {kFp32Fma, 4.0 * (kMixedFmasPerWord + 1) * n}};
    float* sink = reinterpret_cast<float*>(sink_.get());
    m.enqueue = [f4, n, k, sink](int trips) {
      fma_dram<<<k, kBlockThreads>>>(f4, n, kMixedMultiplier, static_cast<uint32_t>(trips), sink,
                                     0);
    };
    window(m, meter_);
    pipes::GemmCounts counts;
    if (!ctx_.enabled(kHeldOutGemm)) return;
    if (auto gemm = pipes::wgmma_gemm(ctx_, kHeldOutGemm, &counts)) {
      Work g = level(kHeldOutGemm, kRandom, k);
      g.components = {
          {kWgmmaBf16, gemm->results_per_trip},
          {counts.footprint_bytes <= kL2NearFraction * double(dev_.l2_bytes) ? kL2NearRead
                                                                             : kL2FarRead,
           counts.global_bytes_per_trip},
          {kSharedWrite, counts.shared_bytes_per_trip}};
      g.per_launch = {{kDramWrite, counts.c_bytes_per_launch}};
      g.enqueue = gemm->enqueue;
      window(g, meter_);
    }
  }

  // The host link (copy engines, pinned memory) and NVLink to a peer, with one resting block
  // on each GPU throughout: the state the static_one_sm windows measure.
  void measure_links() {
    if (!ctx_.enabled(kHostLinkRead) && !ctx_.enabled(kHostLinkWrite) &&
        !ctx_.enabled(kNvlinkWrite))
      return;
    if (big_.size() == 0) big_ = DeviceBuffer<uint8_t>(dram_buffer_bytes(dev_));
    HostBuffer host(kHostChunk);
    for (size_t i = 0; i < kHostChunk / 4; ++i)
      static_cast<uint32_t*>(host.p)[i] = scramble(kRandomSeed ^ uint32_t(i));
    for (bool write : {false, true}) {
      Work l = level(write ? kHostLinkWrite : kHostLinkRead, kRandom, 1);
      l.work_per_trip = double(kHostChunk);
      void* d = big_.get();
      void* h = host.p;
      l.enqueue = [d, h, write](int trips) {
        for (int i = 0; i < trips; ++i)
          CUDA_CHECK(cudaMemcpyAsync(write ? h : d, write ? d : h, kHostChunk,
                                     write ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice,
                                     nullptr));
      };
      window(l, meter_, {dev_.ordinal});
    }
    measure_nvlink();
  }

  void measure_nvlink();

  RunContext& ctx_;
  const DeviceInfo& dev_;
  Nvml nvml_;
  Clock::time_point t0_;
  Meter meter_;
  DeviceBuffer<uint4> sink_;
  DeviceBuffer<uint8_t> big_;
  int next_id_ = 0;
};

// NVLink: copies to a peer GPU that NVLink reaches (copy engines), both GPUs' counters summed,
// against windows of the two at rest; skipped, with the reason, where there is no such peer.
void EnergyRun::measure_nvlink() {
  const std::string probe = kNvlinkWrite;
  if (!ctx_.enabled(probe)) return;
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  int peer = -1;
  std::string why = "one GPU";
  for (int d = 0; d < count && peer < 0; ++d) {
    if (d == dev_.ordinal) continue;
    int can = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can, dev_.ordinal, d));
    char bus[32] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
    if (!can) why = "no peer access to GPU " + std::to_string(d);
    else if (nvml_.link_to(bus) != "nvlink")
      why = "GPU " + std::to_string(d) + " is reached over " + nvml_.link_to(bus) + ", not NVLink";
    else peer = d;
  }
  if (peer < 0) return ctx_.skip(probe, why);
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, peer));
  Nvml peer_nvml(bus);
  unsigned long long mj = 0;
  if (!peer_nvml.energy_mj(&mj, &why)) return ctx_.skip(probe, "the peer's energy counter: " + why);
  cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
  if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) CUDA_CHECK(e);
  cudaGetLastError();
  CUDA_CHECK(cudaSetDevice(peer));
  DeviceBuffer<uint8_t> remote(kHostChunk);
  CUDA_CHECK(cudaSetDevice(dev_.ordinal));
  Meter pair({&nvml_, &peer_nvml}, t0_, rest_beside);
  const std::vector<int> both = {dev_.ordinal, peer};
  const Work at_rest = level(kNvlinkBaseline, "-", 1);
  Work l = level(probe, kRandom, 1);
  l.work_per_trip = double(kHostChunk);
  void* src = big_.get();
  void* dst = remote.get();
  const int self = dev_.ordinal;
  l.enqueue = [src, dst, self, peer](int trips) {
    for (int i = 0; i < trips; ++i)
      CUDA_CHECK(cudaMemcpyPeerAsync(dst, peer, src, self, kHostChunk, nullptr));
  };
  window(at_rest, pair, both);  // before and after: the pair's drift
  window(l, pair, both);
  window(at_rest, pair, both);
}

class EnergyFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(energy::kFamily.name); }
  std::string description() const override {
    return "energy per operation (each pipe) and per byte (shared, L1, L2, DRAM, host link, "
           "NVLink), "
           "idle and static power: NVML energy counter against operation rate";
  }
  std::vector<ProbeInfo> probes() const override {
    std::vector<ProbeInfo> out = {{kIdle, "nothing launched: the GPU as the driver leaves it idle"},
                                  {kStatic, "every SM holding a block of sleeping warps"},
                                  {kStaticOneSm, "one SM holding a block of sleeping warps"}};
    for (const auto& op : alu_ops())
      out.push_back({op, "power against rate of " + op + " (pipes' op)"});
    for (const auto& op : mma_ops())
      out.push_back({op, "power against rate of " + op + " (below sm_90)"});
    for (const auto& op : pipes::wgmma_ops())
      out.push_back({op.probe, std::string("power against rate of ") + op.probe});
    for (const auto& lv : levels()) out.push_back({lv, "power against bytes per second of " + lv});
    for (const auto& h : heldout_kernels())
      out.push_back({h, "held-out kernel: measured energy against the energies' prediction"});
    return out;
  }
  bool supported(const DeviceInfo& dev, std::string* why) const override {
    Nvml nvml(dev.pci_bus_id);
    unsigned long long mj = 0;
    std::string reason;
    if (nvml.energy_mj(&mj, &reason)) return true;
    *why = "no NVML energy counter: " + reason;
    return false;
  }
  void run(RunContext& ctx) override { EnergyRun(ctx).run(); }
};

GPUPROBE_REGISTER_FAMILY(EnergyFamily);

}  // namespace

}  // namespace gpuprobe::energy
