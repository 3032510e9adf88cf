// The roofline model's arithmetic on a model GPU with known answers (the power cap and the
// classes included), and `gpuprobe roofline` on the committed Hopper runs, on a synthetic run
// with the roofline family's rows, and on bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/roofline.hpp"
#include "analysis/roofline_model.hpp"
#include "app/roofline.hpp"
#include "base/parameter_names.hpp"
#include "cli_run.hpp"
#include "committed_runs.hpp"
#include "model_gpu.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
using namespace roofline;

// The V100 of the model bench: its pipe rate and clock; the energies are assumed (round
// figures, not measurements), chosen so that the answers below are exact.
struct ModelV100 {
  model::Gpu g;
  std::vector<Parameter> params;
  Metadata meta = {{"sm_count", "80"}, {"power_limit_w", "250"}};  // V100 PCIe: 80 SMs, 250 W
  ModelV100() {
    for (const auto& m : model::model_gpus())
      if (m.key == "volta") g = m;
    model::declare_family_figures(g);
    const double clock = g.sm_clock_mhz.value;
    params = {
        {param::sm_clock_measured, clock, "MHz", clock * 0.99, clock, 1, "", ""},
        {param::dram_read_bandwidth, g.dram_read_gbs.value, "GB/s", 780, 810, 1, "", ""},
        {param::l2_read_bandwidth, g.l2_read_gbs.value, "GB/s", 2100, 2200, 1, "", ""},
        {param::fp32_fma_throughput_per_sm, g.fam.fp32.value, "results/clk/SM", 63, 64, 1, "", ""},
        {param::kernel_launch_overhead, 5, "us", 4, 6, 1, "", ""},
        {param::static_power, 60, "W", 55, 65, 1, "", ""},
        {param::fp32_fma_energy, 10, "pJ/op", 9, 11, 1, "", ""},
        {param::dram_read_energy_per_byte, 100, "pJ/B", 90, 110, 1, "", ""},
        {param::dram_write_energy_per_byte, 100, "pJ/B", 90, 110, 1, "", ""},
    };
  }
  Model model() const { return build_model(params, meta, "V100 model"); }
  double fp32_gflops() const {
    return g.fam.fp32.value * 80 * g.sm_clock_mhz.value * 1e6 * 2 / 1e9;
  }
};

Kernel kernel(const std::string& name, std::vector<Count> counts, double time_s) {
  return {name, std::move(counts), time_s, std::nullopt};
}

TEST(RooflineModel, CeilingsFromTheMeasuredClockAndSms) {
  ModelV100 v;
  ASSERT_EQ(v.g.fam.fp32.value, 64);
  ASSERT_EQ(v.g.sm_clock_mhz.value, 1380);
  const Model m = v.model();
  const Ceiling* fp32 = m.find("fp32");
  ASSERT_NE(fp32, nullptr);
  EXPECT_NEAR(fp32->value, 14131.2, 1e-6);  // 64 x 80 x 1.38 GHz x 2
  EXPECT_NEAR(fp32->low, 63 * 80 * 1380 * 0.99 * 1e6 * 2 / 1e9, 1e-6);
  EXPECT_NEAR(m.find("dram")->value, 800, 1e-9);
  EXPECT_NEAR(m.find("fp32", kEnergy)->value, 5, 1e-12);  // 10 pJ per FMA = 5 pJ per flop
  EXPECT_EQ(m.find("fp64"), nullptr);
  bool fp64_named = false;
  for (const auto& x : m.missing) fp64_named = fp64_named || x.name == "fp64";
  EXPECT_TRUE(fp64_named);
  EXPECT_NEAR(m.find("power_limit", kEnergy)->value, 250, 0);
}

TEST(RooflineModel, TriadIsOneDramRoofWithItsEnergy) {
  ModelV100 v;
  const Model m = v.model();
  Kernel k = kernel(
      "triad", {{energy::kDramRead, 2e9}, {energy::kDramWrite, 1e9}, {energy::kFp32Fma, 0.25e9}},
      4e-3);
  k.energy_j = 0.55;
  const Prediction p = predict(m, k);
  EXPECT_NEAR(p.time_s, 3e9 / 800e9 + 5e-6, 1e-12);  // no copy roof: the read roof carries both
  EXPECT_EQ(p.bound, std::string(kOneRoof));
  EXPECT_EQ(p.binding, "dram");
  // static power x the measured time + bytes and flops at their energies
  EXPECT_NEAR(*p.energy_j, 60 * 4e-3 + 3e9 * 100e-12 + 0.25e9 * 10e-12, 1e-12);
  EXPECT_NEAR(*p.time_error, (3.755e-3 - 4e-3) / 4e-3, 1e-9);
  EXPECT_NEAR(p.intensity, 0.5e9 / 3e9, 1e-12);
}

