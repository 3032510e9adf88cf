// Thread block clusters and distributed shared memory (sm_90+). One block per SM (each asks
// for all the shared memory a block may have), so that block ranks of a cluster are on
// different SMs, which the kernels confirm with %smid:
// - dsm_latency: rank 0 chases byte offsets through the shared memory of each rank in turn
//   (mapa + ld.shared::cluster), its own included, for cluster sizes 2 to the largest;
// - dsm_bandwidth: every thread of every block streams 16 B loads from the next rank's shared
//   memory, bytes per clock per SM;
// - cluster_sync: the cycles of one cluster-wide barrier.arrive + wait (release and relaxed
//   arrive), at every place a cluster of each size lands.
#include <algorithm>
#include <string>
#include <vector>

#include "analysis/clusters.hpp"
#include "cluster_launch.cuh"
#include "base/stats.hpp"
#include "gpu/sass_check.hpp"
#include "memory_chase.cuh"

namespace gpuprobe::clusters {

// cycles[t]: one timed pass of rank 0 through rank t's chain; smids[b]: SM of block b.
__global__ void dsm_chase(const uint32_t* next, uint64_t* cycles, uint32_t* smids, int* ran) {
  extern __shared__ uint32_t smem[];
  for (int i = threadIdx.x; i < kChainEntries; i += blockDim.x)
    smem[i * kChainStride / 4] = next[i];
  if (threadIdx.x == 0) smids[blockIdx.x] = sm_id();
  __syncthreads();
  cluster_barrier();
  if (cluster_rank() == 0 && threadIdx.x == 0) {
    const uint32_t local = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    const uint32_t n = cluster_blocks();
    for (uint32_t t = 0; t < n; ++t) {
      const uint32_t remote = map_rank(local, t);
      uint32_t cur = 0;
      for (int pass_no = 0; pass_no < 2; ++pass_no) {  // the first pass warms, the second is timed
        wait_for(cur);
        const uint64_t t0 = clock_now();
#pragma unroll 1
        for (int i = 0; i < kChainEntries; ++i)
          cur = dsm_load(remote + cur);
        wait_for(cur);
        cycles[t] = clock_now() - t0;
      }
    }
    *ran = GPUPROBE_HAS_CLUSTERS;
  }
  cluster_barrier();  // the other blocks stay until rank 0 has read their shared memory
}

constexpr int kRegionBytes = 32 << 10;  // each block's shared region the next rank reads

// cycles[b]: block b's timed loop; every thread loads iters x kBandwidthUnroll x 16 B.
__global__ void dsm_read(int iters, uint64_t* cycles, uint32_t* smids, uint32_t* sink, int flag, int* ran) {
  extern __shared__ uint32_t smem[];
  for (int i = threadIdx.x; i < kRegionBytes / 4; i += blockDim.x) smem[i] = i;
  if (threadIdx.x == 0) smids[blockIdx.x] = sm_id();
  __syncthreads();
  cluster_barrier();
  const uint32_t remote = map_rank(static_cast<uint32_t>(__cvta_generic_to_shared(smem)),
                                   (cluster_rank() + 1) % cluster_blocks());
  uint32_t acc = 0;
  __syncthreads();
  const uint64_t t0 = clock_now();
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < kBandwidthUnroll; ++u) {
      const uint32_t addr = remote + (((u * blockDim.x + threadIdx.x) * 16) & (kRegionBytes - 1));
      acc ^= dsm_load_xor4(addr);
    }
  }
  __syncthreads();
  const uint64_t t1 = clock_now();
  if (threadIdx.x == 0) {
    cycles[blockIdx.x] = t1 - t0;
    if (blockIdx.x == 0) *ran = GPUPROBE_HAS_CLUSTERS;
  }
  keep(acc, sink, flag);
  cluster_barrier();
}

