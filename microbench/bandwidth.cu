// Peak bandwidth of each memory level. DRAM read, write and copy stream over a buffer 32x the
// L2 with 4, 8 and 16-byte accesses at full occupancy, with every cache operator and
// streaming hint PTX offers, the grid sweeping the buffer together or each warp its own
// slice, several passes per launch (>= 16 GiB, some ms) so that the launch and the ramp at
// either end are lost in the noise; reads sweep the footprint through L2 (ld.global.cg, so L1
// never serves them) from a fraction of one L2 partition to DRAM; L1 is read per SM from a
// region each block keeps resident, timed in SM cycles.
#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/bandwidth.hpp"
#include "analysis/common/memory_chase.hpp"
#include "analysis/dram_read_order.hpp"
#include "base/csv.hpp"
#include "base/stats.hpp"
#include "memory_streams.cuh"

namespace gpuprobe {
namespace {

constexpr int kStreamThreads = 256;
constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kGiB = size_t(1) << 30;

// Each block reads its own slice of `region` accesses (a power of two) of `buf` again and
// again through L1: a warm-up pass brings the slice in, then `passes` passes are timed with
// clock64 between two barriers. Thread t's U loads per pass go to accesses t + u * blockDim,
// each index moving on by U * blockDim (mod region) every pass: ptxas merges loads of an
// address it can prove unchanged, even volatile ones, so the index must move.
template <int W, int U, Load Op>
__global__ void l1_read(const typename Access<W>::T* buf, uint32_t region, uint32_t passes,
                        long long* start, long long* stop, uint32_t* smid, uint32_t* sink,
                        int flag) {
  using T = typename Access<W>::T;
  // Byte offsets into the block's slice, so that an address is one 64-bit add.
  const char* base = reinterpret_cast<const char*>(buf + static_cast<size_t>(blockIdx.x) * region);
  const uint32_t mask = region * W - 1, stride = U * blockDim.x * W;
  uint32_t off[U];
  uint32_t acc = 0;
#pragma unroll
  for (int u = 0; u < U; ++u) {
    off[u] = ((threadIdx.x + u * blockDim.x) * W) & mask;
    acc ^= fold(load<Op, W>(base + off[u]));
  }
  __syncthreads();
  const long long t0 = clock64();
  for (uint32_t pass = 0; pass < passes; ++pass) {
    T v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = load<Op, W>(base + off[u]);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      acc ^= fold(v[u]);
      off[u] = (off[u] + stride) & mask;
    }
  }
  __syncthreads();
  const long long t1 = clock64();
  if (threadIdx.x == 0) {
    uint32_t sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    start[blockIdx.x] = t0;
    stop[blockIdx.x] = t1;
    smid[blockIdx.x] = sm;
  }
  keep(acc, sink, flag);
}

struct L1Read {
  const void* kernel = nullptr;
  void (*launch)(const void* buf, uint32_t region, uint32_t passes, long long* start,
                 long long* stop, uint32_t* smid, uint32_t* sink, int grid, int threads) = nullptr;
  int width = 0, ilp = 0;
  Load op = Load::plain;
};

template <int W, int U, Load Op>
L1Read l1_read_of() {
  L1Read s;
  s.kernel = reinterpret_cast<const void*>(&l1_read<W, U, Op>);
  s.launch = [](const void* buf, uint32_t region, uint32_t passes, long long* start,
                long long* stop, uint32_t* smid, uint32_t* sink, int grid, int threads) {
    l1_read<W, U, Op><<<grid, threads>>>(static_cast<const typename Access<W>::T*>(buf), region,
                                         passes, start, stop, smid, sink, 0);
  };
  s.width = W;
  s.ilp = U;
  s.op = Op;
  return s;
}

// The bulk-copy engine (TMA, sm_90): one thread per block keeps `stages` chunks of `chunk`
// bytes in flight between global and shared memory, so that the SM's load/store units and
// registers play no part and requests reach L2 as whole chunks. Reads land in shared memory
// and are counted when their mbarrier's transaction count completes; writes stream one
// shared chunk (never changed) out and bound the groups in flight with wait_group.read.
// Chunk c of the grid's sweep is chunk (c mod chunks) of the buffer: block b takes c = b,
// b + grid, ..., so the whole grid moves through the buffer together as the streams above do.
constexpr int kBulkMaxStages = 8;

template <bool Write>
__global__ void bulk_stream(char* buf, uint64_t chunks, uint32_t chunk, uint32_t stages,
                            uint64_t per_block, uint32_t* sink, int flag) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) char stage[];
  __shared__ __align__(8) uint64_t bars[kBulkMaxStages];
  if (threadIdx.x != 0) return;
  auto smem_addr = [](const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); };
  auto at = [&](uint64_t k) {
    return buf + ((blockIdx.x + k * gridDim.x) % chunks) * static_cast<uint64_t>(chunk);
  };
  if constexpr (Write) {
    for (uint64_t k = 0; k < per_block; ++k) {
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(at(k)),
                   "r"(smem_addr(stage)), "r"(chunk)
                   : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kBulkMaxStages - 1) : "memory");
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  } else {
    for (uint32_t s = 0; s < stages; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&bars[s])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    auto issue = [&](uint64_t k) {
      const uint32_t s = static_cast<uint32_t>(k % stages);
      const uint32_t bar = smem_addr(&bars[s]);
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(chunk)
                   : "memory");
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
              smem_addr(stage + static_cast<uint64_t>(s) * chunk)),
          "l"(at(k)), "r"(chunk), "r"(bar)
          : "memory");
    };
    for (uint64_t k = 0; k < stages && k < per_block; ++k) issue(k);
    for (uint64_t k = 0; k < per_block; ++k) {
      const uint32_t bar = smem_addr(&bars[k % stages]);
      const uint32_t parity = static_cast<uint32_t>((k / stages) & 1);
      uint32_t done = 0;
      while (!done)
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
      if (k + stages < per_block) issue(k + stages);
    }
    keep(*reinterpret_cast<const uint32_t*>(stage), sink, flag);
  }
