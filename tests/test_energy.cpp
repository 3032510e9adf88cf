// The energy family's analysis on synthetic windows of a GPU whose energies are known: the fits
// give them back (exactly without noise, within their intervals with it), throttled windows
// are left out, the held-out kernels are predicted from the parameters; and the recorded
// energy files (tests/data/*_energy.csv: synthetic until a device run is recorded) predict
// their held-out kernels within the issue's 10 %.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include "analysis/analyzer.hpp"
#include "analysis/energy.hpp"
#include "analysis/latency.hpp"
#include "analysis/pipes.hpp"
#include "analysis/roofline.hpp"
#include "analysis/transpose.hpp"
#include "app/report.hpp"
#include "app/report_detail.hpp"
#include "base/catalog.hpp"
#include "base/operating_point.hpp"
#include "base/parameter_names.hpp"
#include "base/run_dir.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
using energy::Window;

// A GPU as the analysis models it: static power with a thermal drift, what each resident SM
// adds, and the energy of each item (J per op or byte).
struct Truth {
  int sms = 132;
  double idle_w = 80, static_w = 160, drift_w_per_s = 0.3, per_sm_w = 0.05, clock = 1980;
  std::map<std::string, double> joules = {
      {energy::kFp32Fma, 1.1e-12},    {energy::kFp64Fma, 6.5e-12},  {energy::kWgmmaBf16, 0.45e-12},
      {energy::kDramRead, 18e-12},    {energy::kDramWrite, 21e-12}, {energy::kL2NearRead, 2.2e-12},
      {energy::kSharedWrite, 0.6e-12}};
  double zero_factor = 0.7;  // all-zero operands cost this share
};

// Per SM at full rate: op/s or B/s.
double full_rate(const std::string& item) {
  if (item == energy::kFp32Fma) return 128 * 1.98e9;
  if (item == energy::kFp64Fma) return 64 * 1.98e9;
  if (item == energy::kWgmmaBf16) return 4096 * 1.98e9;
  if (item == energy::kSharedWrite) return 128 * 1.98e9;
  return 25e9;  // the memory levels
}

class Windows {
 public:
  Windows(const Truth& truth, double noise, unsigned seed)
      : truth_(truth), noise_(noise), rng_(seed) {}

  // One window: power from the model at time t_, plus noise; its rows as the probe records them.
  void add(const std::string& probe, const std::string& operands, int k, double rate,
           const std::vector<std::pair<std::string, double>>& components = {},
           const std::string& reasons = "none", double clock = 0) {
    double p = probe == energy::kIdle ? truth_.idle_w
                                      : truth_.static_w + truth_.drift_w_per_s * (t_ - 10) -
                                            (truth_.sms - k) * truth_.per_sm_w;
    if (rate > 0)
      p += truth_.joules.at(probe) * rate * (operands == energy::kZero ? truth_.zero_factor : 1);
    for (const auto& [item, r] : components) p += truth_.joules.at(item) * r;
    // The window's error; its two counter intervals' powers spread sqrt(2) times wider.
    const double sd = noise_ * p, interval_sd = sd * std::sqrt(2.0);
    p += std::normal_distribution<double>(0, sd > 0 ? sd : 1e-300)(rng_);
    const Params base = {{energy::kOperandsColumn, operands},
                         {energy::kActiveSmsColumn, std::to_string(k)},
                         {energy::kWindowColumn, std::to_string(id_++)},
                         {energy::kReasonsColumn, reasons}};
    auto row = [&](const std::string& unit, double v, double lo, double hi,
                   const Params& extra = {}) {
      Observation o{std::string(energy::kFamily.name), probe, base, v, unit, lo, v, hi, 2};
      o.params.insert(o.params.end(), extra.begin(), extra.end());
      rows_.push_back(o);
    };
    row("W", p, p - energy::kSpreadZ * interval_sd, p + energy::kSpreadZ * interval_sd);
    if (rate > 0)
      row(energy::rate_unit(probe), rate / energy::kRateScale, rate / energy::kRateScale,
          rate / energy::kRateScale);
    for (const auto& [item, r] : components)
      row(energy::rate_unit(item), r / energy::kRateScale, r / energy::kRateScale,
          r / energy::kRateScale, {{energy::kComponentColumn, item}});
    if (!components.empty()) row("s/launch", 0.01, 0.01, 0.01);
    const double mhz = clock > 0 ? clock : truth_.clock;
    row("MHz", mhz, mhz, mhz);
    row("C", 45, 45, 45);
    row("s", t_, t_, t_);
    t_ += 0.35;
  }

