// Shared memory banks: the bank model against documented bank behaviour, the inference of
// banks and bank width on synthetic 4-byte (Maxwell/Volta) and 8-byte (Kepler) machines with
// noise, the conflict and bandwidth analysis, the curves recorded on an H100
// (tests/data/h100_shared_banks.csv), and the code checks of the timed loops on the PTX.
#include <gtest/gtest.h>

#include "parameter_checks.hpp"
#include "ptx_dir.hpp"
#include "recorded.hpp"

#include <cmath>
#include <fstream>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>
#include <tuple>

#include "observation_rows.hpp"
#include "analysis/analyzer.hpp"
#include "analysis/atomics.hpp"
#include "analysis/shared_banks.hpp"
#include "analysis/transpose.hpp"
#include "base/code_check.hpp"
#include "base/csv.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"

using namespace gpuprobe;
using namespace gpuprobe::shared_banks;

namespace {

const std::vector<int> kQuickStrides = {0,  1,  2,  3,  4,  5,  6,  7,  8, 9,
                                        12, 16, 17, 24, 31, 32, 33, 48, 64};

std::vector<int> all_strides() {
  std::vector<int> s(65);
  std::iota(s.begin(), s.end(), 0);
  return s;
}

const RowMaker row{0.02};
const std::string kFamilyName(kFamily.name);

// Documented 32 banks x 4 B (Maxwell, Volta; CUDA Programming Guide H.4.3), written out in
// closed form: a warp request of stride s is gcd(s, 32)-way for 4 B; 8 B accesses are served
// per half warp, 16 B per quarter warp, each a 128 B pass.
int four_byte_bank_cost(int bytes, int stride) {
  int lanes = 128 / bytes;  // lanes served per pass
  return (shared_banks::kWarpLanes / lanes) * (stride == 0 ? 1 : std::gcd(stride, lanes));
}

// A synthetic throughput sweep: cycles per request = offset + slope * cost, times noise.
std::vector<Observation> sweep(const std::function<int(int, int)>& cost,
                               const std::vector<int>& widths, const std::vector<int>& strides,
                               double noise, unsigned seed,
                               const std::string& probe = shared_banks::kStrideThroughput,
                               double offset = 0.1, double slope = 1.0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, noise);
  std::vector<Observation> out;
  const std::string unit =
      probe == shared_banks::kStrideThroughput ? shared_banks::kPerRequest : "cycles";
  for (int w : widths)
    for (int s : strides)
      out.push_back(
          row(kFamilyName, probe,
              {{kAccessBytesColumn, std::to_string(w)}, {kStrideColumn, std::to_string(s)}},
              (offset + slope * cost(w, s)) * (1 + n(rng)), unit));
  return out;
}

std::function<int(int, int)> model_cost(BankModel m) {
  return [m](int w, int s) { return bank_wavefronts(m, w, stride_offsets(w, s)); };
}

}  // namespace

TEST(BankModel, MatchesDocumentedFourByteBanks) {
  for (int w : {4, 8, 16})
    for (int s : all_strides())
      EXPECT_EQ(bank_wavefronts({32, 4}, w, stride_offsets(w, s)), four_byte_bank_cost(w, s))
          << w << " B, stride " << s;
}

TEST(BankModel, MatchesDocumentedKeplerEightByteBanks) {
  // GTC 2013 'Kepler 8-byte bank mode': successive 8-byte words in successive banks; lanes
  // reading within one 8-byte word do not conflict.
  BankModel kepler{32, 8};
  auto cost = model_cost(kepler);
  EXPECT_EQ(cost(4, 1), 1);  // two lanes per 8-byte word: multicast
  EXPECT_EQ(cost(4, 2), 1);  // 2-way on 4-byte banks, free on 8-byte ones
  EXPECT_EQ(cost(4, 3), 2);  // 32 lanes over 47 words: 15 banks hold two rows
  EXPECT_EQ(cost(4, 4), 2);
  EXPECT_EQ(cost(4, 32), 16);
  EXPECT_EQ(cost(4, 64), 32);
  EXPECT_EQ(cost(8, 1), 1);  // 256 B in one pass
  EXPECT_EQ(cost(8, 2), 2);
  EXPECT_EQ(cost(8, 32), 32);
  EXPECT_EQ(cost(16, 1), 2);  // 512 B: two passes of 16 lanes
  EXPECT_EQ(cost(4, 0), 1);   // broadcast
}

