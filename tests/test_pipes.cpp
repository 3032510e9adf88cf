// The pipes family (and the per-SM rates it reads its timings through): inference on synthetic
// observations (with noise and edge cases), and on the H100 run in tests/data.
#include <gtest/gtest.h>

#include "parameter_checks.hpp"
#include "recorded.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "observation_rows.hpp"
#include "analysis/analyzer.hpp"
#include "analysis/common/sm_timing.hpp"
#include "analysis/pipes.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe {
namespace {

Observation row(const std::string& family, const std::string& probe, Params params, double value,
                const std::string& unit, double spread = 0.002) {
  return make_row(family, probe, std::move(params), value, unit, spread);
}

// ---------------------------------------------------------------- per-SM rates

TEST(PerSmRates, WorkOverEachSmsOwnSpan) {
  // SM 3 ran two blocks back to back; SM 7 one block; clocks of different SMs are unrelated.
  std::vector<BlockSpan> spans = {{1000, 2000, 3, 0}, {2000, 3000, 3, 0}, {50, 1050, 7, 0}};
  auto r = per_sm_rates(spans, 100);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_DOUBLE_EQ(r[0], 0.1);  // 200 work in 2000 cycles
  EXPECT_DOUBLE_EQ(r[1], 0.1);
  EXPECT_DOUBLE_EQ(sm_rate(spans, 100), 0.1);
  EXPECT_DOUBLE_EQ(median_sm_cycles(spans), 1500);
  EXPECT_EQ(sm_rate({}, 1), 0);
  EXPECT_TRUE(per_sm_rates({{5, 5, 0, 0}}, 1).empty());  // no time passed: no rate
}

TEST(PerSmRates, SharedResourceOverTheLongestSpan) {
  // Two SMs share DRAM; SM 1 got more than its share and finished in half the time. Each SM
  // alone reads 0.1 and 0.2 per cycle, but the chip delivered 200 work in 2000 cycles.
  std::vector<BlockSpan> spans = {{0, 2000, 0, 0}, {500, 1500, 1, 0}};
  EXPECT_DOUBLE_EQ(chip_rate(spans, 200), 0.1);
  EXPECT_DOUBLE_EQ(sm_rate(spans, 200), 0.15);
  EXPECT_EQ(chip_rate({}, 1), 0);
}

// ---------------------------------------------------------------- pipes

std::vector<Observation> pipes_rows(const std::string& op, double tput, double events, double latency,
                                    double spread = 0.002) {
  using pipes::kModeColumn;
  using pipes::kTimingColumn;
  const std::string family(pipes::kFamily.name);
  return {row(family, op, {{kModeColumn, "throughput"}, {kTimingColumn, "cycles"}}, tput,
              "results/clk/SM", spread),
          row(family, op, {{kModeColumn, "throughput"}, {kTimingColumn, "events"}}, events,
              "results/clk/SM", spread),
          row(family, op, {{kModeColumn, pipes::kLatencyMode}}, latency, "cycles", spread),
          row(family, op, {{kModeColumn, pipes::kLatencyMode}}, latency / 1.8, "ns", spread)};
}

TEST(Pipes, ThroughputAndLatencyPerOp) {
  auto obs = pipes_rows(pipes::kFp32FmaProbe, 127.6, 127.1, 4.02);
  auto more = pipes_rows(pipes::kFp64FmaProbe, 63.9, 63.5, 8.0);
  obs.insert(obs.end(), more.begin(), more.end());
  auto ps = analyze(std::string(pipes::kFamily.name), obs);
  expect_well_formed(ps, std::string(pipes::kFamily.name) + ".csv");
  ASSERT_EQ(ps.size(), 5u);  // and the fp64:fp32 ratio
  const Parameter* r = find(ps, param::fp64_fp32_throughput_ratio);
  ASSERT_NE(r, nullptr);
  EXPECT_DOUBLE_EQ(r->value, 63.9 / 127.6);
  EXPECT_LE(r->low, r->value);
  EXPECT_GE(r->high, r->value);
  EXPECT_NE(r->method.find("nearest 1:2,"), std::string::npos) << r->method;
  const Parameter* t = find(ps, param::fp32_fma_throughput_per_sm);
  ASSERT_NE(t, nullptr);
  EXPECT_DOUBLE_EQ(t->value, 127.6);
  EXPECT_EQ(t->unit, "results/clk/SM");
  EXPECT_GT(t->confidence, 0.9);
  EXPECT_NE(t->method.find("FFMA"), std::string::npos);
  const Parameter* l = find(ps, param::fp64_fma_latency);
  ASSERT_NE(l, nullptr);
  EXPECT_DOUBLE_EQ(l->value, 8.0);
  EXPECT_EQ(l->unit, "cycles");  // the ns row is not the latency
}

TEST(Pipes, NoisyOrClockShiftedRunsAreLessCertain) {
  auto clean = pipes::analyze_pipes(pipes_rows(pipes::kFp32AddProbe, 128, 128, 4), {});
  auto noisy = pipes::analyze_pipes(pipes_rows(pipes::kFp32AddProbe, 128, 128, 4, 0.08), {});
  auto shifted = pipes::analyze_pipes(pipes_rows(pipes::kFp32AddProbe, 128, 100, 4), {});
  double c = find(clean, param::fp32_add_throughput_per_sm)->confidence;
  EXPECT_LT(find(noisy, param::fp32_add_throughput_per_sm)->confidence, c);
  EXPECT_LT(find(shifted, param::fp32_add_throughput_per_sm)->confidence, c);
  EXPECT_NE(find(shifted, param::fp32_add_throughput_per_sm)->method.find("events/cycles 0.781"),
            std::string::npos);
}

TEST(Pipes, ClockChangeDuringTheProbeIsReportedNotPenalised) {
  // As the tensor probes on the H100: events 8 % below cycles, the clock near 1820 MHz.
  auto ps = pipes::analyze_pipes(pipes_rows(pipes::kTensorMmaF16Probe, 1364, 1254, 24),
                                 {{"family_sm_clock_mhz", "1980.0"}});
  const Parameter* t = find(ps, param::tensor_mma_f16_throughput_per_sm);
  ASSERT_NE(t, nullptr);
  EXPECT_GT(t->confidence, 0.95);
  EXPECT_NE(t->method.find("SM clock about 1820 MHz during the probe, 1980 measured before"),
            std::string::npos) << t->method;
}

TEST(Pipes, MissingRowsLeaveParametersOut) {
  std::vector<Observation> only_latency = {
      row(std::string(pipes::kFamily.name), pipes::kShuffleProbe,
          {{pipes::kModeColumn, pipes::kLatencyMode}}, 23, "cycles")};
  auto ps = pipes::analyze_pipes(only_latency, {});
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].name, param::shuffle_latency);
  EXPECT_TRUE(pipes::analyze_pipes({}, {}).empty());
  // A probe the table does not know (a newer build's run) gives none: its names would not be
  // the catalog's.
  EXPECT_TRUE(pipes::analyze_pipes(pipes_rows("popc", 16, 16, 10), {}).empty());
}

