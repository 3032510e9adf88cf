// The families bench (other families on the ladder's bench): every model GPU with
// documented fetch, pipe and issue figures (tests/model_families.cpp) x the ladder's 20 noise
// seeds; granularity.csv, pipes.csv and dual_issue.csv generated as the probes record them and
// analysed as `gpuprobe analyze` does. Gates as the ladder's: every value right within its
// tolerance (fetch sizes exact; fp64:fp32 within 5 %, rates within 3 %, dual-issue ratios
// within 10 %), none missing, no name of a pipe the model lacks (a tensor rate on Kepler), every
// wrong value with confidence < 0.5; known failures listed exactly, each with its reason. A probe
// the GPU cannot run reaches report.md as not measured, with its reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "analysis/analyzer.hpp"
#include "analysis/dual_issue.hpp"
#include "analysis/granularity.hpp"
#include "analysis/pipes.hpp"
#include "base/csv.hpp"
#include "base/parameter_names.hpp"
#include "app/report.hpp"
#include "app/run_analysis.hpp"
#include "model_bench.hpp"
#include "model_gpu.hpp"

using namespace gpuprobe;
using namespace gpuprobe::model;

namespace {

constexpr unsigned kSeeds = 20;
constexpr double kConfidentWrong = 0.5;  // a value this confident must be right
// kFamily.name views a string literal, so its data() ends in a NUL.
const char* const kFamilies[] = {granularity::kFamily.name.data(), pipes::kFamily.name.data(),
                                 dual_issue::kFamily.name.data()};

struct Answer {
  std::string model, family, name;
  unsigned seed = 0;
  double truth = 0, value = NAN, low = NAN, high = NAN, confidence = 0;
  std::string verdict;  // right, wrong, missing, invented
};

std::string describe(const Answer& a) {
  std::ostringstream s;
  s << a.model << " seed " << a.seed << " " << a.name << " (" << a.verdict << "): truth " << a.truth;
  if (a.verdict != "missing")
    s << ", got " << a.value << " [" << a.low << ", " << a.high << "] confidence " << a.confidence;
  return s.str();
}

bool right(const Truth& t, const Parameter& p) {
  if (t.tolerance == 0) return std::fabs(p.value - t.value) < 0.5;
  return std::fabs(p.value / t.value - 1) <= t.tolerance ||
         (t.interval_ok && p.low <= t.value && t.value <= p.high);
}

std::vector<Observation> generate(const Gpu& g, const std::string& family, unsigned seed, Metadata* meta,
                                  std::vector<Skip>* skipped) {
  if (family == granularity::kFamily.name) return generate_granularity(g, seed, meta);
  if (family == pipes::kFamily.name) return generate_pipes(g, seed, meta, skipped);
  return generate_dual_issue(g, seed, meta, skipped);
}

std::vector<Answer> bench(const Gpu& g, const std::string& family, unsigned seed) {
  Metadata meta;
  const auto rows = generate(g, family, seed, &meta, nullptr);
  std::map<std::string, Parameter> got;
  for (const auto& p : analyze(family, rows, meta)) got[p.name] = p;
  std::vector<Answer> out;
  auto answer = [&](const std::string& name, double truth, const Parameter* p, const std::string& verdict) {
    Answer a;
    a.model = g.key, a.family = family, a.name = name, a.seed = seed, a.truth = truth;
    if (p) a.value = p->value, a.low = p->low, a.high = p->high, a.confidence = p->confidence;
    a.verdict = verdict;
    out.push_back(a);
  };
  for (const auto& t : family_truths(g, family)) {
    auto it = got.find(t.name);
    if (it == got.end()) answer(t.name, t.value, nullptr, "missing");
    else answer(t.name, t.value, &it->second, right(t, it->second) ? "right" : "wrong");
  }
  for (const auto& name : family_absent(g, family))
    if (got.count(name)) answer(name, 0, &got[name], "invented");
  return out;
}

std::vector<const Gpu*> bench_models() {
  std::vector<const Gpu*> v;
  for (const auto& g : model_gpus())
    if (g.fam.declared() || g.fam.l1_fetch.value > 0) v.push_back(&g);
  for (const auto& g : pipe_only_models()) v.push_back(&g);
  return v;
}

const std::vector<Answer>& all_answers() {
  static const std::vector<Answer> out = [] {
    std::vector<Answer> v;
    for (const Gpu* g : bench_models())
      for (const char* family : kFamilies)
        for (unsigned seed = 0; seed < kSeeds; ++seed)
          for (auto& a : bench(*g, family, seed)) v.push_back(std::move(a));
    return v;
  }();
  return out;
}

// Failures known and not yet fixed (model_bench.hpp: the list is exact and only shrinks).
// Every one of them is a disturbed repetition set (model_families.cpp's RateNoise: 12 % spread,
// median up to 10 % low): the value is off, and its confidence (0.2-0.3) says so.
const std::string kDisturbed = "a disturbed repetition set (12 % spread, median up to 10 % low): wrong at confidence < 0.3";
const std::vector<Known> kKnownFailures = {
    {"b200", param::fp32_fma_throughput_per_sm, {4, 16}, kDisturbed},
    {"b200", param::fp64_fma_throughput_per_sm, {0}, kDisturbed},
    {"b200", param::fp64_fp32_throughput_ratio, {16}, kDisturbed},
    {"ga100", param::dual_issue_gain, {19}, kDisturbed},
    {"ga100", param::fp32_fma_throughput_per_sm, {16}, kDisturbed},
    {"ga100", param::tensor_mma_f16_throughput_per_sm, {4}, kDisturbed},
    {"ga102", param::fp64_fma_throughput_per_sm, {0}, kDisturbed},
    {"ga102", param::fp64_fp32_throughput_ratio, {0}, kDisturbed},
    {"ga102", param::tensor_mma_f16_throughput_per_sm, {18}, kDisturbed},
    {"gh200", param::dual_issue_fp32_ldst, {12}, kDisturbed},
    {"h100", param::fp32_fma_throughput_per_sm, {11}, kDisturbed},
    {"h100", param::fp64_fp32_throughput_ratio, {11}, kDisturbed},
    {"kepler", param::fp32_fma_throughput_per_sm, {1}, kDisturbed},
    {"kepler", param::fp64_fp32_throughput_ratio, {1}, kDisturbed},
    {"maxwell", param::dual_issue_fp32_shared, {18}, kDisturbed},
    {"maxwell", param::fp32_fma_throughput_per_sm, {16}, kDisturbed},
    {"turing", param::fp32_fma_throughput_per_sm, {6}, kDisturbed},
    {"turing", param::fp64_fma_throughput_per_sm, {13}, kDisturbed},
    {"turing", param::fp64_fp32_throughput_ratio, {6}, kDisturbed},
    {"volta", param::fp64_fma_throughput_per_sm, {8, 18}, kDisturbed},
    {"volta", param::fp64_fp32_throughput_ratio, {8, 18}, kDisturbed},
};

const Known* known(const Answer& a) { return find_known(kKnownFailures, a.model, a.name, a.seed); }

int cc_of(const Gpu& g) { return static_cast<int>(std::lround(std::strtod(g.cc.c_str(), nullptr) * 10)); }

}  // namespace