#else
  // Never launched below sm_90 (the family checks the device); trap if it ever is.
  (void)buf, (void)chunks, (void)chunk, (void)stages, (void)per_block, (void)sink, (void)flag;
  __trap();
#endif
}

std::string num(double v) { return format_number(v); }

// One run of the family: the device, its buffers (freed when the run ends, however it ends)
// and the measurements.
class BandwidthRun {
 public:
  explicit BandwidthRun(RunContext& ctx)
      : ctx_(ctx),
        dev_(ctx.device()),
        reps_(ctx.quick() ? 3 : 11),
        dram_reps_(ctx.quick() ? 3 : 21),
        dram_bytes_per_rep_(ctx.quick() ? kGiB : 16 * kGiB),
        sink_(1) {}
  void run();

 private:
  struct Geometry {
    int grid = 0, threads = 0;
    uint64_t total() const { return static_cast<uint64_t>(grid) * threads; }
  };
  // Every SM full: as many blocks of kStreamThreads as fit at once.
  Geometry full_occupancy(const void* kernel) const {
    int per_sm = resident_blocks(kernel, kStreamThreads);
    if (per_sm < 1) throw std::runtime_error("bandwidth: a streaming kernel does not fit an SM");
    return {per_sm * dev_.sm_count, kStreamThreads};
  }
  Params footprint_params(int width, int ilp, const std::string& op, uint64_t bytes) const {
    return {{bandwidth::kWidthColumn, std::to_string(width)},
            {bandwidth::kIlpColumn, std::to_string(ilp)},
            {bandwidth::kOpColumn, op},
            {memory_chase::kFootprintColumn, std::to_string(bytes)},
            {bandwidth::kL2FractionColumn,
             num(static_cast<double>(bytes) / static_cast<double>(dev_.l2_bytes))}};
  }
  void measure_read(const StreamRead& k, uint64_t footprint, bool dram);
  void measure_store(const StreamStore& k);
  void measure_l1(const L1Read& k);
  void measure_bulk(bool write, uint32_t chunk, uint32_t stages);
  void run_reads(size_t big);
  void run_bulk_reads();
  void run_slice_reads(size_t big);
  void run_writes(size_t big);
  void run_l1_reads();