  // The probe's plan, in its order: baselines between the groups, two rates random, one zero.
  std::vector<Observation> plan() {
    add(energy::kIdle, "-", 0, 0);
    add(energy::kStatic, "-", truth_.sms, 0);
    add(energy::kStaticOneSm, "-", 1, 0);
    for (const auto& [item, j] : truth_.joules)
      for (double f : {0.5, 1.0})
        add(item, energy::kRandom, int(f * truth_.sms), f * truth_.sms * full_rate(item));
    add(energy::kStatic, "-", truth_.sms, 0);
    add(energy::kStaticOneSm, "-", 1, 0);
    add(energy::kHeldOutTriad, energy::kRandom, truth_.sms, 0,
        {{energy::kDramRead, 2.2e12}, {energy::kDramWrite, 1.1e12}, {energy::kFp32Fma, 2.75e11}});
    add(energy::kHeldOutGemm, energy::kRandom, truth_.sms, 0,
        {{energy::kWgmmaBf16, 3e14},
         {energy::kL2NearRead, 1.2e13},
         {energy::kSharedWrite, 1.2e13},
         {energy::kDramWrite, 2e9}});
    for (const auto& [item, j] : truth_.joules)
      add(item, energy::kZero, truth_.sms, truth_.sms * full_rate(item));
    add(energy::kStatic, "-", truth_.sms, 0);
    add(energy::kIdle, "-", 0, 0);
    return rows_;
  }

 private:
  Truth truth_;
  double noise_;
  std::mt19937 rng_;
  std::vector<Observation> rows_;
  int id_ = 0;
  double t_ = 0.5;
};

const Parameter* find(const std::vector<Parameter>& params, const std::string& name) {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

TEST(EnergyFit, KnownEnergiesAndStaticPowerComeBackExactlyWithoutNoise) {
  Truth truth;
  const auto params = analyze(std::string(energy::kFamily.name), Windows(truth, 0, 1).plan());
  for (const auto& [item, j] : truth.joules) {
    const Parameter* p = find(params, energy::parameter_name(item, false));
    ASSERT_NE(p, nullptr) << item;
    EXPECT_NEAR(p->value, j * 1e12, 1e-6 * j * 1e12) << item;
    EXPECT_EQ(p->unit, energy::is_level(item) ? "pJ/B" : "pJ/op");
    const Parameter* z = find(params, energy::parameter_name(item, true));
    ASSERT_NE(z, nullptr) << item;
    EXPECT_NEAR(z->value, truth.zero_factor * j * 1e12, 1e-6 * j * 1e12) << item;
    EXPECT_NE(p->method.find("SM clock 1980 MHz"), std::string::npos) << p->method;
    EXPECT_EQ(p->method.rfind("energy_fit:", 0), 0u) << p->method;
  }
  const Parameter* stat = find(params, param::static_power);
  ASSERT_NE(stat, nullptr);
  // Mean of the static windows' line at their mean time (drift 0.3 W/s from t = 10 s).
  EXPECT_NEAR(stat->value, truth.static_w, 8);
  EXPECT_LE(stat->low, stat->value);
  EXPECT_NEAR(find(params, param::idle_power)->value, truth.idle_w, 1e-9);
  for (const auto& p : params)
    EXPECT_NE(find_parameter(p.name), nullptr) << p.name << " is not in docs/parameters.md";
}

TEST(EnergyFit, NoiseGivesAnIntervalThatHoldsTheTruth) {
  Truth truth;
  int held = 0, total = 0;
  double width_quiet = 0, width_noisy = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto noisy =
        analyze(std::string(energy::kFamily.name), Windows(truth, 0.01, seed).plan());
    const auto quiet =
        analyze(std::string(energy::kFamily.name), Windows(truth, 0.001, seed).plan());
    for (const auto& [item, j] : truth.joules) {
      const Parameter* p = find(noisy, energy::parameter_name(item, false));
      const Parameter* q = find(quiet, energy::parameter_name(item, false));
      ASSERT_TRUE(p && q) << item << " seed " << seed;
      held += p->low <= j * 1e12 && j * 1e12 <= p->high;
      ++total;
      width_noisy += (p->high - p->low) / p->value;
      width_quiet += (q->high - q->low) / q->value;
    }
  }
  // A 90 % interval (p05..p95): most hold the truth, and more noise widens them (past the
  // +-10 % every fit's interval holds at least: what runs in a row moved).
  EXPECT_GE(held, total * 8 / 10) << held << " of " << total;
  EXPECT_GT(width_noisy, 1.5 * width_quiet);
}

