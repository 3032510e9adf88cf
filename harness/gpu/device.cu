#include <algorithm>
#include <vector>

#include "gpu/cuda.cuh"
#include "base/stats.hpp"
#include "gpu/device.hpp"

namespace gpuprobe {

static int attribute(cudaDeviceAttr attr, int dev) {
  int v = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, dev));
  return v;
}

int visible_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

DeviceInfo open_device(int ordinal) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    throw NoDeviceError(std::string("no usable CUDA device: ") + cudaGetErrorName(e) + " (" +
                        cudaGetErrorString(e) + ")");
  if (count == 0) throw NoDeviceError("no CUDA device found");
  if (ordinal >= count)
    throw NoDeviceError("--device " + std::to_string(ordinal) + ": only " + std::to_string(count) +
                        " CUDA device(s) present");
  CUDA_CHECK(cudaSetDevice(ordinal));
  CUDA_CHECK(cudaFree(nullptr));  // create the context now, so its failure is reported here

  DeviceInfo d;
  d.ordinal = ordinal;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  d.name = prop.name;
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal));
  d.pci_bus_id = bus;
  d.cc_major = attribute(cudaDevAttrComputeCapabilityMajor, ordinal);
  d.cc_minor = attribute(cudaDevAttrComputeCapabilityMinor, ordinal);
  d.sm_count = attribute(cudaDevAttrMultiProcessorCount, ordinal);
  d.warp_size = attribute(cudaDevAttrWarpSize, ordinal);
  d.max_threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor, ordinal);
  d.max_threads_per_block = attribute(cudaDevAttrMaxThreadsPerBlock, ordinal);
  d.max_blocks_per_sm = attribute(cudaDevAttrMaxBlocksPerMultiprocessor, ordinal);
  d.regs_per_sm = attribute(cudaDevAttrMaxRegistersPerMultiprocessor, ordinal);
  d.regs_per_block = attribute(cudaDevAttrMaxRegistersPerBlock, ordinal);
  d.l2_bytes = attribute(cudaDevAttrL2CacheSize, ordinal);
  d.persisting_l2_max_bytes = attribute(cudaDevAttrMaxPersistingL2CacheSize, ordinal);
  d.shared_per_sm = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, ordinal);
  d.shared_per_block = attribute(cudaDevAttrMaxSharedMemoryPerBlock, ordinal);
  d.shared_per_block_optin = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal);
  d.reserved_shared_per_block = attribute(cudaDevAttrReservedSharedMemoryPerBlock, ordinal);
  d.const_bytes = attribute(cudaDevAttrTotalConstantMemory, ordinal);
  d.mem_clock_khz = attribute(cudaDevAttrMemoryClockRate, ordinal);
  d.bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  d.nominal_sm_clock_khz = attribute(cudaDevAttrClockRate, ordinal);
  d.ecc = attribute(cudaDevAttrEccEnabled, ordinal) != 0;
  d.concurrent_kernels = attribute(cudaDevAttrConcurrentKernels, ordinal) != 0;
  d.async_engines = attribute(cudaDevAttrAsyncEngineCount, ordinal);
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  d.free_mem_bytes = static_cast<long long>(free_b);
  d.global_mem_bytes = static_cast<long long>(total_b);
  CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  return d;
}

// Each block's thread 0 counts `cycles` SM cycles and notes the global timer around them;
// the other threads keep the SM's pipes busy so that it runs at its loaded clock.
__global__ void clock_kernel(long long cycles, unsigned long long* out, float* sink, int flag) {
  __shared__ unsigned long long t0, c0;
  float acc = static_cast<float>(threadIdx.x);
  if (threadIdx.x == 0) {
    t0 = global_timer_ns();
    c0 = clock64();
  }
  __syncthreads();
  long long start = clock64();
  while (clock64() - start < cycles)
    for (int i = 0; i < 64; ++i) acc = fmaf(acc, 0.999f, 0.5f);
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long c1 = clock64();
    unsigned long long t1 = global_timer_ns();
    out[2 * blockIdx.x] = c1 - c0;
    out[2 * blockIdx.x + 1] = t1 - t0;
  }
  keep(acc, sink, flag);
}

ClockReading measure_sm_clock(const DeviceInfo& dev) {
  const int blocks = dev.sm_count;
  DeviceBuffer<unsigned long long> out(2 * static_cast<size_t>(blocks));
  DeviceBuffer<float> sink(1);
  // The nominal clock only sizes the window (about 20 ms); the reading never uses it.
  const long long window = std::max(1000, dev.nominal_sm_clock_khz) * 20LL;
  clock_kernel<<<blocks, 256>>>(window, out.get(), sink.get(), 0);  // let boost clocks settle
  CUDA_CHECK_LAUNCH();
  // Single windows were seen to read a few percent high now and then (the global timer
  // advancing in coarse steps), so the reading is the median of several windows.
  std::vector<double> per_window, all;
  double window_ns = 0;
  std::vector<unsigned long long> host(out.size());
  for (int w = 0; w < 3; ++w) {
    clock_kernel<<<blocks, 256>>>(window, out.get(), sink.get(), 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(host.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost));
    std::vector<double> mhz;
    for (int b = 0; b < blocks; ++b) {
      double cyc = static_cast<double>(host[2 * b]), ns = static_cast<double>(host[2 * b + 1]);
      if (ns > 0) mhz.push_back(cyc / ns * 1e3);
      window_ns = std::max(window_ns, ns);
    }
    if (mhz.empty())
      throw std::runtime_error("SM clock measurement: the global timer did not advance");
    per_window.push_back(median(mhz));
    all.insert(all.end(), mhz.begin(), mhz.end());
  }
  Summary s = summarize(all);
  return {median(per_window), s.min, s.max, window_ns * 1e-6};
}

}  // namespace gpuprobe