  RunContext& ctx_;
  const DeviceInfo& dev_;
  // The DRAM points: more repetitions for a steadier median, each moving at least
  // dram_bytes_per_rep_ (some ms at several TB/s).
  const int reps_, dram_reps_;
  const size_t dram_bytes_per_rep_;
  DeviceBuffer<uint8_t> a_, b_;
  DeviceBuffer<uint32_t> sink_;
};

// Reads `footprint` bytes of a_ over and over: at least 4 GiB per repetition (1 GiB in quick
// mode) so that a launch is short against it, dram_bytes_per_rep_ at a DRAM point. A DRAM
// point's footprint is trimmed so that every access is read exactly once per pass (warp
// slices exist only there). round_bytes: what one round of the grid reads; below it, several
// threads read the same data at once, which the memory system may merge.
constexpr const char* kNeedsSm80 = ": the streaming hint needs compute capability 8.0";

void BandwidthRun::measure_read(const StreamRead& k, uint64_t footprint, bool dram) {
  if (needs_sm80(k.op) && dev_.cc() < 80) {
    ctx_.skip(k.slices ? bandwidth::kReadSlicesProbe : bandwidth::kReadProbe,
              std::string(ptx_name(k.op)) + kNeedsSm80);
    return;
  }
  const Geometry g = full_occupancy(k.kernel);
  const uint64_t per_round = g.total() * static_cast<uint64_t>(k.ilp);
  uint64_t n = footprint / k.width;
  if (dram || k.slices) n = n / per_round * per_round;
  n = n / 32 * 32;
  if (n == 0) return;
  // Warp slices: n / warps is a multiple of 32 x ILP, as stream_read wants.
  const uint64_t step = k.slices ? n / (g.total() / 32) : g.total() % n;
  const size_t min_bytes = dram ? dram_bytes_per_rep_ : (ctx_.quick() ? kGiB : 4 * kGiB);
  const uint64_t min_accesses = min_bytes / k.width;
  const auto rounds =
      static_cast<uint32_t>((std::max(n, min_accesses) + per_round - 1) / per_round);
  const double bytes = static_cast<double>(rounds) * per_round * k.width;
  Params params = footprint_params(k.width, k.ilp, ptx_name(k.op), n * k.width);
  params.push_back({bandwidth::kRoundColumn, std::to_string(per_round * k.width)});
  Point pt{k.slices ? bandwidth::kReadSlicesProbe : bandwidth::kReadProbe, params, "GB/s",
           dram ? dram_reps_ : reps_, bytes};
  ctx_.measure(pt, [&] {
    double s = time_seconds(
        [&] { k.launch(a_.get(), n, 0, step, rounds, sink_.get(), g.grid, g.threads); });
    return Sample{bytes / s * 1e-9, s};
  });
}