TEST(EnergyFit, ThrottledOrReclockedWindowsAreLeftOut) {
  Truth truth;
  Windows w(truth, 0, 3);
  auto rows = w.plan();
  // A window at full rate that hit the power cap: its power is what the cap allowed, not the
  // model's.
  Windows extra(truth, 0, 4);
  extra.add(energy::kFp32Fma, energy::kRandom, truth.sms,
            2 * truth.sms * full_rate(energy::kFp32Fma), {}, "sw_power_cap");
  extra.add(energy::kFp32Fma, energy::kRandom, truth.sms,
            2 * truth.sms * full_rate(energy::kFp32Fma), {}, "none", 1485);
  for (auto o : extra.plan()) {
    o.params[2].second = "9" + o.params[2].second;  // window ids apart from the first plan's
    rows.push_back(o);
  }
  const auto windows = energy::windows_of(rows);
  const auto base = energy::baseline_of(windows);
  ASSERT_TRUE(base);
  const auto f = energy::fit_energy(windows, *base, energy::kFp32Fma, energy::kRandom);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->excluded, 2);
  EXPECT_NEAR(f->energy_j, truth.joules[energy::kFp32Fma], 1e-6 * truth.joules[energy::kFp32Fma]);
  EXPECT_NE(f->notes.find("left out"), std::string::npos);
}

TEST(EnergyFit, OneRateIsLessSureAndNonlinearRatesLessStill) {
  Truth truth;
  Windows w(truth, 0, 5);
  w.add(energy::kStatic, "-", truth.sms, 0);
  w.add(energy::kStatic, "-", truth.sms, 0);
  w.add(energy::kFp64Fma, energy::kRandom, truth.sms, truth.sms * full_rate(energy::kFp64Fma));
  const auto rows = w.plan();
  const auto windows = energy::windows_of(rows);
  const auto base = energy::baseline_of(windows);
  const auto two = energy::fit_energy(windows, *base, energy::kFp64Fma, energy::kRandom);
  const auto one = energy::fit_energy(windows, *base, energy::kFp64Fma, energy::kZero);
  ASSERT_TRUE(two && one);
  EXPECT_EQ(one->points, 1);
  EXPECT_NE(one->notes.find("one rate"), std::string::npos);
  // Power that is not linear in the rate: the half-rate window draws 30 % more than the line.
  Windows bent(truth, 0, 6);
  bent.add(energy::kStatic, "-", truth.sms, 0);
  bent.add(energy::kStatic, "-", truth.sms, 0);
  truth.joules[energy::kFp64Fma] *= 1.3;
  Windows hot(truth, 0, 7);
  auto rows2 = bent.plan();
  hot.add(energy::kFp64Fma, energy::kRandom, truth.sms / 2,
          truth.sms / 2 * full_rate(energy::kFp64Fma));
  for (auto o : hot.plan()) {
    o.params[2].second = "9" + o.params[2].second;
    if (o.probe == energy::kFp64Fma && o.param(energy::kActiveSmsColumn) == truth.sms / 2)
      rows2.push_back(o);
  }
  const auto w2 = energy::windows_of(rows2);
  const auto f =
      energy::fit_energy(w2, *energy::baseline_of(w2), energy::kFp64Fma, energy::kRandom);
  ASSERT_TRUE(f);
  EXPECT_NE(f->notes.find("slopes differ"), std::string::npos) << f->notes;
  EXPECT_LT(f->confidence, two->confidence);
}

TEST(EnergyHeldOut, TheParametersPredictKernelsTheyWereNotFittedOn) {
  Truth truth;
  const auto rows = Windows(truth, 0.002, 8).plan();
  const auto params = analyze(std::string(energy::kFamily.name), rows);
  const auto checks = energy::heldout_checks(rows, params);
  ASSERT_EQ(checks.size(), 2u);
  for (const auto& c : checks) {
    EXPECT_TRUE(c.predicted) << c.kernel << ": " << c.note;
    EXPECT_LT(std::fabs(c.error), energy::kHeldOutGoal) << c.kernel;
    EXPECT_EQ(c.terms.front().first, energy::kStatic);
  }
  // Without a component's energy there is no prediction, and the note says which.
  std::vector<Parameter> fewer;
  for (const auto& p : params)
    if (p.name != param::dram_write_energy_per_byte) fewer.push_back(p);
  for (const auto& c : energy::heldout_checks(rows, fewer)) {
    EXPECT_FALSE(c.predicted);
    EXPECT_NE(c.note.find(param::dram_write_energy_per_byte), std::string::npos);
  }
}

