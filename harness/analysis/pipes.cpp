#include "analysis/pipes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"
#include "base/stats.hpp"

namespace gpuprobe::pipes {

std::string kernel_name(const std::string& op_type, int ilp, int unroll) {
  return "pipes::throughput<pipes::" + op_type + ", " + std::to_string(ilp) + ", " +
         std::to_string(unroll) + ">";
}

const std::vector<OpInfo>& ops() {
  // SASS patterns name what ptxas must emit. Integer adds: ptxas spreads them over IADD3
  // (integer pipe) and IMAD.IADD (FMA pipe); both count, the loop counter (an immediate) not.
  static const std::vector<OpInfo> all = {
      {kFp32FmaProbe, "Fp32Fma", R"(^fma\.rn\.f32 )", 1, R"(^FFMA R)", 1, "fma.rn.f32 (FFMA)"},
      {kFp32AddProbe, "Fp32Add", R"(^add\.rn\.f32 )", 1, R"(^FADD R)", 1, "add.rn.f32 (FADD)"},
      {kFp32MulProbe, "Fp32Mul", R"(^mul\.rn\.f32 )", 1, R"(^FMUL R)", 1, "mul.rn.f32 (FMUL)"},
      {kFp64FmaProbe, "Fp64Fma", R"(^fma\.rn\.f64 )", 1, R"(^DFMA R)", 1, "fma.rn.f64 (DFMA)"},
      {kFp16x2FmaProbe, "Fp16x2Fma", R"(^fma\.rn\.f16x2 )", 1, R"(^HFMA2(\.MMA)? R)", 1,
       "fma.rn.f16x2 (HFMA2; 2 results per lane)", 53},
      {kBf16x2FmaProbe, "Bf16x2Fma", R"(^fma\.rn\.bf16x2 )", 1, R"(^HFMA2(\.MMA)?\.BF16_V2 R)", 1,
       "fma.rn.bf16x2 (HFMA2.BF16_V2; 2 results per lane)", 80},
      {kInt32AddProbe, "Int32Add", R"(^add\.u32 )", 2,
       R"(^(IADD3 R\d+, -?R\d+, -?R\d+, RZ|IMAD\.IADD R\d+, R\d+, 0x1, R\d+))", 2,
       "add.u32 pairs feeding each other (ptxas: IADD3 and IMAD.IADD)"},
      {kInt32MadProbe, "Int32Mad", R"(^mad\.lo\.u32 )", 1, R"(^IMAD R)", 1, "mad.lo.u32 (IMAD)"},
      {kInt32LogicProbe, "Int32Logic", R"(^lop3\.b32 )", 2, R"(^LOP3\.LUT R)", 2,
       "lop3.b32 majority pairs (LOP3.LUT)", 50},
      {kSfuSinProbe, "SfuSin", R"(^sin\.approx\.ftz\.f32 )", 1, R"(^MUFU\.SIN )", 1,
       "sin.approx.ftz.f32 (FMUL.RZ + MUFU.SIN)"},
      {kSfuEx2Probe, "SfuEx2", R"(^ex2\.approx\.ftz\.f32 )", 1, R"(^MUFU\.EX2 )", 1,
       "ex2.approx.ftz.f32 (MUFU.EX2)"},
      {kSfuRsqrtProbe, "SfuRsqrt", R"(^rsqrt\.approx\.ftz\.f32 )", 1, R"(^MUFU\.RSQ )", 1,
       "rsqrt.approx.ftz.f32 (MUFU.RSQ)"},
      {kSfuRcpProbe, "SfuRcp", R"(^rcp\.approx\.ftz\.f32 )", 1, R"(^MUFU\.RCP )", 1,
       "rcp.approx.ftz.f32 (MUFU.RCP)"},
      {kConversionProbe, "Conversion", R"(^cvt\.rzi\.s32\.f32 )", 1, R"(^F2I(\.[A-Z0-9]+)* R)", 1,
       "cvt.rzi.s32.f32 (F2I)"},
      {kShuffleProbe, "Shuffle", R"(^shfl\.sync\.bfly\.b32 )", 1, R"(^SHFL\.BFLY )", 1,
       "shfl.sync.bfly.b32 (SHFL.BFLY)", 30},
      {kLdstProbe, "LdShared", R"(^ld\.shared\.u32 )", 1, R"(^LDS(\.[A-Z0-9]+)* R)", 1,
       "ld.shared.u32, conflict-free (LDS): load/store issue rate"},
      {kLdGlobalProbe, "LdGlobal", R"(^ld\.global\.ca\.u64 )", 1, R"(^LDG\.E\.64(\.[A-Z0-9]+)* R)",
       1, "ld.global.ca.u64 pointer chase per chain, L1 hits (LDG)"},
      {kTensorMmaF16Probe, "MmaF16",
       R"(^mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32 )", 1,
       R"(^HMMA\.16816\.F32 )", 1, "mma.sync m16n8k16 f16 -> f32 (HMMA); result = multiply-add",
       80},
      {kTensorMmaBf16Probe, "MmaBf16",
       R"(^mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32 )", 1,
       R"(^HMMA\.16816\.F32\.BF16 )", 1,
       "mma.sync m16n8k16 bf16 -> f32 (HMMA); result = multiply-add", 80},
      {kTensorMmaTf32Probe, "MmaTf32",
       R"(^mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.tf32\.tf32\.f32 )", 1,
       R"(^HMMA\.1688\.F32\.TF32 )", 1,
       "mma.sync m16n8k8 tf32 -> f32 (HMMA); result = multiply-add", 80},
      {kTensorMmaInt8Probe, "MmaInt8",
       R"(^mma\.sync\.aligned\.m16n8k32\.row\.col\.s32\.s8\.s8\.s32 )", 1,
       R"(^IMMA\.16832\.S8\.S8 )", 1, "mma.sync m16n8k32 s8 -> s32 (IMMA); result = multiply-add",
       80},
      {kTensorMmaFp64Probe, "MmaFp64",
       R"(^mma\.sync\.aligned\.m8n8k4\.row\.col\.f64\.f64\.f64\.f64 )", 1, R"(^DMMA\.8x8x4 )", 1,
       "mma.sync m8n8k4 f64 (DMMA); result = multiply-add", 80},
  };
  return all;
}

const OpInfo* find_op(const std::string& probe) {
  for (const auto& op : ops())
    if (probe == op.probe) return &op;
  return nullptr;
}

std::string wgmma_kernel_name(const std::string& op_type, bool latency) {
  return std::string(latency ? "pipes::wgmma_latency<pipes::" : "pipes::wgmma_throughput<pipes::") +
         op_type + ">";
}

const std::vector<WgmmaInfo>& wgmma_ops() {
  // HGMMA takes 16-bit and tf32 inputs, QGMMA fp8, IGMMA 8-bit integers. A result is one
  // multiply-add: 64 * 256 * K per wgmma.
  static const std::vector<WgmmaInfo> all = {
      {kTensorWgmmaF16Probe, "WgmmaF16",
       R"(^wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.f16\.f16 )",
       R"(^HGMMA\.64x256x16\.F32 )", "wgmma.mma_async m64n256k16 f16 -> f32 (HGMMA)"},
      {kTensorWgmmaBf16Probe, "WgmmaBf16",
       R"(^wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16 )",
       R"(^HGMMA\.64x256x16\.F32\.BF16 )", "wgmma.mma_async m64n256k16 bf16 -> f32 (HGMMA)"},
      {kTensorWgmmaTf32Probe, "WgmmaTf32",
       R"(^wgmma\.mma_async\.sync\.aligned\.m64n256k8\.f32\.tf32\.tf32 )",
       R"(^HGMMA\.64x256x8\.F32\.TF32 )", "wgmma.mma_async m64n256k8 tf32 -> f32 (HGMMA)"},
      {kTensorWgmmaFp8E4m3Probe, "WgmmaFp8E4m3",
       R"(^wgmma\.mma_async\.sync\.aligned\.m64n256k32\.f32\.e4m3\.e4m3 )",
       R"(^QGMMA\.64x256x32\.F32\.E4M3\.E4M3 )", "wgmma.mma_async m64n256k32 e4m3 -> f32 (QGMMA)"},
      {kTensorWgmmaInt8Probe, "WgmmaInt8",
       R"(^wgmma\.mma_async\.sync\.aligned\.m64n256k32\.s32\.s8\.s8 )",
       R"(^IGMMA\.64x256x32\.S8\.S8 )", "wgmma.mma_async m64n256k32 s8 -> s32 (IGMMA)"},
  };
  return all;
}

const WgmmaInfo* find_wgmma_op(const std::string& probe) {
  for (const auto& op : wgmma_ops())
    if (probe == op.probe) return &op;
  return nullptr;
}

namespace {

std::vector<CodeExpectation> pipe_expectations() {
  std::vector<CodeExpectation> out;
  for (const auto& op : ops()) {
    // Throughput kernels: the count (nothing fused or dropped); latency kernels: one chain.
    for (auto [ilp, unroll] : {std::pair{kThroughputIlp, kThroughputUnroll}, std::pair{1, kLatencyUnroll}}) {
      int steps = ilp * unroll;
      bool chained = ilp == 1;
      CodeExpectation e;
      e.source = std::string(kFamily.name);
      e.kernel = kernel_name(op.type, ilp, unroll);
      e.probe = op.probe;
      e.ptx = {{op.ptx, steps * op.ptx_per_apply, chained}};
      e.sass = {{op.sass, steps * op.sass_per_apply, chained}};
      e.min_arch = op.min_cc;
      out.push_back(std::move(e));
    }
  }
  return out;
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(pipe_expectations);

// The wgmma kernels, checked in the PTX that CI builds for sm_90a (ptx/tensor_wgmma_sm90a.ptx;
// the file's own PTX, for a target without the 'a', has empty kernels) and in the SASS on a
// Hopper GPU. Every wgmma of a chain accumulates into the registers the previous one wrote (in
// PTX the accumulator is both operands implicitly, so only SASS shows the chain). The waits
// count too: one per commit group of kWgmmaUnroll wgmmas plus the last (throughput), or one per
// wgmma (latency); ptxas waits after every wgmma where it cannot pipeline them, and that would
// show as more waits in the throughput kernel.
std::vector<CodeExpectation> wgmma_expectations() {
  std::vector<CodeExpectation> out;
  for (const auto& op : wgmma_ops()) {
    for (bool latency : {false, true}) {
      int waits = latency ? kWgmmaUnroll : 2;
      CodeExpectation e;
      e.source = "tensor_wgmma_sm90a";
      e.kernel = wgmma_kernel_name(op.type, latency);
      e.probe = op.probe;
      e.ptx = {{op.ptx, kWgmmaUnroll, false}, {R"(^wgmma\.wait_group\.sync\.aligned )", waits, false}};
      e.sass = {{op.sass, kWgmmaUnroll, true}, {R"(^WARPGROUP\.DEPBAR)", waits, false}};
      e.min_arch = 90;
      out.push_back(std::move(e));
    }
  }
  return out;
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(wgmma_expectations);

const Observation* find_row(const std::vector<Observation>& rows, const std::string& mode,
                            const std::string& timing, const std::string& unit) {
  for (const auto& o : rows)
    if (o.param_text(kModeColumn) == mode && o.param_text(kTimingColumn) == timing &&
        o.unit == unit)
      return &o;
  return nullptr;
}

}  // namespace

namespace {

using analysis::meta_number;

const std::string kEvidence = std::string(kFamily.name) + ".csv";

// events/cycles further from 1 than this is named in the method text: a clock change during
// the probe larger than the ~1 % the two timers differ by on their own.
constexpr double kClockChangeNamed = 0.02;
// A gap beyond this is larger than any clock change seen (H100 tensor boost: 8 %), so the
// per-SM cycle counts themselves are in doubt; each 1 % more takes 4 % off the confidence,
// down to kGapConfidenceFloor.
constexpr double kGapDoubtful = 0.15;
constexpr double kGapConfidencePerUnit = 4.0;
constexpr double kGapConfidenceFloor = 0.3;  // the per-clock figure is still a measurement

// The SM clock the harness measured before the family ran (MHz), NaN if the file has none.
double family_clock_mhz(const Metadata& meta) {
  double mhz = meta_number(meta, "family_sm_clock_mhz");
  return mhz > 0 ? mhz : meta_number(meta, "sm_clock_mhz");
}

const Parameter* find_param(const std::vector<Parameter>& ps, const std::string& name) {
  for (const auto& p : ps)
    if (p.name == name) return &p;
  return nullptr;
}

// fp64 FMA results per fp32 FMA result, from the two measured rates (never from a table of
// GPUs): the interval divides each rate's p05/p95 by the other's opposite end, the confidence
// is the weaker rate's. The nearest 1:n is named for the reader, not snapped to.
std::optional<Parameter> fp64_fp32_ratio(const std::vector<Parameter>& rates) {
  const Parameter* f64 = find_param(rates, param::fp64_fma_throughput_per_sm);
  const Parameter* f32 = find_param(rates, param::fp32_fma_throughput_per_sm);
  if (!f64 || !f32 || !(f64->value > 0) || !(f32->value > 0)) return std::nullopt;
  Parameter p = analysis::ratio_of(param::fp64_fp32_throughput_ratio, *f64, *f32, "", kEvidence);
  const double n = std::max(1.0, std::round(1 / p.value));
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s / %s (%.4g / %.4g results/clk/SM, both 8 independent chains per thread, whole "
                "chip, per-SM clock64); nearest 1:%.0f, %.1f %% from it",
                param::fp64_fma_throughput_per_sm, param::fp32_fma_throughput_per_sm, f64->value,
                f32->value, n, 100 * std::fabs(p.value * n - 1));
  p.method = buf;
  return p;
}

}  // namespace

std::vector<Parameter> analyze_pipes(const std::vector<Observation>& obs, const Metadata& meta) {
  std::vector<std::string> probes;
  for (const auto& o : obs)
    if (std::find(probes.begin(), probes.end(), o.probe) == probes.end()) probes.push_back(o.probe);
  std::vector<Parameter> out;
  for (const auto& probe : probes) {
    auto rows = select(obs, probe);
    const pipes::OpInfo* op = pipes::find_op(probe);
    const pipes::WgmmaInfo* wgmma = pipes::find_wgmma_op(probe);
    if (!op && !wgmma) continue;  // no op of this build: its name would not be the catalog's
    const std::string what = op ? op->what : wgmma->what;
    if (const Observation* c = pipes::find_row(rows, "throughput", "cycles", "results/clk/SM")) {
      Parameter p = analysis::measured(param::pipe_throughput_per_sm(probe), *c, "", kEvidence);
      if (wgmma)
        p.method = what + "; result = multiply-add; A and B in shared memory, " +
                   std::to_string(pipes::kWgmmaUnroll) +
                   " wgmmas per commit group into one accumulator, the next group issued while "
                   "one runs; " + std::to_string(pipes::kWgmmaWarpgroups) +
                   " warpgroups on every SM, whole chip, per-SM clock64";
      else
        p.method = what + "; 8 independent chains per thread, whole chip, per-SM clock64";
      // sm_90's tensor peaks are for warpgroup wgmma; mma.sync takes the older per-warp path.
      if (probe.rfind("tensor_mma_", 0) == 0 && meta_number(meta, "compute_capability") >= 9)
        p.method += "; warp-level mma.sync, not the wgmma (tensor_wgmma_*) that sm_90's documented "
                    "peaks assume";
      // The event-timed rate uses the clock measured before the family, so events/cycles is
      // the SM clock during the probe over that clock: the tensor cores run the H100 near its
      // 1830 MHz tensor boost, 8 % below. The per-clock figure (clock64 on each SM) does not
      // depend on the clock; only a gap larger than any clock change (idle SMs, a broken
      // timer) makes it less certain.
      if (const Observation* e = pipes::find_row(rows, "throughput", "events", "results/clk/SM")) {
        double ratio = c->value > 0 ? e->value / c->value : 0;
        char buf[128];
        std::snprintf(buf, sizeof buf, "; events/cycles %.3f", ratio);
        p.method += buf;
        double before = family_clock_mhz(meta);
        if (before > 0 && std::fabs(ratio - 1) > kClockChangeNamed) {
          std::snprintf(buf, sizeof buf, " (SM clock about %.0f MHz during the probe, %.0f measured before)",
                        ratio * before, before);
          p.method += buf;
        }
        double gap = std::fabs(ratio - 1);
        if (gap > kGapDoubtful)
          p.confidence *= std::max(kGapConfidenceFloor, 1 - kGapConfidencePerUnit * (gap - kGapDoubtful));
      }
      out.push_back(p);
    }
    if (const Observation* l = pipes::find_row(rows, kLatencyMode, "", "cycles")) {
      Parameter p = analysis::measured(param::pipe_latency(probe), *l, "", kEvidence);
      if (wgmma)
        p.method = what + "; one warpgroup, each wgmma committed and waited for (wait_group 0) "
                          "before the next: issue until the accumulator can be read, the full "
                          "64x256 tile's work included; clock64";
      else
        p.method = what + "; one dependent chain, one warp, clock64";
      out.push_back(p);
    }
  }
  if (auto r = fp64_fp32_ratio(out)) out.push_back(*r);
  return out;
}

GPUPROBE_REGISTER_ANALYZER(pipes::kFamily, analyze_pipes);

}  // namespace gpuprobe::pipes