// Stores over all of b_, several passes per repetition (dram_bytes_per_rep_ stored); a_ is
// the source of a copy, whose bytes moved count its loads too.
void BandwidthRun::measure_store(const StreamStore& k) {
  if (needs_sm80(k.op) && dev_.cc() < 80) {
    ctx_.skip(k.copy ? bandwidth::kCopyProbe : bandwidth::kWriteProbe,
              std::string(ptx_name(k.op)) + kNeedsSm80);
    return;
  }
  const Geometry g = full_occupancy(k.kernel);
  const uint64_t per_round = g.total() * static_cast<uint64_t>(k.ilp);
  const uint64_t rounds = b_.bytes() / k.width / per_round;
  if (rounds == 0) return;
  const double footprint = static_cast<double>(rounds * per_round * k.width);
  const auto passes =
      static_cast<uint32_t>(std::ceil(static_cast<double>(dram_bytes_per_rep_) / footprint));
  const double bytes = footprint * passes * (k.copy ? 2 : 1);
  Params params = {
      {bandwidth::kWidthColumn, std::to_string(k.width)},
      {bandwidth::kIlpColumn, std::to_string(k.ilp)},
      {bandwidth::kOpColumn, ptx_name(k.op)},
      {memory_chase::kFootprintColumn, num(footprint)},
      {bandwidth::kL2FractionColumn, num(footprint / static_cast<double>(dev_.l2_bytes))},
      {bandwidth::kPassesColumn, std::to_string(passes)}};
  Point pt{k.copy ? bandwidth::kCopyProbe : bandwidth::kWriteProbe, params, "GB/s", dram_reps_,
           bytes};
  ctx_.measure(pt, [&] {
    double s = time_seconds([&] {
      k.launch(a_.get(), b_.get(), static_cast<uint32_t>(rounds), passes, kStoreSeed, g.grid,
               g.threads);
    });
    return Sample{bytes / s * 1e-9, s};
  });
}

// Bytes per SM cycle, per SM: the blocks that ran on an SM (by %smid) moved their bytes
// between the first block's start and the last block's stop on that SM's clock.
void BandwidthRun::measure_l1(const L1Read& k) {
  const DeviceInfo& d = dev_;
  const int threads = std::min(1024, d.max_threads_per_block);
  // Prefer the largest L1 the carve-out allows: the kernel uses no shared memory.
  CUDA_CHECK(cudaFuncSetAttribute(k.kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxL1));
  const int per_sm = std::min(resident_blocks(k.kernel, threads), d.max_threads_per_sm / threads);
  if (per_sm < 1) throw std::runtime_error("bandwidth: the L1 kernel does not fit an SM");
  const int grid = per_sm * d.sm_count;
  const uint32_t region = 16 * 1024 / k.width;  // 16 KiB per block
  const uint64_t per_pass = static_cast<uint64_t>(threads) * k.ilp * k.width;
  const auto passes = static_cast<uint32_t>(std::max<uint64_t>(1, (8 * kMiB) / per_pass));
  DeviceBuffer<uint8_t> buf(static_cast<size_t>(grid) * region * k.width);
  CUDA_CHECK(cudaMemset(buf.get(), 0x5a, buf.bytes()));
  DeviceBuffer<long long> start(grid), stop(grid);
  DeviceBuffer<uint32_t> smid(grid);
  std::vector<long long> h_start(grid), h_stop(grid);
  std::vector<uint32_t> h_smid(grid);

  Params params = {{bandwidth::kWidthColumn, std::to_string(k.width)},
                   {bandwidth::kIlpColumn, std::to_string(k.ilp)},
                   {bandwidth::kOpColumn, ptx_name(k.op)},
                   {memory_chase::kFootprintColumn, std::to_string(buf.bytes())},
                   {bandwidth::kFootprintPerSmColumn,
                    std::to_string(static_cast<uint64_t>(per_sm) * region * k.width)},
                   {bandwidth::kThreadsPerSmColumn, std::to_string(per_sm * threads)}};
  Point pt{bandwidth::kL1ReadProbe, params, "B/clk/SM", reps_,
           static_cast<double>(per_pass) * passes * grid};
  Observation o = ctx_.measure(pt, [&] {
    double s = time_seconds([&] {
      k.launch(buf.get(), region, passes, start.get(), stop.get(), smid.get(), sink_.get(), grid,
               threads);
    });
    CUDA_CHECK(cudaMemcpy(h_start.data(), start.get(), start.bytes(), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_stop.data(), stop.get(), stop.bytes(), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_smid.data(), smid.get(), smid.bytes(), cudaMemcpyDeviceToHost));
    struct Span {
      long long first = 0, last = 0;
      int blocks = 0;
    };
    std::map<uint32_t, Span> sms;
    for (int b = 0; b < grid; ++b) {
      Span& sp = sms[h_smid[b]];
      sp.first = sp.blocks ? std::min(sp.first, h_start[b]) : h_start[b];
      sp.last = sp.blocks ? std::max(sp.last, h_stop[b]) : h_stop[b];
      ++sp.blocks;
    }
    std::vector<double> per_sm_rate;
    for (const auto& [sm, sp] : sms)
      if (sp.last > sp.first)
        per_sm_rate.push_back(static_cast<double>(per_pass) * passes * sp.blocks /
                              static_cast<double>(sp.last - sp.first));
    if (per_sm_rate.empty()) throw std::runtime_error("bandwidth: l1_read recorded no time");
    return Sample{median(per_sm_rate), s};
  });
  // The same figure for the whole chip, at the measured SM clock, for the footprint plot.
  const double to_gbs = d.sm_count * ctx_.sm_clock_mhz() * 1e-3;
  Observation chip = o;
  chip.unit = "GB/s";
  chip.value *= to_gbs;
  chip.p05 *= to_gbs;
  chip.p50 *= to_gbs;
  chip.p95 *= to_gbs;
  ctx_.record(chip);
}

