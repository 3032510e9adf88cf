// DRAM read order: a sweep of read kernels over a buffer 32x the L2, each pass front to back,
// to find the one closest to the theoretical DRAM bandwidth and show where reads stop. The
// variants: the order of the walk (the grid together, a contiguous chunk per block, a slice
// per warp), 16 or 32 bytes per thread and access (one or two adjacent 16-byte loads), the
// cache operator and hints (.cg, .nc, .L1::no_allocate, the .L2::256B prefetch hint), blocks
// per SM (held by dynamic shared memory), the number of SMs that read (the others idle), and
// the bulk-copy engine (cp.async.bulk into shared memory, sm_90) walking chunks in grid or
// block order. The bandwidth family's read sweep is the grid order at 16 B.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "analysis/common/memory_chase.hpp"
#include "analysis/dram_read_order.hpp"
#include "base/csv.hpp"
#include "gpu/sass_check.hpp"
#include "memory_streams.cuh"

namespace gpuprobe::dram_read_order {

// The Load of each hint index, in the order of kHints (checked against ptx_name at run time).
constexpr Load kHintLoads[] = {Load::cg, Load::nc, Load::na, Load::cg_256, Load::nc_na_256};
static_assert(sizeof(kHintLoads) / sizeof(kHintLoads[0]) == kHintCount, "one Load per hint");

// `passes` passes over a buffer of accesses of W bytes (W / 16 adjacent 16-byte loads). Thread
// (block b, warp w, lane l) starts at access b * block_step + w * warp_step + l and moves by
// `stride` accesses; each round issues U independent accesses before any result is used, and
// `zero` (0 at run time) ties a round's addresses to the last round's data, so that no more
// than U accesses per thread are in flight (as stream_read in memory_streams.cuh).
template <int W, int H, int U>
__global__ void order_read(const uint4* buf, uint64_t block_step, uint64_t warp_step, uint64_t stride,
                           uint32_t rounds, uint32_t passes, uint32_t zero, uint32_t* sink, int flag) {
  constexpr int kParts = W / kLoadBytes;
  const uint64_t first = blockIdx.x * block_step + (threadIdx.x / 32) * warp_step + threadIdx.x % 32;
  uint32_t acc = 0;
#pragma unroll 1
  for (uint32_t pass = 0; pass < passes; ++pass) {
    uint64_t i = first;
#pragma unroll 1
    for (uint32_t r = 0; r < rounds; ++r) {
      i += acc & zero;
      uint4 v[U][kParts];
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int h = 0; h < kParts; ++h) v[u][h] = load<kHintLoads[H], 16>(buf + (i + u * stride) * kParts + h);
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int h = 0; h < kParts; ++h) acc ^= fold(v[u][h]);
      i += U * stride;
    }
  }
  keep(acc, sink, flag);
}

// The bulk-copy engine: thread 0 of each block keeps `stages` chunks of `chunk` bytes in
// flight from global into shared memory, each completing on its stage's mbarrier. Chunk k of
// block b is chunk b * block_step + k * stride of the buffer (grid order: 1 and the grid;
// block order: per_block and 1), per_block chunks per pass, `passes` passes.
constexpr int kBulkMaxStages = 8;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void bulk_issue(uint32_t dst, const char* src, uint32_t bytes, uint32_t bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void bulk_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
}
#endif

__global__ void bulk_read(const char* buf, uint64_t block_step, uint64_t stride, uint32_t chunk,
                          uint32_t stages, uint64_t per_block, uint32_t passes, uint32_t* sink, int flag) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) char stage[];
  __shared__ __align__(8) uint64_t bars[kBulkMaxStages];
  if (threadIdx.x != 0) return;
  for (uint32_t s = 0; s < stages; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&bars[s])) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const uint64_t total = per_block * passes;
  auto issue = [&](uint64_t k) {
    const uint32_t s = static_cast<uint32_t>(k % stages);
    const uint64_t c = blockIdx.x * block_step + (k % per_block) * stride;
    bulk_issue(smem_address(stage + static_cast<uint64_t>(s) * chunk), buf + c * chunk, chunk,
               smem_address(&bars[s]));
  };
  for (uint64_t k = 0; k < stages && k < total; ++k) issue(k);
  for (uint64_t k = 0; k < total; ++k) {
    bulk_wait(smem_address(&bars[k % stages]), static_cast<uint32_t>((k / stages) & 1));
    if (k + stages < total) issue(k + stages);
  }
  keep(*reinterpret_cast<const uint32_t*>(stage), sink, flag);
#else
  // Never launched below sm_90 (the family checks the device); trap if it ever is.
  (void)buf, (void)block_step, (void)stride, (void)chunk, (void)stages, (void)per_block, (void)passes,
      (void)sink, (void)flag;
  __trap();
#endif
}

