// Roofline check (analysis/roofline.hpp): nine ordinary kernels, each checked once per run
// against the host's reference on small fresh random inputs, then timed (CUDA events around
// one launch, median of reps) and its energy per launch measured with the energy family's
// windows (energy_windows.cuh) at sizes taken from the device's L2 and SM count. The counts
// of operations and bytes per launch are recorded beside them (roofline.cpp counts them from
// this code). No parameter comes from these rows.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "analysis/roofline.hpp"
#include "energy_windows.cuh"
#include "gpu/sass_check.hpp"
#include "memory_streams.cuh"
#include "pipe_ops.cuh"

namespace gpuprobe::roofline {

// --- Kernels ---------------------------------------------------------------------------------

constexpr int kThreads = 256;
constexpr int kSgemmThreads = (kSgemmTile / kSgemmThreadTile) * (kSgemmTile / kSgemmThreadTile);

__constant__ double c_poly[kPolyDegree + 1];

// Fresh random data: hashed words, floats and doubles in [-1, 1).
template <class T>
__global__ void fill(T* p, uint64_t n, uint32_t seed) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x) {
    const uint32_t h = scramble(seed ^ scramble(static_cast<uint32_t>(i) ^ uint32_t(i >> 32)));
    if constexpr (std::is_same_v<T, uint32_t>) p[i] = h;
    else p[i] = static_cast<T>(static_cast<double>(h) * 0x1p-31 - 1.0);
  }
}

// STREAM triad a = b + s c over float4s, `passes` times (loads with ld.global.cg, as the
// bandwidth family reads L2 and DRAM).
__global__ void __launch_bounds__(kThreads)
    triad(const float4* b, const float4* c, float4* a, uint64_t n4, float s, uint32_t passes) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
#pragma unroll 1
  for (uint32_t p = 0; p < passes; ++p) {
#pragma unroll 1
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n4; i += stride) {
      const uint4 bu = load<Load::cg, 16>(b + i), cu = load<Load::cg, 16>(c + i);
      store<Store::wb, 16>(
          a + i,
          make_uint4(__float_as_uint(fmaf(s, __uint_as_float(cu.x), __uint_as_float(bu.x))),
                     __float_as_uint(fmaf(s, __uint_as_float(cu.y), __uint_as_float(bu.y))),
                     __float_as_uint(fmaf(s, __uint_as_float(cu.z), __uint_as_float(bu.z))),
                     __float_as_uint(fmaf(s, __uint_as_float(cu.w), __uint_as_float(bu.w)))));
    }
  }
}

// The sum of x y: FMAs into a register per thread, then the block's sum (shuffles, shared
// memory) added to *result with one atomic.
__global__ void __launch_bounds__(kThreads)
    dot(const float4* x, const float4* y, uint64_t n4, float* result) {
  __shared__ float part[kThreads / 32];
  float acc = 0;
#pragma unroll 1
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n4;
       i += uint64_t(gridDim.x) * blockDim.x) {
    const float4 a = x[i], b = y[i];
    acc = fmaf(a.x, b.x, acc);
    acc = fmaf(a.y, b.y, acc);
    acc = fmaf(a.z, b.z, acc);
    acc = fmaf(a.w, b.w, acc);
  }
  for (int o = 16; o > 0; o /= 2) acc += __shfl_down_sync(0xFFFFFFFFu, acc, o);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0;
    for (int w = 0; w < kThreads / 32; ++w) sum += part[w];
    atomicAdd(result, sum);
  }
}

// 7-point stencil on an n^3 grid (x fastest): interior points c0 u + c1 (sum of the six
// neighbours), boundary points copied.
__global__ void stencil7(const float* in, float* out, int n, float c0, float c1) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y,
            z = blockIdx.z;
  if (x >= n || y >= n) return;
  const size_t plane = size_t(n) * n, i = z * plane + size_t(y) * n + x;
  // One load of the centre for both paths (some targets' compilers load it twice otherwise).
  const float centre = in[i];
  if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1) {
    out[i] = centre;
    return;
  }
  float v = c0 * centre;
  v = fmaf(c1, in[i - 1], v);
  v = fmaf(c1, in[i + 1], v);
  v = fmaf(c1, in[i - n], v);
  v = fmaf(c1, in[i + n], v);
  v = fmaf(c1, in[i - plane], v);
  v = fmaf(c1, in[i + plane], v);
  out[i] = v;
}

