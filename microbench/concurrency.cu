// The chip's concurrency limits. How many kernels run at once (N one-warp spin kernels in N
// streams, each stamping its start and stop with %globaltimer; the count is the most
// intervals that overlap); whether a high-priority stream's blocks overtake the waiting
// blocks of a kernel launched before it; what a launch costs (back-to-back empty kernels in
// a stream and in a CUDA graph, and one launch's round trip); and the tail effect: time
// against grid size in waves of resident blocks. Every spin is bounded by a clock64 budget
// as well as by time, so no kernel can hang whatever the timer does.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>

#include "analysis/concurrency.hpp"
#include "base/csv.hpp"
#include "memory_streams.cuh"

namespace gpuprobe {
namespace {

// Spins until `ns` of %globaltimer have passed or `max_cycles` SM cycles, whichever first.
__device__ __forceinline__ void spin(uint64_t ns, long long max_cycles) {
  const uint64_t t0 = global_timer_ns();
  const long long c0 = clock64();
  while (global_timer_ns() - t0 < ns && clock64() - c0 < max_cycles) {
  }
}

// One block; its first thread stamps when the kernel started and stopped.
__global__ void stamped_spin(uint64_t ns, long long max_cycles, unsigned long long* start,
                             unsigned long long* stop) {
  const uint64_t t0 = global_timer_ns();
  spin(ns, max_cycles);
  if (threadIdx.x == 0) {
    *start = t0;
    *stop = global_timer_ns();
  }
}

// Every block stamps when it started, then spins.
__global__ void block_stamped_spin(uint64_t ns, long long max_cycles, unsigned long long* start) {
  if (threadIdx.x == 0) start[blockIdx.x] = global_timer_ns();
  spin(ns, max_cycles);
}

// Each block holds its SM slot for `cycles` SM cycles.
__global__ void cycle_spin(long long cycles) {
  const long long c0 = clock64();
  while (clock64() - c0 < cycles) {
  }
}

__global__ void empty_kernel() {}

class Streams {
 public:
  explicit Streams(int n, int priority = 0) : s_(n) {
    for (auto& s : s_)
      CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
  }
  ~Streams() {
    for (auto s : s_) cudaStreamDestroy(s);
  }
  Streams(const Streams&) = delete;
  Streams& operator=(const Streams&) = delete;
  cudaStream_t operator[](size_t i) const { return s_[i]; }

 private:
  std::vector<cudaStream_t> s_;
};

class ConcurrencyFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(concurrency::kFamily.name); }
  std::string description() const override {
    return "concurrent kernels, stream priorities, launch overhead (stream, graph), waves";
  }
  std::vector<ProbeInfo> probes() const override {
    return {
        {concurrency::kConcurrentKernelsProbe,
         "one-warp spin kernels in N streams: most running at once"},
        {concurrency::kPriorityProbe,
         "share of a running kernel's waiting blocks a later kernel overtakes, "
         "with a higher and with the same stream priority"},
        {concurrency::kLaunchProbe,
         "per-kernel time of back-to-back empty kernels: stream, CUDA graph"},
        {concurrency::kLaunchLatencyProbe, "one empty launch and its synchronize, host round trip"},
        {concurrency::kWavesProbe, "time against grid size in waves of resident blocks"}};
  }

  void run(RunContext& ctx) override {
    quick_ = ctx.quick();
    // Spin budgets in cycles: four times the time at the measured clock.
    cycles_per_ns_ = 4 * ctx.sm_clock_mhz() * 1e-3;
    if (ctx.enabled(concurrency::kConcurrentKernelsProbe)) concurrent_kernels(ctx);
    if (ctx.enabled(concurrency::kPriorityProbe)) priority(ctx);
    if (ctx.enabled(concurrency::kLaunchProbe)) launch(ctx);
    if (ctx.enabled(concurrency::kLaunchLatencyProbe)) launch_latency(ctx);
    if (ctx.enabled(concurrency::kWavesProbe)) waves(ctx);
  }

 private:
  long long budget(uint64_t ns) const {
    return static_cast<long long>(ns * cycles_per_ns_) + 100000;
  }

