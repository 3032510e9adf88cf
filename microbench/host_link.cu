// The host link: how fast and how far host memory is. Copies by the copy engines
// (cudaMemcpyAsync) from pinned and pageable host memory, both directions at once, and copies
// by SM kernels that read or write mapped host memory, over 4 KiB..1 GiB (a size whose rate
// disagrees with its neighbours' is measured again); then one thread chasing pointers through
// mapped host memory (ld.relaxed.sys: every load must come from the host, no cache may answer
// it), and what the rest rests on: the PCIe link's generation and width (NVML) and the host's
// own memcpy.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "analysis/host_link.hpp"
#include "gpu/cuda.cuh"
#include "gpu/nvml.hpp"
#include "gpu/sass_check.hpp"
#include "memory_chase.cuh"

namespace gpuprobe::host_link {

__global__ void sm_copy(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// One thread, `hops` dependent system-scope loads through the chain at `base`; `cur` carries
// the position from one launch to the next so that every launch continues the cycle.
__global__ void host_chase(const char* base, uint64_t* cur_io, uint32_t hops, uint64_t* cycles) {
  uint64_t cur = *cur_io;
  wait_for(cur);
  const uint64_t t0 = clock_now();
#pragma unroll 1
  for (uint32_t i = 0; i < hops; ++i)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
    // Before Volta there is no .relaxed: ld.volatile is its system-scope equivalent.
    asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(cur) : "l"(base + cur) : "memory");
#else
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(cur) : "l"(base + cur) : "memory");
#endif
  wait_for(cur);
  const uint64_t t1 = clock_now();
  *cycles = t1 - t0;
  *cur_io = cur;
}

namespace {

// Pinned host memory owned by scope, mapped into the device's address space.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(size_t bytes) : bytes_(bytes) {
    CUDA_CHECK(cudaHostAlloc(&ptr_, bytes, cudaHostAllocMapped));
    std::memset(ptr_, 1, bytes);
  }
  ~PinnedBuffer() { cudaFreeHost(ptr_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  char* get() const { return static_cast<char*>(ptr_); }
  char* device_ptr() const {
    void* d = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&d, ptr_, 0));
    return static_cast<char*>(d);
  }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

constexpr long long kBytesPerRepTarget = 64ll << 20;  // small copies repeated to ~64 MiB a rep
constexpr int kMaxCopiesPerRep = 64;                  // ... but no more launches than this
constexpr int kChaseLines = 256;                      // mapped-latency chain: 256 lines ...
constexpr size_t kChaseStride = 4096;                 // ... a page apart, in random order ...
constexpr int kChasePlacements = 4;                   // ... in as many places of the buffer
constexpr int kSmThreads = 512;
constexpr int kSmBlocksPerSm = 4;
// Seconds each sweep may spend measuring sizes again whose neighbours disagree.
constexpr double kRepeatBudget = 0.5, kRepeatBudgetQuick = 0.05;
constexpr int kMemcpyReps = 3;

int copies_per_rep(long long bytes) {
  return int(std::clamp<long long>(kBytesPerRepTarget / bytes, 1, kMaxCopiesPerRep));
}