// C = A B (row-major, s x s, s a multiple of kSgemmTile): a kSgemmTile^2 C tile per block,
// kSgemmThreadTile^2 per thread in registers, K staged kSgemmTileK at a time through shared
// memory (A transposed there, so a thread reads its rows as float4s).
__global__ void __launch_bounds__(kSgemmThreads)
    sgemm(const float* A, const float* B, float* C, int s) {
  constexpr int T = kSgemmTile, TK = kSgemmTileK, R = kSgemmThreadTile;
  __shared__ __align__(16) float as[TK][T];
  __shared__ __align__(16) float bs[TK][T];
  const int tid = threadIdx.x, tx = tid % (T / R), ty = tid / (T / R);
  const int row0 = blockIdx.y * T, col0 = blockIdx.x * T;
  float acc[R][R] = {};
#pragma unroll 1
  for (int k0 = 0; k0 < s; k0 += TK) {
    const float4 a =
        *reinterpret_cast<const float4*>(A + size_t(row0 + tid / 2) * s + k0 + (tid % 2) * 4);
    as[(tid % 2) * 4 + 0][tid / 2] = a.x;
    as[(tid % 2) * 4 + 1][tid / 2] = a.y;
    as[(tid % 2) * 4 + 2][tid / 2] = a.z;
    as[(tid % 2) * 4 + 3][tid / 2] = a.w;
    *reinterpret_cast<float4*>(&bs[tid / (T / 4)][(tid % (T / 4)) * 4]) =
        *reinterpret_cast<const float4*>(B + size_t(k0 + tid / (T / 4)) * s + col0 +
                                         (tid % (T / 4)) * 4);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TK; ++k) {
      float ra[R], rb[R];
#pragma unroll
      for (int q = 0; q < R; q += 4) {
        *reinterpret_cast<float4*>(ra + q) = *reinterpret_cast<const float4*>(&as[k][ty * R + q]);
        *reinterpret_cast<float4*>(rb + q) = *reinterpret_cast<const float4*>(&bs[k][tx * R + q]);
      }
#pragma unroll
      for (int i = 0; i < R; ++i)
#pragma unroll
        for (int j = 0; j < R; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < R; j += 4)
      *reinterpret_cast<float4*>(C + size_t(row0 + ty * R + i) * s + col0 + tx * R + j) =
          make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
}

// y = p(x) by Horner's rule, kPolyDegree DFMAs per element, coefficients in constant memory.
__global__ void __launch_bounds__(kThreads) fp64_poly(const double* x, double* y, uint64_t n) {
#pragma unroll 1
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x) {
    const double v = x[i];
    double r = c_poly[0];
#pragma unroll
    for (int k = 1; k <= kPolyDegree; ++k) r = fma(r, v, c_poly[k]);
    y[i] = r;
  }
}