TEST(BankModel, RejectsNonsense) {
  EXPECT_THROW(bank_wavefronts({0, 4}, 4, stride_offsets(4, 1)), std::invalid_argument);
  EXPECT_THROW(conflict_offsets({32, 4}, 0, 1), std::invalid_argument);
}

TEST(ConflictOffsets, AreNWayOnEveryGeometry) {
  for (BankModel m : {BankModel{32, 4}, BankModel{32, 8}, BankModel{16, 8}, BankModel{64, 4}}) {
    for (int n = 1; n <= shared_banks::kWarpLanes; ++n) {
      auto off = conflict_offsets(m, n, 1);
      if ((shared_banks::kWarpLanes + n - 1) / n > m.banks) {
        EXPECT_TRUE(off.empty()) << "cannot place " << n << "-way on " << m.banks << " banks";
        continue;
      }
      EXPECT_EQ(bank_wavefronts(m, 4, off), n) << m.banks << "x" << m.width << ", " << n << "-way";
    }
    for (int k = 1; k <= shared_banks::kWarpLanes; k *= 2) {
      if (shared_banks::kWarpLanes / k <= m.banks) {
        EXPECT_EQ(bank_wavefronts(m, 4, conflict_offsets(m, 1, k)), 1) << k << "-lane multicast";
      }
      EXPECT_EQ(bank_wavefronts(m, 4, conflict_offsets(m, k, shared_banks::kWarpLanes / k)), k)
          << k << " words in one bank";
    }
  }
}

TEST(BankFit, ReadsFourByteBanks) {
  auto obs = sweep(four_byte_bank_cost, {4, 8, 16}, all_strides(), 0.05, 1);
  auto fit = fit_bank_geometry(obs);
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->model, (BankModel{32, 4}));
  EXPECT_TRUE(bank_geometry_settled(*fit));
  auto ps = analyze_shared_banks(obs, {});
  ASSERT_TRUE(find(ps, param::shared_bank_count));
  ASSERT_TRUE(find(ps, param::shared_bank_width));
  EXPECT_EQ(find(ps, param::shared_bank_count)->value, 32);
  EXPECT_EQ(find(ps, param::shared_bank_width)->value, 4);
  EXPECT_EQ(find(ps, param::shared_bank_width)->unit, "bytes");
  EXPECT_GT(find(ps, param::shared_bank_count)->confidence, 0.6);
  EXPECT_GT(find(ps, param::shared_bank_width)->confidence, 0.6);
  EXPECT_EQ(find(ps, param::shared_bank_count)->evidence, kFamilyName + ".csv");
}

TEST(BankFit, ReadsKeplerEightByteBanks) {
  auto obs = sweep(model_cost({32, 8}), {4, 8, 16}, all_strides(), 0.05, 2);
  auto ps = analyze_shared_banks(obs, {});
  ASSERT_TRUE(find(ps, param::shared_bank_count));
  ASSERT_TRUE(find(ps, param::shared_bank_width));
  EXPECT_EQ(find(ps, param::shared_bank_count)->value, 32);
  EXPECT_EQ(find(ps, param::shared_bank_width)->value, 8);
  EXPECT_GT(find(ps, param::shared_bank_width)->confidence, 0.6);
}

TEST(BankFit, ReadsOtherGeometries) {
  for (BankModel m : {BankModel{16, 8}, BankModel{64, 4}, BankModel{16, 4}}) {
    auto fit = fit_bank_geometry(sweep(model_cost(m), {4, 8, 16}, all_strides(), 0.03, 3));
    ASSERT_TRUE(fit);
    EXPECT_EQ(fit->model, m) << m.banks << "x" << m.width;
  }
}

