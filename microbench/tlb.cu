// TLB reach: one thread chases ld.global.cg loads one stride apart over growing footprints,
// up to most of the free device memory. The data stays in L2 (it is a few lines per page),
// so every rise of cycles per access is address translation: the first step is the L1 TLB's
// reach, the next the L2 TLB's. Repeating the first step at several strides gives the size
// of a TLB entry: below it the reach stays put, above it the reach grows with the stride.
// The last level may reach about as far as device memory goes, where no plateau can form past
// it; so the chase is repeated in an address space made of one physical chunk mapped again and
// again (cuMemMap through the runtime's driver entry points): translations grow with the
// virtual footprint while the data stays a few MiB of L2.
#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "analysis/tlb.hpp"
#include "base/csv.hpp"
#include "gpu/sass_check.hpp"
#include "memory_chase.cuh"

namespace gpuprobe {
namespace {

using CgLoad = GlobalLoader<Path::l2, 8>;
constexpr double kMiB = 1 << 20;
constexpr double kGiB = 1 << 30;
constexpr double kLine = tlb::kChaseLine;  // spacing of the rounds inside a page; any line size works

// The virtual-memory calls of the driver API, reached through the runtime so that the
// program does not link libcuda (it must start on machines without a GPU driver).
class DriverVmm {
 public:
  DriverVmm() {
    get("cuMemGetAllocationGranularity", granularity_);
    get("cuMemCreate", create_);
    get("cuMemRelease", release_);
    get("cuMemAddressReserve", reserve_);
    get("cuMemAddressFree", free_);
    get("cuMemMap", map_);
    get("cuMemUnmap", unmap_);
    get("cuMemSetAccess", access_);
  }
  decltype(&cuMemGetAllocationGranularity) granularity_ = nullptr;
  decltype(&cuMemCreate) create_ = nullptr;
  decltype(&cuMemRelease) release_ = nullptr;
  decltype(&cuMemAddressReserve) reserve_ = nullptr;
  decltype(&cuMemAddressFree) free_ = nullptr;
  decltype(&cuMemMap) map_ = nullptr;
  decltype(&cuMemUnmap) unmap_ = nullptr;
  decltype(&cuMemSetAccess) access_ = nullptr;

  static void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS)
      throw std::runtime_error(std::string("tlb: ") + what + " failed (CUresult " +
                               std::to_string(static_cast<int>(r)) + ")");
  }

 private:
  template <class F>
  static void get(const char* name, F& fn) {
    void* p = nullptr;
#if CUDART_VERSION >= 12000
    cudaDriverEntryPointQueryResult q{};
#if CUDART_VERSION >= 12050
    CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q));
#else
    CUDA_CHECK(cudaGetDriverEntryPoint(name, &p, cudaEnableDefault, &q));
#endif
    if (q != cudaDriverEntryPointSuccess || !p)
#else  // CUDA 11: no query result; a missing symbol leaves p null
    CUDA_CHECK(cudaGetDriverEntryPoint(name, &p, cudaEnableDefault));
    if (!p)
#endif
      throw std::runtime_error(std::string("tlb: the driver has no ") + name);
    fn = reinterpret_cast<F>(p);
  }
};