int reps_for(long long bytes, bool quick) {
  if (quick) return 3;
  return bytes >= (256ll << 20) ? 3 : 9;  // the largest copies are steady and slow
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

using CopyFn = std::function<void(size_t, cudaStream_t)>;

class HostLinkFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(host_link::kFamily.name); }
  std::string description() const override {
    return "host<->device bandwidth by copy engine and by SM over 4 KiB..1 GiB, pinned and "
           "pageable, the latency of mapped host memory, the PCIe link and the host's memcpy";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{kCeH2dPinnedProbe, "cudaMemcpyAsync pinned host -> device, GB/s"},
            {kCeD2hPinnedProbe, "cudaMemcpyAsync device -> pinned host, GB/s"},
            {kCeBidirPinnedProbe, "both directions at once on two streams, GB/s of both together"},
            {kCeH2dPageableProbe, "cudaMemcpyAsync pageable host -> device, GB/s"},
            {kCeD2hPageableProbe, "cudaMemcpyAsync device -> pageable host, GB/s"},
            {kHostMemcpyProbe,
             "the host's memcpy between pageable buffers, GB/s (pageable copies' CPU share)"},
            {kSmH2dProbe, "SM kernel reading mapped pinned host memory into device memory, GB/s"},
            {kSmD2hProbe, "SM kernel writing device memory into mapped pinned host memory, GB/s"},
            {kMappedLatencyProbe, "one thread chasing pointers in mapped host memory, cycles"},
            {kPcieLinkProbe, "PCIe generation and width (NVML, during a copy), raw GB/s each way"},
            {kPcieLinkMaxProbe, "the most PCIe generation and width the device supports (NVML)"}};
  }

  void run(RunContext& ctx) override {
    const DeviceInfo& dev = ctx.device();
    sizes_ = transfer_sizes(ctx.quick());
    // Two device buffers of the largest size, with room to spare for the rest of the run.
    while (sizes_.size() > 1 && 2 * sizes_.back() > dev.free_mem_bytes / 2) sizes_.pop_back();
    const size_t max_bytes = size_t(sizes_.back());

    DeviceBuffer<char> d1(max_bytes), d2(max_bytes);
    PinnedBuffer h1(max_bytes);
    Stream s1, s2;
    stream_ = s1.get();

    if (ctx.enabled(kPcieLinkProbe) || ctx.enabled(kPcieLinkMaxProbe))
      read_link(ctx, d1.get(), h1.get(), max_bytes);
    sweep(
        ctx, kCeH2dPinnedProbe,
        [&](size_t n, cudaStream_t s) {
          CUDA_CHECK(cudaMemcpyAsync(d1.get(), h1.get(), n, cudaMemcpyHostToDevice, s));
        },
        1);
    sweep(
        ctx, kCeD2hPinnedProbe,
        [&](size_t n, cudaStream_t s) {
          CUDA_CHECK(cudaMemcpyAsync(h1.get(), d1.get(), n, cudaMemcpyDeviceToHost, s));
        },
        1);
    if (ctx.enabled(kCeBidirPinnedProbe)) {
      PinnedBuffer h2(max_bytes);
      // Both directions at once, the D2H copy on a second stream inside the timed one's span.
      sweep(
          ctx, kCeBidirPinnedProbe,
          [&](size_t n, cudaStream_t s) {
            fork_join(
                s, dev.ordinal, s2.get(), dev.ordinal,
                [&] {
                  CUDA_CHECK(cudaMemcpyAsync(d1.get(), h1.get(), n, cudaMemcpyHostToDevice, s));
                },
                [&] {
                  CUDA_CHECK(
                      cudaMemcpyAsync(h2.get(), d2.get(), n, cudaMemcpyDeviceToHost, s2.get()));
                });
          },
          2);
    }
    pageable(ctx, d1.get(), max_bytes);

    const int grid = dev.sm_count * kSmBlocksPerSm;
    auto sm_sweep = [&](const std::string& probe, const char* src, char* dst) {
      if (!ctx.enabled(probe) || !sass_allows(ctx, probe, {"host_link::sm_copy"})) return;
      sweep(ctx, probe, [&](size_t n, cudaStream_t s) {
        const size_t words = n / sizeof(uint4);
        const int blocks = int(std::min<size_t>(size_t(grid), (words + kSmThreads - 1) / kSmThreads));
        sm_copy<<<blocks, kSmThreads, 0, s>>>(reinterpret_cast<const uint4*>(src),
                                              reinterpret_cast<uint4*>(dst), words);
      }, 1);
    };
    sm_sweep(kSmH2dProbe, h1.device_ptr(), d1.get());
    sm_sweep(kSmD2hProbe, d1.get(), h1.device_ptr());

    if (ctx.enabled(kMappedLatencyProbe) &&
        sass_allows(ctx, kMappedLatencyProbe, {"host_link::host_chase"}))
      chase(ctx, h1);
  }

 private:
  // One size of a sweep, pass `pass`; returns the rate and sets `*seconds` to what it took.
  double measure_size(RunContext& ctx, const std::string& probe, const CopyFn& copy, int directions,
                      long long bytes, int pass, double* seconds) {
    const int copies = copies_per_rep(bytes);
    const double moved = double(bytes) * copies * directions;
    Point pt{probe,
             {{kBytesColumn, std::to_string(bytes)}, {kPassColumn, std::to_string(pass)}},
             "GB/s",
             reps_for(bytes, ctx.quick()),
             moved};
    const auto t0 = std::chrono::steady_clock::now();
    const Observation o = ctx.measure(pt, [&] {
      double s = time_seconds([&] { for (int c = 0; c < copies; ++c) copy(size_t(bytes), stream_); }, stream_);
      return Sample{moved / s / 1e9, s};
    });
    *seconds = seconds_since(t0);
    return o.value;
  }

  // Every size once, then again the sizes whose rate disagrees with their neighbours' (a
  // copy disturbed by the host, another process, a link retraining), within a time budget.
  void sweep(RunContext& ctx, const std::string& probe, const CopyFn& copy, int directions) {
    if (!ctx.enabled(probe)) return;
    std::vector<std::vector<double>> passes(sizes_.size());
    std::vector<double> cost(sizes_.size());
    for (size_t i = 0; i < sizes_.size(); ++i)
      passes[i].push_back(measure_size(ctx, probe, copy, directions, sizes_[i], 1, &cost[i]));
    double budget = ctx.quick() ? kRepeatBudgetQuick : kRepeatBudget;
    for (int i; (i = size_to_repeat(passes, cost, budget)) >= 0;) {
      const int pass = int(passes[size_t(i)].size()) + 1;
      passes[size_t(i)].push_back(measure_size(ctx, probe, copy, directions, sizes_[size_t(i)], pass, &cost[size_t(i)]));
      budget -= cost[size_t(i)];
    }
  }

  // Pageable copies both ways, and the host's own memcpy of a size past the host's caches.
  void pageable(RunContext& ctx, char* device, size_t max_bytes) {
    const bool memcpy_too =
        ctx.enabled(kHostMemcpyProbe) && max_bytes >= 2 * size_t(kSustainedFrom);
    if (!ctx.enabled(kCeH2dPageableProbe) && !ctx.enabled(kCeD2hPageableProbe) && !memcpy_too)
      return;
    std::unique_ptr<char[]> host(new char[max_bytes]);
    std::memset(host.get(), 1, max_bytes);  // touched: no first-fault inside the timing
    sweep(
        ctx, kCeH2dPageableProbe,
        [&](size_t n, cudaStream_t s) {
          CUDA_CHECK(cudaMemcpyAsync(device, host.get(), n, cudaMemcpyHostToDevice, s));
        },
        1);
    sweep(
        ctx, kCeD2hPageableProbe,
        [&](size_t n, cudaStream_t s) {
          CUDA_CHECK(cudaMemcpyAsync(host.get(), device, n, cudaMemcpyDeviceToHost, s));
        },
        1);
    if (!memcpy_too) return;
    const size_t n = size_t(kSustainedFrom);
    Point pt{kHostMemcpyProbe, {{kBytesColumn, std::to_string(n)}}, "GB/s", kMemcpyReps, double(n)};
    ctx.measure(pt, [&] {
      const auto t0 = std::chrono::steady_clock::now();
      std::memcpy(host.get() + max_bytes - n, host.get(), n);
      const double s = seconds_since(t0);
      return Sample{double(n) / s / 1e9, s};
    });
  }

  // The link's generation and width as NVML reads them while a copy keeps the link busy (an
  // idle link may train down to save power), and the most the device supports (the run's
  // metadata, node_gpu<k>_pcie, has them as read at its start); the rate after the line code.
  void read_link(RunContext& ctx, char* device, const char* host, size_t bytes) {
    Nvml nvml(ctx.device().pci_bus_id);
    CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_));
    node::Gpu g;
    nvml.pcie(&g);
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    auto row = [&](const std::string& probe, int gen, int lanes) {
      if (!ctx.enabled(probe)) return;
      const double gbs = node::pcie_line_gbs(gen, lanes);
      if (!(gbs > 0)) {
        ctx.skip(probe, "NVML gives no PCIe link generation and width here");
        return;
      }
      Observation o{
          std::string(kFamily.name),
          probe,
          {{kGenerationColumn, std::to_string(gen)}, {kLanesColumn, std::to_string(lanes)}},
          gbs,
          "GB/s",
          gbs,
          gbs,
          gbs,
          1};
      ctx.record(o);
    };
    row(kPcieLinkProbe, g.pcie_gen, g.pcie_width);
    row(kPcieLinkMaxProbe, g.pcie_max_gen, g.pcie_max_width);
  }

  void chase(RunContext& ctx, PinnedBuffer& host) {
    const size_t span = kChaseLines * kChaseStride;
    if (host.bytes() < span) throw std::runtime_error(name() + ": chase buffer too small");
    DeviceBuffer<uint64_t> cur(1), cycles(1);
    // The same chain in several places of the buffer (other physical pages, DRAM channels or
    // NUMA nodes of the host): the interval spans where the host's memory answers from.
    const size_t places = std::min<size_t>(kChasePlacements, host.bytes() / span);
    for (size_t k = 0; k < places; ++k) {
      const size_t offset = (host.bytes() / places) / span * span * k;
      // Line i of the cycle holds the byte offset of the next line.
      std::vector<uint32_t> next = sattolo_cycle(kChaseLines, 17);
      for (int i = 0; i < kChaseLines; ++i)
        *reinterpret_cast<uint64_t*>(host.get() + offset + i * kChaseStride) = uint64_t(next[i]) * kChaseStride;
      CUDA_CHECK(cudaMemset(cur.get(), 0, sizeof(uint64_t)));
      const char* base = host.device_ptr() + offset;
      Point pt{kMappedLatencyProbe,
               {{kHopsColumn, std::to_string(kChaseLines)},
                {kStrideColumn, std::to_string(kChaseStride)},
                {kOffsetColumn, std::to_string(offset)}},
               "cycles",
               ctx.quick() ? 3 : 7};
      ctx.measure(pt, [&] {
        double s = time_seconds([&] { host_chase<<<1, 1>>>(base, cur.get(), kChaseLines, cycles.get()); });
        uint64_t c = 0;
        CUDA_CHECK(cudaMemcpy(&c, cycles.get(), sizeof c, cudaMemcpyDeviceToHost));
        return Sample{double(c) / kChaseLines, s};
      });
    }
  }

  std::vector<long long> sizes_;
  cudaStream_t stream_ = nullptr;
};

GPUPROBE_REGISTER_FAMILY(HostLinkFamily);

}  // namespace

}  // namespace gpuprobe::host_link
