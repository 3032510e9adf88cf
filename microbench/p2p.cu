// Several GPUs in one machine: for every ordered pair with peer access, copy-engine writes
// (cudaMemcpyPeerAsync) one way and both ways at once, SM kernels reading the peer's memory
// one way and both ways, and one thread chasing pointers through the peer's memory; with the
// link between them as NVML reports it. On a machine with one GPU the family is skipped, and
// the run's families.csv says why.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "analysis/p2p.hpp"
#include "gpu/cuda.cuh"
#include "gpu/nvml.hpp"
#include "gpu/sass_check.hpp"
#include "memory_chase.cuh"

namespace gpuprobe {

// The host link family's kernels: a grid-stride 16 B copy and a system-scope pointer chase,
// which serve for a peer's memory as they do for the host's.
namespace host_link {
__global__ void sm_copy(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n);
__global__ void host_chase(const char* base, uint64_t* cur_io, uint32_t hops, uint64_t* cycles);
}  // namespace host_link

namespace p2p {

namespace {

constexpr size_t kCopyBytes = 256u << 20;  // nvbandwidth's default is 512 MiB; 256 MiB is steady
constexpr int kChaseLines = 256;
constexpr size_t kChaseStride = 4096;
constexpr int kThreads = 512;

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

struct Gpu {
  int ordinal = 0;
  std::string bus;
  char* buf = nullptr;  // kCopyBytes x 2: source and destination halves
  cudaStream_t stream{};
  int sms = 0;
};

class P2pFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(p2p::kFamily.name); }
  std::string description() const override {
    return "peer-to-peer bandwidth and latency between every pair of GPUs, with the NVML link";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{"ce_write", "cudaMemcpyPeerAsync device -> peer, GB/s"},
            {"ce_write_bidir", "device -> peer and peer -> device at once, GB/s of both"},
            {"sm_read", "device's kernel reading the peer's memory, GB/s"},
            {"sm_read_bidir", "both GPUs' kernels reading each other's memory at once, GB/s of both"},
            {"latency", "device's thread chasing pointers in the peer's memory, cycles"},
            {"link", "the link NVML reports between device and peer"}};
  }
  bool supported(const DeviceInfo&, std::string* why) const override {
    const int n = device_count();
    if (n >= 2) return true;
    *why = "needs two or more GPUs; this machine has " + std::to_string(n) +
           " (cudaGetDeviceCount), so there is no peer to measure";
    return false;
  }

  void run(RunContext& ctx) override {
    const int n = device_count();
    std::vector<Gpu> gpus(static_cast<size_t>(n));
    struct Cleanup {
      std::vector<Gpu>& g;
      ~Cleanup() {
        for (auto& x : g) {
          cudaSetDevice(x.ordinal);
          if (x.buf) cudaFree(x.buf);
          if (x.stream) cudaStreamDestroy(x.stream);
        }
        cudaSetDevice(0);
      }
    } cleanup{gpus};
    for (int d = 0; d < n; ++d) {
      Gpu& g = gpus[size_t(d)];
      g.ordinal = d;
      char bus[32] = {};
      CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
      g.bus = bus;
      CUDA_CHECK(cudaSetDevice(d));
      CUDA_CHECK(cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, d));
      CUDA_CHECK(cudaMalloc(&g.buf, 2 * kCopyBytes));
      CUDA_CHECK(cudaMemset(g.buf, 0, 2 * kCopyBytes));
      CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
    }
    for (int d = 0; d < n; ++d)
      for (int p = 0; p < n; ++p) {
        if (d == p) continue;
        int can = 0;
        CUDA_CHECK(cudaDeviceCanAccessPeer(&can, d, p));
        const Params pair = {{"device", std::to_string(d)}, {"peer", std::to_string(p)}};
        Nvml nvml(gpus[size_t(d)].bus);
        Params link = pair;
        link.emplace_back("link", nvml.link_to(gpus[size_t(p)].bus));
        ctx.record({"", "link", link, double(can), "peer_access", double(can), double(can), double(can), 1});
        if (!can) continue;
        CUDA_CHECK(cudaSetDevice(d));
        cudaError_t e = cudaDeviceEnablePeerAccess(p, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
        else CUDA_CHECK(e);
      }
    for (int d = 0; d < n; ++d)
      for (int p = 0; p < n; ++p) {
        int can = 0;
        CUDA_CHECK(cudaDeviceCanAccessPeer(&can, d, p));
        if (d == p || !can) continue;
        pair(ctx, gpus[size_t(d)], gpus[size_t(p)]);
      }
    CUDA_CHECK(cudaSetDevice(0));
  }