TEST(Pipes, EveryOpHasThroughputAndLatencyExpectations) {
  for (const auto& op : pipes::ops()) {
    SCOPED_TRACE(op.probe);
    const CodeExpectation* t = find_expectation(pipes::kernel_name(op.type, pipes::kThroughputIlp, pipes::kThroughputUnroll));
    const CodeExpectation* l = find_expectation(pipes::kernel_name(op.type, 1, pipes::kLatencyUnroll));
    ASSERT_NE(t, nullptr);
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(t->probe, op.probe);
    EXPECT_EQ(t->ptx[0].count, pipes::kThroughputIlp * pipes::kThroughputUnroll * op.ptx_per_apply);
    EXPECT_FALSE(t->sass[0].chained);
    EXPECT_TRUE(l->sass[0].chained);  // latency is only latency if the chain is one chain
  }
  EXPECT_EQ(pipes::kernel_name("Fp32Fma", 8, 64), "pipes::throughput<pipes::Fp32Fma, 8, 64>");
}

TEST(Pipes, WgmmaRatesAndLatencyAreMultiplyAddsAndCycles) {
  // As expected of an H100: f16 at the documented dense peak, 989.4 TFLOPS / (2 x 132 SMs x
  // 1830 MHz) = 2048 multiply-adds per clock per SM; tf32 half that, fp8 twice.
  auto obs = pipes_rows(pipes::kTensorWgmmaF16Probe, 2040, 1880, 180);
  auto tf32 = pipes_rows(pipes::kTensorWgmmaTf32Probe, 1021, 940, 180);
  auto fp8 = pipes_rows(pipes::kTensorWgmmaFp8E4m3Probe, 4080, 3760, 180);
  for (auto* more : {&tf32, &fp8}) obs.insert(obs.end(), more->begin(), more->end());
  auto ps = analyze(std::string(pipes::kFamily.name), obs,
                    {{"compute_capability", "9.0"}, {"family_sm_clock_mhz", "1980.0"}});
  expect_well_formed(ps, std::string(pipes::kFamily.name) + ".csv");
  ASSERT_EQ(ps.size(), 6u);
  const Parameter* t = find(ps, param::tensor_wgmma_f16_throughput_per_sm);
  ASSERT_NE(t, nullptr);
  EXPECT_DOUBLE_EQ(t->value, 2040);
  EXPECT_EQ(t->unit, "results/clk/SM");
  EXPECT_NE(t->method.find("m64n256k16 f16 -> f32 (HGMMA)"), std::string::npos) << t->method;
  EXPECT_NE(t->method.find("multiply-add"), std::string::npos) << t->method;
  EXPECT_NE(t->method.find("16 wgmmas per commit group"), std::string::npos) << t->method;
  EXPECT_NE(t->method.find("2 warpgroups on every SM"), std::string::npos) << t->method;
  EXPECT_EQ(t->method.find("8 independent chains"), std::string::npos) << t->method;
  EXPECT_EQ(t->method.find("not the wgmma"), std::string::npos) << t->method;
  // The tensor clock below the one measured before the family is reported, as for mma.sync.
  EXPECT_NE(t->method.find("SM clock about"), std::string::npos) << t->method;
  EXPECT_NE(find(ps, param::tensor_wgmma_fp8_e4m3_throughput_per_sm)->method.find("QGMMA"),
            std::string::npos);
  const Parameter* l = find(ps, param::tensor_wgmma_f16_latency);
  ASSERT_NE(l, nullptr);
  EXPECT_DOUBLE_EQ(l->value, 180);
  EXPECT_EQ(l->unit, "cycles");
  EXPECT_NE(l->method.find("wait_group 0"), std::string::npos) << l->method;
  EXPECT_NE(l->method.find("one warpgroup"), std::string::npos) << l->method;
  // mma.sync on sm_90 points at the wgmma probes.
  auto mma = pipes::analyze_pipes(pipes_rows(pipes::kTensorMmaF16Probe, 1364, 1254, 24),
                                  {{"compute_capability", "9.0"}});
  EXPECT_NE(find(mma, param::tensor_mma_f16_throughput_per_sm)->method.find("tensor_wgmma_*"),
            std::string::npos);
}

