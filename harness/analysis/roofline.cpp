#include "analysis/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "analysis/energy.hpp"
#include "analysis/pipes.hpp"
#include "base/code_check.hpp"

namespace gpuprobe::roofline {

// Observations only: the model (`gpuprobe roofline`) reads them; no parameter comes from them.
GPUPROBE_DESCRIBE_FAMILY(roofline::kFamily);

namespace {

uint64_t round_down(uint64_t v, uint64_t m) { return std::max<uint64_t>(m, v / m * m); }
uint64_t round_up(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }

Count bytes(const char* item, double v) { return {item, v, "B"}; }
Count ops(const char* item, double v) { return {item, v, "op"}; }

}  // namespace

Sizes sizes_for(uint64_t l2_bytes, int sm_count, uint64_t mem_cap) {
  const auto dram_floats =
      static_cast<uint64_t>(kDramFootprintL2 * static_cast<double>(l2_bytes) / 4);
  const auto floats_within = [&](uint64_t want, uint64_t arrays) {
    return round_down(std::min(want, mem_cap / (4 * arrays)), 1024);
  };
  Sizes z;
  z.triad_dram = floats_within(dram_floats, 3);
  z.triad_l2 =
      round_down(static_cast<uint64_t>(kL2Fraction * static_cast<double>(l2_bytes) / 12), 1024);
  z.dot = floats_within(dram_floats, 2);
  z.stencil =
      round_up(static_cast<uint64_t>(std::ceil(std::cbrt(static_cast<double>(dram_floats)))), 32);
  while (z.stencil > 32 && 8 * z.stencil * z.stencil * z.stencil > mem_cap) z.stencil -= 32;
  // Eight C tiles per SM: the last wave's tail is small against the whole.
  z.sgemm = kSgemmTile * static_cast<uint64_t>(std::ceil(std::sqrt(8.0 * sm_count)));
  z.poly = uint64_t(sm_count) * 2048 * kPolyPerThread;
  z.transpose =
      round_up(static_cast<uint64_t>(std::ceil(std::sqrt(static_cast<double>(dram_floats)))),
               kTransposeTile);
  while (z.transpose > 32 && 8 * z.transpose * z.transpose > mem_cap) z.transpose -= 32;
  z.histogram = floats_within(dram_floats, 1);
  return z;
}

Sizes check_sizes() {
  Sizes z;
  z.triad_dram = z.triad_l2 = 4096;
  z.dot = 100000;
  z.stencil = 34;
  z.sgemm = 2 * kSgemmTile;
  z.poly = 4096;
  z.transpose = 3 * kTransposeTile;
  z.histogram = 100000;
  return z;
}

// a[i] = b[i] + s c[i], float4 at a time, `passes` times over the arrays.
Counts triad_counts(uint64_t elements, uint32_t passes, bool l2_resident) {
  const double n = static_cast<double>(elements), np = n * passes;
  Counts c = {ops(energy::kFp32Fma, np), bytes(kL2Read, 8 * np), bytes(kFootprint, 12.0 * n)};
  if (l2_resident) {
    c.push_back(bytes(energy::kL2NearRead, 8 * np));
    c.push_back(bytes(kL2Write, 4 * np));
  } else {
    c.push_back(bytes(energy::kDramRead, 8 * np));
    c.push_back(bytes(energy::kDramWrite, 4 * np));
  }
  return c;
}

// One FMA per element pair; each block reduces in registers and shared memory and adds its sum
// to the result with one global atomic.
Counts dot_counts(uint64_t elements, uint64_t blocks) {
  const double n = static_cast<double>(elements);
  return {ops(energy::kFp32Fma, n), bytes(energy::kDramRead, 8.0 * n), bytes(kL2Read, 8.0 * n),
          ops(kAtomicGlobal, static_cast<double>(blocks)), bytes(kFootprint, 8.0 * n + 4)};
}

// Each interior point: 7 loads (through L1), one FMUL and six FFMAs; a boundary point copies
// its value. Neighbours reloaded from L2 after an L1 miss are not countable from the code:
// kL2Read holds the compulsory bytes only.
Counts stencil7_counts(uint64_t points) {
  const double side = static_cast<double>(points);
  const double all = side * side * side;
  const double inner = points < 2 ? 0 : (side - 2) * (side - 2) * (side - 2);
  return {
      ops(energy::kFp32Fma, 7 * inner),  bytes(energy::kL1Read, 4 * (7 * inner + (all - inner))),
      bytes(energy::kDramRead, 4 * all), bytes(energy::kDramWrite, 4 * all),
      bytes(kL2Read, 4 * all),           bytes(kFootprint, 8 * all)};
}

// C = A B, s x s x s: kSgemmTile^2 C tiles, kSgemmThreadTile^2 per thread, K in steps of
// kSgemmTileK staged through shared memory. Per K step a thread reads 2 kSgemmThreadTile
// floats from shared memory for kSgemmThreadTile^2 FMAs; a block writes its A and B slices.
Counts sgemm_counts(uint64_t size) {
  const double s = static_cast<double>(size), s3 = s * s * s, s2 = s * s;
  const double staged = s3 * 2 * 4 / kSgemmTile;  // A and B slices of every block, bytes
  return {ops(energy::kFp32Fma, s3),
          bytes(energy::kSharedRead,
                s3 * 2 * kSgemmThreadTile * 4 / (kSgemmThreadTile * kSgemmThreadTile)),
          bytes(energy::kSharedWrite, staged),
          bytes(kL2Read, staged),
          bytes(energy::kDramRead, 8 * s2),
          bytes(energy::kDramWrite, 4 * s2),
          bytes(kFootprint, 12 * s2)};
}

// y[i] = p(x[i]) by Horner's rule: `degree` DFMAs per element.
Counts fp64_poly_counts(uint64_t elements, int degree) {
  const double n = static_cast<double>(elements);
  return {ops(energy::kFp64Fma, n * degree), bytes(energy::kDramRead, 8.0 * n),
          bytes(energy::kDramWrite, 8.0 * n), bytes(kL2Read, 8.0 * n), bytes(kFootprint, 16.0 * n)};
}

// The energy family's held-out GEMM (microbench/tensor_wgmma.cu), `trips` times over its K:
// per block and trip, pipes::kWgmmaWarpgroups x 64 rows of A and pipes::kWgmmaN rows of B,
// energy::kGemmK bf16 each, read with ld.global.cg (L2 hits: A and B span a few MiB) and
// written to shared memory; C (kWgmmaWarpgroups x 64 x kWgmmaN floats) written once. wgmma's
// reads of its operands from shared memory are part of the tensor op's energy as the energy
// family measures it (its chain kernel reads its tiles from shared memory too).
Counts tensor_gemm_counts(int blocks, int trips) {
  const double rows_a = double(pipes::kWgmmaWarpgroups) * 64;
  const double staged = double(blocks) * trips * (rows_a + pipes::kWgmmaN) * energy::kGemmK * 2;
  const double c = double(blocks) * rows_a * pipes::kWgmmaN * 4;
  return {
      ops(energy::kWgmmaBf16, double(blocks) * trips * rows_a * pipes::kWgmmaN * energy::kGemmK),
      bytes(energy::kL2NearRead, staged),
      bytes(kL2Read, staged),
      bytes(energy::kSharedWrite, staged),
      bytes(energy::kDramWrite, c),
      bytes(kFootprint, double(blocks) * rows_a * energy::kGemmK * 2 +
                            double(pipes::kWgmmaN) * energy::kGemmK * 2 + c)};
}

// out = in^T through a padded kTransposeTile^2 shared tile: every float read and written once
// in DRAM and once in shared memory.
Counts transpose_counts(uint64_t points) {
  const double side = static_cast<double>(points), b = 4 * side * side;
  return {bytes(energy::kDramRead, b),    bytes(energy::kDramWrite, b),  bytes(kL2Read, b),
          bytes(energy::kSharedWrite, b), bytes(energy::kSharedRead, b), bytes(kFootprint, 2 * b)};
}

// One global atomicAdd per key into `bins` counters (L2-resident).
Counts histogram_counts(uint64_t keys, uint32_t bins) {
  const double n = static_cast<double>(keys);
  return {bytes(energy::kDramRead, 4.0 * n), bytes(kL2Read, 4.0 * n), ops(kAtomicGlobal, double(n)),
          bytes(kFootprint, 4.0 * n + 4.0 * bins)};
}

Counts counts_of(const std::string& kernel, const Sizes& z, int sm_count, uint64_t dot_blocks) {
  if (kernel == kTriadDram) return triad_counts(z.triad_dram, 1, false);
  if (kernel == kTriadL2) return triad_counts(z.triad_l2, kL2Passes, true);
  if (kernel == kDot) return dot_counts(z.dot, dot_blocks);
  if (kernel == kStencil7) return stencil7_counts(z.stencil);
  if (kernel == kSgemm) return sgemm_counts(z.sgemm);
  if (kernel == kFp64Poly) return fp64_poly_counts(z.poly, kPolyDegree);
  if (kernel == kTensorGemm) return tensor_gemm_counts(sm_count, kTensorTrips);
  if (kernel == kTransposeShared) return transpose_counts(z.transpose);
  if (kernel == kHistogram) return histogram_counts(z.histogram, kHistogramBins);
  throw std::invalid_argument("roofline: no kernel " + kernel);
}

double count_of(const Counts& c, const std::string& item) {
  for (const auto& x : c)
    if (x.item == item) return x.value;
  return 0;
}

namespace {

// What each kernel's code must hold, so that a compiler that drops or merges the work fails
// the check: the counted operations (exact where the loop body is fully unrolled), the loads,
// stores and atomics the counts assume.
std::vector<CodeExpectation> roofline_expectations() {
  const auto e = [](const char* kernel, const char* probe, std::vector<InstructionRule> ptx,
                    std::vector<InstructionRule> sass) {
    return CodeExpectation{std::string(kFamily.name), kernel, probe, std::move(ptx),
                           std::move(sass)};
  };
  const int R = kSgemmThreadTile;
  return {
      e("roofline::triad", kTriadDram,
        {{R"(^ld\.global\.cg\.v4\.u32 )", 2},
         {R"(^fma\.rn\.f32 )", 4},
         {R"(^st\.global\.v4\.u32 )", 1}},
        {{R"(^LDG\.E\.128)", 2}, {R"(^FFMA )", 4}, {R"(^STG\.E\.128)", 1}}),
      e("roofline::dot", kDot,
        {{R"(^ld\.global\.v4\.f32 )", 2},
         {R"(^fma\.rn\.f32 )", 4},
         {R"(^atom\.global\.add\.f32 )", 1}},
        {{R"(^LDG\.E\.128)", 2}, {R"(^FFMA )", -1}, {R"(^(RED|ATOM)G?\.E\.ADD\.F32)", -1}}),
      e("roofline::stencil7", kStencil7,
        {{R"(^ld\.global\.f32 )", 7}, {R"(^fma\.rn\.f32 )", 6}, {R"(^mul(\.rn)?\.f32 )", 1}},
        {{R"(^LDG\.E )", -1}, {R"(^FFMA )", -1}, {R"(^STG\.E )", -1}}),
      e("roofline::sgemm", kSgemm,
        {{R"(^fma\.rn\.f32 )", kSgemmTileK * R * R},
         {R"(^ld\.shared\.v4\.f32 )", kSgemmTileK * R / 2}},
        {{R"(^FFMA )", kSgemmTileK * R * R}, {R"(^LDS\.128)", -1}, {R"(^STS)", -1}}),
      e("roofline::fp64_poly", kFp64Poly, {{R"(^fma\.rn\.f64 )", kPolyDegree, true}},
        {{R"(^DFMA )", kPolyDegree, true}}),
      e("roofline::transpose", kTransposeShared,
        {{R"(^st\.shared\.f32 )", kTransposeTile / kTransposeRows},
         {R"(^ld\.shared\.f32 )", kTransposeTile / kTransposeRows}},
        {{R"(^STS )", -1}, {R"(^LDS )", -1}, {R"(^STG\.E )", -1}}),
      e("roofline::histogram", kHistogram, {{R"(^atom\.global\.add\.u32 )", 1}},
        {{R"(^(RED|ATOM)G?\.E\.ADD)", -1}}),
      // The fills are not timed; their stores only show that they write the input.
      e("roofline::fill<float>", kTriadDram, {{R"(^st\.global\.f32 )", 1}}, {{R"(^STG)", -1}}),
      e("roofline::fill<double>", kFp64Poly, {{R"(^st\.global\.f64 )", 1}}, {{R"(^STG)", -1}}),
      e("roofline::fill<unsigned int>", kHistogram, {{R"(^st\.global\.u32 )", 1}},
        {{R"(^STG)", -1}}),
  };
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(roofline_expectations);

}  // namespace

}  // namespace gpuprobe::roofline