// *cycles: kSyncIterations cluster barriers timed by rank 0 of cluster `timed`, after
// kSyncWarmup untimed ones; smids[r]: the SM of its rank r. The other clusters' blocks leave at
// once, so the timed cluster runs alone where the scheduler puts cluster `timed` of a full
// grid. Relaxed: arrive.relaxed + wait (the meeting alone); else cluster.sync()'s release
// arrive + acquire wait.
template <bool Relaxed>
__device__ __forceinline__ void sync_round() {
  if constexpr (Relaxed) cluster_barrier_relaxed();
  else cluster_barrier();
}

template <bool Relaxed>
__global__ void sync_cost(uint32_t timed, uint64_t* cycles, uint32_t* smids, int* ran) {
  if (blockIdx.x / cluster_blocks() != timed) return;
  if (threadIdx.x == 0) smids[cluster_rank()] = sm_id();
  cluster_barrier();
#pragma unroll 1
  for (int i = 0; i < kSyncWarmup; ++i) sync_round<Relaxed>();
  const uint64_t t0 = clock_now();
#pragma unroll 1
  for (int i = 0; i < kSyncIterations; ++i) sync_round<Relaxed>();
  const uint64_t t1 = clock_now();
  if (threadIdx.x == 0 && cluster_rank() == 0) {
    *cycles = t1 - t0;
    *ran = GPUPROBE_HAS_CLUSTERS;
  }
}

namespace {

constexpr int kChaseThreads = 128;
constexpr int kReadThreads = 1024;
constexpr int kSyncThreads = 128;
constexpr int kReadIters = 64;
constexpr int kSyncReps = 3;  // launches per place: the median of three

// Throws unless the kernel ran its sm_90 body.
void check_ran(const DeviceBuffer<int>& ran) {
  int r = 0;
  CUDA_CHECK(cudaMemcpy(&r, ran.get(), sizeof r, cudaMemcpyDeviceToHost));
  if (r != 1)
    throw std::runtime_error(
        std::string(kFamily.name) +
        ": the kernels ran without their sm_90 code (built for an older target?)");
  CUDA_CHECK(cudaMemset(ran.get(), 0, sizeof(int)));
}

std::vector<uint32_t> fetch32(const DeviceBuffer<uint32_t>& b, size_t n) {
  std::vector<uint32_t> v(n);
  CUDA_CHECK(cudaMemcpy(v.data(), b.get(), n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  return v;
}
std::vector<uint64_t> fetch64(const DeviceBuffer<uint64_t>& b, size_t n) {
  std::vector<uint64_t> v(n);
  CUDA_CHECK(cudaMemcpy(v.data(), b.get(), n * sizeof(uint64_t), cudaMemcpyDeviceToHost));
  return v;
}

// Whether every block of every cluster (of `size` blocks, in launch order) ran on its own SM.
bool distinct_sms(const std::vector<uint32_t>& smids, int size) {
  for (size_t c = 0; c + size <= smids.size(); c += size) {
    std::vector<uint32_t> s(smids.begin() + c, smids.begin() + c + size);
    std::sort(s.begin(), s.end());
    if (std::adjacent_find(s.begin(), s.end()) != s.end()) return false;
  }
  return true;
}

class ClustersFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(clusters::kFamily.name); }
  std::string description() const override {
    return "thread block clusters: distributed shared memory latency and bandwidth between "
           "SMs, cluster.sync() cost, the largest cluster";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{clusters::kDsmLatencyProbe,
             "rank 0 chasing through each rank's shared memory, cycles per load"},
            {kDsmBandwidthProbe, "every block reading the next rank's shared memory, B/clk/SM"},
            {kClusterSyncProbe, "one cluster-wide barrier at every place a cluster lands, cycles"}};
  }
  bool supported(const DeviceInfo& dev, std::string* why) const override {
    if (dev.cc_major >= 9) return true;
    *why = "thread block clusters need sm_90 or newer (this GPU is sm_" + std::to_string(dev.cc()) + ")";
    return false;
  }