TEST(Pipes, WgmmaOnlyThroughputWhenLatencyIsMissing) {
  // An invalid latency kernel leaves its row out: the throughput still stands, alone.
  auto obs = pipes_rows(pipes::kTensorWgmmaInt8Probe, 4000, 3900, 150);
  obs.erase(obs.begin() + 2, obs.end());
  auto ps = pipes::analyze_pipes(obs, {});
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].name, param::tensor_wgmma_int8_throughput_per_sm);
  EXPECT_NE(ps[0].method.find("IGMMA"), std::string::npos);
}

TEST(Pipes, EveryWgmmaOpHasThroughputAndLatencyExpectations) {
  ASSERT_EQ(pipes::wgmma_ops().size(), 5u);
  for (const auto& op : pipes::wgmma_ops()) {
    SCOPED_TRACE(op.probe);
    EXPECT_EQ(std::string(op.probe).rfind("tensor_wgmma_", 0), 0u);
    EXPECT_EQ(pipes::find_op(op.probe), nullptr);  // not a pipes::throughput kernel
    EXPECT_EQ(pipes::find_wgmma_op(op.probe), &op);
    for (bool latency : {false, true}) {
      const CodeExpectation* e = find_expectation(pipes::wgmma_kernel_name(op.type, latency));
      ASSERT_NE(e, nullptr);
      EXPECT_EQ(e->probe, op.probe);
      EXPECT_EQ(e->source, "tensor_wgmma_sm90a");
      ASSERT_EQ(e->ptx.size(), 2u);
      ASSERT_EQ(e->sass.size(), 2u);
      EXPECT_EQ(e->ptx[0].count, pipes::kWgmmaUnroll);
      EXPECT_EQ(e->sass[0].count, pipes::kWgmmaUnroll);
      EXPECT_TRUE(e->sass[0].chained);  // one accumulator: each wgmma reads what the last wrote
      // Latency waits for every wgmma; throughput once per commit group, and at the end.
      EXPECT_EQ(e->sass[1].count, latency ? pipes::kWgmmaUnroll : 2);
    }
  }
  EXPECT_EQ(pipes::wgmma_kernel_name("WgmmaF16", false), "pipes::wgmma_throughput<pipes::WgmmaF16>");
  EXPECT_EQ(pipes::wgmma_kernel_name("WgmmaF16", true), "pipes::wgmma_latency<pipes::WgmmaF16>");
  EXPECT_EQ(pipes::find_wgmma_op(pipes::kTensorMmaF16Probe), nullptr);
}