// Bulk copies over the whole DRAM buffer (a_ to read, b_ to write), dram_bytes_per_rep_ per
// repetition, as many blocks per SM as the shared stages allow (at most 2: one thread each).
void BandwidthRun::measure_bulk(bool write, uint32_t chunk, uint32_t stages) {
  if (dev_.cc() < 90) {
    ctx_.skip(write ? bandwidth::kWriteBulkProbe : bandwidth::kReadBulkProbe,
              "cp.async.bulk needs compute capability 9.0");
    return;
  }
  const void* kernel = write ? reinterpret_cast<const void*>(&bulk_stream<true>)
                             : reinterpret_cast<const void*>(&bulk_stream<false>);
  const size_t smem = static_cast<size_t>(chunk) * (write ? 1 : stages);
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(smem)));
  const int per_sm = std::min(2, resident_blocks(kernel, 32, smem));
  if (per_sm < 1) return;
  const int grid = per_sm * dev_.sm_count;
  const DeviceBuffer<uint8_t>& buf = write ? b_ : a_;
  const uint64_t chunks = buf.bytes() / chunk / grid * grid;
  if (chunks == 0) return;
  const uint64_t per_block = (dram_bytes_per_rep_ / chunk + grid - 1) / grid;
  const double bytes = static_cast<double>(per_block) * grid * chunk;
  const double footprint = static_cast<double>(chunks) * chunk;
  Params params = {
      {bandwidth::kWidthColumn, std::to_string(chunk)},
      {bandwidth::kIlpColumn, std::to_string(write ? kBulkMaxStages : stages)},
      {bandwidth::kOpColumn, "cp.async.bulk"},
      {memory_chase::kFootprintColumn, num(footprint)},
      {bandwidth::kL2FractionColumn, num(footprint / static_cast<double>(dev_.l2_bytes))},
      {bandwidth::kBlocksPerSmColumn, std::to_string(per_sm)}};
  Point pt{write ? bandwidth::kWriteBulkProbe : bandwidth::kReadBulkProbe, params, "GB/s",
           dram_reps_, bytes};
  ctx_.measure(pt, [&] {
    double s = time_seconds([&] {
      char* p = reinterpret_cast<char*>(const_cast<uint8_t*>(buf.get()));
      if (write)
        bulk_stream<true><<<grid, 32, smem>>>(p, chunks, chunk, stages, per_block, sink_.get(), 0);
      else
        bulk_stream<false><<<grid, 32, smem>>>(p, chunks, chunk, stages, per_block, sink_.get(), 0);
    });
    return Sample{bytes / s * 1e-9, s};
  });
}