  void run(RunContext& ctx) override {
    const DeviceInfo& dev = ctx.device();
    // All the shared memory a block may have: one block per SM.
    smem_ = size_t(dev.shared_per_block_optin);
    if (smem_ < size_t(kRegionBytes))
      throw std::runtime_error(std::string(kFamily.name) + ": too little shared memory per block");
    ran_ = DeviceBuffer<int>(1);
    CUDA_CHECK(cudaMemset(ran_.get(), 0, sizeof(int)));
    prepare_cluster_kernel(dsm_chase, smem_);
    prepare_cluster_kernel(dsm_read, smem_);
    prepare_cluster_kernel(sync_cost<false>, smem_);
    prepare_cluster_kernel(sync_cost<true>, smem_);
    const int largest = max_cluster_size(dsm_chase, kChaseThreads, smem_);
    std::vector<int> sizes;
    for (int s = 2; s <= largest; ++s)
      if (max_active_clusters(dsm_chase, s, kChaseThreads, smem_) > 0) sizes.push_back(s);
    if (sizes.empty())
      throw std::runtime_error(std::string(kFamily.name) +
                               ": no cluster of 2 blocks with one block per SM fits");
    ctx.record({"",
                clusters::kClusterSizeMaxProbe,
                {{kSharedPerBlockColumn, std::to_string(smem_)}},
                double(sizes.back()),
                "blocks",
                double(sizes.back()),
                double(sizes.back()),
                double(sizes.back()),
                1});

    if (ctx.enabled(clusters::kDsmLatencyProbe) &&
        sass_allows(ctx, clusters::kDsmLatencyProbe, {latency_kernel()}))
      for (int s : sizes) latency(ctx, s);
    if (ctx.enabled(kDsmBandwidthProbe) &&
        sass_allows(ctx, kDsmBandwidthProbe, {bandwidth_kernel()}))
      for (int s : sizes)
        if (s == 2 || s == 4 || s == 8 || s == sizes.back()) bandwidth(ctx, s);
    if (ctx.enabled(kClusterSyncProbe) &&
        sass_allows(ctx, kClusterSyncProbe, {sync_kernel(false), sync_kernel(true)}))
      for (int s : sizes) {
        ctx.progress("cluster.sync(), clusters of " + std::to_string(s));
        sync<false>(ctx, s);
        sync<true>(ctx, s);
      }
  }

 private:
  void latency(RunContext& ctx, int size) {
    std::vector<uint32_t> perm = sattolo_cycle(kChainEntries, 23);
    std::vector<uint32_t> next(kChainEntries);
    for (int i = 0; i < kChainEntries; ++i) next[i] = perm[i] * kChainStride;
    DeviceBuffer<uint32_t> d_next(kChainEntries), smids{size_t(size)};
    DeviceBuffer<uint64_t> cycles{size_t(size)};
    CUDA_CHECK(cudaMemcpy(d_next.get(), next.data(), kChainEntries * sizeof(uint32_t), cudaMemcpyHostToDevice));
    auto once = [&](bool own) {
      double s = time_seconds([&] {
        launch_clusters(dsm_chase, size, size, kChaseThreads, smem_, (const uint32_t*)d_next.get(),
                        cycles.get(), smids.get(), ran_.get());
      });
      check_ran(ran_);
      if (!distinct_sms(fetch32(smids, size), size))
        throw std::runtime_error(std::string(kFamily.name) +
                                 ": two blocks of a cluster shared an SM");
      auto c = fetch64(cycles, size);
      if (own) return Sample{double(c[0]) / kChainEntries, s};
      std::vector<double> others(c.begin() + 1, c.end());
      return Sample{median(others) / kChainEntries, s};
    };
    const int reps = ctx.quick() ? 3 : 5;
    ctx.measure({clusters::kDsmLatencyProbe,
                 {{kClusterSizeColumn, std::to_string(size)}, {kTargetColumn, "other_sm"}},
                 "cycles",
                 reps},
                [&] { return once(false); });
    ctx.measure({clusters::kDsmLatencyProbe,
                 {{kClusterSizeColumn, std::to_string(size)}, {kTargetColumn, "own_sm"}},
                 "cycles",
                 reps},
                [&] { return once(true); });
  }

