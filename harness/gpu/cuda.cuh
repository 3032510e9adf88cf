#pragma once
// What every probe family's .cu file shares: checked CUDA calls, device buffers that free
// themselves, event timing, and the small device helpers that keep the compiler honest.
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/probe.hpp"

namespace gpuprobe {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what)
      : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

[[noreturn]] void throw_cuda(cudaError_t e, const char* expr, const char* file, int line);

}  // namespace gpuprobe

#define CUDA_CHECK(expr)                                                          \
  do {                                                                            \
    cudaError_t gpuprobe_err_ = (expr);                                           \
    if (gpuprobe_err_ != cudaSuccess)                                             \
      ::gpuprobe::throw_cuda(gpuprobe_err_, #expr, __FILE__, __LINE__);           \
  } while (0)

// After every launch: the launch error now, and any fault once the kernel has run.
#define CUDA_CHECK_LAUNCH()                                                       \
  do {                                                                            \
    CUDA_CHECK(cudaGetLastError());                                               \
    CUDA_CHECK(cudaDeviceSynchronize());                                          \
  } while (0)

namespace gpuprobe {

// Device memory owned by scope. Allocation failure throws CudaError (out of memory included).
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count) CUDA_CHECK(cudaMalloc(&ptr_, count * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) {
    o.ptr_ = nullptr;
    o.count_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_) cudaFree(ptr_);
      ptr_ = o.ptr_;
      count_ = o.count_;
      o.ptr_ = nullptr;
      o.count_ = 0;
    }
    return *this;
  }
  T* get() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

// A non-blocking stream and a timing-free event (for ordering streams) owned by scope, on the
// device current when they are made.
class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_{};
};

class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_{};
};

// Work on two streams at once, inside the timing of the first (`main`): the side stream waits
// for a fork recorded on `main` before either's work is enqueued (a fork after main's work would
// start the side only when that is done, and time the two one after the other), and `main` then
// waits for the side's join. Each stream is used on its own device (the same one, or two).
template <class A, class B>
void fork_join(cudaStream_t main, int main_device, cudaStream_t side, int side_device, A&& on_main,
               B&& on_side) {
  CUDA_CHECK(cudaSetDevice(main_device));
  Event fork;
  CUDA_CHECK(cudaEventRecord(fork.get(), main));
  CUDA_CHECK(cudaSetDevice(side_device));
  Event join;
  CUDA_CHECK(cudaStreamWaitEvent(side, fork.get(), 0));
  on_side();
  CUDA_CHECK(cudaEventRecord(join.get(), side));
  CUDA_CHECK(cudaSetDevice(main_device));
  on_main();
  CUDA_CHECK(cudaSetDevice(main_device));
  CUDA_CHECK(cudaStreamWaitEvent(main, join.get(), 0));
}

// Times the work `launch` enqueues on `stream` with events; checks the launch and the run.
template <class F>
double time_seconds(F&& launch, cudaStream_t stream = nullptr) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start, stream));
  launch();
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaDeviceSynchronize());
  return ms * 1e-3;
}

// Nanoseconds of the SM's global timer; clock64() counts SM cycles.
__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// A pause of about `ns` nanoseconds: __nanosleep from Volta on; before it (no such
// instruction) a spin on the global timer, which keeps the warp issuing but off memory.
__device__ __forceinline__ void pause_ns(uint32_t ns) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  __nanosleep(ns);
#else
  const uint64_t until = global_timer_ns() + ns;
  while (global_timer_ns() < until) {
  }
#endif
}

// A store the compiler cannot prove dead: `flag` is false at run time, so nothing is written,
// but the value stays live and the chain that produced it is kept.
template <class T>
__device__ __forceinline__ void keep(T value, T* sink, int flag) {
  if (flag) *sink = value;
}

// A random single cycle over [0, n) (Sattolo's algorithm): following next[i] from any start
// visits every element once before returning. Host side, deterministic for a seed.
std::vector<uint32_t> sattolo_cycle(uint32_t n, uint64_t seed);

// The SM a thread runs on (%smid), for timings formed per SM (block_timing.cuh).
__device__ __forceinline__ unsigned sm_id() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

}  // namespace gpuprobe