  // Kernels in different streams alias onto CUDA_DEVICE_MAX_CONNECTIONS hardware queues
  // (8 unless the environment says otherwise, read when the context is created): recorded
  // with each point, since it may be the limit that shows.
  void concurrent_kernels(RunContext& ctx) {
    const char* env = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    const std::string connections = env ? env : "8 (default)";
    const int max_n = quick_ ? 64 : 256;
    const uint64_t ns = quick_ ? 2'000'000 : 4'000'000;
    Streams streams(max_n);
    DeviceBuffer<unsigned long long> start(max_n), stop(max_n);
    std::vector<unsigned long long> h_start(max_n), h_stop(max_n);
    std::vector<int> counts = {1, 2, 4, 8, 12, 16, 24, 32, 48, 64};
    if (!quick_)
      for (int n : {96, 112, 120, 128, 136, 144, 160, 192, 256}) counts.push_back(n);
    for (int n : counts) {
      Params params = {{concurrency::kStreamsColumn, std::to_string(n)},
                       {concurrency::kConnectionsColumn, connections}};
      const Point pt{concurrency::kConcurrentKernelsProbe, params, concurrency::kKernelsUnit, 3, 0};
      ctx.measure(pt, [&] {
        CUDA_CHECK(cudaMemset(start.get(), 0, start.bytes()));
        CUDA_CHECK(cudaMemset(stop.get(), 0, stop.bytes()));
        CUDA_CHECK(cudaDeviceSynchronize());
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < n; ++k)
          stamped_spin<<<1, 32, 0, streams[k]>>>(ns, budget(ns), start.get() + k, stop.get() + k);
        CUDA_CHECK_LAUNCH();
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        CUDA_CHECK(cudaMemcpy(h_start.data(), start.get(), n * sizeof(unsigned long long),
                              cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(h_stop.data(), stop.get(), n * sizeof(unsigned long long),
                              cudaMemcpyDeviceToHost));
        // Relative to the first start: %globaltimer counts from an epoch, too far for a double
        // to keep nanoseconds.
        const unsigned long long t_first = *std::min_element(h_start.begin(), h_start.begin() + n);
        std::vector<concurrency::Interval> spans;
        for (int k = 0; k < n; ++k)
          spans.push_back({static_cast<double>(h_start[k] - t_first),
                           static_cast<double>(h_stop[k] - t_first)});
        return Sample{static_cast<double>(concurrency::max_overlap(spans)), s};
      });
    }
  }

