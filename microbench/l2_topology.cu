// Which SMs are near which L2 lines. A set of lines is written (so that each lies in L2 at its
// home, the point of coherence), then one thread on one chosen SM times its first read of each
// line (ld.global.cg, one load at a time), and a second read (which a near copy may answer);
// for every SM in turn. Lines then group by the SMs they are near for: the L2 partitions.
// Cluster launches (sm_90+) with one block per SM show which SMs the hardware puts together:
// a cluster's blocks run in one GPC.
#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "analysis/l2_topology.hpp"
#include "cluster_launch.cuh"
#include "base/stats.hpp"
#include "gpu/sass_check.hpp"
#include "memory_chase.cuh"

namespace gpuprobe::l2_topology {

__global__ void touch_lines(char* buf, const uint32_t* offsets, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    asm volatile("st.global.cg.u32 [%0], %1;" ::"l"(buf + offsets[i]), "r"(0u) : "memory");
}

// Only thread 0 of the block that runs on SM `target` works; the rest leave at once.
__global__ void line_latency(const char* buf, const uint32_t* offsets, int n, uint32_t target,
                             uint32_t* first, uint32_t* again, int* found) {
  if (threadIdx.x != 0 || sm_id() != target) return;
  *found = 1;
#pragma unroll 1
  for (int i = 0; i < n; ++i) {
    const uint64_t off = offsets[i];
    wait_for(off);
    uint32_t v;
    uint64_t t0 = clock_now();
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(buf + off) : "memory");
    wait_for(v);
    uint64_t t1 = clock_now();
    first[i] = uint32_t(t1 - t0);
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(buf + off + (v & 0u)) : "memory");
    wait_for(v);
    again[i] = uint32_t(clock_now() - t1);
  }
}

__global__ void placement(uint32_t* smids, int* ran) {
  if (threadIdx.x == 0) {
    smids[blockIdx.x] = sm_id();
    if (blockIdx.x == 0) *ran = GPUPROBE_HAS_CLUSTERS;
  }
  cluster_barrier();  // every block of a cluster resident at once
}