TEST(ModelFamilies, EveryDeclaredFigureHasASource) {
  int declared = 0;
  for (const Gpu* g : bench_models()) {
    const FamilyFigures& f = g->fam;
    for (const Figure* x : {&f.l1_fetch, &f.l2_fetch, &f.l2_sector, &f.l2_line, &f.readonly_fetch, &f.constant_fetch,
                            &f.constant_hit, &f.constant_miss, &f.fp32, &f.fp64, &f.int32_logic, &f.sfu, &f.fp16x2,
                            &f.ldst, &f.ld_global, &f.tensor_f16, &f.schedulers, &f.issue_width})
      if (x->value > 0) {
        ++declared;
        EXPECT_FALSE(x->source.empty()) << g->key << ": a figure without a source";
      }
  }
  // The issue's rates are all there: 1:2, 1:3 (GK110), 1:24 (GK104), 1:32, 1:64.
  std::set<long> ratios;
  for (const Gpu* g : bench_models())
    if (g->fam.declared()) ratios.insert(std::lround(g->fam.fp32.value / g->fam.fp64.value));
  EXPECT_EQ(ratios, (std::set<long>{2, 3, 24, 32, 64}));
  EXPECT_GT(declared, 100);
}

TEST(ModelFamilies, RowsAreTheProbesShape) {
  const Gpu& g = model_gpus().front();
  Metadata meta;
  std::vector<Skip> skipped;
  std::set<std::string> probes;
  for (const auto& o : generate_granularity(g, 0, &meta)) {
    probes.insert(o.probe);
    const bool stride = o.probe == granularity::kStrideProbe;
    for (const char* k :
         {granularity::kPathColumn, granularity::kWidthColumn, granularity::kResidencyColumn})
      EXPECT_EQ(o.param_text(k).empty(), !stride) << k;
    EXPECT_FALSE(o.param_text(granularity::kStrideColumn).empty());
    EXPECT_EQ(o.param_text(memory_chase::kFootprintColumn).empty(), stride);
  }
  EXPECT_EQ(probes,
            (std::set<std::string>{granularity::kStrideProbe, granularity::kL2CapacityProbe}));
  for (const auto& o : generate_pipes(g, 0, &meta, &skipped)) {
    EXPECT_FALSE(o.param_text("mode").empty());
    EXPECT_TRUE(o.unit == "results/clk/SM" || o.unit == "cycles" || o.unit == "ns") << o.unit;
  }
  for (const auto& o : generate_dual_issue(g, 0, &meta, &skipped)) {
    EXPECT_EQ(o.unit, "inst/clk/SM");
    for (const char* k : {"stream", "a_per_round", "b_per_round"}) EXPECT_FALSE(o.param_text(k).empty()) << k;
  }
  const auto a = generate_pipes(g, 3, nullptr, nullptr), b = generate_pipes(g, 3, nullptr, nullptr);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].value, b[i].value);
}

