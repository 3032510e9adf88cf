// The GTC 2013 case study (Micikevicius, "Case Study 1"): an array of 12-byte structures,
// one per thread, read and written as an array of structures (three 4-byte accesses at a
// 12-byte stride per warp instruction), through the read-only path (reads), staged through
// shared memory with coalesced 4-byte accesses, and as a structure of three arrays. Each is
// reported in GB/s of structures and as a speedup over the plain AoS kernel. The array is
// 8x the L2, so DRAM traffic is what the layouts change; the talk notes that L2 already
// absorbs part of the 3x the AoS pattern requests.
#include <algorithm>
#include <functional>
#include <map>

#include "analysis/coalescing.hpp"
#include "gpu/cuda.cuh"
#include "base/csv.hpp"

namespace gpuprobe {
namespace {

struct Position {
  float x, y, z;
};
static_assert(sizeof(Position) == 12, "the case study's structure is 12 bytes");

constexpr int kBlock = 256;

struct Layout {
  const Position* aos;
  const float *x, *y, *z;
};
struct OutLayout {
  Position* aos;
  float *x, *y, *z;
};

enum class Way { aos, aos_l2, ldg, smem, soa };

const char* way_name(Way w) {
  switch (w) {
    case Way::aos:
      return "aos";
    case Way::aos_l2:
      return "aos_l2only";
    case Way::ldg:
      return "ldg";
    case Way::smem:
      return "smem";
    case Way::soa:
      return "soa";
  }
  return "?";
}

// "Kernel that just reads that data": one structure per thread, summed and kept. The grid
// covers the array exactly (its length is a whole number of blocks).
template <Way Way_>
__global__ void read_positions(Layout in, float* sink, int flag) {
  const uint32_t i = blockIdx.x * kBlock + threadIdx.x;
  Position p;
  if constexpr (Way_ == Way::smem) {
    // The block's 3 * kBlock words, consecutive threads reading consecutive words.
    __shared__ float stage[3 * kBlock];
    const float* words = reinterpret_cast<const float*>(in.aos) + 3ull * blockIdx.x * kBlock;
    for (int k = 0; k < 3; ++k) stage[threadIdx.x + k * kBlock] = words[threadIdx.x + k * kBlock];
    __syncthreads();
    p = {stage[3 * threadIdx.x], stage[3 * threadIdx.x + 1], stage[3 * threadIdx.x + 2]};
  } else if constexpr (Way_ == Way::aos) {
    p = in.aos[i];
  } else if constexpr (Way_ == Way::aos_l2) {
    p = {__ldcg(&in.aos[i].x), __ldcg(&in.aos[i].y), __ldcg(&in.aos[i].z)};
  } else if constexpr (Way_ == Way::ldg) {
    p = {__ldg(&in.aos[i].x), __ldg(&in.aos[i].y), __ldg(&in.aos[i].z)};
  } else {
    p = {in.x[i], in.y[i], in.z[i]};
  }
  keep(p.x + p.y + p.z, sink, flag);
}

// "Kernel that just stores the data".
template <Way Way_>
__global__ void write_positions(OutLayout out) {
  const uint32_t i = blockIdx.x * kBlock + threadIdx.x;
  const float f = static_cast<float>(i);
  if constexpr (Way_ == Way::smem) {
    __shared__ float stage[3 * kBlock];
    stage[3 * threadIdx.x] = f;
    stage[3 * threadIdx.x + 1] = f + 1;
    stage[3 * threadIdx.x + 2] = f + 2;
    __syncthreads();
    float* words = reinterpret_cast<float*>(out.aos) + 3ull * blockIdx.x * kBlock;
    for (int k = 0; k < 3; ++k) words[threadIdx.x + k * kBlock] = stage[threadIdx.x + k * kBlock];
  } else if constexpr (Way_ == Way::aos) {
    out.aos[i] = {f, f + 1, f + 2};
  } else {
    out.x[i] = f;
    out.y[i] = f + 1;
    out.z[i] = f + 2;
  }
}

using ReadKernel = void (*)(Layout, float*, int);
using WriteKernel = void (*)(OutLayout);

class CoalescingFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(coalescing::kFamily.name); }
  std::string description() const override {
    return "GTC 2013 case study: 12-byte structures as AoS, read-only path, staged through "
           "shared memory, SoA; GB/s and speedup over AoS";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{coalescing::kReadProbe,
             "read one 12-byte structure per thread: aos, aos_l2only, ldg, smem, soa"},
            {coalescing::kWriteProbe, "write one 12-byte structure per thread: aos, smem, soa"}};
  }

  void run(RunContext& ctx) override {
    const DeviceInfo& d = ctx.device();
    const int reps = ctx.quick() ? 3 : 11;
    // 8x L2 of structures, a whole number of blocks, within a quarter of the free memory for
    // the two layouts together.
    uint64_t n = 8 * static_cast<uint64_t>(d.l2_bytes) / sizeof(Position);
    n = std::min<uint64_t>(n, static_cast<uint64_t>(d.free_mem_bytes) / 4 / (2 * sizeof(Position)));
    n = std::min<uint64_t>(n, uint64_t(1) << 31) / kBlock * kBlock;
    if (n == 0) throw std::runtime_error("coalescing: no room for the arrays");
    DeviceBuffer<Position> aos(n);
    DeviceBuffer<float> soa(3 * n);
    DeviceBuffer<float> sink(1);
    CUDA_CHECK(cudaMemset(aos.get(), 0, aos.bytes()));
    CUDA_CHECK(cudaMemset(soa.get(), 0, soa.bytes()));
    const Layout in{aos.get(), soa.get(), soa.get() + n, soa.get() + 2 * n};
    const OutLayout out{aos.get(), soa.get(), soa.get() + n, soa.get() + 2 * n};
    const int grid = static_cast<int>(n / kBlock);
    const double bytes = static_cast<double>(n) * sizeof(Position);

    auto measure = [&](const std::string& probe, Way w, const std::function<void()>& launch) {
      Params params = {{coalescing::kLayoutColumn, way_name(w)},
                       {coalescing::kStructuresColumn, std::to_string(n)}};
      return ctx.measure(Point{probe, params, "GB/s", reps, bytes}, [&] {
        double s = time_seconds(launch);
        return Sample{bytes / s * 1e-9, s};
      });
    };
    // Speedups over plain AoS, from the medians; p05/p95 from each side's spread.
    auto speedups = [&](const std::string& probe, const std::map<Way, Observation>& all) {
      const Observation& base = all.at(Way::aos);
      for (const auto& [w, o] : all) {
        if (w == Way::aos) continue;
        Params params = {{coalescing::kLayoutColumn, way_name(w)},
                         {coalescing::kStructuresColumn, std::to_string(n)}};
        ctx.record({name(), probe + coalescing::kSpeedupSuffix, params, o.p50 / base.p50, "x",
                    o.p05 / base.p95, o.p50 / base.p50, o.p95 / base.p05, o.reps});
      }
    };

    if (ctx.enabled(coalescing::kReadProbe)) {
      std::map<Way, Observation> all;
      // A named list: CUDA 11's front end cannot deduce a braced list of pairs in a range-for.
      const std::pair<Way, ReadKernel> ways[] = {{Way::aos, read_positions<Way::aos>},
                                                 {Way::aos_l2, read_positions<Way::aos_l2>},
                                                 {Way::ldg, read_positions<Way::ldg>},
                                                 {Way::smem, read_positions<Way::smem>},
                                                 {Way::soa, read_positions<Way::soa>}};
      for (auto [w, k] : ways)
        all[w] = measure(coalescing::kReadProbe, w,
                         [&, k = k] { k<<<grid, kBlock>>>(in, sink.get(), 0); });
      speedups(coalescing::kReadProbe, all);
    }
    if (ctx.enabled(coalescing::kWriteProbe)) {
      std::map<Way, Observation> all;
      const std::pair<Way, WriteKernel> ways[] = {{Way::aos, write_positions<Way::aos>},
                                                  {Way::smem, write_positions<Way::smem>},
                                                  {Way::soa, write_positions<Way::soa>}};
      for (auto [w, k] : ways)
        all[w] = measure(coalescing::kWriteProbe, w, [&, k = k] { k<<<grid, kBlock>>>(out); });
      speedups(coalescing::kWriteProbe, all);
    }
  }
};

}  // namespace

GPUPROBE_REGISTER_FAMILY(CoalescingFamily);

}  // namespace gpuprobe