namespace {

constexpr size_t kSpanBytes = 64u << 20;  // lines drawn from a 64 MiB span
constexpr int kLineBytes = 128;
constexpr int kPasses = 3;                 // the map is the median of three passes over all SMs
constexpr int kPlacementLaunches = 2;      // per cluster size

class L2TopologyFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(l2_topology::kFamily.name); }
  std::string description() const override {
    return "SM x L2 line latency map, L2 partitions and each SM's near one, SMs grouped by "
           "cluster co-scheduling (GPCs)";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{"first_read", "cycles of each SM's first read of each written line"},
            {"reread", "median over lines of each SM's second read, cycles"},
            {"cluster_placement", "SM of each block of cluster launches, one block per SM"}};
  }

  void run(RunContext& ctx) override {
    const DeviceInfo& dev = ctx.device();
    smem_ = size_t(dev.shared_per_block_optin);
    // All the shared memory a block may have: one block per SM.
    CUDA_CHECK(cudaFuncSetAttribute(line_latency, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    CUDA_CHECK(cudaFuncSetAttribute(placement, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    if (ctx.enabled("first_read") && sass_allows(ctx, "first_read", {"l2_topology::line_latency", "l2_topology::touch_lines"}))
      latency_map(ctx, dev);
    if (ctx.enabled("cluster_placement") && dev.cc_major >= 9 &&
        sass_allows(ctx, "cluster_placement", {"l2_topology::placement"}))
      placements(ctx, dev);
  }

 private:
  void latency_map(RunContext& ctx, const DeviceInfo& dev) {
    // kLines distinct random lines of the span.
    std::mt19937_64 rng(29);
    std::set<uint32_t> picked;
    std::uniform_int_distribution<uint32_t> pick(0, uint32_t(kSpanBytes / kLineBytes) - 1);
    while (picked.size() < size_t(kLines)) picked.insert(pick(rng) * kLineBytes);
    std::vector<uint32_t> offsets(picked.begin(), picked.end());
    std::shuffle(offsets.begin(), offsets.end(), rng);
    DeviceBuffer<char> buf(kSpanBytes);
    CUDA_CHECK(cudaMemset(buf.get(), 0, kSpanBytes));
    DeviceBuffer<uint32_t> d_off(kLines), first(kLines), again(kLines);
    DeviceBuffer<int> found(1);
    CUDA_CHECK(cudaMemcpy(d_off.get(), offsets.data(), kLines * sizeof(uint32_t), cudaMemcpyHostToDevice));

    // SM ids as the hardware numbers them: whichever the blocks of a full grid report.
    std::vector<int> sms;
    {
      DeviceBuffer<uint32_t> ids(size_t(dev.sm_count));
      DeviceBuffer<int> ran(1);
      placement<<<dev.sm_count, 32, smem_>>>(ids.get(), ran.get());
      CUDA_CHECK_LAUNCH();
      std::vector<uint32_t> v(size_t(dev.sm_count));
      CUDA_CHECK(cudaMemcpy(v.data(), ids.get(), v.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
      std::set<int> s(v.begin(), v.end());
      sms.assign(s.begin(), s.end());
    }
    std::vector<std::vector<std::vector<double>>> f(sms.size(), std::vector<std::vector<double>>(kLines));
    std::vector<std::vector<double>> re(sms.size());
    for (int pass = 0; pass < kPasses; ++pass) {
      ctx.progress("SM x line map, pass " + std::to_string(pass + 1));
      for (size_t i = 0; i < sms.size(); ++i) {
        bool ran = false;
        for (int attempt = 0; attempt < 4 && !ran; ++attempt) {  // the block may land elsewhere
          touch_lines<<<1, kLines>>>(buf.get(), d_off.get(), kLines);
          CUDA_CHECK_LAUNCH();
          CUDA_CHECK(cudaMemset(found.get(), 0, sizeof(int)));
          line_latency<<<dev.sm_count, 32, smem_>>>(buf.get(), d_off.get(), kLines, uint32_t(sms[i]),
                                                    first.get(), again.get(), found.get());
          CUDA_CHECK_LAUNCH();
          int fnd = 0;
          CUDA_CHECK(cudaMemcpy(&fnd, found.get(), sizeof fnd, cudaMemcpyDeviceToHost));
          ran = fnd == 1;
        }
        if (!ran) continue;
        std::vector<uint32_t> a(kLines), b(kLines);
        CUDA_CHECK(cudaMemcpy(a.data(), first.get(), kLines * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(b.data(), again.get(), kLines * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        for (int j = 0; j < kLines; ++j) {
          f[i][size_t(j)].push_back(a[size_t(j)]);
          re[i].push_back(b[size_t(j)]);
        }
      }
    }
    LatencyMap m;
    for (size_t i = 0; i < sms.size(); ++i) {
      if (f[i][0].size() < size_t(kPasses)) continue;  // an SM no block reached in every pass
      std::vector<double> row;
      for (const auto& cell : f[i]) row.push_back(median(cell));
      m.sms.push_back(sms[i]);
      m.lat.push_back(row);
    }
    Topology t;
    std::vector<int> lpos(kLines), spos(m.sms.size());
    for (int j = 0; j < kLines; ++j) lpos[size_t(j)] = j;
    for (size_t i = 0; i < spos.size(); ++i) spos[i] = int(i);
    if (infer(m, &t)) {
      lpos = line_order(m, t);
      spos = sm_order(m, t);
    }
    // Rows in heat-map order (SM position, then line position), for gnuplot's image style.
    std::vector<size_t> si(m.sms.size()), lj(kLines);
    for (size_t i = 0; i < si.size(); ++i) si[size_t(spos[i])] = i;
    for (size_t j = 0; j < lj.size(); ++j) lj[size_t(lpos[j])] = j;
    for (size_t a = 0; a < si.size(); ++a) {
      const size_t i = si[a];
      const size_t orig = size_t(std::find(sms.begin(), sms.end(), m.sms[i]) - sms.begin());
      for (size_t b = 0; b < lj.size(); ++b) {
        const size_t j = lj[b];
        const auto s = summarize(f[orig][j]);
        ctx.record({"", "first_read",
                    {{"sm", std::to_string(m.sms[i])}, {"line", std::to_string(j)},
                     {"sm_order", std::to_string(a)}, {"line_order", std::to_string(b)},
                     {"group", std::to_string(t.line_group.empty() ? 0 : t.line_group[j])}},
                    s.p50, "cycles", s.p05, s.p50, s.p95, s.n});
      }
      const auto r = summarize(re[orig]);
      ctx.record({"", "reread", {{"sm", std::to_string(m.sms[i])}, {"sm_order", std::to_string(a)}},
                  r.p50, "cycles", r.p05, r.p50, r.p95, r.n});
    }
  }

  void placements(RunContext& ctx, const DeviceInfo& dev) {
    prepare_cluster_kernel(placement, smem_);
    const int largest = max_cluster_size(placement, 32, smem_);
    DeviceBuffer<uint32_t> ids(size_t(dev.sm_count));
    DeviceBuffer<int> ran(1);
    int launch = 0;
    for (int size = largest; size >= 2; --size) {
      const int clusters = max_active_clusters(placement, size, 32, smem_);
      if (clusters < 1) continue;
      const int grid = std::min(clusters * size, dev.sm_count - dev.sm_count % size);
      for (int k = 0; k < kPlacementLaunches; ++k, ++launch) {
        CUDA_CHECK(cudaMemset(ran.get(), 0, sizeof(int)));
        launch_clusters(placement, grid, size, 32, smem_, ids.get(), ran.get());
        int r = 0;
        CUDA_CHECK(cudaMemcpy(&r, ran.get(), sizeof r, cudaMemcpyDeviceToHost));
        if (r != 1) throw std::runtime_error("l2_topology: the placement kernel ran without its sm_90 code");
        std::vector<uint32_t> v(static_cast<size_t>(grid));
        CUDA_CHECK(cudaMemcpy(v.data(), ids.get(), v.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        for (int b = 0; b < grid; ++b)
          ctx.record({"", "cluster_placement",
                      {{"launch", std::to_string(launch)}, {"cluster_size", std::to_string(size)},
                       {"cluster", std::to_string(b / size)}, {"rank", std::to_string(b % size)}},
                      double(v[size_t(b)]), "sm", double(v[size_t(b)]), double(v[size_t(b)]),
                      double(v[size_t(b)]), 1});
      }
    }
  }

  size_t smem_ = 0;
};

GPUPROBE_REGISTER_FAMILY(L2TopologyFamily);

}  // namespace

}  // namespace gpuprobe::l2_topology