TEST(BankFit, QuickStrideSubsetSuffices) {
  for (auto [m, seed] : {std::pair{BankModel{32, 4}, 4u}, std::pair{BankModel{32, 8}, 5u}}) {
    auto fit = fit_bank_geometry(sweep(model_cost(m), {4, 8, 16}, kQuickStrides, 0.05, seed));
    ASSERT_TRUE(fit);
    EXPECT_EQ(fit->model, m);
    EXPECT_TRUE(bank_geometry_settled(*fit));
  }
}

TEST(BankFit, SurvivesOutliersAndAnIssueFloor) {
  // An issue-limited machine whose conflict-free 4 B requests cost 1.5 cycles, and three wild
  // points.
  auto obs = sweep([](int w, int s) { return std::max(1.5, 1.0 * four_byte_bank_cost(w, s)); },
                   {4, 8, 16}, all_strides(), 0.04, 6);
  obs[10].value *= 3;
  obs[80].value *= 0.4;
  obs[150].value *= 2;
  auto ps = analyze_shared_banks(obs, {});
  ASSERT_TRUE(find(ps, param::shared_bank_count));
  ASSERT_TRUE(find(ps, param::shared_bank_width));
  EXPECT_EQ(find(ps, param::shared_bank_count)->value, 32);
  EXPECT_EQ(find(ps, param::shared_bank_width)->value, 4);
}

TEST(BankFit, TwoPassFloorIsAmbiguousUnlessLatencySettlesIt) {
  // 32x4 B behind a 2-pass issue floor serves 4 B patterns exactly as 16x8 B would: throughput
  // alone cannot tell them apart, and nothing is reported...
  auto obs = sweep([](int w, int s) { return std::max(2, four_byte_bank_cost(w, s)); }, {4, 8, 16},
                   all_strides(), 0.03, 13);
  auto ps = analyze_shared_banks(obs, {});
  EXPECT_FALSE(find(ps, param::shared_bank_count));
  EXPECT_FALSE(find(ps, param::shared_bank_width));
  // ... until one warp's latency, which has no such floor, is there too.
  auto lat = sweep(four_byte_bank_cost, {4, 8, 16}, all_strides(), 0.02, 14,
                   shared_banks::kStrideLatency, 24.0, 2.0);
  obs.insert(obs.end(), lat.begin(), lat.end());
  ps = analyze_shared_banks(obs, {});
  ASSERT_TRUE(find(ps, param::shared_bank_count));
  ASSERT_TRUE(find(ps, param::shared_bank_width));
  EXPECT_EQ(find(ps, param::shared_bank_count)->value, 32);
  EXPECT_EQ(find(ps, param::shared_bank_width)->value, 4);
  EXPECT_NE(find(ps, param::shared_bank_count)->method.find("one-warp latency"), std::string::npos);
}

TEST(BankFit, FallsBackToLatency) {
  // One warp's latency: a base plus a few cycles per extra pass.
  auto obs = sweep(four_byte_bank_cost, {4, 8, 16}, all_strides(), 0.02, 7,
                   shared_banks::kStrideLatency, 24.0, 2.0);
  auto fit = fit_bank_geometry(obs);
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->probe, shared_banks::kStrideLatency);
  EXPECT_EQ(fit->model, (BankModel{32, 4}));
  EXPECT_NEAR(fit->slope, 2.0, 0.2);
}

TEST(BankFit, FlatCurveInfersNothing) {
  auto obs = sweep([](int, int) { return 1; }, {4, 8, 16}, all_strides(), 0.03, 8);
  EXPECT_FALSE(fit_bank_geometry(obs));
  auto ps = analyze_shared_banks(obs, {});
  EXPECT_FALSE(find(ps, param::shared_bank_count));
  EXPECT_FALSE(find(ps, param::shared_bank_width));
}

