// L1 data cache capacity at each shared-memory carve-out preference
// (cudaFuncAttributePreferredSharedMemoryCarveout). The preference is a hint the driver rounds
// to a configuration the SM supports, so the sweep shows the configurations themselves as
// steps of L1 capacity; l1_size is the largest.
#include <cmath>

#include "analysis/carveout.hpp"
#include "base/csv.hpp"
#include "gpu/sass_check.hpp"
#include "memory_chase.cuh"

namespace gpuprobe {
namespace {

using L1Load = GlobalLoader<Path::l1, 8>;
// Elements 32 B apart: no wider than any line or sector, so every byte of a footprint's lines
// is used and the capacity found is in bytes, whatever the line size.
constexpr uint64_t kSpacing = 32;
constexpr double kKiB = 1024;

class CarveoutFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(carveout::kFamily.name); }
  std::string description() const override {
    return "L1 data cache capacity at each shared-memory carve-out preference";
  }
  std::vector<ProbeInfo> probes() const override {
    return {
        {carveout::kChaseProbe, "cycles per ld.global access against footprint, per carve-out"},
        {carveout::kL1SizeProbe, "largest footprint that stays in L1, per carve-out (derived)"}};
  }

  void run(RunContext& ctx) override {
    if (!ctx.enabled(carveout::kChaseProbe) && !ctx.enabled(carveout::kL1SizeProbe)) return;
    if (!sass_allows(ctx, carveout::kChaseProbe, carveout::kernels(carveout::kChaseProbe))) return;
    const DeviceInfo& d = ctx.device();
    // Percent of the largest shared memory per SM. Denser at the low end, where a few
    // kilobytes of shared memory already select the next configuration.
    const std::vector<int> percents =
        ctx.quick() ? std::vector<int>{0, 50, 100}
                    : std::vector<int>{0,  1,  2,  3,  5,  7,  10, 13, 16, 20, 25, 30, 35,
                                       40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 100};
    // The L1 never exceeds the unified array: shared memory per SM plus what the smallest
    // carve-out keeps for L1. Twice a bound on that is sure to miss.
    const double max_footprint = 2.0 * (static_cast<double>(d.shared_per_sm) + 64 * kKiB);
    DeviceBuffer<char> buf(static_cast<size_t>(max_footprint));
    ChaseRunner runner;
    const auto kernel = memory_chase::chase<false, L1Load>;
    std::vector<Observation> rows;

    for (int pct : percents) {
      ctx.progress("carve-out " + std::to_string(pct) + " %");
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, pct));
      const double request = std::ceil(pct * static_cast<double>(d.shared_per_sm) / 100.0);
      auto cycles_at = [&](double footprint) {
        ChainLayout c;
        c.n = static_cast<uint64_t>(footprint) / kSpacing;
        c.step = coprime_step(c.n);
        c.stride = kSpacing;
        build_chain<uint64_t>(buf.get(), c);
        ChaseArgs a;
        a.n = static_cast<uint32_t>(c.n);
        a.passes = 2;  // the first brings the footprint in; the second is timed
        a.warm = 1;
        Point pt{carveout::kChaseProbe,
                 {{carveout::kPercentColumn, std::to_string(pct)},
                  {carveout::kRequestColumn, format_number(request)},
                  {memory_chase::kFootprintColumn, format_number(footprint)}},
                 "cycles",
                 ctx.quick() ? 1 : 2};
        Observation o = ctx.measure(pt, [&] {
          ChaseResult r = runner.run<false>(L1Load{buf.get()}, a);
          return Sample{r.cycles_per_access, r.seconds};
        });
        rows.push_back(o);
        return o.value;
      };
      // 4 KiB fits every L1 there is: it sets the hit level the others are judged against.
      const double hit = cycles_at(4 * kKiB);
      BoundarySearch search(4 * kKiB, 4 * kKiB, max_footprint, 2.0, kKiB, 0.01);
      search.add(4 * kKiB, true);
      while (auto x = search.next()) search.add(*x, cycles_at(*x) <= carveout::kL1FitFactor * hit);
    }
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutDefault));

    for (const auto& c : carveout::l1_capacity_by_carveout(rows)) {
      Observation o;
      o.family = name();
      o.probe = carveout::kL1SizeProbe;
      o.params = {{carveout::kPercentColumn, format_number(c.percent)},
                  {carveout::kRequestColumn, format_number(c.shared_request)}};
      o.value = o.p05 = o.p50 = c.l1_bytes;
      o.p95 = c.miss_bytes;  // the capacity lies in [l1_bytes, miss_bytes)
      o.unit = "bytes";
      o.reps = 1;
      ctx.record(o);
    }
  }
};

GPUPROBE_REGISTER_FAMILY(CarveoutFamily);

}  // namespace
}  // namespace gpuprobe
