// The 32x32 tile transpose through shared memory, with and without one column of padding, as
// in Micikevicius' GTC 2013 talk: reading a column of a 32-wide tile sends every lane of a warp
// to one bank; a 33-wide row moves each lane to the next bank. Float and double (two banks
// per element with 4-byte banks). The matrix is several times the L2, so the times are those
// of a real out-of-cache transpose; both times are reported, and their ratio.
#include <algorithm>
#include <cmath>
#include <string>

#include "analysis/transpose.hpp"
#include "gpu/cuda.cuh"

namespace gpuprobe {
namespace {

constexpr int kTile = 32;
constexpr int kRows = 8;  // a 32x8 block moves a 32x32 tile, four rows per thread

template <class T, int Pad>
__global__ void transpose_kernel(const T* __restrict__ in, T* __restrict__ out, int n) {
  __shared__ T tile[kTile][kTile + Pad];
  int x = blockIdx.x * kTile + threadIdx.x, y = blockIdx.y * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows)
    tile[threadIdx.y + j][threadIdx.x] = in[static_cast<size_t>(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  for (int j = 0; j < kTile; j += kRows)
    out[static_cast<size_t>(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Values below 2^16, exact in float and double, and different for neighbouring elements.
template <class T>
__global__ void fill_kernel(T* a, size_t count) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    a[i] = static_cast<T>((i * 2654435761u) >> 16 & 0xffff);
}

template <class T>
__global__ void count_mismatches(const T* in, const T* out, int n, unsigned long long* bad) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
       i < static_cast<size_t>(n) * n; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    size_t r = i / n, c = i % n;
    if (out[i] != in[c * n + r]) atomicAdd(bad, 1ull);
  }
}

template <class T>
const char* type_name();
template <>
const char* type_name<float>() {
  return "float";
}
template <>
const char* type_name<double>() {
  return "double";
}

class TransposeFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(transpose::kFamily.name); }
  std::string description() const override {
    return "32x32 shared-memory tile transpose, unpadded vs one column of padding, float and "
           "double";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{transpose::kTransposeProbe,
             "n x n transpose through 32x32 shared tiles: microseconds per kernel"},
            {transpose::kPaddingSpeedupProbe, "unpadded time / padded time (derived row)"}};
  }

  void run(RunContext& ctx) override {
    run_type<float>(ctx);
    run_type<double>(ctx);
  }

 private:
  // Side of a square matrix of about `bytes`, a multiple of the tile.
  template <class T>
  static int side(double bytes) {
    return std::max(kTile, static_cast<int>(std::sqrt(bytes / sizeof(T)) / kTile) * kTile);
  }

  template <class T>
  void run_type(RunContext& ctx) {
    if (!ctx.enabled(transpose::kTransposeProbe)) return;
    const DeviceInfo& dev = ctx.device();
    // Four L2s per matrix (one in quick mode) keeps both passes out of cache; two matrices
    // must fit in half the free memory.
    double bytes = (ctx.quick() ? 1.0 : 4.0) * std::max<long long>(dev.l2_bytes, 4 << 20);
    if (dev.free_mem_bytes > 0)
      bytes = std::min(bytes, 0.25 * static_cast<double>(dev.free_mem_bytes));
    const int n = side<T>(bytes);
    const size_t count = static_cast<size_t>(n) * n;
    DeviceBuffer<T> in(count), out(count);
    DeviceBuffer<unsigned long long> bad(1);
    fill_kernel<T><<<dev.sm_count * 8, 256>>>(in.get(), count);
    CUDA_CHECK_LAUNCH();

    const int reps = ctx.quick() ? 3 : 11;
    const dim3 grid(n / kTile, n / kTile), block(kTile, kRows);
    Observation times[2];
    for (int pad : {0, 1}) {
      auto launch = [&] {
        if (pad)
          transpose_kernel<T, 1><<<grid, block>>>(in.get(), out.get(), n);
        else
          transpose_kernel<T, 0><<<grid, block>>>(in.get(), out.get(), n);
      };
      // A wrong transpose would make the timing meaningless: check every element once.
      CUDA_CHECK(cudaMemset(out.get(), 0, out.bytes()));
      CUDA_CHECK(cudaMemset(bad.get(), 0, sizeof(unsigned long long)));
      launch();
      CUDA_CHECK_LAUNCH();
      count_mismatches<T><<<dev.sm_count * 8, 256>>>(in.get(), out.get(), n, bad.get());
      CUDA_CHECK_LAUNCH();
      unsigned long long wrong = 0;
      CUDA_CHECK(cudaMemcpy(&wrong, bad.get(), sizeof wrong, cudaMemcpyDeviceToHost));
      if (wrong)
        throw std::runtime_error("transpose: " + std::to_string(wrong) + " wrong elements (" +
                                 type_name<T>() + ", padding " + std::to_string(pad) + ")");

      ctx.progress(std::string(type_name<T>()) + " transpose, padding " + std::to_string(pad));
      Params p = {{transpose::kTypeColumn, type_name<T>()},
                  {transpose::kPaddingColumn, std::to_string(pad)},
                  {transpose::kSideColumn, std::to_string(n)}};
      times[pad] =
          ctx.measure({transpose::kTransposeProbe, p, "us", reps, 2.0 * count * sizeof(T)}, [&] {
            Sample s;
            s.seconds = time_seconds(launch);
            s.value = s.seconds * 1e6;
            return s;
          });
    }

    Observation ratio;
    ratio.family = name();
    ratio.probe = transpose::kPaddingSpeedupProbe;
    ratio.params = {{transpose::kTypeColumn, type_name<T>()},
                    {transpose::kSideColumn, std::to_string(n)}};
    ratio.value = ratio.p50 = times[0].p50 / times[1].p50;
    ratio.p05 = times[0].p05 / times[1].p95;  // the widest the ratio of two spreads allows
    ratio.p95 = times[0].p95 / times[1].p05;
    ratio.unit = "x";
    ratio.reps = std::min(times[0].reps, times[1].reps);
    ctx.record(ratio);
  }
};

}  // namespace

GPUPROBE_REGISTER_FAMILY(TransposeFamily);

}  // namespace gpuprobe
