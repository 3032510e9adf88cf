// Several GPUs in one machine. For every ordered pair with peer access: copies by the copy
// engine (cudaMemcpyPeerAsync) and by an SM kernel (16 B loads and stores), the initiating GPU
// writing into the peer or reading from it, one way and both ways at once; one thread chasing
// pointers through the peer's memory; the link NVML reports. Then the fabric under load: one
// GPU with all others at once (one to all, all to one) and every GPU with every other at once.
// The copies of one measurement start together behind a gate and are timed with events, as
// nvbandwidth times its (analysis/p2p.hpp names its test case for each mode). On a machine with
// one GPU the family is skipped, and the run's families.csv and skipped.csv say why.
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "analysis/p2p.hpp"
#include "base/stats.hpp"
#include "gpu/cuda.cuh"
#include "gpu/device.hpp"
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

// Bytes of each copy: at ~400 GB/s a 256 MiB copy takes ~0.7 ms, some 100 times a launch, and a
// full run of 18 modes on 4 GPUs moves its data in about 2 s (6 repetitions of ~140 copies
// and groups of copies). nvbandwidth's default is 512 MiB, 16 times over, per repetition.
constexpr size_t kCopyBytes = 256u << 20;
constexpr size_t kQuickCopyBytes = 64u << 20;  // ~0.17 ms: still 30 launches long
constexpr size_t kMinCopyBytes = 16u << 20;    // below this a launch is a tenth of the copy
// Each GPU holds a source and a destination slice per peer, so that copies running at once
// never share one; together at most this share of its free memory.
constexpr double kMemoryShare = 0.25;
constexpr size_t kSliceAlign = 1u << 20;
constexpr int kReps = 5, kQuickReps = 3;
constexpr int kChaseLines = 256;
constexpr size_t kChaseStride = 4096;
constexpr uint64_t kChaseSeed = 31;
constexpr int kThreads = 512, kBlocksPerSm = 4;

// Holds a stream (and every stream that waits on it) until all the copies of a measurement are
// enqueued, so that they start together whatever the host took to enqueue them. Released on
// every way out, so that no stream is left blocked.
class Gate {
 public:
  explicit Gate(cudaStream_t s) { CUDA_CHECK(cudaLaunchHostFunc(s, &Gate::wait, &open_)); }
  ~Gate() { release(); }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  void release() { open_.store(true, std::memory_order_release); }

 private:
  static void CUDART_CB wait(void* open) {
    while (!static_cast<std::atomic<bool>*>(open)->load(std::memory_order_acquire)) std::this_thread::yield();
  }
  std::atomic<bool> open_{false};
};

struct Gpu {
  int ordinal = 0;
  std::string bus;
  int sms = 0;
  char* mem = nullptr;                  // 2 (n - 1) slices: a source and a destination per peer
  std::vector<cudaStream_t> streams;    // n - 1: one per copy it may initiate at once
  std::vector<cudaEvent_t> start, end;  // per stream
  cudaEvent_t all_end{};
};

// Copy times of one measurement: each copy's own (its start to its end) and the whole group's
// (the first start to the last end).
struct Timing {
  double total_s = 0;
  std::vector<double> each_s;
};

// What the GPUs hold, freed on every way out (a constructor that throws half-way included).
struct Gpus {
  std::vector<Gpu> v;
  Gpus() = default;
  Gpus(const Gpus&) = delete;
  Gpus& operator=(const Gpus&) = delete;
  ~Gpus() {
    for (auto& g : v) {
      cudaSetDevice(g.ordinal);
      cudaDeviceSynchronize();
      for (size_t i = 0; i < g.streams.size(); ++i) {
        if (g.streams[i]) cudaStreamDestroy(g.streams[i]);
        if (g.start[i]) cudaEventDestroy(g.start[i]);
        if (g.end[i]) cudaEventDestroy(g.end[i]);
      }
      if (g.all_end) cudaEventDestroy(g.all_end);
      if (g.mem) cudaFree(g.mem);
    }
  }
};