void BandwidthRun::run() {
  const DeviceInfo& d = dev_;
  if (d.l2_bytes == 0) throw std::runtime_error("bandwidth: the device reports no L2 size");
  const size_t big = dram_buffer_bytes(d);
  a_ = DeviceBuffer<uint8_t>(big);
  CUDA_CHECK(cudaMemset(a_.get(), 0x3c, a_.bytes()));

  ctx_.record(dram_read_order::theoretical_row(std::string(bandwidth::kFamily.name), d));

  if (ctx_.enabled(bandwidth::kReadProbe)) run_reads(big);
  if (ctx_.enabled(bandwidth::kReadBulkProbe)) run_bulk_reads();
  if (ctx_.enabled(bandwidth::kReadSlicesProbe)) run_slice_reads(big);
  run_writes(big);
  a_ = DeviceBuffer<uint8_t>();  // before the L1 probe: nothing else may need the memory
  if (ctx_.enabled(bandwidth::kL1ReadProbe)) run_l1_reads();
}

// DRAM at every width and variant, then the footprint sweep through the L2 partitions.
void BandwidthRun::run_reads(size_t big) {
  const bool quick = ctx_.quick();
  const uint64_t l2 = static_cast<uint64_t>(dev_.l2_bytes);
  const StreamRead best = stream_read_of<16, 4, Load::cg>();
  // DRAM: every width, then the ILP, cache-operator and streaming-hint variants at 16 B.
  std::vector<StreamRead> dram = {stream_read_of<4, 4, Load::cg>(),
                                  stream_read_of<8, 4, Load::cg>(), best};
  if (!quick) {
    for (const auto& k :
         {stream_read_of<16, 1, Load::cg>(), stream_read_of<16, 2, Load::cg>(),
          stream_read_of<16, 8, Load::cg>(), stream_read_of<16, 4, Load::cs>(),
          stream_read_of<16, 4, Load::nc>(), stream_read_of<16, 4, Load::plain>(),
          stream_read_of<16, 4, Load::na>(), stream_read_of<16, 4, Load::cg_256>(),
          stream_read_of<16, 4, Load::nc_na_256>(), stream_read_of<16, 8, Load::nc_na_256>(),
          stream_read_of<16, 4, Load::na_ef>()})
      dram.push_back(k);
  }
  for (const auto& k : dram) measure_read(k, big, true);
  // Footprint sweep, 16 B: three points per octave (one in quick mode) up to half the
  // buffer; the whole buffer is the DRAM point above.
  const double ratio = quick ? 2.0 : std::cbrt(2.0);
  for (double f = 256.0 * 1024; f <= big / 2.0; f *= ratio)
    measure_read(best, static_cast<uint64_t>(f) / 4096 * 4096, false);
  // Inside one L2 partition and across both, with rounds small enough (4 and 8 B, or 16 B
  // at ILP 1 and 2) that no two threads read the same data at once.
  const std::vector<double> fracs =
      quick ? std::vector<double>{0.25, 0.75} : std::vector<double>{0.125, 0.25, 0.375, 0.45, 0.75};
  for (double frac : fracs) {
    const auto f = static_cast<uint64_t>(frac * l2) / 4096 * 4096;
    measure_read(stream_read_of<4, 4, Load::cg>(), f, false);
    measure_read(stream_read_of<8, 4, Load::cg>(), f, false);
    measure_read(stream_read_of<16, 1, Load::cg>(), f, false);
    if (!quick) measure_read(stream_read_of<16, 2, Load::cg>(), f, false);
  }
}

void BandwidthRun::run_bulk_reads() {
  for (auto [chunk, stages] : ctx_.quick()
                                  ? std::vector<std::pair<uint32_t, uint32_t>>{{16384, 4}}
                                  : std::vector<std::pair<uint32_t, uint32_t>>{
                                        {4096, 8}, {16384, 4}, {32768, 3}, {32768, 6}, {65536, 3}})
    measure_bulk(false, chunk, stages);
}

void BandwidthRun::run_slice_reads(size_t big) {
  measure_read(stream_read_of<16, 4, Load::cg, true>(), big, true);
  if (!ctx_.quick()) {
    measure_read(stream_read_of<16, 8, Load::cg, true>(), big, true);
    measure_read(stream_read_of<16, 4, Load::nc_na_256, true>(), big, true);
  }
}

