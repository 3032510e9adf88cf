// Little's law, measured: bandwidth against the bytes each SM keeps in flight (warps per SM x
// independent loads per thread x access width), from DRAM and from L2, and the unloaded
// latency of each level (a single-thread chase), so that latency x bandwidth can be set
// against the bytes in flight that the curve needs.
#include <algorithm>

#include "analysis/bytes_in_flight.hpp"
#include "analysis/common/memory_chase.hpp"
#include "base/csv.hpp"
#include "memory_streams.cuh"

namespace gpuprobe {
namespace {

__global__ void unloaded_chase(const uint32_t* chain, uint32_t line_words, uint32_t start,
                               uint32_t steps, long long* cycles, uint32_t* stopped_at) {
  *stopped_at = chase(chain, line_words, start, steps, cycles);
}

// Every (width, ILP) the sweep uses, reading through L2 only (ld.global.cg): L1 must not
// serve a reread line, or the bytes would not have been in flight to L2 or DRAM.
std::vector<StreamRead> sweep_kernels(bool quick) {
  if (quick) return {stream_read_of<16, 1, Load::cg>(), stream_read_of<16, 4, Load::cg>()};
  return {stream_read_of<4, 1, Load::cg>(),  stream_read_of<4, 2, Load::cg>(),
          stream_read_of<4, 4, Load::cg>(),  stream_read_of<4, 8, Load::cg>(),
          stream_read_of<8, 1, Load::cg>(),  stream_read_of<8, 2, Load::cg>(),
          stream_read_of<8, 4, Load::cg>(),  stream_read_of<8, 8, Load::cg>(),
          stream_read_of<16, 1, Load::cg>(), stream_read_of<16, 2, Load::cg>(),
          stream_read_of<16, 4, Load::cg>(), stream_read_of<16, 8, Load::cg>()};
}

// One run of the family: the device, a sink buffer, the measurements.
class BytesInFlightRun {
 public:
  explicit BytesInFlightRun(RunContext& ctx)
      : ctx_(ctx), dev_(ctx.device()), quick_(ctx.quick()), reps_(quick_ ? 3 : 7), sink_(1) {}
  void run();

 private:
  double sweep(const std::string& level, const uint8_t* buf, uint64_t bytes, bool rotate);
  Observation chase_latency(const std::string& level, LineChain& chain, uint32_t steps);