// The pipe and issue model itself: Kepler fills 192 FP32 lanes only by dual issue and pairs FP32
// with FP64 beyond one instruction per scheduler; Volta pairs FP32 with INT32 at its single
// issue slot; the H100's FP32 alone fills it.
TEST(ModelFamilies, IssueModelMatchesTheDocumentedMachines) {
  std::map<std::string, const Gpu*> by;
  for (const Gpu* g : bench_models()) by[g->key] = g;
  const std::string kFma = pipes::kFp32FmaProbe;
  EXPECT_NEAR(issue_rate(*by["kepler"], kFma, 8, kFma, 0), 6, 1e-9);
  EXPECT_GT(issue_rate(*by["kepler"], kFma, 8, pipes::kFp64FmaProbe, 2), 4 * 1.03);
  EXPECT_NEAR(issue_rate(*by["volta"], kFma, 8, pipes::kInt32LogicProbe, 8), 4, 1e-9);
  EXPECT_NEAR(issue_rate(*by["h100"], kFma, 8, kFma, 0), 4, 1e-9);
  EXPECT_NEAR(issue_rate(*by["h100"], kFma, 8, pipes::kInt32LogicProbe, 8), 4, 1e-9);
}

// No tensor pipe the probe can use (Kepler to Turing: mma.sync m16n8k16 needs sm_80): the probe
// is skipped with its reason, no tensor rate is written and no tensor pair.
TEST(ModelFamilies, NoTensorPipeMeansNoTensorRate) {
  int models = 0;
  for (const Gpu* g : bench_models()) {
    if (!g->fam.declared() || cc_of(*g) >= 80) continue;
    ++models;
    std::vector<Skip> skipped;
    Metadata meta;
    const auto rows = generate_pipes(*g, 0, &meta, &skipped);
    const auto pairs = generate_dual_issue(*g, 0, &meta, &skipped);
    std::set<std::string> skipped_probes;
    for (const auto& s : skipped) {
      skipped_probes.insert(s.probe);
      if (s.probe.rfind("tensor_mma_", 0) == 0 || s.probe == dual_issue::kFp32TensorPair) {
        EXPECT_EQ(s.reason, "needs compute capability 8.0");
      }
      if (s.probe.rfind("tensor_wgmma_", 0) == 0) {
        EXPECT_EQ(s.reason, "needs sm_90a (compute capability 9.0)");
      }
    }
    EXPECT_TRUE(skipped_probes.count(pipes::kTensorMmaF16Probe) &&
                skipped_probes.count(pipes::kTensorWgmmaF16Probe) &&
                skipped_probes.count(dual_issue::kFp32TensorPair))
        << g->key;
    for (const auto& p : analyze(std::string(pipes::kFamily.name), rows, meta))
      EXPECT_NE(p.name.rfind("tensor_", 0), 0u) << g->key << " " << p.name;
    for (const auto& p : analyze(std::string(dual_issue::kFamily.name), pairs, meta))
      EXPECT_NE(p.name, param::dual_issue_fp32_tensor) << g->key;
  }
  EXPECT_GE(models, 5);  // Kepler, GK104, Maxwell, Pascal, GP104, Volta, Turing
}