// Every GPU's slices, streams and events, peer access enabled both ways where allowed.
class Node {
 public:
  explicit Node(bool quick) {
    const int n = visible_device_count();
    gpus_.resize(size_t(n));
    for (int d = 0; d < n; ++d) setup(gpus_[size_t(d)], d, n);
    bytes_ = slice_bytes(quick);
    for (auto& g : gpus_) {
      CUDA_CHECK(cudaSetDevice(g.ordinal));
      CUDA_CHECK(cudaMalloc(&g.mem, 2 * size_t(n - 1) * bytes_));
      CUDA_CHECK(cudaMemset(g.mem, 1, 2 * size_t(n - 1) * bytes_));
      preload(g);
    }
    access_.assign(size_t(n * n), false);
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) enable(a, b);
  }

  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  int size() const { return int(gpus_.size()); }
  size_t bytes() const { return bytes_; }
  Gpu& gpu(int g) { return gpus_[size_t(g)]; }
  bool accessible(int by, int other) const { return access_[size_t(by * size() + other)]; }
  // g's source slice for copies to `peer`, and its destination slice for copies from `peer`.
  char* source(int g, int peer) { return gpus_[size_t(g)].mem + slot(g, peer) * bytes_; }
  char* destination(int g, int peer) { return gpus_[size_t(g)].mem + (size_t(size() - 1) + slot(g, peer)) * bytes_; }

  Timing run(const std::vector<Transfer>& copies, Engine engine);

 private:
  size_t slot(int g, int peer) const { return size_t(peer < g ? peer : peer - 1); }

  static void setup(Gpu& g, int d, int n) {
    g.ordinal = d;
    char bus[32] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
    g.bus = bus;
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, d));
    g.streams.resize(size_t(n - 1));
    g.start.resize(size_t(n - 1));
    g.end.resize(size_t(n - 1));
    for (size_t i = 0; i < g.streams.size(); ++i) {
      CUDA_CHECK(cudaStreamCreateWithFlags(&g.streams[i], cudaStreamNonBlocking));
      CUDA_CHECK(cudaEventCreate(&g.start[i]));
      CUDA_CHECK(cudaEventCreate(&g.end[i]));
    }
    CUDA_CHECK(cudaEventCreate(&g.all_end));
  }

  // The largest slice up to the mode's size that kMemoryShare of every GPU's free memory holds.
  size_t slice_bytes(bool quick) const {
    size_t bytes = quick ? kQuickCopyBytes : kCopyBytes;
    for (const auto& g : gpus_) {
      CUDA_CHECK(cudaSetDevice(g.ordinal));
      size_t free = 0, total = 0;
      CUDA_CHECK(cudaMemGetInfo(&free, &total));
      const size_t fit = size_t(double(free) * kMemoryShare) / (2 * gpus_.size() - 2);
      bytes = std::min(bytes, fit / kSliceAlign * kSliceAlign);
    }
    if (bytes < kMinCopyBytes)
      throw std::runtime_error("p2p: " + std::to_string(bytes >> 20) + " MiB per copy is all the free memory allows");
    return bytes;
  }

  // Loads the kernels on every GPU now: a lazy load inside a gated measurement would wait for
  // the gated stream (a device-wide synchronization) and never return.
  static void preload(Gpu& g) {
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, host_link::sm_copy));
    CUDA_CHECK(cudaFuncGetAttributes(&attr, host_link::host_chase));
    host_link::sm_copy<<<1, 32, 0, g.streams.front()>>>(nullptr, nullptr, 0);
    CUDA_CHECK_LAUNCH();
  }

  void enable(int a, int b) {
    if (a == b) return;
    int can = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
    if (!can) return;
    CUDA_CHECK(cudaSetDevice(a));
    const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled)
      (void)cudaGetLastError();
    else
      CUDA_CHECK(e);
    access_[size_t(a * size() + b)] = true;
  }

  Gpus owned_;
  std::vector<Gpu>& gpus_ = owned_.v;
  std::vector<bool> access_;  // [by * n + other]: by may access other's memory
  size_t bytes_ = 0;
};