// out = in^T (n x n, n a multiple of kTransposeTile) through a padded shared tile.
__global__ void transpose(const float* in, float* out, int n) {
  __shared__ float tile[kTransposeTile][kTransposeTile + 1];
  int x = blockIdx.x * kTransposeTile + threadIdx.x, y = blockIdx.y * kTransposeTile + threadIdx.y;
#pragma unroll
  for (int j = 0; j < kTransposeTile; j += kTransposeRows)
    tile[threadIdx.y + j][threadIdx.x] = in[size_t(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * kTransposeTile + threadIdx.x;
  y = blockIdx.x * kTransposeTile + threadIdx.y;
#pragma unroll
  for (int j = 0; j < kTransposeTile; j += kTransposeRows)
    out[size_t(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// One global atomic add per key into kHistogramBins counters.
__global__ void __launch_bounds__(kThreads)
    histogram(const uint32_t* keys, uint64_t n, uint32_t* bins) {
#pragma unroll 1
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x)
    atomicAdd(bins + (keys[i] % kHistogramBins), 1u);
}

namespace {

constexpr float kTriadScale = 0.5f, kStencilC0 = 0.4f, kStencilC1 = 0.1f;
constexpr int kReps = 11;
constexpr double kFloatTol = 1e-5;  // relative to the sum of |terms|: float rounding, any order

template <class T>
std::vector<T> to_host(const DeviceBuffer<T>& d) {
  std::vector<T> h(d.size());
  CUDA_CHECK(cudaMemcpy(h.data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost));
  return h;
}

// "" when every got[i] is within bound[i] of want[i], else the first element that is not.
template <class T>
std::string compare(const std::vector<T>& got, const std::vector<double>& want,
                    const std::vector<double>& bound) {
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::fabs(double(got[i]) - want[i]) <= bound[i]))
      return "element " + std::to_string(i) + " is " + format_printf("%.9g", double(got[i])) +
             ", the host's reference " + format_printf("%.9g", want[i]);
  return "";
}

// One kernel at one size: its buffers (fresh random data), one launch on the default stream,
// and, after a launch, the host's verdict on the result.
class Case {
 public:
  virtual ~Case() = default;
  virtual void launch() = 0;
  virtual std::string verify() = 0;              // "" when the result is the host's reference
  virtual uint64_t blocks() const { return 0; }  // the grid, where the counts depend on it
};

template <class T>
DeviceBuffer<T> random_buffer(uint64_t n, uint32_t seed, int sm_count) {
  DeviceBuffer<T> b(n);
  fill<T><<<4 * sm_count, kThreads>>>(b.get(), n, seed);
  CUDA_CHECK_LAUNCH();
  return b;
}

int grid_for(const void* kernel, int sm_count, int threads) {
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  if (per_sm < 1) throw std::runtime_error("roofline: a kernel cannot be resident");
  return per_sm * sm_count;
}

class TriadCase : public Case {
 public:
  TriadCase(uint64_t n, uint32_t passes, uint32_t seed, int sms)
      : b_(random_buffer<float>(n, seed, sms)), c_(random_buffer<float>(n, seed + 1, sms)), a_(n),
        passes_(passes), grid_(grid_for(reinterpret_cast<const void*>(&triad), sms, kThreads)) {}
  void launch() override {
    triad<<<grid_, kThreads>>>(
        reinterpret_cast<const float4*>(b_.get()), reinterpret_cast<const float4*>(c_.get()),
        reinterpret_cast<float4*>(a_.get()), a_.size() / 4, kTriadScale, passes_);
  }
  std::string verify() override {
    const auto b = to_host(b_), c = to_host(c_), a = to_host(a_);
    std::vector<double> want(a.size()), bound(a.size(), 0);
    for (size_t i = 0; i < a.size(); ++i) want[i] = std::fma(kTriadScale, c[i], b[i]);
    return compare(a, want, bound);
  }

 private:
  DeviceBuffer<float> b_, c_, a_;
  uint32_t passes_;
  int grid_;
};

class DotCase : public Case {
 public:
  DotCase(uint64_t n, uint32_t seed, int sms)
      : x_(random_buffer<float>(n, seed, sms)), y_(random_buffer<float>(n, seed + 1, sms)),
        result_(1), grid_(grid_for(reinterpret_cast<const void*>(&dot), sms, kThreads)) {}
  uint64_t blocks() const override { return static_cast<uint64_t>(grid_); }
  void launch() override {
    CUDA_CHECK(cudaMemsetAsync(result_.get(), 0, sizeof(float), nullptr));
    dot<<<grid_, kThreads>>>(reinterpret_cast<const float4*>(x_.get()),
                             reinterpret_cast<const float4*>(y_.get()), x_.size() / 4,
                             result_.get());
  }
  std::string verify() override {
    const auto x = to_host(x_), y = to_host(y_), r = to_host(result_);
    double sum = 0, mag = 0;
    for (size_t i = 0; i < x.size(); ++i) sum += double(x[i]) * y[i], mag += std::fabs(x[i] * y[i]);
    return compare(r, {sum}, {kFloatTol * mag});
  }

 private:
  DeviceBuffer<float> x_, y_, result_;
  int grid_;
};

class StencilCase : public Case {
 public:
  StencilCase(uint64_t n, uint32_t seed, int sms)
      : n_(static_cast<int>(n)), in_(random_buffer<float>(n * n * n, seed, sms)), out_(n * n * n) {}
  void launch() override {
    const dim3 block(32, 8), grid((n_ + 31) / 32, (n_ + 7) / 8, n_);
    stencil7<<<grid, block>>>(in_.get(), out_.get(), n_, kStencilC0, kStencilC1);
  }
  std::string verify() override {
    const auto in = to_host(in_), out = to_host(out_);
    std::vector<double> want(in.begin(), in.end()), bound(in.size(), 0);
    const size_t n = n_, p = n * n;
    for (size_t z = 1; z + 1 < n; ++z)
      for (size_t y = 1; y + 1 < n; ++y)
        for (size_t x = 1; x + 1 < n; ++x) {
          const size_t i = z * p + y * n + x;
          double s = 0, mag = std::fabs(in[i]);
          for (size_t j : {i - 1, i + 1, i - n, i + n, i - p, i + p})
            s += in[j], mag += std::fabs(in[j]);
          want[i] = kStencilC0 * double(in[i]) + kStencilC1 * s;
          bound[i] = kFloatTol * mag;
        }
    return compare(out, want, bound);
  }

 private:
  int n_;
  DeviceBuffer<float> in_, out_;
};

class SgemmCase : public Case {
 public:
  SgemmCase(uint64_t s, uint32_t seed, int sms)
      : s_(static_cast<int>(s)), a_(random_buffer<float>(s * s, seed, sms)),
        b_(random_buffer<float>(s * s, seed + 1, sms)), c_(s * s) {}
  void launch() override {
    const dim3 grid(s_ / kSgemmTile, s_ / kSgemmTile);
    sgemm<<<grid, kSgemmThreads>>>(a_.get(), b_.get(), c_.get(), s_);
  }
  std::string verify() override {
    const auto a = to_host(a_), b = to_host(b_), c = to_host(c_);
    const size_t s = s_;
    std::vector<double> want(c.size(), 0), bound(c.size(), 0);
    for (size_t i = 0; i < s; ++i)
      for (size_t k = 0; k < s; ++k)
        for (size_t j = 0; j < s; ++j) {
          want[i * s + j] += double(a[i * s + k]) * b[k * s + j];
          bound[i * s + j] += kFloatTol * std::fabs(a[i * s + k] * b[k * s + j]);
        }
    return compare(c, want, bound);
  }

 private:
  int s_;
  DeviceBuffer<float> a_, b_, c_;
};

class PolyCase : public Case {
 public:
  PolyCase(uint64_t n, uint32_t seed, int sms)
      : x_(random_buffer<double>(n, seed, sms)), y_(n),
        grid_(grid_for(reinterpret_cast<const void*>(&fp64_poly), sms, kThreads)) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> coef(-1, 1);
    for (auto& c : coef_) c = coef(gen);
    CUDA_CHECK(cudaMemcpyToSymbol(c_poly, coef_, sizeof coef_));
  }
  void launch() override { fp64_poly<<<grid_, kThreads>>>(x_.get(), y_.get(), y_.size()); }
  std::string verify() override {
    const auto x = to_host(x_), y = to_host(y_);
    std::vector<double> want(x.size()), bound(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      double r = coef_[0], mag = std::fabs(coef_[0]);
      for (int k = 1; k <= kPolyDegree; ++k)
        r = std::fma(r, x[i], coef_[k]), mag = mag * std::fabs(x[i]) + std::fabs(coef_[k]);
      want[i] = r;
      bound[i] = 1e-12 * mag;  // the same DFMAs in the same order: rounding alike
    }
    return compare(y, want, bound);
  }

 private:
  DeviceBuffer<double> x_, y_;
  int grid_;
  double coef_[kPolyDegree + 1] = {};
};

class TransposeCase : public Case {
 public:
  TransposeCase(uint64_t n, uint32_t seed, int sms)
      : n_(static_cast<int>(n)), in_(random_buffer<float>(n * n, seed, sms)), out_(n * n) {}
  void launch() override {
    const dim3 grid(n_ / kTransposeTile, n_ / kTransposeTile),
        block(kTransposeTile, kTransposeRows);
    transpose<<<grid, block>>>(in_.get(), out_.get(), n_);
  }
  std::string verify() override {
    const auto in = to_host(in_), out = to_host(out_);
    const size_t n = n_;
    std::vector<double> want(in.size()), bound(in.size(), 0);
    for (size_t y = 0; y < n; ++y)
      for (size_t x = 0; x < n; ++x) want[x * n + y] = in[y * n + x];
    return compare(out, want, bound);
  }

 private:
  int n_;
  DeviceBuffer<float> in_, out_;
};

class HistogramCase : public Case {
 public:
  HistogramCase(uint64_t n, uint32_t seed, int sms)
      : keys_(random_buffer<uint32_t>(n, seed, sms)), bins_(kHistogramBins),
        grid_(grid_for(reinterpret_cast<const void*>(&histogram), sms, kThreads)) {
    CUDA_CHECK(cudaMemset(bins_.get(), 0, bins_.bytes()));
  }
  void launch() override { histogram<<<grid_, kThreads>>>(keys_.get(), keys_.size(), bins_.get()); }
  std::string verify() override {
    const auto keys = to_host(keys_), bins = to_host(bins_);
    std::vector<double> want(kHistogramBins, 0), bound(kHistogramBins, 0);
    for (uint32_t k : keys) want[k % kHistogramBins] += 1;
    return compare(bins, want, bound);
  }

 private:
  DeviceBuffer<uint32_t> keys_, bins_;
  int grid_;
};

// The energy family's held-out wgmma GEMM (tensor_wgmma.cu), kTensorTrips trips a launch. Its
// operands are packed as wgmma's shared-memory tiles and there is no host reference for it
// yet: its check is only that the sm_90a code ran (wgmma_gemm proves it, or marks it invalid).
class TensorCase : public Case {
 public:
  explicit TensorCase(pipes::RepeatedKernel k) : k_(std::move(k)) {}
  void launch() override { k_.enqueue(kTensorTrips); }
  std::string verify() override { return ""; }

 private:
  pipes::RepeatedKernel k_;
};

// The kernel a probe times, as sass_allows names it.
std::string kernel_of(const std::string& probe) {
  if (probe == kTriadDram || probe == kTriadL2) return "roofline::triad";
  if (probe == kTransposeShared) return "roofline::transpose";
  return "roofline::" + probe;
}

std::unique_ptr<Case> make_case(const std::string& k, const Sizes& z, uint32_t seed, int sms) {
  if (k == kTriadDram) return std::make_unique<TriadCase>(z.triad_dram, 1, seed, sms);
  if (k == kTriadL2) return std::make_unique<TriadCase>(z.triad_l2, kL2Passes, seed, sms);
  if (k == kDot) return std::make_unique<DotCase>(z.dot, seed, sms);
  if (k == kStencil7) return std::make_unique<StencilCase>(z.stencil, seed, sms);
  if (k == kSgemm) return std::make_unique<SgemmCase>(z.sgemm, seed, sms);
  if (k == kFp64Poly) return std::make_unique<PolyCase>(z.poly, seed, sms);
  if (k == kTransposeShared) return std::make_unique<TransposeCase>(z.transpose, seed, sms);
  if (k == kHistogram) return std::make_unique<HistogramCase>(z.histogram, seed, sms);
  throw std::logic_error("roofline: no case for " + k);
}

class RooflineRun {
 public:
  explicit RooflineRun(RunContext& ctx)
      : ctx_(ctx), dev_(ctx.device()), nvml_(dev_.pci_bus_id),
        meter_({&nvml_}, energy::Clock::now()), seed_(std::random_device{}()),
        sizes_(sizes_for(static_cast<uint64_t>(dev_.l2_bytes), dev_.sm_count,
                         static_cast<uint64_t>(dev_.free_mem_bytes) / 2)) {
    unsigned long long mj = 0;
    std::string why;
    if (!nvml_.energy_mj(&mj, &why)) no_energy_ = "no NVML energy counter (" + why + "): time only";
  }

  void run() {
    for (const auto& k : kernels()) {
      if (!ctx_.enabled(k)) continue;
      if (k == kTensorGemm) tensor();
      else if (sass_allows(ctx_, k, {kernel_of(k)})) ordinary(k);
    }
  }

 private:
  // Checked on a small fresh input, then measured at the device's sizes.
  void ordinary(const std::string& k) {
    ctx_.progress(k + " result check");
    {
      const auto small = make_case(k, check_sizes(), seed_, dev_.sm_count);
      small->launch();
      CUDA_CHECK_LAUNCH();
      const std::string wrong = small->verify();
      if (!wrong.empty())
        return ctx_.invalid(
            k, "wrong result on random input (seed " + std::to_string(seed_) + "): " + wrong);
    }
    const auto big = make_case(k, sizes_, seed_ + 1, dev_.sm_count);
    measure(k, *big, counts_of(k, sizes_, dev_.sm_count, big->blocks()));
  }

  void tensor() {
    pipes::GemmCounts gc;
    auto kernel = pipes::wgmma_gemm(ctx_, kTensorGemm, &gc);
    if (!kernel) return;
    const Counts counts = tensor_gemm_counts(dev_.sm_count, kTensorTrips);
    if (count_of(counts, kL2Read) != gc.global_bytes_per_trip * kTensorTrips ||
        count_of(counts, energy::kDramWrite) != gc.c_bytes_per_launch)
      throw std::logic_error("roofline: the tensor GEMM's counts disagree with its kernel's");
    TensorCase c(*kernel);
    measure(kTensorGemm, c, counts);
  }

  void measure(const std::string& k, Case& c, const Counts& counts) {
    ctx_.progress(k);
    c.launch();  // module load, first touch
    CUDA_CHECK_LAUNCH();
    const Point pt{k, {{kMetricColumn, kTime}, {kItemColumn, kLaunch}}, "s", kReps};
    const Observation t = ctx_.measure(pt, [&] {
      const double s = time_seconds([&] { c.launch(); });
      return Sample{s, s};
    });
    if (no_energy_.empty()) energy_rows(k, c, t.value);
    else ctx_.skip(k, no_energy_);
    for (const auto& x : counts) row(k, kCount, x.item, x.value, x.unit, 1, 0);
  }

  // One window of back-to-back launches: joules per launch = power x GPU time per launch.
  void energy_rows(const std::string& k, Case& c, double seconds) {
    energy::Work w;
    w.probe = k;
    w.operands = energy::kRandom;
    w.active_sms = dev_.sm_count;
    w.trips = std::max(1, static_cast<int>(std::lround(energy::kLaunchS / seconds)));
    w.enqueue = [&c](int n) {
      for (int i = 0; i < n; ++i) c.launch();
    };
    const energy::WindowResult r = meter_.run(w, {});
    const double per = r.gpu_s / (double(r.launches) * w.trips);
    row(k, kEnergy, kLaunch, r.watts * per, "J", r.intervals, energy::kSpreadZ * r.sd * per);
    row(k, kPower, kLaunch, r.watts, "W", r.intervals, energy::kSpreadZ * r.sd);
  }

  void row(const std::string& k, const char* metric, const std::string& item, double v,
           const std::string& unit, int reps, double half) {
    ctx_.record(Observation{"",
                            k,
                            {{kMetricColumn, metric}, {kItemColumn, item}},
                            v,
                            unit,
                            v - half,
                            v,
                            v + half,
                            reps});
  }

  RunContext& ctx_;
  const DeviceInfo& dev_;
  Nvml nvml_;
  energy::Meter meter_;
  uint32_t seed_;
  Sizes sizes_;
  std::string no_energy_;
};

class RooflineFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(roofline::kFamily.name); }
  std::string description() const override {
    return "ordinary kernels (triads, dot, stencil, SGEMM, FP64 polynomial, tensor GEMM, "
           "transpose, histogram): time and energy per launch, with their counted work";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{kTriadDram, "STREAM triad over buffers 4x L2 (DRAM)"},
            {kTriadL2, "STREAM triad over a quarter of L2, 32 passes a launch (L2)"},
            {kDot, "dot product over buffers 4x L2, one atomic per block"},
            {kStencil7, "7-point stencil on a cube 4x L2 (DRAM, neighbours from L1)"},
            {kSgemm, "tiled SGEMM, 128x128 tiles, 8x8 per thread (FP32 FMA)"},
            {kFp64Poly, "degree-512 Horner polynomial per element (FP64 FMA)"},
            {kTensorGemm, "the energy family's held-out bf16 wgmma GEMM (sm_90a)"},
            {kTransposeShared, "matrix transpose through 32x32 shared tiles (DRAM, shared)"},
            {kHistogram, "4096-bin histogram by global atomics"}};
  }
  void run(RunContext& ctx) override { RooflineRun(ctx).run(); }
};

GPUPROBE_REGISTER_FAMILY(RooflineFamily);

}  // namespace

}  // namespace gpuprobe::roofline