TEST(RooflineModel, PowerCapBindsWhereRateTimesEnergyPassesTheLimit) {
  ModelV100 v;
  v.params[6].value = 40;  // fp32_fma_energy: 40 pJ x the FP32 peak + 60 W passes 250 W
  const Model m = v.model();
  const Prediction p = predict(m, kernel("fma", {{energy::kFp32Fma, 1e12}}, 0.25));
  // time roof 2e12 / 14131.2 GFLOP/s = 0.1415 s; the cap: 40 J / (250 - 60) W = 0.2105 s
  EXPECT_NEAR(p.time_s, 40.0 / 190 + 5e-6, 1e-9);
  EXPECT_EQ(p.bound, std::string(kPowerCapped));
  CurvePoint c;
  ASSERT_TRUE(curve_at(m, "fp32", "dram", 1e6, &c));
  EXPECT_NEAR(c.gflops, v.fp32_gflops(), 1e-3);
  EXPECT_NEAR(c.gflops_capped, 190.0 / (20e-12 + 100e-12 / 1e6) / 1e9, 1e-6);  // cap / J per flop
  EXPECT_LT(c.gflops_capped, c.gflops);
}

TEST(RooflineModel, ArchLineAtLowIntensityIsTheByteEnergy) {
  ModelV100 v;
  const Model m = v.model();
  CurvePoint c;
  ASSERT_TRUE(curve_at(m, "fp32", "dram", 0.01, &c));
  EXPECT_NEAR(c.gflops, 8, 1e-9);  // 800 GB/s x 0.01 flop/B
  // per flop: 5 pJ + 100 pJ / 0.01 = 10005 pJ, plus 60 W x 1/8e9 s
  EXPECT_NEAR(c.gflops_per_joule, 1 / (10005e-12 + 60 / 8e9) / 1e9, 1e-9);
  EXPECT_FALSE(curve_at(m, "fp64", "dram", 1, &c));  // the model has no FP64 roof
}

TEST(RooflineModel, TwoRoofsAtOnceAndLatencyBound) {
  ModelV100 v;
  const Model m = v.model();
  // DRAM 3.75 ms against FP32 3.0 ms: within the margin
  const double fma = 3e-3 * v.fp32_gflops() * 1e9 / 2;
  Prediction p =
      predict(m, kernel("both", {{energy::kDramRead, 3e9}, {energy::kFp32Fma, fma}}, 4e-3));
  EXPECT_EQ(p.bound, std::string(kTwoRoofs));
  p = predict(m, kernel("slow", {{energy::kDramRead, 3e9}}, 40e-3));
  EXPECT_EQ(p.bound, std::string(kLatencyBound));
  // a count whose roof the run lacks is named, not guessed
  p = predict(m, kernel("global_atomics", {{kAtomicGlobal, 1e6}}, 1e-3));
  EXPECT_EQ(p.bound, std::string(kUnpredicted));
  EXPECT_NE(p.reason.find("atomic_global"), std::string::npos);
}

TEST(RooflineModel, NoClockOrNoSmCountIsAnError) {
  ModelV100 v;
  Metadata no_sms = {{"power_limit_w", "250"}};
  EXPECT_THROW(build_model(v.params, no_sms, "x"), ModelError);
  std::vector<Parameter> no_clock(v.params.begin() + 1, v.params.end());
  EXPECT_THROW(build_model(no_clock, v.meta, "x"), ModelError);
}

TEST(RooflineModel, WithoutEnergyTheTimeRooflineAlone) {
  ModelV100 v;
  v.params.resize(5);
  const Model m = v.model();
  EXPECT_FALSE(m.no_energy.empty());
  const Prediction p = predict(m, kernel("triad", {{energy::kDramRead, 3e9}}, 4e-3));
  EXPECT_FALSE(p.energy_j);
}

TEST(RooflineModel, ErtJsonHasTheVisualizersKeys) {
  const std::string j = roofline_ert_json(ModelV100().model());
  for (const char* key : {"\"empirical\"", "\"gflops\"", "\"gbytes\"", "\"data\"", "\"spec\"",
                          "\"fp32 GFLOPs\"", "\"dram\""})
    EXPECT_NE(j.find(key), std::string::npos) << key;
}