// Enqueues the copies on their initiators' streams behind one gate, then releases them
// together: the first stream records the common start, every other waits for it, and the
// first waits for every other's end.
Timing Node::run(const std::vector<Transfer>& copies, Engine engine) {
  if (copies.empty()) throw std::runtime_error("p2p: a measurement without copies");
  std::vector<int> used(gpus_.size(), 0);
  std::vector<std::pair<Gpu*, size_t>> at;  // each copy's initiator and its stream
  for (const auto& t : copies) at.push_back({&gpu(t.by), size_t(used[size_t(t.by)]++)});
  auto stream = [&](size_t i) { return at[i].first->streams[at[i].second]; };
  Gpu& first = *at[0].first;
  CUDA_CHECK(cudaSetDevice(first.ordinal));
  Gate gate(stream(0));
  CUDA_CHECK(cudaEventRecord(first.start[at[0].second], stream(0)));
  for (size_t i = 0; i < copies.size(); ++i) {
    const Transfer& t = copies[i];
    Gpu& g = *at[i].first;
    CUDA_CHECK(cudaSetDevice(g.ordinal));
    if (i > 0) {
      CUDA_CHECK(cudaStreamWaitEvent(stream(i), first.start[at[0].second], 0));
      CUDA_CHECK(cudaEventRecord(g.start[at[i].second], stream(i)));
    }
    const char* src = source(t.src, t.dst);
    char* dst = destination(t.dst, t.src);
    if (engine == Engine::copy_engine) {
      CUDA_CHECK(cudaMemcpyPeerAsync(dst, t.dst, src, t.src, bytes_, stream(i)));
    } else {
      host_link::sm_copy<<<g.sms * kBlocksPerSm, kThreads, 0, stream(i)>>>(
          reinterpret_cast<const uint4*>(src), reinterpret_cast<uint4*>(dst), bytes_ / sizeof(uint4));
      CUDA_CHECK(cudaGetLastError());
    }
    CUDA_CHECK(cudaEventRecord(g.end[at[i].second], stream(i)));
  }
  CUDA_CHECK(cudaSetDevice(first.ordinal));
  for (size_t i = 1; i < copies.size(); ++i)
    CUDA_CHECK(cudaStreamWaitEvent(stream(0), at[i].first->end[at[i].second], 0));
  CUDA_CHECK(cudaEventRecord(first.all_end, stream(0)));
  gate.release();
  CUDA_CHECK(cudaEventSynchronize(first.all_end));
  Timing out;
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, first.start[at[0].second], first.all_end));
  out.total_s = ms * 1e-3;
  for (size_t i = 0; i < copies.size(); ++i) {
    CUDA_CHECK(cudaSetDevice(at[i].first->ordinal));
    CUDA_CHECK(cudaEventElapsedTime(&ms, at[i].first->start[at[i].second], at[i].first->end[at[i].second]));
    out.each_s.push_back(ms * 1e-3);
  }
  return out;
}

// GB/s of one repetition as nvbandwidth reckons it: both directions' own rates summed for a
// pair both ways; the bytes of all over the group's time for one to all, all to one, all pairs.
double gbs(const Mode& m, const Timing& t, size_t bytes, size_t copies) {
  if (m.pattern != Pattern::pair_bidir) return double(bytes) * double(copies) / t.total_s / 1e9;
  double sum = 0;
  for (double s : t.each_s) sum += double(bytes) / s / 1e9;
  return sum;
}

