// Index chases as the papers wrote them (Mei & Chu 2016; Jia et al. 2018): one thread,
// j = a[j], the index turned into an address inside the timed loop, for shared memory, L1,
// L2 and DRAM; and Jia et al.'s atomic pair as they describe it, j = b[atomicAdd(&a[j], 0)], timed as a
// whole and reduced by the chase of its load alone (analysis/index_chase.cpp). The SASS of one
// step of each timed loop is recorded beside the numbers (probe "sass").
#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "analysis/index_chase.hpp"
#include "gpu/cuda.cuh"
#include "base/catalog.hpp"
#include "gpu/sass_check.hpp"

namespace gpuprobe::index_chase {

// a[i] = (i + stride) mod n: a single cycle when stride and n are coprime, else a shorter one
// that still visits a new element every step.
__global__ void fill_stride(uint32_t* a, uint32_t n, uint32_t stride) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    a[i] = (i + stride) % n;
}

__global__ void fill_identity(uint32_t* a, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[i] = i;
}

// Every kernel's chase from j = 0: `warm` untimed steps j = step(j), then `trips` x kSteps
// timed between two clock reads (where the code checks look); returns the last j.
template <class Step>
__device__ __forceinline__ uint32_t chase(Step step, uint32_t warm, uint32_t trips, long long* cycles) {
  uint32_t j = 0;
  for (uint32_t i = 0; i < warm; ++i) j = step(j);
  const long long t0 = clock64();
#pragma unroll 1
  for (uint32_t t = 0; t < trips; ++t) {
#pragma unroll
    for (int k = 0; k < kSteps; ++k) j = step(j);
  }
  const long long t1 = clock64();
  *cycles = t1 - t0;
  return j;
}

// Shared: the block fills s, thread 0 walks it once untimed, then `trips` x kSteps timed.
__global__ void shared_chase(uint32_t n, uint32_t stride, uint32_t trips, long long* cycles,
                             uint32_t* sink, int flag) {
  extern __shared__ uint32_t s[];
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) s[i] = (i + stride) % n;
  __syncthreads();
  if (threadIdx.x != 0) return;
  keep(chase([&](uint32_t j) { return s[j]; }, n, trips, cycles), sink, flag);
}

// Global: `warm` untimed steps (0 for DRAM: the chain was flushed from L2), then timed.
// kL2Only loads with ld.global.cg (L1 bypassed), as Mei & Chu's L2 chase compiled with -dlcm=cg.
template <bool kL2Only>
__global__ void global_chase(uint32_t* a, uint32_t warm, uint32_t trips, long long* cycles,
                             uint32_t* sink, int flag) {
  keep(chase([&](uint32_t j) { return kL2Only ? __ldcg(&a[j]) : a[j]; }, warm, trips, cycles), sink, flag);
}

// Jia et al.'s pair on shared memory: A = atomicAdd(&s[j], zero) returns the next index (zero
// is 0 at run time, unknown to the compiler), B = id[that] loads it back from an identity
// array: one step is latency(A) + latency(B).
__global__ void shared_pair(uint32_t n, uint32_t stride, uint32_t trips, uint32_t zero,
                            long long* cycles, uint32_t* sink, int flag) {
  extern __shared__ uint32_t s[];
  uint32_t* id = s + n;
  for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
    s[i] = (i + stride) % n;
    id[i] = i;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  keep(chase([&](uint32_t j) { return id[atomicAdd(&s[j], zero)]; }, n, trips, cycles), sink, flag);
}

// The pair on global memory: the atomic at L2, B an L1-resident identity array.
__global__ void global_pair(uint32_t* a, uint32_t* id, uint32_t warm, uint32_t trips, uint32_t zero,
                            long long* cycles, uint32_t* sink, int flag) {
  keep(chase([&](uint32_t j) { return id[atomicAdd(&a[j], zero)]; }, warm, trips, cycles), sink, flag);
}