// `space` bytes of virtual addresses, every `chunk` of them mapped to the same physical chunk;
// unmapped and freed when it goes.
class AliasedSpace {
 public:
  AliasedSpace(double chunk, double space) {
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t gran = 0;
    DriverVmm::check(vmm_.granularity_(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
                     "cuMemGetAllocationGranularity");
    chunk_ = static_cast<size_t>(std::ceil(chunk / gran)) * gran;
    slots_ = static_cast<size_t>(space / chunk_);
    DriverVmm::check(vmm_.create_(&handle_, chunk_, &prop, 0), "cuMemCreate");
    have_handle_ = true;
    DriverVmm::check(vmm_.reserve_(&base_, chunk_ * slots_, chunk_, 0, 0), "cuMemAddressReserve");
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    for (; mapped_ < slots_; ++mapped_) {
      const CUdeviceptr at = base_ + mapped_ * chunk_;
      DriverVmm::check(vmm_.map_(at, chunk_, 0, handle_, 0), "cuMemMap");
      DriverVmm::check(vmm_.access_(at, chunk_, &access, 1), "cuMemSetAccess");
    }
  }
  ~AliasedSpace() {
    // Best effort: a failure here must not hide the error that may be unwinding.
    for (size_t i = 0; i < mapped_; ++i) vmm_.unmap_(base_ + i * chunk_, chunk_);
    if (base_) vmm_.free_(base_, chunk_ * slots_);
    if (have_handle_) vmm_.release_(handle_);
  }
  AliasedSpace(const AliasedSpace&) = delete;
  AliasedSpace& operator=(const AliasedSpace&) = delete;

  char* base() const { return reinterpret_cast<char*>(base_); }
  double chunk() const { return static_cast<double>(chunk_); }
  double bytes() const { return static_cast<double>(chunk_ * slots_); }

 private:
  DriverVmm vmm_;
  CUmemGenericAllocationHandle handle_{};
  bool have_handle_ = false;
  CUdeviceptr base_ = 0;
  size_t chunk_ = 0, slots_ = 0, mapped_ = 0;
};

class TlbFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(tlb::kFamily.name); }
  std::string description() const override {
    return "TLB reach and page-entry size from strided ld.global.cg chases";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{tlb::kChaseProbe, "cycles per access against footprint, one access per stride"},
            {tlb::kChaseAliasedProbe,
             "the same against virtual footprint (up to 1 TiB), one physical chunk mapped "
             "over and over"}};
  }

  void run(RunContext& ctx) override {
    ctx_ = &ctx;
    measured_.clear();
    rows_.clear();
    runner_ = std::make_unique<ChaseRunner>();
    std::optional<tlb::PageEntryFit> pe;
    if (ctx.enabled(tlb::kChaseProbe) &&
        sass_allows(ctx, tlb::kChaseProbe, tlb::kernels(tlb::kChaseProbe))) {
      allocate();
      space_ = {buf_.get(), bytes_, 0, tlb::kChaseProbe};
      const std::vector<double> strides = tlb::entry_strides(ctx.quick());
      for (double s : strides) sweep(s, true);
      // Coverage at the largest stride still below the entry size, so that it is the
      // footprint in bytes (but not below kMinCoverageStride, which bounds its longest
      // chase); without a first step anywhere, at the middle stride.
      pe = tlb::fit_page_entry(tlb::first_tlb_steps(rows_));
      sweep(pe ? std::max(pe->sweep_stride, tlb::kMinCoverageStride) : strides[strides.size() / 2], false);
      buf_ = DeviceBuffer<char>();
    }
    if (ctx.enabled(tlb::kChaseAliasedProbe) && !ctx.quick() &&
        sass_allows(ctx, tlb::kChaseAliasedProbe, tlb::kernels(tlb::kChaseProbe))) {
      // From the L1 TLB's entry size up, by doubling: while the stride is within an L2 TLB
      // entry the step stays at entries x entry size, above it it grows with the stride.
      ctx.progress("mapping " + format_number(tlb::kAliasSpace / kGiB) + " GiB of aliases");
      AliasedSpace alias(tlb::kAliasChunk, tlb::kAliasSpace);
      space_ = {alias.base(), alias.bytes(), alias.chunk(), tlb::kChaseAliasedProbe};
      const double entry = pe && pe->entry_size > 0 ? pe->entry_size : 2 * kMiB;
      for (double s : {entry, 2 * entry, 4 * entry}) sweep(s, false);
    }
    runner_.reset();
  }

 private:
  // Most of the free memory, less headroom for the driver and the rest of the process (the
  // chase itself needs a few small buffers). The last TLB level may reach most of memory.
  void allocate() {
    size_t free = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free, &total));
    double want = static_cast<double>(free) -
                  std::max(1 * kGiB, static_cast<double>(total) / 64);
    if (ctx_->quick()) want = std::min(want, 4 * kGiB);
    for (int attempt = 0; attempt < 4 && want >= 256 * kMiB; ++attempt, want /= 2) {
      const double bytes = std::floor(want / (32 * kMiB)) * 32 * kMiB;
      try {
        buf_ = DeviceBuffer<char>(static_cast<size_t>(bytes));
        bytes_ = bytes;
        return;
      } catch (const CudaError& e) {
        if (e.code() != cudaErrorMemoryAllocation) throw;
        cudaGetLastError();
      }
    }
    throw std::runtime_error("tlb: could not allocate 256 MiB for the chase");
  }

  double cycles_at(double stride, double n) {
    if (space_.alias_chunk > 0) build_aliased_chain(stride, static_cast<uint64_t>(n));
    ChainLayout c;
    c.n = static_cast<uint64_t>(n);
    c.step = coprime_step(c.n);
    c.stride = static_cast<uint64_t>(stride);
    c.rounds = std::min<uint64_t>((static_cast<uint64_t>(tlb::kMinAccesses) + c.n - 1) / c.n,
                                  static_cast<uint64_t>(stride / kLine));
    c.rounds = std::max<uint64_t>(1, c.rounds);
    c.round_offset = static_cast<uint64_t>(std::floor(stride / c.rounds / kLine) * kLine);
    if (space_.alias_chunk > 0) c.rounds = 1;
    else build_chain<uint64_t>(space_.base, c);
    ChaseArgs a;
    a.n = static_cast<uint32_t>(c.length());
    a.start = start_;
    a.passes = 2;  // the first pass fills L2 and the TLBs; the second is timed
    a.warm = 1;
    Point pt{space_.probe,
             {{tlb::kStrideColumn, format_number(stride)},
              {memory_chase::kFootprintColumn, format_number(n * stride)}},
             "cycles",
             ctx_->quick() ? 1 : 3};
    Observation o = ctx_->measure(pt, [&] {
      ChaseResult r = runner_->run<false>(CgLoad{space_.base}, a);
      return Sample{r.cycles_per_access, r.seconds};
    });
    measured_.insert({space_.probe, stride, n});
    rows_.push_back(o);
    return o.value;
  }

  // Access i of n goes to virtual offset i * stride + o_i, where o_i (a line inside the
  // stride) makes the physical offsets (mod the chunk) all different: each access has a line
  // of its own to hold the next offset. Visits jump across the footprint (coprime step).
  void build_aliased_chain(double stride, uint64_t n) {
    const auto chunk = static_cast<uint64_t>(space_.alias_chunk);
    const auto s = static_cast<uint64_t>(stride);
    const uint64_t per_chunk = std::max<uint64_t>(1, chunk / s);
    if (n > chunk / static_cast<uint64_t>(kLine) || (s < chunk && chunk % s) || (s >= chunk && s % chunk))
      throw std::logic_error("tlb: aliased chain does not fit its chunk");
    auto virt = [&](uint64_t i) { return i * s + (i / per_chunk) * static_cast<uint64_t>(kLine); };
    const uint64_t step = coprime_step(n);
    std::vector<uint64_t> image(chunk / sizeof(uint64_t), 0);
    for (uint64_t v = 0; v < n; ++v) {
      const uint64_t here = virt(v * step % n), next = virt((v + 1) % n * step % n);
      image[(here % chunk) / sizeof(uint64_t)] = next;
    }
    start_ = 0;
    CUDA_CHECK(cudaMemcpy(space_.base, image.data(), chunk, cudaMemcpyHostToDevice));
  }

  // Slots n on a sqrt(2) grid up to the buffer; with `first_only`, stop once the first knee
  // has a plateau above it (or at kFirstStepSlots). Then measure where the latency family's
  // refinement asks, around the first knee only or around all of them, until the knees are
  // bracketed to a few %.
  void sweep(double stride, bool first_only) {
    ctx_->progress(space_.probe + ": stride " + format_number(stride / kMiB) + " MiB");
    const double first_n = std::max(tlb::kFirstStepSlots, std::floor(tlb::kFirstStepBytes / stride));
    double max_n = std::min(std::floor(space_.bytes / stride), first_only ? first_n : space_.bytes);
    // In the aliased space only the levels beyond the L1 TLB are sought (tlb::kAliasMinAccesses).
    double min_n = 1;
    if (space_.alias_chunk > 0) {
      max_n = std::min(max_n, std::floor(space_.alias_chunk / kLine));
      min_n = tlb::kAliasMinAccesses;
    }
    auto curve = [&] { return tlb::tlb_curve(rows_, stride, space_.probe); };
    auto knees = [&] { return segmentation::segment_curve(curve(), tlb::tlb_segment_options()).knees; };
    for (double k = 0, last = 0; std::round(std::exp2(k / 2)) <= max_n; ++k) {
      const double n = std::round(std::exp2(k / 2));
      if (n == last || n < min_n) continue;
      last = n;
      if (!measured_.count({space_.probe, stride, n})) cycles_at(stride, n);
      if (!first_only) continue;
      auto kn = knees();
      if (!kn.empty() && n * stride >= 2 * kn.front().arrive) break;
    }
    // The whole buffer, too: a last level reaching beyond the grid's top still shows.
    if (!first_only && !measured_.count({space_.probe, stride, max_n})) cycles_at(stride, max_n);
    segmentation::RefineOptions opt;
    opt.segment = tlb::tlb_segment_options();
    for (int round = 0; round < 6; ++round) {
      auto kn = knees();
      const double limit = first_only && !kn.empty() ? kn.front().arrive : max_n * stride;
      int added = 0;
      for (double x : segmentation::refinement_points(curve(), opt)) {
        const double n = std::round(x / stride);
        if (n < min_n || n * stride > limit || measured_.count({space_.probe, stride, n})) continue;
        cycles_at(stride, n);
        ++added;
      }
      if (!added) break;
    }
  }

  RunContext* ctx_ = nullptr;
  DeviceBuffer<char> buf_;
  double bytes_ = 0;
  // Where the chase runs: the plain buffer or the aliased space (alias_chunk > 0).
  struct Space {
    char* base = nullptr;
    double bytes = 0, alias_chunk = 0;
    std::string probe;
  } space_;
  uint64_t start_ = 0;
  std::unique_ptr<ChaseRunner> runner_;
  std::set<std::tuple<std::string, double, double>> measured_;
  std::vector<Observation> rows_;
};

GPUPROBE_REGISTER_FAMILY(TlbFamily);

}  // namespace
}  // namespace gpuprobe