  RunContext& ctx_;
  const DeviceInfo& dev_;
  const bool quick_;
  const int reps_;
  DeviceBuffer<uint32_t> sink_;
};

// One curve: every (warps per SM, ILP, width) whose warps fit on an SM at once. Returns the
// highest bandwidth seen. With `rotate`, each repetition starts where the last one stopped,
// so that a DRAM buffer is never reread while L2 could still hold it.
double BytesInFlightRun::sweep(const std::string& level, const uint8_t* buf, uint64_t bytes,
                               bool rotate) {
  const DeviceInfo& d = dev_;
  const int max_warps = d.max_threads_per_sm / d.warp_size;
  double best = 0;
  for (const StreamRead& k : sweep_kernels(quick_)) {
    const uint64_t n = bytes / k.width;
    for (int warps = 1; warps <= max_warps; warps *= quick_ ? 4 : 2) {
      const int threads = std::min(warps * d.warp_size, std::min(1024, d.max_threads_per_block));
      const int blocks_per_sm = warps * d.warp_size / threads;
      if (resident_blocks(k.kernel, threads) < blocks_per_sm) continue;  // would not all fit
      const int grid = blocks_per_sm * d.sm_count;
      const uint64_t total = static_cast<uint64_t>(grid) * threads;
      const uint64_t per_round = total * k.ilp;
      // Long enough that a launch is small against it (>= 64 rounds and ~512 MiB), short
      // enough that the lowest concurrency takes about a millisecond.
      const auto rounds = static_cast<uint32_t>(std::clamp<uint64_t>(
          (uint64_t(512) << 20) / (per_round * k.width), 64, quick_ ? 256 : 1024));
      const uint64_t accesses = per_round * rounds;
      const double moved = static_cast<double>(accesses) * k.width;
      const double in_flight = static_cast<double>(warps) * d.warp_size * k.ilp * k.width;
      uint64_t first = 0;
      Params params = {{bytes_in_flight::kWarpsPerSmColumn, std::to_string(warps)},
                       {bytes_in_flight::kIlpColumn, std::to_string(k.ilp)},
                       {bytes_in_flight::kWidthColumn, std::to_string(k.width)},
                       {bytes_in_flight::kInFlightColumn, format_number(in_flight)},
                       {memory_chase::kFootprintColumn, std::to_string(n * k.width)}};
      Observation o = ctx_.measure(Point{level, params, "GB/s", reps_, moved}, [&] {
        double s = time_seconds(
            [&] { k.launch(buf, n, first, total % n, rounds, sink_.get(), grid, threads); });
        if (rotate) first = (first + accesses) % n;
        return Sample{moved / s * 1e-9, s};
      });
      best = std::max(best, o.p50);
    }
  }
  return best;
}

Observation BytesInFlightRun::chase_latency(const std::string& level, LineChain& chain,
                                            uint32_t steps) {
  DeviceBuffer<long long> cycles(1);
  DeviceBuffer<uint32_t> stopped(1);
  Params params = {{bytes_in_flight::kLevelColumn, level},
                   {memory_chase::kFootprintColumn, std::to_string(chain.bytes())},
                   {bytes_in_flight::kStepsColumn, std::to_string(steps)}};
  return ctx_.measure(Point{bytes_in_flight::kChaseProbe, params, "cycles", reps_, 0}, [&] {
    double s = time_seconds([&] {
      unloaded_chase<<<1, 1>>>(chain.data(), chain.line_words(), chain.cursor(), steps,
                               cycles.get(), stopped.get());
    });
    long long c = 0;
    uint32_t at = 0;
    CUDA_CHECK(cudaMemcpy(&c, cycles.get(), sizeof c, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&at, stopped.get(), sizeof at, cudaMemcpyDeviceToHost));
    chain.advance(at, steps);
    return Sample{static_cast<double>(c) / steps, s};
  });
}

void BytesInFlightRun::run() {
  const DeviceInfo& d = dev_;
  const uint64_t l2 = static_cast<uint64_t>(d.l2_bytes);
  if (l2 == 0) throw std::runtime_error("bytes_in_flight: the device reports no L2 size");
  const uint64_t l2_region = l2 / 4 / 4096 * 4096;  // inside one partition of a split L2
  const double mhz = ctx_.sm_clock_mhz();

  struct Level {
    std::string name;
    double peak = 0;
    double latency_ns = 0;
  };
  std::vector<Level> levels;
  {
    DeviceBuffer<uint8_t> big(dram_buffer_bytes(d));
    CUDA_CHECK(cudaMemset(big.get(), 0x3c, big.bytes()));
    using bytes_in_flight::kDramProbe;
    using bytes_in_flight::kL2Probe;
    if (ctx_.enabled(kDramProbe))
      levels.push_back({kDramProbe, sweep(kDramProbe, big.get(), big.bytes(), true)});
    if (ctx_.enabled(kL2Probe))
      levels.push_back({kL2Probe, sweep(kL2Probe, big.get(), l2_region, false)});

    if (ctx_.enabled(bytes_in_flight::kChaseProbe)) {
      // DRAM: a chain over 2x L2 (far more lines than the walks take), flushed from L2 by
      // reading the big buffer, walked onward so that no step returns to a line. L2: a
      // chain over a quarter of L2, read once so that it is resident, walked round and round.
      const uint32_t line = 128;
      LineChain far(static_cast<uint32_t>(2 * l2 / line), line, 0x5eed);
      read_through_l2(big.get(), big.bytes(), d, sink_.get());
      const uint32_t far_steps = quick_ ? 512 : 2048;
      Observation dram = chase_latency(kDramProbe, far, far_steps);
      LineChain near(static_cast<uint32_t>(l2_region / line), line, 0x5eed + 1);
      read_through_l2(near.data(), near.bytes(), d, sink_.get());
      Observation l2c = chase_latency(kL2Probe, near, quick_ ? 1024 : 4096);
      for (auto& lv : levels)
        lv.latency_ns = (lv.name == kDramProbe ? dram.p50 : l2c.p50) * 1e3 / mhz;
    }
  }

  // Little's law for each level: the bytes per SM that latency x peak bandwidth asks for.
  for (const auto& lv : levels) {
    if (lv.latency_ns <= 0 || lv.peak <= 0) continue;
    const double b = bytes_in_flight::littles_law_bytes_per_sm(lv.latency_ns, lv.peak, d.sm_count);
    ctx_.record({std::string(bytes_in_flight::kFamily.name),
                 bytes_in_flight::kLittlesLawProbe,
                 {{bytes_in_flight::kLevelColumn, lv.name},
                  {bytes_in_flight::kLatencyColumn, format_number(lv.latency_ns)},
                  {bytes_in_flight::kPeakColumn, format_number(lv.peak)}},
                 b,
                 "B/SM",
                 b,
                 b,
                 b,
                 1});
  }
}

class BytesInFlightFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(bytes_in_flight::kFamily.name); }
  std::string description() const override {
    return "bandwidth against bytes in flight per SM (warps x ILP x width) for DRAM and L2, "
           "with each level's unloaded latency for Little's law";
  }
  std::vector<ProbeInfo> probes() const override {
    return {
        {bytes_in_flight::kDramProbe, "GB/s from a buffer 32x L2 against bytes in flight per SM"},
        {bytes_in_flight::kL2Probe, "GB/s from a quarter of L2 against bytes in flight per SM"},
        {bytes_in_flight::kChaseProbe,
         "unloaded latency of DRAM and L2 (one thread, ld.global.cg chase)"}};
  }
  void run(RunContext& ctx) override { BytesInFlightRun(ctx).run(); }
};

}  // namespace

GPUPROBE_REGISTER_FAMILY(BytesInFlightFamily);

}  // namespace gpuprobe
