#pragma once
// Thread block clusters (sm_90+), shared by the clusters and l2_topology families: launching
// a kernel in clusters, and the cluster-scope instructions. The device helpers compile to
// nothing below sm_90; kernels that use them write a marker that the host checks, so that an
// empty body (a build without sm_90 code, JIT from older PTX) is never taken for a measurement.
#include <cuda_runtime.h>

#include "gpu/cuda.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GPUPROBE_HAS_CLUSTERS 1
#else
#define GPUPROBE_HAS_CLUSTERS 0
#endif

namespace gpuprobe {

__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r = 0;
#if GPUPROBE_HAS_CLUSTERS
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
#endif
  return r;
}

__device__ __forceinline__ uint32_t cluster_blocks() {
  uint32_t n = 1;
#if GPUPROBE_HAS_CLUSTERS
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
#endif
  return n;
}

// Every thread of every block of the cluster arrives, then waits for all (cluster.sync()):
// the arrive has release semantics (the thread's earlier writes are visible in the cluster
// before the barrier completes), the wait acquire semantics.
__device__ __forceinline__ void cluster_barrier() {
#if GPUPROBE_HAS_CLUSTERS
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
#endif
}

// The same barrier with a relaxed arrive: no ordering of earlier memory operations, only the
// meeting of the cluster's threads.
__device__ __forceinline__ void cluster_barrier_relaxed() {
#if GPUPROBE_HAS_CLUSTERS
  asm volatile("barrier.cluster.arrive.relaxed;\n\tbarrier.cluster.wait;" ::: "memory");
#endif
}

// The shared::cluster address of `shared_addr` (a shared-window address of this block) in the
// shared memory of block `rank` of the cluster.
__device__ __forceinline__ uint32_t map_rank(uint32_t shared_addr, uint32_t rank) {
  uint32_t r = shared_addr;
#if GPUPROBE_HAS_CLUSTERS
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(shared_addr), "r"(rank));
#endif
  return r;
}

// Loads from another block's shared memory by its shared::cluster address (from map_rank).
__device__ __forceinline__ uint32_t dsm_load(uint32_t addr) {
  uint32_t v = 0;
#if GPUPROBE_HAS_CLUSTERS
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
#endif
  return v;
}

__device__ __forceinline__ uint32_t dsm_load_xor4(uint32_t addr) {
  uint32_t a = 0, b = 0, c = 0, d = 0;
#if GPUPROBE_HAS_CLUSTERS
  asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr) : "memory");
#endif
  return a ^ b ^ c ^ d;
}

// Sets what cluster launches of `kernel` need: sizes past the portable 8 where the device
// allows them, and `smem` bytes of dynamic shared memory.
template <class K>
void prepare_cluster_kernel(K kernel, size_t smem) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
}

inline cudaLaunchConfig_t cluster_config(int grid, int threads, size_t smem,
                                         cudaLaunchAttribute* attr, int cluster) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned(grid));
  cfg.blockDim = dim3(unsigned(threads));
  cfg.dynamicSmemBytes = smem;
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = unsigned(cluster);
  attr->val.clusterDim.y = 1;
  attr->val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cfg;
}

// How many clusters of `cluster` blocks can be resident at once (0: none fits).
template <class K>
int max_active_clusters(K kernel, int cluster, int threads, size_t smem) {
  cudaLaunchAttribute attr;
  cudaLaunchConfig_t cfg = cluster_config(cluster, threads, smem, &attr, cluster);
  int n = 0;
  cudaError_t e = cudaOccupancyMaxActiveClusters(&n, kernel, &cfg);
  if (e == cudaErrorInvalidClusterSize || e == cudaErrorInvalidValue) {
    (void)cudaGetLastError();
    return 0;
  }
  CUDA_CHECK(e);
  return n;
}

// The largest cluster the device would launch `kernel` with (its own query).
template <class K>
int max_cluster_size(K kernel, int threads, size_t smem) {
  cudaLaunchAttribute attr;
  cudaLaunchConfig_t cfg = cluster_config(1, threads, smem, &attr, 1);
  cfg.numAttrs = 0;
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxPotentialClusterSize(&n, kernel, &cfg));
  return n;
}

template <class K, class... Args>
void launch_clusters(K kernel, int grid, int cluster, int threads, size_t smem, Args... args) {
  cudaLaunchAttribute attr;
  cudaLaunchConfig_t cfg = cluster_config(grid, threads, smem, &attr, cluster);
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
  CUDA_CHECK_LAUNCH();
}

}  // namespace gpuprobe