TEST(BankFit, WideAccessesAloneCannotTellTheWidth) {
  // 8- and 16-byte accesses span whole 8-byte words, so 32x4 B and 16x8 B look alike.
  auto obs = sweep(four_byte_bank_cost, {8, 16}, all_strides(), 0.02, 9);
  auto ps = analyze_shared_banks(obs, {});
  EXPECT_FALSE(find(ps, param::shared_bank_width));
  EXPECT_FALSE(find(ps, param::shared_bank_count));
}

TEST(BankFit, TooFewPointsInfersNothing) {
  auto obs = sweep(four_byte_bank_cost, {4}, {0, 1, 2, 4}, 0.0, 10);
  EXPECT_FALSE(fit_bank_geometry(obs));
  EXPECT_TRUE(analyze_shared_banks({}, {}).empty());
}

namespace {

std::vector<Observation> ladder_and_bandwidth(unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, 0.01);
  auto obs = sweep(four_byte_bank_cost, {4, 8, 16}, kQuickStrides, 0.02, seed);
  for (int ways = 1; ways <= 32; ++ways) {
    Params p = {{kWaysColumn, std::to_string(ways)},
                {kLanesPerWordColumn, "1"},
                {kBanksColumn, "32"},
                {kBankWidthColumn, "4"}};
    obs.push_back(row(kFamilyName, shared_banks::kConflictLatency, p,
                      (30 + 2.0 * (ways - 1)) * (1 + n(rng)), "cycles"));
    obs.push_back(
        row(kFamilyName, shared_banks::kConflictLatency, p, (30 + 2.0 * (ways - 1)) / 1.7, "ns"));
    obs.push_back(row(kFamilyName, shared_banks::kConflictThroughput, p, ways * (1 + n(rng)),
                      shared_banks::kPerRequest));
  }
  // Multicast rows must not enter the ladder fit.
  obs.push_back(row(kFamilyName, shared_banks::kConflictLatency,
                    {{kWaysColumn, "1"}, {kLanesPerWordColumn, "32"}}, 500, "cycles"));
  for (auto [bytes, warps, v] :
       {std::tuple{4, 64, 120.0}, {8, 64, 124.0}, {16, 32, 126.5}, {16, 64, 126.0}})
    obs.push_back(row(
        kFamilyName, shared_banks::kBandwidth,
        {{kAccessBytesColumn, std::to_string(bytes)}, {kWarpsPerSmColumn, std::to_string(warps)}},
        v, "B/clk/SM", 0.005));
  return obs;
}

}  // namespace

TEST(SharedAnalyzer, ConflictPenaltyAndBandwidth) {
  auto ps = analyze_shared_banks(ladder_and_bandwidth(11), {});
  const Parameter* pen = find(ps, param::shared_conflict_penalty_per_way);
  ASSERT_TRUE(pen);
  EXPECT_NEAR(pen->value, 2.0, 0.1);
  EXPECT_EQ(pen->unit, "cycles");
  EXPECT_LT(pen->low, pen->value);
  EXPECT_GT(pen->high, pen->value);
  EXPECT_GT(pen->confidence, 0.9);
  EXPECT_NE(pen->method.find("cycles/request per way"), std::string::npos) << pen->method;
  const Parameter* bw = find(ps, param::shared_bandwidth_per_sm);
  ASSERT_TRUE(bw);
  EXPECT_DOUBLE_EQ(bw->value, 126.5);
  EXPECT_EQ(bw->unit, "B/clk/SM");
  EXPECT_LE(bw->low, bw->value);
  EXPECT_GE(bw->high, bw->value);
  EXPECT_NE(bw->method.find("16 B/lane, 32 warps/SM"), std::string::npos) << bw->method;
  EXPECT_NE(bw->method.find("= 128 B/clk"), std::string::npos) << bw->method;
  for (const auto& p : ps) {
    EXPECT_GE(p.confidence, 0.0) << p.name;
    EXPECT_LE(p.confidence, 1.0) << p.name;
  }
}