TEST(Pipes, WgmmaSassChainAndSerialisation) {
  // Shaped like cuobjdump's sm_90a SASS of the throughput kernel: a commit group of HGMMAs
  // into R24, one wait for the group and one at the end. A ptxas that serialises the group
  // waits after every HGMMA, which the expectation must reject.
  auto sass = [](bool serialised) {
    std::string s =
        "\tcode for sm_90a\n\t\tFunction : "
        "_ZN8gpuprobe5pipes16wgmma_throughputINS0_8WgmmaF16EEEviPNS_9BlockSpanEPNT_3AccEiPj\n";
    unsigned pc = 0;
    auto line = [&](const std::string& ins) {
      char addr[16];
      std::snprintf(addr, sizeof addr, "%04x", pc);
      pc += 16;
      s += std::string("        /*") + addr + "*/                   " + ins + " ;   /* 0x0 */\n";
    };
    line("CS2R R6, SR_CLOCKLO");
    line("WARPGROUP.ARRIVE");
    for (int u = 0; u < pipes::kWgmmaUnroll; ++u) {
      bool last = u + 1 == pipes::kWgmmaUnroll;
      line(std::string("HGMMA.64x256x16.F32 R24, gdesc[UR8], R24") + (last || serialised ? ", gsb0" : ""));
      if (serialised && !last) line("WARPGROUP.DEPBAR.LE gsb0, 0x0");
    }
    line("WARPGROUP.DEPBAR.LE gsb0, 0x1");
    line("@!P0 BRA 0x10");
    line("WARPGROUP.DEPBAR.LE gsb0, 0x0");
    line("BAR.SYNC.DEFER_BLOCKING 0x0");
    line("CS2R R8, SR_CLOCKLO");
    return s;
  };
  const CodeExpectation* e = find_expectation(pipes::wgmma_kernel_name("WgmmaF16", false));
  ASSERT_NE(e, nullptr);
  for (bool serialised : {false, true}) {
    SCOPED_TRACE(serialised);
    auto kernels = parse_sass(sass(serialised), "sm_90a");
    ASSERT_EQ(kernels.size(), 1u);
    EXPECT_EQ(kernels[0].name, e->kernel);
    CheckOutcome o = check_code(kernels[0], e->sass, CodeDialect::sass);
    EXPECT_EQ(o.ok, !serialised) << o.why;
  }
}