// Stores, bulk stores and copies share the second DRAM buffer, held only while they run.
void BandwidthRun::run_writes(size_t big) {
  const bool quick = ctx_.quick();
  const bool write = ctx_.enabled(bandwidth::kWriteProbe),
             copy = ctx_.enabled(bandwidth::kCopyProbe);
  const bool write_bulk = ctx_.enabled(bandwidth::kWriteBulkProbe);
  if (!write && !copy && !write_bulk) return;
  b_ = DeviceBuffer<uint8_t>(big);
  CUDA_CHECK(cudaMemset(b_.get(), 0, b_.bytes()));
  if (write) {
    std::vector<StreamStore> stores = {
        stream_store_of<4, 4, Store::wb, false>(),  stream_store_of<8, 4, Store::wb, false>(),
        stream_store_of<16, 4, Store::wb, false>(), stream_store_of<4, 4, Store::cs, false>(),
        stream_store_of<8, 4, Store::cs, false>(),  stream_store_of<16, 4, Store::cs, false>()};
    if (!quick) {
      for (const auto& k :
           {stream_store_of<16, 8, Store::wb, false>(), stream_store_of<16, 8, Store::cs, false>(),
            stream_store_of<16, 4, Store::na, false>(), stream_store_of<16, 4, Store::ef, false>()})
        stores.push_back(k);
    }
    for (const auto& k : stores) measure_store(k);
  }
  if (write_bulk) {
    for (uint32_t chunk :
         quick ? std::vector<uint32_t>{16384} : std::vector<uint32_t>{4096, 16384, 65536})
      measure_bulk(true, chunk, 1);
  }
  if (copy) {
    for (const auto& k :
         {stream_store_of<4, 4, Store::wb, true>(), stream_store_of<8, 4, Store::wb, true>(),
          stream_store_of<16, 4, Store::wb, true>(), stream_store_of<16, 4, Store::cs, true>(),
          stream_store_of<16, 4, Store::na, true>()})
      measure_store(k);
  }
  b_ = DeviceBuffer<uint8_t>();
}

void BandwidthRun::run_l1_reads() {
  measure_l1(l1_read_of<4, 4, Load::plain>());
  measure_l1(l1_read_of<8, 4, Load::plain>());
  measure_l1(l1_read_of<16, 4, Load::plain>());
  if (!ctx_.quick()) measure_l1(l1_read_of<16, 4, Load::ca>());
}

class BandwidthFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(bandwidth::kFamily.name); }
  std::string description() const override {
    return "peak bandwidth: DRAM read/write/copy, reads against footprint (L2 partitions to "
           "DRAM), L1 per SM; 4, 8 and 16-byte accesses";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{bandwidth::kReadProbe,
             "streaming reads (ld.global[.cg/.cs/.nc], L1::no_allocate, L2::256B, L2 "
             "evict-first) against footprint, GB/s; the footprint 32x L2 is the DRAM "
             "read bandwidth"},
            {bandwidth::kReadSlicesProbe,
             "DRAM reads (32x L2) with each warp streaming its own contiguous slice, GB/s"},
            {bandwidth::kWriteProbe,
             "streaming stores (st.global, .cs, .L1::no_allocate, L2 evict-first) over 32x L2, "
             "GB/s"},
            {bandwidth::kReadBulkProbe,
             "DRAM reads (32x L2) by the bulk-copy engine (cp.async.bulk into shared memory, "
             "sm_90+), GB/s"},
            {bandwidth::kWriteBulkProbe,
             "DRAM writes (32x L2) by the bulk-copy engine (cp.async.bulk from shared memory, "
             "sm_90+), GB/s"},
            {bandwidth::kCopyProbe, "load + store over two buffers of 32x L2, GB/s counting both"},
            {bandwidth::kL1ReadProbe,
             "per-SM reads of an L1-resident slice (ld.global, ld.global.ca), "
             "B/clk/SM"}};
  }
  void run(RunContext& ctx) override { BandwidthRun(ctx).run(); }
};

}  // namespace

GPUPROBE_REGISTER_FAMILY(BandwidthFamily);

}  // namespace gpuprobe