namespace {

constexpr uint32_t kLineWords = 128 / 4;           // 128 B stride: a new line every step
constexpr uint32_t kSharedWords = 4096;            // 16 KiB of shared memory
constexpr uint32_t kL1Words = 16 * 1024 / 4;       // 16 KiB: inside any L1
constexpr uint32_t kL2Words = 1024 * 1024 / 4;     // 1 MiB: past L1, well inside L2
constexpr uint32_t kDramStrideWords = 4224 / 4;    // a new line and DRAM row region each step
constexpr uint32_t kDramSteps = 4096;              // timed DRAM steps: 17 MiB of distinct lines
constexpr uint32_t kPairStrideWords = kPairStrideBytes / 4;
constexpr uint32_t kPairWords = kPairLines * kPairStrideWords;  // B touches kPairLines lines of id

class IndexChaseFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(index_chase::kFamily.name); }
  std::string description() const override {
    return "the papers' index chase j = a[j] (shared, L1, L2, DRAM) and an atomic whose result indexes a load (Jia et al.'s pair as described)";
  }
  std::vector<ProbeInfo> probes() const override {
    std::vector<ProbeInfo> out;
    for (const auto& v : variants()) {
      auto includes = catalog().includes.find(v.parameter);
      out.push_back({v.probe, includes == catalog().includes.end() ? v.parameter : includes->second});
    }
    return out;
  }
  void run(RunContext& ctx) override {
    const DeviceInfo& dev = ctx.device();
    const uint32_t trips = ctx.quick() ? 16 : 64;
    // Chases through L2 (and the pair's atomics) time every line of their buffer once or more:
    // the lines' L2 slices are near the SM or far from it, and 1024 steps over the first 128 KiB
    // of a 1 MiB chain read another mix on another allocation (H100: 283.6 and 288.6 cycles).
    const uint32_t l2_trips = kL2Words / kLineWords / kSteps;
    const uint32_t dram_trips = kDramSteps / kSteps;
    const int reps = ctx.quick() ? 5 : 11;
    DeviceBuffer<long long> cycles(1);
    DeviceBuffer<uint32_t> sink(1);
    auto fetch = [&](uint32_t timed_trips) {
      long long c = 0;
      CUDA_CHECK(cudaMemcpy(&c, cycles.get(), sizeof c, cudaMemcpyDeviceToHost));
      return double(c) / (double(timed_trips) * kSteps);
    };
    auto point = [&](const Variant& var, uint32_t timed_trips, const std::function<double()>& launch_and_time) {
      if (!ctx.enabled(var.probe) || !sass_allows(ctx, var.probe, {var.kernel})) return;
      record_step(ctx, var);
      ctx.measure(Point{var.probe, point_params(var, timed_trips), "cycles", reps}, [&] {
        double s = launch_and_time();
        return Sample{fetch(timed_trips), s};
      });
    };
    const std::vector<Variant>& v = variants();  // shared, l1, l2, dram, the two pairs

    point(v[0], trips, [&] {
      return time_seconds([&] {
        shared_chase<<<1, 256, kSharedWords * 4>>>(kSharedWords, kLineWords + 1, trips, cycles.get(), sink.get(), 0);
      });
    });
    DeviceBuffer<uint32_t> l1(kL1Words);
    fill_stride<<<16, 256>>>(l1.get(), kL1Words, kLineWords);
    CUDA_CHECK_LAUNCH();
    point(v[1], trips, [&] {
      return time_seconds([&] {
        global_chase<false><<<1, 1>>>(l1.get(), 2 * kL1Words / kLineWords, trips, cycles.get(), sink.get(), 0);
      });
    });
    DeviceBuffer<uint32_t> l2(kL2Words);
    fill_stride<<<256, 256>>>(l2.get(), kL2Words, kLineWords);
    CUDA_CHECK_LAUNCH();
    point(v[2], l2_trips, [&] {
      return time_seconds([&] {
        global_chase<true><<<1, 1>>>(l2.get(), kL2Words / kLineWords, l2_trips, cycles.get(), sink.get(), 0);
      });
    });
    if (ctx.enabled(index_chase::kDramProbe)) {
      // The chain's steps all new lines; before each run, twice the L2 written elsewhere
      // evicts them (no warm-up steps: every timed step misses L2).
      const uint32_t words = kDramSteps * kDramStrideWords + 1;
      DeviceBuffer<uint32_t> dram(words);
      DeviceBuffer<char> flush(static_cast<size_t>(2 * std::max<long long>(dev.l2_bytes, 1 << 20)));
      fill_stride<<<1024, 256>>>(dram.get(), words, kDramStrideWords);
      CUDA_CHECK_LAUNCH();
      point(v[3], dram_trips, [&] {
        CUDA_CHECK(cudaMemset(flush.get(), 1, flush.bytes()));
        return time_seconds([&] { global_chase<false><<<1, 1>>>(dram.get(), 0, dram_trips, cycles.get(), sink.get(), 0); });
      });
    }
    point(v[4], trips, [&] {
      return time_seconds([&] {
        shared_pair<<<1, 256, 2 * kSharedWords * 4>>>(kSharedWords, kLineWords + 1, trips, 0, cycles.get(), sink.get(), 0);
      });
    });
    DeviceBuffer<uint32_t> pa(kPairWords), pid(kPairWords);
    fill_stride<<<256, 256>>>(pa.get(), kPairWords, kPairStrideWords);
    fill_identity<<<256, 256>>>(pid.get(), kPairWords);
    CUDA_CHECK_LAUNCH();
    // kPairLines lines: the full run's 1024 steps go round them 4 times, quick's 256 once.
    point(v[5], trips, [&] {
      return time_seconds([&] {
        global_pair<<<1, 1>>>(pa.get(), pid.get(), 2 * kPairLines, trips, 0, cycles.get(), sink.get(), 0);
      });
    });
  }

 private:
  // A point's timed steps, and for the global pair the lines its atomics step over.
  static Params point_params(const Variant& var, uint32_t timed_trips) {
    Params params = {{index_chase::kStepsColumn, std::to_string(timed_trips * kSteps)}};
    if (std::string(var.probe) == index_chase::kAtomicGlobalPairProbe) {
      params.emplace_back(index_chase::kLinesColumn, std::to_string(kPairLines));
      params.emplace_back(index_chase::kLineStrideColumn, std::to_string(kPairStrideBytes));
    }
    return params;
  }

  // The SASS of one step of the probe's timed loop, as evidence in the observations file.
  static void record_step(RunContext& ctx, const Variant& v) {
    std::string step = one_step(timed_sass(ctx.device(), v.kernel), v.load);
    if (step.empty()) return;
    Observation o;
    o.probe = index_chase::kSassProbe;
    o.params = {{index_chase::kOfColumn, v.probe}, {index_chase::kStepColumn, step}};
    o.value = o.p05 = o.p50 = o.p95 = static_cast<double>(std::count(step.begin(), step.end(), ';') + 1);
    o.unit = "instructions";
    o.reps = 1;
    ctx.record(o);
  }
};

GPUPROBE_REGISTER_FAMILY(IndexChaseFamily);

}  // namespace

}  // namespace gpuprobe::index_chase