TEST(RecordedH100, PipesMatchTheDocumentedFmaRates) {
  SKIP_WITHOUT(pipes::kFamily.name);
  auto ps = recorded_parameters(std::string(pipes::kFamily.name));
  expect_well_formed(ps, std::string(pipes::kFamily.name) + ".csv");
  // The family's bar: within 3 % of 128 (fp32) and 64 (fp64) results/clk/SM.
  ASSERT_NE(find(ps, param::fp32_fma_throughput_per_sm), nullptr);
  EXPECT_NEAR(find(ps, param::fp32_fma_throughput_per_sm)->value, 128, 128 * 0.03);
  ASSERT_NE(find(ps, param::fp64_fma_throughput_per_sm), nullptr);
  EXPECT_NEAR(find(ps, param::fp64_fma_throughput_per_sm)->value, 64, 64 * 0.03);
  for (const auto& p : ps) {
    SCOPED_TRACE(p.name);
    if (p.unit == "cycles") {
      EXPECT_GE(p.value, 1);
      // A wgmma's latency includes its whole 64x256 tile: 128 cycles of f16 work at the peak.
      EXPECT_LE(p.value, p.name.rfind("tensor_wgmma_", 0) == 0 ? 2000 : 200);
    } else {
      EXPECT_GT(p.value, 0);
      EXPECT_LE(p.value, 16384);  // no pipe delivers more multiply-adds than the tensor cores
    }
  }
  ASSERT_NE(find(ps, param::fp32_fma_latency), nullptr);
  EXPECT_LE(find(ps, param::fp32_fma_latency)->value, 8);
}

TEST(RecordedH100, WgmmaReachesWhatMmaSyncCannot) {
  SKIP_WITHOUT(pipes::kFamily.name);
  auto ps = recorded_parameters(std::string(pipes::kFamily.name));
  const Parameter* f16 = find(ps, param::tensor_wgmma_f16_throughput_per_sm);
  REQUIRE_RECORDED(f16) << "tests/data/h100_pipes.csv was recorded before the wgmma probes";
  // Per clock, nothing exceeds the documented dense peak: 989.4 TFLOPS / (2 x 132 SMs x
  // 1830 MHz) = 2048 f16 multiply-adds per clock per SM; tf32 runs at half, fp8 and int8 at
  // twice that, bf16 as f16. And warpgroup MMA beats warp-level mma.sync (1364 on the H100).
  EXPECT_LE(f16->value, 2048 * 1.02);
  const Parameter* mma = find(ps, param::tensor_mma_f16_throughput_per_sm);
  ASSERT_NE(mma, nullptr);
  EXPECT_GT(f16->value, mma->value * 1.1);
  for (auto [name, ratio] :
       {std::pair{pipes::kTensorWgmmaBf16Probe, 1.0}, std::pair{pipes::kTensorWgmmaTf32Probe, 0.5},
        std::pair{pipes::kTensorWgmmaFp8E4m3Probe, 2.0},
        std::pair{pipes::kTensorWgmmaInt8Probe, 2.0}}) {
    const Parameter* p = find(ps, std::string(name) + "_throughput_per_sm");
    ASSERT_NE(p, nullptr) << name;
    EXPECT_NEAR(p->value / f16->value, ratio, ratio * 0.25) << name;
  }
  const Parameter* lat = find(ps, param::tensor_wgmma_f16_latency);
  ASSERT_NE(lat, nullptr);
  // At least the tile's own work at the peak rate of one SM, 64 x 256 x 16 / 2048 = 128 cycles.
  EXPECT_GE(lat->value, 100);
}

}  // namespace
}  // namespace gpuprobe