namespace {

constexpr size_t kGiB = size_t(1) << 30;
constexpr int kThreads = 256;
// Each repetition reads at least this much (a few ms at several TB/s), so that the launch and
// the ramp at either end are lost.
constexpr size_t kBytesPerRep = 4 * kGiB;
constexpr size_t kQuickBytesPerRep = kGiB;
constexpr long long kSmemMargin = 2048;

// One read kernel: its template arguments, address and launcher.
struct ReadKernel {
  int width, hint, ilp;
  const void* kernel;
  void (*launch)(const void* buf, const Walk& w, uint32_t passes, uint32_t* sink, int grid, int threads,
                 size_t smem);
};

template <int W, int H, int U>
ReadKernel read_kernel() {
  return {W, H, U, reinterpret_cast<const void*>(&order_read<W, H, U>),
          [](const void* buf, const Walk& w, uint32_t passes, uint32_t* sink, int grid, int threads,
             size_t smem) {
            order_read<W, H, U><<<grid, threads, smem>>>(static_cast<const uint4*>(buf), w.block_step,
                                                         w.warp_step, w.stride, static_cast<uint32_t>(w.rounds),
                                                         passes, 0, sink, 0);
          }};
}

// A read variant: the kernel, the walk, threads per block, blocks per SM (forced by dynamic
// shared memory below the thread limit) and the SMs that read (0: all).
struct Variant {
  ReadKernel k;
  Order order;
  int threads = kThreads, blocks_per_sm = 8, sms = 0;
};

class DramReadOrderRun {
 public:
  explicit DramReadOrderRun(RunContext& ctx)
      : ctx_(ctx),
        dev_(ctx.device()),
        reps_(ctx.quick() ? 3 : 9),
        bytes_per_rep_(ctx.quick() ? kQuickBytesPerRep : kBytesPerRep),
        buf_(dram_buffer_bytes(ctx.device())),
        sink_(1) {
    CUDA_CHECK(cudaMemset(buf_.get(), 0x3c, buf_.bytes()));
  }
  void run();

 private:
  size_t smem_for(const void* kernel, int threads, int blocks_per_sm, int* resident) const;
  void measure(const Variant& v);
  void measure_bulk(Order order, uint32_t chunk, uint32_t stages);
  Params common(const std::string& order, int width, const std::string& op, int ilp, int threads,
                int blocks_per_sm, int sms, double footprint) const {
    return {{kOrderColumn, order},
            {kWidthColumn, std::to_string(width)},
            {kOpColumn, op},
            {kIlpColumn, std::to_string(ilp)},
            {kThreadsColumn, std::to_string(threads)},
            {kBlocksPerSmColumn, std::to_string(blocks_per_sm)},
            {kSmsColumn, std::to_string(sms)},
            {memory_chase::kFootprintColumn, format_number(footprint)}};
  }