class P2pFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(p2p::kFamily.name); }
  std::string description() const override {
    return "bandwidth and latency between every pair of GPUs, the fabric under load, and the links NVML reports";
  }
  std::vector<ProbeInfo> probes() const override {
    std::vector<ProbeInfo> out;
    for (const auto& m : modes()) out.push_back({m.probe, m.what});
    out.push_back(
        {kLatencyProbe, "device's thread chasing pointers in the peer's memory, ns (and cycles)"});
    out.push_back({"link", "the link NVML reports between device and peer"});
    return out;
  }
  bool supported(const DeviceInfo&, std::string* why) const override {
    const int n = visible_device_count();
    if (n >= 2) return true;
    *why = "needs two or more GPUs; this machine has " + std::to_string(n) +
           " (cudaGetDeviceCount), so there is no peer to measure";
    return false;
  }

  void run(RunContext& ctx) override {
    struct RestoreDevice {
      int ordinal;
      ~RestoreDevice() { cudaSetDevice(ordinal); }
    } restore{ctx.device().ordinal};
    Node node(ctx.quick());
    links(ctx, node);
    for (const auto& m : modes()) {
      if (!ctx.enabled(m.probe)) continue;
      if (m.engine == Engine::sm && !sass_allows(ctx, m.probe, {"host_link::sm_copy"})) continue;
      ctx.progress(m.probe);
      if (is_pair(m))
        pairs(ctx, node, m);
      else if (m.pattern == Pattern::all_pairs)
        all_pairs(ctx, node, m);
      else
        for (int d = 0; d < node.size(); ++d) fan(ctx, node, m, d);
    }
    if (ctx.enabled(kLatencyProbe) && sass_allows(ctx, kLatencyProbe, {"host_link::host_chase"}))
      latencies(ctx, node);
  }

 private:
  static int reps(const RunContext& ctx) { return ctx.quick() ? kQuickReps : kReps; }
  static std::function<bool(int, int)> access(const Node& node) {
    return [&node](int by, int other) { return node.accessible(by, other); };
  }

  static void links(RunContext& ctx, Node& node) {
    if (!ctx.enabled("link")) return;
    for (int d = 0; d < node.size(); ++d) {
      Nvml nvml(node.gpu(d).bus);
      for (int p = 0; p < node.size(); ++p) {
        if (p == d) continue;
        const double ok = node.accessible(d, p) ? 1 : 0;
        const Params pp = {
            {"device", std::to_string(d)}, {"peer", std::to_string(p)}, {"link", nvml.link_to(node.gpu(p).bus)}};
        ctx.record({"", "link", pp, ok, "peer_access", ok, ok, ok, 1});
      }
    }
  }

  static void pairs(RunContext& ctx, Node& node, const Mode& m) {
    for (int d = 0; d < node.size(); ++d)
      for (int p = 0; p < node.size(); ++p) {
        const auto copies = transfers(m, d, p, node.size(), access(node));
        if (copies.empty()) continue;
        const double bytes = double(node.bytes() * copies.size());
        ctx.measure({m.probe, {{"device", std::to_string(d)}, {"peer", std::to_string(p)}}, "GB/s", reps(ctx), bytes},
                    [&] {
                      const Timing t = node.run(copies, m.engine);
                      return Sample{gbs(m, t, node.bytes(), copies.size()), t.total_s};
                    });
      }
  }

  // One GPU with every other at once (one to all, all to one).
  static void fan(RunContext& ctx, Node& node, const Mode& m, int d) {
    const auto copies = transfers(m, d, -1, node.size(), access(node));
    if (copies.empty()) return;
    const double bytes = double(node.bytes() * copies.size());
    ctx.measure({m.probe, {{"device", std::to_string(d)}, {"peers", std::to_string(copies.size())}}, "GB/s", reps(ctx),
                 bytes},
                [&] {
                  const Timing t = node.run(copies, m.engine);
                  return Sample{gbs(m, t, node.bytes(), copies.size()), t.total_s};
                });
  }

  // Every GPU with every other at once: the node's total, and each copy's own rate under that
  // load (the repetitions after the warm-up) as rows of its pair.
  static void all_pairs(RunContext& ctx, Node& node, const Mode& m) {
    const auto copies = transfers(m, -1, -1, node.size(), access(node));
    if (copies.empty()) return;
    std::vector<std::vector<double>> each(copies.size());
    bool warm = false;
    ctx.measure({m.probe, {{"gpus", std::to_string(node.size())}, {"copies", std::to_string(copies.size())}}, "GB/s",
                 reps(ctx), double(node.bytes() * copies.size())},
                [&] {
                  const Timing t = node.run(copies, m.engine);
                  for (size_t i = 0; warm && i < copies.size(); ++i)
                    each[i].push_back(double(node.bytes()) / t.each_s[i] / 1e9);
                  warm = true;
                  return Sample{gbs(m, t, node.bytes(), copies.size()), t.total_s};
                });
    for (size_t i = 0; i < copies.size(); ++i) {
      if (each[i].empty()) continue;
      const Summary s = summarize(each[i]);
      ctx.record({"", m.probe,
                  {{"device", std::to_string(copies[i].by)},
                   {"peer", std::to_string(copies[i].by == copies[i].src ? copies[i].dst : copies[i].src)}},
                  s.p50, "GB/s", s.p05, s.p50, s.p95, s.n});
    }
  }

  // The SM clock of GPU d, for its chase's cycles: the run's own measurement for the run's GPU,
  // measured here (clock64 against %globaltimer) for the others.
  static double clock_mhz(RunContext& ctx, int d, std::vector<double>& cache) {
    if (d == ctx.device().ordinal) return ctx.sm_clock_mhz();
    if (cache[size_t(d)] <= 0) cache[size_t(d)] = measure_sm_clock(open_device(d)).mhz;
    return cache[size_t(d)];
  }

  // Device d's thread follows a chain laid in p's memory: ns per load at d's own clock, and the
  // cycles it counted.
  static void latencies(RunContext& ctx, Node& node) {
    std::vector<double> clocks(size_t(node.size()), 0);
    std::vector<uint32_t> next = sattolo_cycle(kChaseLines, kChaseSeed);
    std::vector<uint64_t> words(kChaseLines * kChaseStride / sizeof(uint64_t), 0);
    for (int i = 0; i < kChaseLines; ++i)
      words[size_t(i) * kChaseStride / 8] = uint64_t(next[size_t(i)]) * kChaseStride;
    for (int d = 0; d < node.size(); ++d)
      for (int p = 0; p < node.size(); ++p) {
        if (d == p || !node.accessible(d, p)) continue;
        const double mhz = clock_mhz(ctx, d, clocks);
        char* chain = node.destination(p, d);
        CUDA_CHECK(cudaSetDevice(p));
        CUDA_CHECK(cudaMemcpy(chain, words.data(), words.size() * 8, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaSetDevice(d));
        DeviceBuffer<uint64_t> cur(1), cycles(1);
        CUDA_CHECK(cudaMemset(cur.get(), 0, 8));
        const cudaStream_t s = node.gpu(d).streams.front();
        const Params pp = {
            {"device", std::to_string(d)}, {"peer", std::to_string(p)}, {"clock_mhz", format_printf("%.1f", mhz)}};
        Observation ns = ctx.measure({kLatencyProbe, pp, "ns", reps(ctx)}, [&] {
          CUDA_CHECK(cudaSetDevice(d));
          const double secs = time_seconds(
              [&] { host_link::host_chase<<<1, 1, 0, s>>>(chain, cur.get(), kChaseLines, cycles.get()); }, s);
          uint64_t c = 0;
          CUDA_CHECK(cudaMemcpy(&c, cycles.get(), 8, cudaMemcpyDeviceToHost));
          return Sample{double(c) / kChaseLines * 1e3 / mhz, secs};
        });
        ctx.record(ns.scaled(mhz / 1e3, "cycles"));
      }
  }
};

GPUPROBE_REGISTER_FAMILY(P2pFamily);

}  // namespace

}  // namespace p2p

}  // namespace gpuprobe