// The recorded energy files: every held-out kernel predicted within 10 %. Synthetic until a
// device run is recorded (tests/data/synthetic_energy.csv, written by
// EnergyRecorded.DISABLED_PrintSynthetic); a recorded run goes beside it as <gpu>_energy.csv.
TEST(EnergyRecorded, HeldOutKernelsArePredictedWithinTenPercent) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(GPUPROBE_TEST_DATA)) {
    const std::string name = e.path().filename().string();
    if (name.size() < 11 || name.compare(name.size() - 11, 11, "_energy.csv") != 0) continue;
    ++files;
    Metadata meta;
    const auto obs = read_observations(e.path().string(), &meta);
    const auto params = analyze(std::string(energy::kFamily.name), obs, meta);
    const auto checks = energy::heldout_checks(obs, params);
    EXPECT_FALSE(checks.empty()) << name;
    for (const auto& c : checks) {
      EXPECT_TRUE(c.predicted) << name << " " << c.kernel << ": " << c.note;
      EXPECT_LE(std::fabs(c.error), energy::kHeldOutGoal) << name << " " << c.kernel;
    }
    for (const auto& p : params)
      EXPECT_NE(find_parameter(p.name), nullptr) << name << ": " << p.name;
  }
  EXPECT_GE(files, 1) << "no tests/data/*_energy.csv";
}

TEST(EnergyRecorded, DISABLED_PrintSynthetic) {
  Truth truth;
  std::cout << "BEGIN\n"
            << format_observations(
                   {{"gpu", "synthetic (tests/test_energy.cpp, Truth; noise 0.2 %, seed 11)"}},
                   Windows(truth, 0.002, 11).plan())
            << "END\n";
}

// Both figures draw from a run folder of the synthetic GPU (and the recorded trace).
TEST(EnergyFigures, EnergiesAndTheTraceAreDrawn) {
  const ReportPaths paths = resolve_paths();
  if (paths.gnuplot.empty()) GTEST_SKIP() << "gnuplot not on PATH";
  Staging run;
  const auto rows = Windows(Truth(), 0.002, 9).plan();
  const Metadata meta = {{"gpu", "synthetic"}, {"run_id", "20260101T000000Z"}};
  // As the runner writes them (base/run_dir.hpp: RunFileRights::run).
  write_file_atomic((run.dir / "energy.csv").string(), format_observations(meta, rows),
                    RunFileRights::run);
  write_file_atomic((run.dir / "parameters.csv").string(),
                    format_parameters(meta, analyze(std::string(energy::kFamily.name), rows)),
                    RunFileRights::run);
  fs::copy_file(fs::path(GPUPROBE_TEST_DATA) / "synthetic_power_trace.csv",
                run.dir / "power_trace.csv");
  write_file_atomic((run.dir / "families.csv").string(),
                    "family,status,start_s,end_s\nlatency,ok,0,0.975\npipes,ok,1.075,2.05\n",
                    RunFileRights::run);
  Diagnostics diag;
  for (const auto& script : figure_scripts(paths.plots_dir, diag)) {
    if (script.family != energy::kFamily.name) continue;
    const auto written = render_figure(paths, script, {(run.dir / "energy.csv").string()},
                                       {"synthetic"}, run.dir.string(), diag);
    EXPECT_FALSE(written.empty()) << script.name << ": "
                                  << (diag.errors.empty() ? "" : diag.errors.front());
    EXPECT_TRUE(fs::exists(run.dir / (script.name + ".svg"))) << script.name;
  }
  for (const auto& w : diag.warnings) ADD_FAILURE() << w;
}