 private:
  // Times `work` (which enqueues on a's stream, and may join b's) with events on a's stream.
  template <class F>
  static double timed(Gpu& a, F&& work) {
    CUDA_CHECK(cudaSetDevice(a.ordinal));
    return time_seconds(work, a.stream);
  }

  // a's and b's work at once, timed on a's stream.
  template <class A, class B>
  static void concurrently(Gpu& a, Gpu& b, A&& on_a, B&& on_b) {
    fork_join(a.stream, a.ordinal, b.stream, b.ordinal, on_a, on_b);
  }

  static void sm_read_on(Gpu& reader, Gpu& owner) {
    CUDA_CHECK(cudaSetDevice(reader.ordinal));
    const size_t words = kCopyBytes / sizeof(uint4);
    host_link::sm_copy<<<reader.sms * 4, kThreads, 0, reader.stream>>>(
        reinterpret_cast<const uint4*>(owner.buf), reinterpret_cast<uint4*>(reader.buf + kCopyBytes), words);
    CUDA_CHECK(cudaGetLastError());
  }

  void pair(RunContext& ctx, Gpu& d, Gpu& p) {
    const Params pp = {{"device", std::to_string(d.ordinal)}, {"peer", std::to_string(p.ordinal)}};
    const int reps = ctx.quick() ? 3 : 5;
    const double one = double(kCopyBytes), both = 2.0 * kCopyBytes;
    auto bw = [&](const std::string& probe, double bytes, const std::function<void()>& work) {
      if (!ctx.enabled(probe)) return;
      ctx.measure({probe, pp, "GB/s", reps, bytes}, [&] {
        double s = timed(d, work);
        return Sample{bytes / s / 1e9, s};
      });
    };
    bw("ce_write", one, [&] {
      CUDA_CHECK(cudaMemcpyPeerAsync(p.buf + kCopyBytes, p.ordinal, d.buf, d.ordinal, kCopyBytes, d.stream));
    });
    bw("ce_write_bidir", both, [&] {
      concurrently(
          d, p,
          [&] { CUDA_CHECK(cudaMemcpyPeerAsync(p.buf + kCopyBytes, p.ordinal, d.buf, d.ordinal, kCopyBytes, d.stream)); },
          [&] { CUDA_CHECK(cudaMemcpyPeerAsync(d.buf + kCopyBytes, d.ordinal, p.buf, p.ordinal, kCopyBytes, p.stream)); });
    });
    if (sass_allows(ctx, "sm_read", {"host_link::sm_copy"})) {
      bw("sm_read", one, [&] { sm_read_on(d, p); });
      bw("sm_read_bidir", both, [&] { concurrently(d, p, [&] { sm_read_on(d, p); }, [&] { sm_read_on(p, d); }); });
    }
    if (ctx.enabled("latency") && sass_allows(ctx, "latency", {"host_link::host_chase"})) {
      // The chain lies in the peer's memory; d's thread follows it.
      std::vector<uint32_t> next = sattolo_cycle(kChaseLines, 31);
      std::vector<uint64_t> words(kChaseLines * kChaseStride / sizeof(uint64_t), 0);
      for (int i = 0; i < kChaseLines; ++i) words[size_t(i) * kChaseStride / 8] = uint64_t(next[size_t(i)]) * kChaseStride;
      CUDA_CHECK(cudaSetDevice(p.ordinal));
      CUDA_CHECK(cudaMemcpy(p.buf, words.data(), words.size() * 8, cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaSetDevice(d.ordinal));
      DeviceBuffer<uint64_t> cur(1), cycles(1);
      CUDA_CHECK(cudaMemset(cur.get(), 0, 8));
      ctx.measure({"latency", pp, "cycles", reps}, [&] {
        double s = timed(d, [&] { host_link::host_chase<<<1, 1, 0, d.stream>>>(p.buf, cur.get(), kChaseLines, cycles.get()); });
        uint64_t c = 0;
        CUDA_CHECK(cudaMemcpy(&c, cycles.get(), 8, cudaMemcpyDeviceToHost));
        return Sample{double(c) / kChaseLines, s};
      });
    }
  }
};

GPUPROBE_REGISTER_FAMILY(P2pFamily);

}  // namespace

}  // namespace p2p

}  // namespace gpuprobe
