// TLB reach: one thread chases ld.global.cg loads one stride apart over growing footprints,
// up to most of the free device memory. The data stays in L2 (it is a few lines per page),
// so every rise of cycles per access is address translation: the first step is the L1 TLB's
// reach, the next the L2 TLB's. Repeating the first step at several strides gives the size
// of a TLB entry: below it the reach stays put, above it the reach grows with the stride.
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "analysis/memory_structure.hpp"
#include "core/csv.hpp"
#include "gpu/sass_check.hpp"
#include "memory_chase.cuh"

namespace gpuprobe {
namespace {

using CgLoad = GlobalLoader<Path::l2, 8>;
constexpr double kMiB = 1 << 20;
constexpr double kGiB = 1 << 30;
// Accesses per pass at least: small footprints visit other lines of each page in further
// rounds, so that the mix of near and far L2 slices averages out as it does for large ones.
constexpr uint64_t kMinAccesses = 512;
constexpr double kLine = 128;  // spacing of those rounds inside a page; any line size works
// The first step is an L1 TLB running out: looked for up to this many pages.
constexpr double kFirstStepSlots = 2048;

class TlbFamily : public ProbeFamily {
 public:
  std::string name() const override { return "tlb"; }
  std::string description() const override {
    return "TLB reach and page-entry size from strided ld.global.cg chases";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{"chase", "cycles per access against footprint, one access per stride"}};
  }

  void run(RunContext& ctx) override {
    if (!ctx.enabled("chase")) return;
    if (!sass_allows(ctx, "chase", memory_structure_kernels(name(), "chase"))) return;
    ctx_ = &ctx;
    measured_.clear();
    rows_.clear();
    allocate();
    runner_ = std::make_unique<ChaseRunner>();
    const std::vector<double> strides =
        ctx.quick() ? std::vector<double>{1 * kMiB, 2 * kMiB, 4 * kMiB}
                    : std::vector<double>{256 * 1024, 512 * 1024, 1 * kMiB,  2 * kMiB,
                                          4 * kMiB,   8 * kMiB,   16 * kMiB, 32 * kMiB,
                                          64 * kMiB,  128 * kMiB};
    for (double s : strides) sweep(s, true);
    // Coverage at the largest stride still below the entry size, so that it is the footprint
    // in bytes; without a first step anywhere, at the middle stride.
    auto pe = fit_page_entry(first_tlb_steps(rows_));
    sweep(pe ? pe->sweep_stride : strides[strides.size() / 2], false);
    buf_ = DeviceBuffer<char>();
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
    ChainLayout c;
    c.n = static_cast<uint64_t>(n);
    c.step = coprime_step(c.n);
    c.stride = static_cast<uint64_t>(stride);
    c.rounds = std::min<uint64_t>((kMinAccesses + c.n - 1) / c.n,
                                  static_cast<uint64_t>(stride / kLine));
    c.rounds = std::max<uint64_t>(1, c.rounds);
    c.round_offset = static_cast<uint64_t>(std::floor(stride / c.rounds / kLine) * kLine);
    build_chain<uint64_t>(buf_.get(), c);
    ChaseArgs a;
    a.n = static_cast<uint32_t>(c.length());
    a.passes = 2;  // the first pass fills L2 and the TLBs; the second is timed
    a.warm = 1;
    Point pt{"chase",
             {{"stride_bytes", format_number(stride)},
              {"footprint_bytes", format_number(n * stride)}},
             "cycles", ctx_->quick() ? 1 : 3};
    Observation o = ctx_->measure(pt, [&] {
      ChaseResult r = runner_->run<false>(CgLoad{buf_.get()}, a);
      return Sample{r.cycles_per_access, r.seconds};
    });
    measured_.insert({stride, n});
    rows_.push_back(o);
    return o.value;
  }

  // Slots n on a sqrt(2) grid up to the buffer; with `first_only`, stop once the first knee
  // has a plateau above it (or at kFirstStepSlots). Then measure where the latency family's
  // refinement asks, around the first knee only or around all of them, until the knees are
  // bracketed to a few %.
  void sweep(double stride, bool first_only) {
    ctx_->progress("stride " + format_number(stride / kMiB) + " MiB");
    const double max_n =
        std::min(std::floor(bytes_ / stride), first_only ? kFirstStepSlots : bytes_);
    auto knees = [&] {
      return ladder::segment_curve(tlb_curve(rows_, stride), tlb_segment_options()).knees;
    };
    for (double k = 0, last = 0; std::round(std::exp2(k / 2)) <= max_n; ++k) {
      const double n = std::round(std::exp2(k / 2));
      if (n == last) continue;
      last = n;
      if (!measured_.count({stride, n})) cycles_at(stride, n);
      if (!first_only) continue;
      auto kn = knees();
      if (!kn.empty() && n * stride >= 2 * kn.front().arrive) break;
    }
    // The whole buffer, too: a last level reaching beyond the grid's top still shows.
    if (!first_only && !measured_.count({stride, max_n})) cycles_at(stride, max_n);
    ladder::RefineOptions opt;
    opt.segment = tlb_segment_options();
    for (int round = 0; round < 6; ++round) {
      auto kn = knees();
      const double limit = first_only && !kn.empty() ? kn.front().arrive : bytes_;
      int added = 0;
      for (double x : ladder::refinement_points(tlb_curve(rows_, stride), opt)) {
        const double n = std::round(x / stride);
        if (n < 1 || n * stride > limit || measured_.count({stride, n})) continue;
        cycles_at(stride, n);
        ++added;
      }
      if (!added) break;
    }
  }

  RunContext* ctx_ = nullptr;
  DeviceBuffer<char> buf_;
  double bytes_ = 0;
  std::unique_ptr<ChaseRunner> runner_;
  std::set<std::pair<double, double>> measured_;
  std::vector<Observation> rows_;
};

GPUPROBE_REGISTER_FAMILY(TlbFamily);

}  // namespace
}  // namespace gpuprobe