// What the run records for a probe it skipped (skipped.csv, with the reason) reaches the report
// as not measured, with the reason; parameters.csv has no value for it.
TEST(ModelFamilies, SkippedPipesReachTheReportAsNotMeasured) {
  const Gpu& g = model_gpus().front();  // Kepler
  ASSERT_EQ(g.key, "kepler");
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "model-families-kepler" / "20261125T000000Z";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<Skip> skipped;
  Metadata meta;
  auto write = [&](const std::string& file, const std::string& text) { std::ofstream(dir / file) << text; };
  for (const std::string& family :
       {std::string(pipes::kFamily.name), std::string(dual_issue::kFamily.name)}) {
    auto rows = generate(g, family, 0, &meta, &skipped);
    meta.push_back({"run_id", dir.filename().string()});
    meta.push_back({"gpuprobe_version", "model"});
    write(family + ".csv", format_observations(meta, rows));
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : skipped) rows.push_back({s.family, s.probe, s.reason});
  write("skipped.csv", format_csv({{"gpu", g.name}, {"run_id", dir.filename().string()}, {"gpuprobe_version", "model"}}, {"family", "probe", "reason"}, rows));
  const RunAnalysis a = analyze_run_dir(dir.string());
  EXPECT_TRUE(a.errors.empty());
  for (const auto& p : a.params) EXPECT_NE(p.name.rfind("tensor_", 0), 0u) << p.name;
  write("parameters.csv", format_run_analysis(a));
  ASSERT_EQ(report_main({dir.string()}), 0);
  std::ifstream in(dir / "report.md");
  const std::string md((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t section = md.find("Skipped probes");
  ASSERT_NE(section, std::string::npos) << md;
  for (const char* probe :
       {pipes::kTensorMmaF16Probe, pipes::kTensorWgmmaF16Probe, pipes::kInt32LogicProbe,
        pipes::kFp16x2FmaProbe, dual_issue::kFp32TensorPair, dual_issue::kFp32Int32Pair}) {
    const size_t at = md.find(std::string("| ") + probe + " |", section);
    ASSERT_NE(at, std::string::npos) << probe << " not listed as skipped";
    const std::string line = md.substr(at, md.find('\n', at) - at);
    EXPECT_NE(line.find("compute capability"), std::string::npos) << line;
  }
  EXPECT_EQ(md.find(param::tensor_mma_f16_throughput_per_sm), std::string::npos);
}

TEST(ModelFamilies, NoConfidentlyWrongValueBeyondTheKnown) {
  int listed = 0;
  for (const auto& a : all_answers())
    if ((a.verdict == "wrong" || a.verdict == "invented") && a.confidence >= kConfidentWrong) {
      if (known(a)) ++listed;
      else ADD_FAILURE() << describe(a);
    }
  std::cout << "known failures with confidence >= " << kConfidentWrong << ": " << listed << "\n";
}

TEST(ModelFamilies, EveryModelTimesTwentySeedsFailsOnlyAsListed) {
  std::vector<Failure> failures;
  std::map<std::string, std::pair<int, int>> per_family;  // right, total
  for (const auto& a : all_answers()) {
    auto& c = per_family[a.family];
    ++c.second;
    if (a.verdict == "right") ++c.first;
    else failures.push_back({a.model, a.name, a.seed, describe(a)});
  }
  check_known_failures(kKnownFailures, failures);
  for (const auto& [family, c] : per_family)
    std::cout << "families bench, " << family << ": " << c.first << " of " << c.second << " answers right\n";
  EXPECT_GT(per_family[std::string(granularity::kFamily.name)].second, 0);
  EXPECT_GT(per_family[std::string(pipes::kFamily.name)].second, 0);
  EXPECT_GT(per_family[std::string(dual_issue::kFamily.name)].second, 0);
}

// The gates can fail: a Kepler whose L1 fetched 32 B sectors, whose read-only path fetched its
// L1's 128 B lines, or an fp64 rate of 1:2 where the rows say 1:3, is caught.
TEST(ModelFamilies, TheGatesCatchAWrongTruth) {
  Gpu g = model_gpus().front();
  ASSERT_EQ(g.key, "kepler");
  Metadata meta;
  const auto rows = generate_granularity(g, 0, &meta);
  const auto pipes_rows = generate_pipes(g, 0, &meta, nullptr);
  g.fam.l1_fetch.value = 32;
  g.fam.readonly_fetch.value = 128;
  g.fam.fp64.value = g.fam.fp32.value / 2;
  std::map<std::string, Parameter> got;
  for (const auto& p : analyze(std::string(granularity::kFamily.name), rows, meta)) got[p.name] = p;
  for (const auto& p : analyze(std::string(pipes::kFamily.name), pipes_rows, meta)) got[p.name] = p;
  int wrong = 0;
  for (const char* family : {granularity::kFamily.name.data(), pipes::kFamily.name.data()})
    for (const auto& t : family_truths(g, family))
      if (t.name == param::l1_sector_size || t.name == param::readonly_line_size ||
          t.name == param::fp64_fp32_throughput_ratio) {
        ASSERT_TRUE(got.count(t.name)) << t.name;
        wrong += !right(t, got[t.name]);
      }
  EXPECT_EQ(wrong, 3);
}

namespace {

// Every answer of the families bench, and per family the answers and fraction right in each
// confidence bin (results/model-gpus/, beside the ladder's calibration).
std::string families_calibration_csv(const std::vector<Answer>& all) {
  std::string out = "model,family,seed,parameter,truth,value,low,high,confidence,verdict\n";
  for (const auto& a : all)
    out += a.model + "," + a.family + "," +
           answer_fields(a.seed, a.name, a.truth, a.value, a.low, a.high, a.confidence, a.verdict) + "\n";
  return out;
}

std::string families_bins_csv(const std::vector<Answer>& all) {
  std::map<std::string, std::pair<std::vector<int>, std::vector<int>>> bins;  // answers, right
  for (const auto& a : all) {
    if (a.verdict == "missing") continue;
    auto& [n, r] = bins[a.family];
    n.resize(10), r.resize(10);
    const int b = confidence_bin(a.confidence);
    ++n[b];
    r[b] += a.verdict == "right";
  }
  std::string out = "family,bin_low,bin_high,answers,right,fraction_right\n";
  for (const auto& [family, nr] : bins)
    for (int b = 0; b < 10; ++b) out += family + "," + bin_row(b, nr.first[b], nr.second[b]) + "\n";
  return out;
}

}  // namespace

// results/model-gpus/calibration_families*.csv are what the bench gives now. Regenerate:
// GPUPROBE_CALIBRATION_OUT=results/model-gpus build/tests/gpuprobe_tests
//   --gtest_filter='ModelFamilies.Committed*'
TEST(ModelFamilies, CommittedCalibrationIsTheBenchs) {
  check_committed_tables({{"calibration_families.csv", families_calibration_csv(all_answers())},
                          {"calibration_families_bins.csv", families_bins_csv(all_answers())}},
                         "ModelFamilies.Committed*");
}