// report.md names the family that ran throttled and gives the held-out check, each within
// six columns.
TEST(EnergyReport, SaysWhatRanThrottledAndHowTheHeldOutKernelsCameOut) {
  Staging run;
  const auto rows = Windows(Truth(), 0.002, 10).plan();
  const Metadata meta = {{"gpu", "synthetic"}, {"run_id", "20260101T000000Z"}};
  // As the runner writes them (base/run_dir.hpp: RunFileRights::run).
  write_file_atomic((run.dir / "energy.csv").string(), format_observations(meta, rows),
                    RunFileRights::run);
  write_file_atomic((run.dir / "parameters.csv").string(),
                    format_parameters(meta, analyze(std::string(energy::kFamily.name), rows)),
                    RunFileRights::run);
  std::vector<std::string> header = {"family",       "status",       "wall_time_s",
                                     "sm_clock_mhz", "observations", "message"};
  for (const auto& c : operating_point_columns()) header.push_back(c);
  const auto trace =
      trace_from_table(read_csv(std::string(GPUPROBE_TEST_DATA) + "/synthetic_power_trace.csv"));
  std::vector<std::vector<std::string>> fams;
  for (const std::string& f :
       {std::string(latency::kFamily.name), std::string(pipes::kFamily.name)}) {
    fams.push_back({f, "ok", "1.0", "1980.0", "10", ""});
    for (const auto& c : operating_point_cells(summarize_family(trace, f)))
      fams.back().push_back(c);
  }
  fams.push_back(
      {std::string(transpose::kFamily.name), "failed", "0.5", "1980.0", "0", "out of memory"});
  for (const auto& c : operating_point_cells(summarize_family(trace, "nope")))
    fams.back().push_back(c);
  write_file_atomic((run.dir / "families.csv").string(), format_csv(meta, header, fams),
                    RunFileRights::run);
  ASSERT_EQ(report_main({run.dir.string()}), 0);
  const std::string md = read_file((run.dir / "report.md").string());
  // The operating point: the one family that ran throttled, not the one that did not.
  const size_t op = md.find("### Operating point"), next = md.find("###", op + 3);
  ASSERT_NE(op, std::string::npos);
  const std::string section = md.substr(op, next - op);
  EXPECT_NE(section.find("| pipes | sw_power_cap | 40 % | "), std::string::npos) << section;
  EXPECT_EQ(section.find(latency::kFamily.name), std::string::npos) << section;
  EXPECT_NE(md.find("### Energy check"), std::string::npos);
  EXPECT_NE(md.find("| triad | "), std::string::npos);
  EXPECT_NE(md.find("| gemm | "), std::string::npos);
  EXPECT_NE(md.find("| yes | static "), std::string::npos);
  // The failed family's row: families.csv's own six columns, not the operating point's.
  EXPECT_NE(md.find("| transpose | failed | 0.5 | 1980.0 | 0 | out of memory |\n"),
            std::string::npos);
}

TEST(EnergyNames, EveryItemHasItsParameterAndEveryParameterItsRow) {
  for (const auto& op : energy::alu_ops()) {
    EXPECT_NE(find_parameter(energy::parameter_name(op, false)), nullptr) << op;
    EXPECT_NE(find_parameter(energy::parameter_name(op, true)), nullptr) << op;
  }
  for (const auto& lv : energy::levels())
    EXPECT_NE(find_parameter(energy::parameter_name(lv, false)), nullptr) << lv;
  EXPECT_EQ(energy::parameter_name(energy::kDramRead, true), param::dram_read_energy_per_byte_zero);
  EXPECT_EQ(energy::parameter_name(energy::kWgmmaBf16, false), param::tensor_wgmma_bf16_energy);
}

// A quick run leaves the family out: every parameter of it listed with the descriptor's reason.
TEST(EnergyQuick, AQuickRunListsEveryEnergyParameterAsNotMeasured) {
  EXPECT_FALSE(energy::kFamily.not_in_quick.empty());
  const auto rows = family_rows_not_measured(std::string(energy::kFamily.name),
                                             std::string(energy::kFamily.not_in_quick));
  size_t in_catalog = 0;
  for (const auto& [name, entry] : catalog().params)
    in_catalog += entry.family == energy::kFamily.name;
  EXPECT_EQ(rows.size(), in_catalog);
  EXPECT_GE(rows.size(), 40u);
  for (const auto& r : rows) {
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[1], energy::kFamily.not_in_quick);
  }
  // Every other family runs in a quick run, but for the roofline kernels (their own energy
  // windows), which feed no parameter: nothing of theirs goes to not_measured.csv.
  for (const auto& [name, d] : family_descriptors()) {
    if (name == energy::kFamily.name) continue;
    if (name == roofline::kFamily.name) {
      EXPECT_TRUE(family_rows_not_measured(name, std::string(d->not_in_quick)).empty());
      continue;
    }
    EXPECT_TRUE(d->not_in_quick.empty()) << name;
  }
}

}  // namespace
}  // namespace gpuprobe