TEST(SharedAnalyzer, RegisteredAndReproducibleFromCsv) {
  auto obs = ladder_and_bandwidth(12);
  std::string text = format_observations({{"gpu", "synthetic"}}, obs);
  auto back = observations_from_table(parse_csv(text, kFamilyName + ".csv"));
  auto direct = analyze_shared_banks(obs, {});
  auto via_registry = analyze(kFamilyName, back);
  ASSERT_EQ(direct.size(), via_registry.size());
  for (size_t i = 0; i < direct.size(); ++i) {
    EXPECT_EQ(direct[i].name, via_registry[i].name);
    EXPECT_NEAR(direct[i].value, via_registry[i].value, 1e-9 * std::abs(direct[i].value));
  }
  EXPECT_FALSE(analyze(std::string(atomics::kFamily.name), {}).size());
  EXPECT_FALSE(analyze(std::string(transpose::kFamily.name), {}).size());
}

// ---- Curves recorded on an H100 (committed by the lead after the GPU run) ----

TEST(RecordedH100, SharedBanks) {
  auto obs = recorded_observations(kFamilyName);
  REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_shared_banks.csv";
  auto ps = analyze(kFamilyName, obs);
  const Parameter* banks = find(ps, param::shared_bank_count);
  const Parameter* width = find(ps, param::shared_bank_width);
  ASSERT_TRUE(banks && width) << "bank geometry not inferred from the H100 curve";
  EXPECT_EQ(banks->value, 32);
  EXPECT_EQ(width->value, 4);
  EXPECT_GT(banks->confidence, 0.5);
  const Parameter* bw = find(ps, param::shared_bandwidth_per_sm);
  ASSERT_TRUE(bw);
  EXPECT_GE(bw->value, 0.95 * 128) << "the family asks for 95 % of 32 banks x 4 B per clock";
  EXPECT_LE(bw->value, 1.03 * 128) << "more than the banks can deliver: a timing error";
  const Parameter* pen = find(ps, param::shared_conflict_penalty_per_way);
  ASSERT_TRUE(pen);
  EXPECT_GT(pen->value, 0.3);
  EXPECT_LT(pen->value, 20);
  for (const auto& o : select(obs, shared_banks::kStrideLatency, "cycles"))
    if (o.param(kAccessBytesColumn) == 4 && o.param(kStrideColumn) == 1) {
      EXPECT_GT(o.value, 10);  // Volta: 19 cycles; nothing on chip answers faster
      EXPECT_LT(o.value, 60);
    }
  // Broadcast and multicast cost no more than a conflict-free request (within 15 %).
  double free_cost = 0;
  for (const auto& o : select(obs, shared_banks::kConflictThroughput, shared_banks::kPerRequest))
    if (o.param(kWaysColumn) == 1 && o.param(kLanesPerWordColumn) == 1) free_cost = o.value;
  ASSERT_GT(free_cost, 0);
  for (const auto& o : select(obs, shared_banks::kConflictThroughput, shared_banks::kPerRequest))
    if (o.param(kWaysColumn) == 1) {
      EXPECT_LT(o.value, 1.15 * free_cost) << o.param_text(kLanesPerWordColumn);
    }
}

// ---- The timed loops hold the intended instructions (PTX, built in CI without a GPU) ----

TEST(SharedCodeChecks, PtxHoldsWhatIsTimed) {
  int checked = 0;
  for (const std::string& source : {kFamilyName, std::string(atomics::kFamily.name)}) {
    std::ifstream f(test::newest_ptx_path(source));
    ASSERT_TRUE(f) << "no " << source << ".ptx in " << GPUPROBE_PTX_DIR << "/sm_<arch>";
    std::stringstream text;
    text << f.rdbuf();
    for (const auto& k : parse_ptx(text.str())) {
      const CodeExpectation* e = find_expectation(k.name);
      ASSERT_TRUE(e) << k.name << " has no code expectation";
      CheckOutcome o = check_code(k, e->ptx, CodeDialect::ptx);
      EXPECT_TRUE(o.ok) << k.name << ": " << o.why;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 14);  // chase and request x 3 widths, chain and stream x 4 kinds
}