// --- The command ------------------------------------------------------------------------------

TEST(RooflineCommand, CommittedHopperRuns) {
  fs::path out = cli::empty_dir("gpuprobe_roofline_hopper");
  auto r = cli::run("roofline " + committed_run(kH100Run) + " " + committed_run(kH200Run) +
                    " --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* gpu : {"H100", "H200"})
    for (const char* f : {"roofline.csv", "roofline_points.csv", "roofline.json"})
      EXPECT_TRUE(fs::exists(out / gpu / f)) << gpu << "/" << f;
  EXPECT_NE(cli::slurp(out / "H100" / "roofline.csv").find("fp32,time,compute"), std::string::npos);
}

// A copy of the energy-measuring H200 run with a roofline.csv of two kernels.
fs::path synthetic_run(const std::string& name) {
  fs::path dst = cli::empty_dir(name);
  const fs::path src = committed_run("nvidia-h200/20261128T110751Z");
  for (const char* f : {"parameters.csv", "families.csv"}) fs::copy_file(src / f, dst / f);
  Metadata meta = read_csv((src / "families.csv").string()).meta;
  std::vector<Observation> obs;
  auto row = [&](const char* probe, const char* metric, const char* item, double v,
                 const char* unit) {
    Observation o;
    o.family = std::string(kFamily.name);
    o.probe = probe;
    o.params = {{kMetricColumn, metric}, {kItemColumn, item}};
    o.value = o.p05 = o.p50 = o.p95 = v;
    o.unit = unit;
    o.reps = 5;
    obs.push_back(o);
  };
  row(kTriadDram, kCount, energy::kDramRead, 2 << 30, "B");
  row(kTriadDram, kCount, energy::kDramWrite, 1 << 30, "B");
  row(kTriadDram, kCount, energy::kFp32Fma, 1 << 28, "op");
  row(kTriadDram, kTime, kLaunch, 0.8e-3, "s");
  row(kTriadDram, kEnergy, kLaunch, 0.5, "J");
  row(kHistogram, kCount, kAtomicGlobal, 1 << 24, "op");
  row(kHistogram, kTime, kLaunch, 5e-3, "s");
  std::ofstream(dst / "roofline.csv") << format_observations(meta, obs);
  return dst;
}

TEST(RooflineCommand, SyntheticRunWithTheFamilysRows) {
  fs::path run = synthetic_run("gpuprobe_roofline_synthetic");
  auto r = cli::run("roofline " + run.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string points = cli::slurp(run / kCommand / "roofline_points.csv");
  EXPECT_NE(points.find("triad_dram"), std::string::npos);
  EXPECT_NE(points.find("histogram"), std::string::npos);
  r = cli::run("roofline " + run.string() + " --table markdown");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("| H200 | triad_dram |"), std::string::npos) << r.out;
}

TEST(RooflineCommand, BadInputIsOneLineAndTheRunUntouched) {
  fs::path run = synthetic_run("gpuprobe_roofline_bad");
  const std::string before = cli::slurp(run / "roofline.csv");
  // writing into the run itself: its roofline.csv is a measurement
  auto r = cli::run("roofline " + run.string() + " --out " + run.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(cli::lines(r.err), 1) << r.err;
  EXPECT_EQ(cli::slurp(run / "roofline.csv"), before);
  // no measured clock
  std::string params = cli::slurp(run / "parameters.csv"), kept;
  std::istringstream in(params);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(param::sm_clock_measured, 0) != 0) kept += line + "\n";
  std::ofstream(run / "parameters.csv") << kept;
  r = cli::run("roofline " + run.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(cli::lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("sm_clock_measured"), std::string::npos);
  EXPECT_FALSE(fs::exists(run / kCommand));
  // a malformed row
  cli::append(run / "parameters.csv", "dram_read_bandwidth,abc,GB/s,1,2,0.5,x,y\n");
  r = cli::run("roofline " + run.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(cli::lines(r.err), 1) << r.err;
  EXPECT_EQ(cli::slurp(run / "roofline.csv"), before);
  // not a run
  r = cli::run("roofline " + cli::empty_dir("gpuprobe_roofline_empty").string());
  EXPECT_EQ(r.code, 1);
}

}  // namespace
}  // namespace gpuprobe