  void bandwidth(RunContext& ctx, int size) {
    const int clusters = max_active_clusters(dsm_read, size, kReadThreads, smem_);
    if (clusters < 1) return;
    const int grid = clusters * size;
    DeviceBuffer<uint64_t> cycles{size_t(grid)};
    DeviceBuffer<uint32_t> smids{size_t(grid)}, sink(1);
    const double bytes = double(kReadIters) * kBandwidthUnroll * kReadThreads * 16;
    ctx.measure({kDsmBandwidthProbe,
                 {{kClusterSizeColumn, std::to_string(size)},
                  {kClustersColumn, std::to_string(clusters)}},
                 "B/clk/SM",
                 ctx.quick() ? 3 : 5,
                 bytes * grid},
                [&] {
                  double s = time_seconds([&] {
                    launch_clusters(dsm_read, grid, size, kReadThreads, smem_, kReadIters, cycles.get(),
                                    smids.get(), sink.get(), 0, ran_.get());
                  });
                  check_ran(ran_);
                  if (!distinct_sms(fetch32(smids, size_t(grid)), size))
                    throw std::runtime_error(std::string(kFamily.name) +
                                             ": two blocks of a cluster shared an SM");
                  std::vector<double> rate;
                  for (uint64_t c : fetch64(cycles, size_t(grid)))
                    rate.push_back(bytes / double(c));
                  return Sample{median(rate), s};
                });
  }

  // Every place a cluster of `size` lands (each cluster index of a full grid, timed alone):
  // a row per place, then one for the size (median over places, p05..p95 over places).
  template <bool Relaxed>
  void sync(RunContext& ctx, int size) {
    const int places = max_active_clusters(sync_cost<Relaxed>, size, kSyncThreads, smem_);
    if (places < 1) return;
    const std::string barrier = Relaxed ? "relaxed" : "release";
    DeviceBuffer<uint64_t> cycles(1);
    DeviceBuffer<uint32_t> smids{size_t(size)};
    std::vector<double> per_place;
    for (int c = 0; c < places; ++c) {
      std::vector<double> reps;
      for (int r = 0; r < kSyncReps; ++r) {
        launch_clusters(sync_cost<Relaxed>, places * size, size, kSyncThreads, smem_, uint32_t(c), cycles.get(),
                        smids.get(), ran_.get());
        check_ran(ran_);
        reps.push_back(double(fetch64(cycles, 1)[0]) / kSyncIterations);
      }
      const auto sm = fetch32(smids, size_t(size));
      if (!distinct_sms(sm, size))
        throw std::runtime_error(std::string(kFamily.name) +
                                 ": two blocks of a cluster shared an SM");
      const Summary s = summarize(reps);
      ctx.record(summary_row(kClusterSyncAtProbe,
                             {{kClusterSizeColumn, std::to_string(size)},
                              {kBarrierColumn, barrier},
                              {kClusterColumn, std::to_string(c)},
                              {kSmColumn, std::to_string(sm[0])}},
                             s, "cycles"));
      per_place.push_back(s.p50);
    }
    const Summary s = summarize(per_place);
    ctx.record(summary_row(kClusterSyncProbe,
                           {{kClusterSizeColumn, std::to_string(size)}, {kBarrierColumn, barrier}},
                           s, "cycles"));
  }

  size_t smem_ = 0;
  DeviceBuffer<int> ran_;
};

GPUPROBE_REGISTER_FAMILY(ClustersFamily);

}  // namespace

}  // namespace gpuprobe::clusters