  // A first kernel of several waves of blocks, then, a moment later, a second one-wave
  // kernel in another stream. value: the share of the first kernel's blocks that started
  // after the second kernel's first block.
  void priority(RunContext& ctx) {
    int least = 0, greatest = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    const int threads = 256;
    const int per_sm = resident_blocks(reinterpret_cast<const void*>(&block_stamped_spin), threads);
    if (per_sm < 1) throw std::runtime_error("concurrency: a spin kernel does not fit an SM");
    const int wave = per_sm * ctx.device().sm_count;
    const int first_blocks = 8 * wave;
    const uint64_t ns = 20'000;
    Streams low(1, least), high(1, greatest), same(1, least);
    DeviceBuffer<unsigned long long> first(first_blocks), second(wave);
    std::vector<unsigned long long> h_first(first_blocks), h_second(wave);
    for (bool higher : {true, false}) {
      if (higher && least == greatest) {
        ctx.progress("priority: the device has one stream priority");
        continue;
      }
      const cudaStream_t later = higher ? high[0] : same[0];
      Params params = {{concurrency::kSecondColumn, higher ? "higher_priority" : "same_priority"},
                       {concurrency::kFirstWavesColumn, "8"},
                       {concurrency::kWaveBlocksColumn, std::to_string(wave)}};
      ctx.measure(Point{concurrency::kPriorityProbe, params, "fraction", quick_ ? 3 : 7, 0}, [&] {
        double s = time_seconds(
            [&] {
              block_stamped_spin<<<first_blocks, threads, 0, low[0]>>>(ns, budget(ns), first.get());
              block_stamped_spin<<<wave, threads, 0, later>>>(ns, budget(ns), second.get());
            },
            low[0]);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(h_first.data(), first.get(), first.bytes(), cudaMemcpyDeviceToHost));
        CUDA_CHECK(
            cudaMemcpy(h_second.data(), second.get(), second.bytes(), cudaMemcpyDeviceToHost));
        const unsigned long long second_start = *std::min_element(h_second.begin(), h_second.end());
        const auto overtaken = std::count_if(
            h_first.begin(), h_first.end(), [&](unsigned long long t) { return t > second_start; });
        return Sample{static_cast<double>(overtaken) / first_blocks, s};
      });
    }
  }

  // Back-to-back empty kernels, k of them, from a stream and from a CUDA graph: the time per
  // kernel between two events around them all.
  void launch(RunContext& ctx) {
    const int k = quick_ ? 200 : 1000;
    Streams stream(1);
    const cudaStream_t s0 = stream[0];
    auto per_kernel = [&](const std::string& mode, const std::function<void()>& enqueue) {
      Params params = {{concurrency::kModeColumn, mode},
                       {concurrency::kKernelsColumn, std::to_string(k)}};
      ctx.measure(Point{concurrency::kLaunchProbe, params, "us", quick_ ? 3 : 11, 0}, [&] {
        double s = time_seconds(enqueue, s0);
        return Sample{s / k * 1e6, s};
      });
    };
    per_kernel("stream", [&] {
      for (int i = 0; i < k; ++i) empty_kernel<<<1, 32, 0, s0>>>();
    });
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < k; ++i) empty_kernel<<<1, 32, 0, s0>>>();
    CUDA_CHECK(cudaStreamEndCapture(s0, &graph));  // fails if a captured launch failed
    CUDA_CHECK(cudaGraphInstantiateWithFlags(&exec, graph, 0));  // one signature in CUDA 11 and 12+
    CUDA_CHECK(cudaGraphUpload(exec, s0));
    per_kernel("graph", [&] { CUDA_CHECK(cudaGraphLaunch(exec, s0)); });
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
  }

  void launch_latency(RunContext& ctx) {
    Streams stream(1);
    const cudaStream_t s0 = stream[0];
    const Params params = {{concurrency::kModeColumn, "stream"}};
    ctx.measure(Point{concurrency::kLaunchLatencyProbe, params, "us", quick_ ? 11 : 101, 0}, [&] {
      const auto t0 = std::chrono::steady_clock::now();
      empty_kernel<<<1, 32, 0, s0>>>();
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaStreamSynchronize(s0));
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      return Sample{s * 1e6, s};
    });
  }

  // Blocks that each hold an SM slot for a fixed time: the run time steps up by one block
  // time each time the grid passes a whole number of waves.
  void waves(RunContext& ctx) {
    const int threads = 256;
    const int per_sm = resident_blocks(reinterpret_cast<const void*>(&cycle_spin), threads);
    if (per_sm < 1) throw std::runtime_error("concurrency: a spin kernel does not fit an SM");
    const int wave = per_sm * ctx.device().sm_count;
    const long long cycles = static_cast<long long>(20.0 * ctx.sm_clock_mhz());  // ~20 us
    const int eighths = quick_ ? 2 : 1;
    for (int e = eighths; e <= 32; e += eighths) {
      for (int extra : {0, 1}) {  // one block past each whole wave: the start of the next step
        if (extra && e % 8) continue;
        const int blocks = wave * e / 8 + extra;
        Params params = {
            {concurrency::kBlocksColumn, std::to_string(blocks)},
            {concurrency::kWavesColumn, format_number(static_cast<double>(blocks) / wave)},
            {concurrency::kWaveBlocksColumn, std::to_string(wave)},
            {concurrency::kBlockUsColumn, format_number(cycles / ctx.sm_clock_mhz())}};
        ctx.measure(Point{concurrency::kWavesProbe, params, "us", quick_ ? 3 : 7, 0}, [&] {
          double s = time_seconds([&] { cycle_spin<<<blocks, threads>>>(cycles); });
          return Sample{s * 1e6, s};
        });
      }
    }
  }

  bool quick_ = false;
  double cycles_per_ns_ = 8;
};

}  // namespace

GPUPROBE_REGISTER_FAMILY(ConcurrencyFamily);

}  // namespace gpuprobe
