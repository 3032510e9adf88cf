// Latency under load: one thread chases pointers through DRAM (every step to a line not
// touched before) while every SM streams reads at a rate set by a pause between rounds of
// loads. Each point gives the chase latency and the bandwidth the streams achieved meanwhile:
// latency against achieved bandwidth, from idle to saturation.
#include <algorithm>

#include "analysis/loaded_latency.hpp"
#include "base/csv.hpp"
#include "base/stats.hpp"
#include "memory_streams.cuh"

namespace gpuprobe {
namespace {

constexpr int kIlp = 4;  // 16-byte loads per streaming round and thread

struct StreamTally {
  unsigned long long bytes;
  unsigned long long first_ns, last_ns;  // earliest start, latest stop over streaming blocks
};

struct ChaseResult {
  long long cycles;
  uint32_t steps, stopped_at;
};

// Block 0, thread 0 chases; every other block streams. The streams run for `window_ns` of
// %globaltimer each; the chase waits `settle_ns` for them to get going, then walks in rounds
// of 64 steps until `max_steps` or until it would outlast the streams. Nothing waits on
// another block, so the kernel ends after about window_ns whatever the scheduler does.
__global__ void loaded_chase(const uint32_t* chain, uint32_t line_words, uint32_t start,
                             uint32_t max_steps, const uint4* stream, uint64_t n, uint64_t step,
                             uint32_t delay_ns, uint64_t window_ns, uint64_t settle_ns,
                             ChaseResult* chase_out, StreamTally* tally, uint32_t* sink, int flag) {
  const uint64_t t_begin = global_timer_ns();
  if (blockIdx.x == 0) {
    if (threadIdx.x != 0) return;
    while (global_timer_ns() - t_begin < settle_ns) {
    }
    uint32_t p = start, steps = 0;
    long long cycles = 0;
    while (steps < max_steps && global_timer_ns() - t_begin < window_ns - settle_ns) {
      long long c;
      p = chase(chain, line_words, p, 64, &c);
      cycles += c;
      steps += 64;
    }
    *chase_out = {cycles, steps, p};
    return;
  }
  // Streams: warp-contiguous 16-byte loads over the stream buffer, a random first pause per
  // warp so that the warps do not pulse together.
  const uint64_t t = static_cast<uint64_t>(blockIdx.x - 1) * blockDim.x + threadIdx.x;
  uint64_t i = t % n;
  uint32_t acc = 0, rounds = 0;
  if (delay_ns) pause_ns((static_cast<uint32_t>(t / 32) * 2654435761u) % delay_ns);
  while (global_timer_ns() - t_begin < window_ns) {
    uint4 v[kIlp];
#pragma unroll
    for (int u = 0; u < kIlp; ++u) {
      v[u] = load<Load::cg, 16>(stream + i);
      i += step;
      if (i >= n) i -= n;
    }
#pragma unroll
    for (int u = 0; u < kIlp; ++u) acc ^= fold(v[u]);
    ++rounds;
    if (delay_ns) pause_ns(delay_ns);
  }
  const uint64_t t_end = global_timer_ns();
  keep(acc, sink, flag);
  // One atomic per warp.
  unsigned long long bytes = static_cast<unsigned long long>(rounds) * kIlp * 16;
  for (int o = 16; o > 0; o /= 2) bytes += __shfl_down_sync(0xffffffffu, bytes, o);
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&tally->bytes, bytes);
    atomicMin(&tally->first_ns, static_cast<unsigned long long>(t_begin));
    atomicMax(&tally->last_ns, static_cast<unsigned long long>(t_end));
  }
}

class LoadedLatencyFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(loaded_latency::kFamily.name); }
  std::string description() const override {
    return "DRAM pointer-chase latency while all SMs stream reads at a controlled rate";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{loaded_latency::kStreamProbe,
             "bandwidth the streaming blocks achieved at each pause (GB/s)"},
            {loaded_latency::kChaseProbe,
             "DRAM chase latency at the same time (cycles, ns), with load_gbs"}};
  }
  struct Pace {
    int blocks;
    uint32_t delay_ns;
  };
  // From idle (the chase alone) through pauses long enough for a light load down to none at all.
  static std::vector<Pace> paces(int all_blocks, bool quick) {
    std::vector<Pace> loads = {{1, 0}};
    const std::vector<uint32_t> delays =
        quick ? std::vector<uint32_t>{40000, 4000, 0}
              : std::vector<uint32_t>{100000, 40000, 16000, 8000, 4000, 2000, 1000, 500, 0};
    for (uint32_t delay : delays) loads.push_back({all_blocks, delay});
    return loads;
  }
  void run(RunContext& ctx) override {
    if (!ctx.enabled(loaded_latency::kStreamProbe) && !ctx.enabled(loaded_latency::kChaseProbe))
      return;
    const DeviceInfo& d = ctx.device();
    const bool quick = ctx.quick();
    const int reps = quick ? 3 : 7;
    const uint64_t l2 = static_cast<uint64_t>(d.l2_bytes);
    const double mhz = ctx.sm_clock_mhz();

    DeviceBuffer<uint8_t> big(dram_buffer_bytes(d));
    CUDA_CHECK(cudaMemset(big.get(), 0x3c, big.bytes()));
    const uint64_t n = big.bytes() / 16;
    LineChain chain(static_cast<uint32_t>(2 * l2 / 128), 128, 0x10ad);
    DeviceBuffer<uint32_t> sink(1);
    read_through_l2(big.get(), big.bytes(), d, sink.get());  // the chain out of L2
    DeviceBuffer<ChaseResult> chase_out(1);
    DeviceBuffer<StreamTally> tally(1);

    const int threads = 512;
    const int per_sm = resident_blocks(reinterpret_cast<const void*>(&loaded_chase), threads);
    if (per_sm < 1) throw std::runtime_error("loaded_latency: the kernel does not fit an SM");
    // Every block resident at once: the chase shares the machine with the streams it measures.
    const int all_blocks = per_sm * d.sm_count;
    const uint64_t window_ns = quick ? 1'000'000 : 2'000'000, settle_ns = 50'000;

    for (const Pace& ld : paces(all_blocks, quick)) {
      const int streaming = ld.blocks - 1;
      std::vector<double> latency_cycles;
      Params params = {{loaded_latency::kStreamingBlocksColumn, std::to_string(streaming)}};
      if (streaming) params.push_back({loaded_latency::kDelayColumn, std::to_string(ld.delay_ns)});
      const uint64_t stream_threads = static_cast<uint64_t>(std::max(streaming, 1)) * threads;
      Observation bw =
          ctx.measure(Point{loaded_latency::kStreamProbe, params, "GB/s", reps, 0}, [&] {
            const StreamTally zero = {0, ~0ull, 0};
            CUDA_CHECK(cudaMemcpy(tally.get(), &zero, sizeof zero, cudaMemcpyHostToDevice));
            double s = time_seconds([&] {
              loaded_chase<<<ld.blocks, threads>>>(
                  chain.data(), chain.line_words(), chain.cursor(), 1u << 20,
                  reinterpret_cast<const uint4*>(big.get()), n, stream_threads % n, ld.delay_ns,
                  window_ns, settle_ns, chase_out.get(), tally.get(), sink.get(), 0);
            });
            ChaseResult c{};
            StreamTally t{};
            CUDA_CHECK(cudaMemcpy(&c, chase_out.get(), sizeof c, cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(&t, tally.get(), sizeof t, cudaMemcpyDeviceToHost));
            if (c.steps == 0) throw std::runtime_error("loaded_latency: the chase took no step");
            chain.advance(c.stopped_at, c.steps);
            latency_cycles.push_back(static_cast<double>(c.cycles) / c.steps);
            const double gbs =
                t.last_ns > t.first_ns
                    ? static_cast<double>(t.bytes) / static_cast<double>(t.last_ns - t.first_ns)
                    : 0.0;
            return Sample{gbs, s};
          });
      if (!chain.fresh()) {
        ctx.invalid(loaded_latency::kChaseProbe,
                    "the chase came back to lines it had visited (chain too short)");
        return;
      }
      // The latency of the same repetitions (warm-up included: it ran under the same load),
      // with the bandwidth they achieved as the x of the curve.
      Summary lat = summarize(latency_cycles);
      Params with_load = params;
      with_load.push_back({loaded_latency::kLoadColumn, format_number(bw.p50)});
      const double ns = 1e3 / mhz;
      ctx.record({name(), loaded_latency::kChaseProbe, with_load, lat.p50, "cycles", lat.p05,
                  lat.p50, lat.p95, lat.n});
      ctx.record({name(), loaded_latency::kChaseProbe, with_load, lat.p50 * ns, "ns", lat.p05 * ns,
                  lat.p50 * ns, lat.p95 * ns, lat.n});
    }
  }
};

}  // namespace

GPUPROBE_REGISTER_FAMILY(LoadedLatencyFamily);

}  // namespace gpuprobe