  RunContext& ctx_;
  const DeviceInfo& dev_;
  const int reps_;
  const size_t bytes_per_rep_;
  DeviceBuffer<uint8_t> buf_;
  DeviceBuffer<uint32_t> sink_;
};

// Dynamic shared memory that leaves room for `blocks_per_sm` blocks and no more (0 when the
// threads alone limit it there); *resident: the blocks per SM the occupancy calculator then
// allows.
size_t DramReadOrderRun::smem_for(const void* kernel, int threads, int blocks_per_sm, int* resident) const {
  size_t smem = 0;
  if (blocks_per_sm * threads < dev_.max_threads_per_sm) {
    // A margin below an exact share, which the allocation granularity could round past.
    const long long per_block = dev_.shared_per_sm / blocks_per_sm - dev_.reserved_shared_per_block - kSmemMargin;
    smem = static_cast<size_t>(std::min(per_block, dev_.shared_per_block_optin)) / 1024 * 1024;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  }
  *resident = std::min(blocks_per_sm, resident_blocks(kernel, threads, smem));
  return smem;
}

void DramReadOrderRun::measure(const Variant& v) {
  if (!ctx_.enabled(kReadProbe)) return;
  if (dev_.cc() < kHints[v.k.hint].min_arch) {
    ctx_.skip(kReadProbe,
              std::string(kHints[v.k.hint].ptx) + ": the hint needs compute capability 8.0");
    return;
  }
  if (!sass_allows(ctx_, kReadProbe, {read_kernel_name(v.k.width, v.k.hint, v.k.ilp)})) return;
  int per_sm = 0;
  const size_t smem = smem_for(v.k.kernel, v.threads, v.blocks_per_sm, &per_sm);
  if (per_sm < 1) return;
  const int sms = v.sms > 0 ? std::min(v.sms, dev_.sm_count) : dev_.sm_count;
  const int grid = per_sm * sms;
  const uint64_t per_round = static_cast<uint64_t>(grid) * v.threads * v.k.ilp;
  const uint64_t n = buf_.bytes() / v.k.width / per_round * per_round;
  Walk w;
  if (!walk_of(v.order, n, grid, v.threads, v.k.ilp, &w)) return;
  const double footprint = static_cast<double>(n) * v.k.width;
  const auto passes = static_cast<uint32_t>(std::ceil(static_cast<double>(bytes_per_rep_) / footprint));
  const double bytes = footprint * passes;
  Params params = common(order_name(v.order), v.k.width, kHints[v.k.hint].ptx, v.k.ilp, v.threads, per_sm, sms,
                         footprint);
  Point pt{kReadProbe, params, "GB/s", reps_, bytes};
  ctx_.measure(pt, [&] {
    const double s = time_seconds([&] { v.k.launch(buf_.get(), w, passes, sink_.get(), grid, v.threads, smem); });
    return Sample{bytes / s * 1e-9, s};
  });
}

void DramReadOrderRun::measure_bulk(Order order, uint32_t chunk, uint32_t stages) {
  if (!ctx_.enabled(kReadBulkProbe)) return;
  if (dev_.cc() < 90) {
    ctx_.skip(kReadBulkProbe, "cp.async.bulk needs compute capability 9.0");
    return;
  }
  if (!sass_allows(ctx_, kReadBulkProbe, {bulk_kernel_name()})) return;
  const void* kernel = reinterpret_cast<const void*>(&bulk_read);
  const size_t smem = static_cast<size_t>(chunk) * stages;
  if (stages > kBulkMaxStages || smem > static_cast<size_t>(dev_.shared_per_block_optin)) return;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  // One thread issues; two blocks per SM at most, so that a block's chunks stay one stream.
  const int per_sm = std::min(2, resident_blocks(kernel, 32, smem));
  if (per_sm < 1) return;
  const int grid = per_sm * dev_.sm_count;
  const uint64_t per_block = buf_.bytes() / chunk / grid;
  if (per_block == 0) return;
  const double footprint = static_cast<double>(per_block) * grid * chunk;
  const auto passes = static_cast<uint32_t>(std::ceil(static_cast<double>(bytes_per_rep_) / footprint));
  const double bytes = footprint * passes;
  const uint64_t block_step = order == Order::block ? per_block : 1;
  const uint64_t stride = order == Order::block ? 1 : static_cast<uint64_t>(grid);
  Point pt{kReadBulkProbe,
           common(order_name(order), static_cast<int>(chunk), "cp.async.bulk",
                  static_cast<int>(stages), 32, per_sm, dev_.sm_count, footprint),
           "GB/s", reps_, bytes};
  ctx_.measure(pt, [&] {
    const double s = time_seconds([&] {
      bulk_read<<<grid, 32, smem>>>(reinterpret_cast<const char*>(buf_.get()), block_step, stride, chunk, stages,
                                    per_block, passes, sink_.get(), 0);
    });
    return Sample{bytes / s * 1e-9, s};
  });
}

void DramReadOrderRun::run() {
  for (int h = 0; h < kHintCount; ++h)
    if (std::strcmp(ptx_name(kHintLoads[h]), kHints[h].ptx) != 0 ||
        needs_sm80(kHintLoads[h]) != (kHints[h].min_arch == 80))
      throw std::logic_error("dram_read_order: hint " + std::to_string(h) + " is not " + kHints[h].ptx);
  ctx_.record(theoretical_row(std::string(kFamily.name), dev_));
  const ReadKernel w16 = read_kernel<16, 0, 4>(), w32 = read_kernel<32, 0, 4>();
  // The quick run: the bandwidth family's order against the block order at 32 B, and the
  // bulk engine in block order (its figures are listed as not measured: docs/parameters.md).
  if (ctx_.quick()) {
    measure({w16, Order::grid});
    measure({w32, Order::block});
    measure_bulk(Order::block, 32768, 4);
    return;
  }
  for (Order o : {Order::grid, Order::block, Order::warp}) {
    measure({w16, o});
    measure({w32, o});
  }
  for (Order o : {Order::grid, Order::block})
    for (const ReadKernel& k : {read_kernel<32, 1, 4>(), read_kernel<32, 2, 4>(), read_kernel<32, 3, 4>(),
                                read_kernel<32, 4, 4>()})
      measure({k, o});
  // Fewer blocks per SM, with more accesses in flight per thread to keep the bytes in flight.
  for (Order o : {Order::grid, Order::block})
    for (int bps : {1, 2, 4}) measure({read_kernel<32, 0, 8>(), o, kThreads, bps});
  // Idle SMs: one block of 1024 threads per SM on a half, three quarters, all of the SMs.
  for (int num : {2, 3, 4}) measure({w32, Order::block, 1024, 1, dev_.sm_count * num / 4});
  for (Order o : {Order::grid, Order::block}) {
    measure_bulk(o, 32768, 4);
    measure_bulk(o, 16384, 6);
  }
}

class DramReadOrderFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(dram_read_order::kFamily.name); }
  std::string description() const override {
    return "DRAM read kernels against the theoretical peak: walk order, bytes per thread, cache hints, "
           "blocks per SM, idle SMs, bulk copies";
  }
  std::vector<ProbeInfo> probes() const override {
    return {
        {dram_read_order::kReadProbe,
         "DRAM reads (32x L2) by loads, over order, width, hint, occupancy and SMs, GB/s"},
        {dram_read_order::kReadBulkProbe,
         "DRAM reads (32x L2) by cp.async.bulk into shared memory (sm_90+), grid or block order, GB/s"}};
  }
  void run(RunContext& ctx) override { DramReadOrderRun(ctx).run(); }
};

GPUPROBE_REGISTER_FAMILY(DramReadOrderFamily);

}  // namespace

}  // namespace gpuprobe::dram_read_order
