// The host link: how fast and how far host memory is. Copies by the copy engines
// (cudaMemcpyAsync) from pinned and pageable host memory, both directions at once, and copies
// by SM kernels that read or write mapped host memory, over 4 KiB..1 GiB; then one thread
// chasing pointers through mapped host memory (ld.relaxed.sys: every load must come from the
// host, no cache may answer it).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "analysis/host_link.hpp"
#include "gpu/cuda.cuh"
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
constexpr size_t kChaseStride = 4096;                 // ... a page apart, in random order
constexpr int kSmThreads = 512;
constexpr int kSmBlocksPerSm = 4;

int copies_per_rep(long long bytes) {
  return int(std::clamp<long long>(kBytesPerRepTarget / bytes, 1, kMaxCopiesPerRep));
}

int reps_for(long long bytes, bool quick) {
  if (quick) return 3;
  return bytes >= (256ll << 20) ? 3 : 9;  // the largest copies are steady and slow
}

class HostLinkFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(host_link::kFamily.name); }
  std::string description() const override {
    return "host<->device bandwidth by copy engine and by SM over 4 KiB..1 GiB, pinned and "
           "pageable, and the latency of mapped host memory";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{"ce_h2d_pinned", "cudaMemcpyAsync pinned host -> device, GB/s"},
            {"ce_d2h_pinned", "cudaMemcpyAsync device -> pinned host, GB/s"},
            {"ce_bidir_pinned", "both directions at once on two streams, GB/s of both together"},
            {"ce_h2d_pageable", "cudaMemcpyAsync pageable host -> device, GB/s"},
            {"ce_d2h_pageable", "cudaMemcpyAsync device -> pageable host, GB/s"},
            {"sm_h2d", "SM kernel reading mapped pinned host memory into device memory, GB/s"},
            {"sm_d2h", "SM kernel writing device memory into mapped pinned host memory, GB/s"},
            {"mapped_latency", "one thread chasing pointers in mapped host memory, cycles"}};
  }

  void run(RunContext& ctx) override {
    const DeviceInfo& dev = ctx.device();
    std::vector<long long> sizes = transfer_sizes(ctx.quick());
    // Two device buffers of the largest size, with room to spare for the rest of the run.
    while (sizes.size() > 1 && 2 * sizes.back() > dev.free_mem_bytes / 2) sizes.pop_back();
    const size_t max_bytes = size_t(sizes.back());

    DeviceBuffer<char> d1(max_bytes), d2(max_bytes);
    PinnedBuffer h1(max_bytes);
    Stream s1, s2;

    auto sweep = [&](const std::string& probe, const std::function<void(size_t, cudaStream_t)>& copy,
                     bool both_ways) {
      if (!ctx.enabled(probe)) return;
      for (long long bytes : sizes) {
        const int copies = copies_per_rep(bytes);
        const double moved = double(bytes) * copies * (both_ways ? 2 : 1);
        Point pt{probe, {{"bytes", std::to_string(bytes)}}, "GB/s", reps_for(bytes, ctx.quick()), moved};
        ctx.measure(pt, [&] {
          double s = time_seconds([&] { for (int c = 0; c < copies; ++c) copy(size_t(bytes), s1.get()); },
                                  s1.get());
          return Sample{moved / s / 1e9, s};
        });
      }
    };

    sweep("ce_h2d_pinned", [&](size_t n, cudaStream_t s) {
      CUDA_CHECK(cudaMemcpyAsync(d1.get(), h1.get(), n, cudaMemcpyHostToDevice, s));
    }, false);
    sweep("ce_d2h_pinned", [&](size_t n, cudaStream_t s) {
      CUDA_CHECK(cudaMemcpyAsync(h1.get(), d1.get(), n, cudaMemcpyDeviceToHost, s));
    }, false);
    if (ctx.enabled("ce_bidir_pinned")) {
      PinnedBuffer h2(max_bytes);
      // Both directions at once, the D2H copy on a second stream inside the timed one's span.
      sweep("ce_bidir_pinned", [&](size_t n, cudaStream_t s) {
        fork_join(s, dev.ordinal, s2.get(), dev.ordinal,
                  [&] { CUDA_CHECK(cudaMemcpyAsync(d1.get(), h1.get(), n, cudaMemcpyHostToDevice, s)); },
                  [&] { CUDA_CHECK(cudaMemcpyAsync(h2.get(), d2.get(), n, cudaMemcpyDeviceToHost, s2.get())); });
      }, true);
    }
    if (ctx.enabled("ce_h2d_pageable") || ctx.enabled("ce_d2h_pageable")) {
      std::unique_ptr<char[]> pageable(new char[max_bytes]);
      std::memset(pageable.get(), 1, max_bytes);  // touched: no first-fault inside the timing
      sweep("ce_h2d_pageable", [&](size_t n, cudaStream_t s) {
        CUDA_CHECK(cudaMemcpyAsync(d1.get(), pageable.get(), n, cudaMemcpyHostToDevice, s));
      }, false);
      sweep("ce_d2h_pageable", [&](size_t n, cudaStream_t s) {
        CUDA_CHECK(cudaMemcpyAsync(pageable.get(), d1.get(), n, cudaMemcpyDeviceToHost, s));
      }, false);
    }

    const int grid = dev.sm_count * kSmBlocksPerSm;
    auto sm_sweep = [&](const std::string& probe, const char* src, char* dst) {
      if (!ctx.enabled(probe) || !sass_allows(ctx, probe, {"host_link::sm_copy"})) return;
      sweep(probe, [&](size_t n, cudaStream_t s) {
        const size_t words = n / sizeof(uint4);
        const int blocks = int(std::min<size_t>(size_t(grid), (words + kSmThreads - 1) / kSmThreads));
        sm_copy<<<blocks, kSmThreads, 0, s>>>(reinterpret_cast<const uint4*>(src),
                                              reinterpret_cast<uint4*>(dst), words);
      }, false);
    };
    sm_sweep("sm_h2d", h1.device_ptr(), d1.get());
    sm_sweep("sm_d2h", d1.get(), h1.device_ptr());

    if (ctx.enabled("mapped_latency") && sass_allows(ctx, "mapped_latency", {"host_link::host_chase"}))
      chase(ctx, h1);
  }

 private:
  void chase(RunContext& ctx, PinnedBuffer& host) {
    if (host.bytes() < kChaseLines * kChaseStride) throw std::runtime_error("host_link: chase buffer too small");
    // Line i of the cycle holds the byte offset of the next line.
    std::vector<uint32_t> next = sattolo_cycle(kChaseLines, 17);
    for (int i = 0; i < kChaseLines; ++i)
      *reinterpret_cast<uint64_t*>(host.get() + i * kChaseStride) = uint64_t(next[i]) * kChaseStride;
    DeviceBuffer<uint64_t> cur(1), cycles(1);
    CUDA_CHECK(cudaMemset(cur.get(), 0, sizeof(uint64_t)));
    const char* base = host.device_ptr();
    Point pt{"mapped_latency", {{"hops", std::to_string(kChaseLines)}, {"stride_bytes", std::to_string(kChaseStride)}},
             "cycles", ctx.quick() ? 3 : 7};
    ctx.measure(pt, [&] {
      double s = time_seconds([&] { host_chase<<<1, 1>>>(base, cur.get(), kChaseLines, cycles.get()); });
      uint64_t c = 0;
      CUDA_CHECK(cudaMemcpy(&c, cycles.get(), sizeof c, cudaMemcpyDeviceToHost));
      return Sample{double(c) / kChaseLines, s};
    });
  }
};

GPUPROBE_REGISTER_FAMILY(HostLinkFamily);

}  // namespace

}  // namespace gpuprobe::host_link
