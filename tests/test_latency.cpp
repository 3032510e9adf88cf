// The latency ladder: plateau/knee segmentation and the inferred hierarchy on synthetic curves
// (noise, gradual knees, a split L2, missing levels, older GPUs), through the CSV files, and on
// the curve recorded on the H100.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "analysis/latency.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"
#include "recorded.hpp"

using namespace gpuprobe;
using namespace gpuprobe::latency;
using namespace gpuprobe::segmentation;

namespace {

constexpr double KiB = 1024, MiB = 1024 * 1024;

// One cache level: hits cost `latency` up to `capacity` bytes. Past it the hit fraction falls
// as (capacity / footprint)^sharpness: a large sharpness is an LRU-like step, a small one the
// gradual knee of random replacement. The last level (capacity 0) is memory.
struct Level {
  double latency, capacity, sharpness = 60;
};

double ladder_latency(const std::vector<Level>& levels, double footprint) {
  double lat = levels.back().latency;
  for (size_t i = levels.size() - 1; i-- > 0;) {
    const Level& l = levels[i];
    const double hit =
        footprint <= l.capacity ? 1.0 : std::pow(l.capacity / footprint, l.sharpness);
    lat = hit * l.latency + (1 - hit) * lat;
  }
  return lat;
}

struct Model {
  std::vector<Level> levels;
  double noise = 0.005;  // relative, Gaussian
};

// Measures a model the way the family does: a jittered geometric sweep, then rounds of
// refinement around the knees.
std::vector<CurvePoint> sweep(const Model& m, double min_bytes, double max_bytes, unsigned seed = 1,
                              int rounds = 3, double ratio = 1.189207115) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, m.noise);
  std::uniform_real_distribution<double> jitter(-0.3, 0.3);
  auto measure = [&](double x) {
    return CurvePoint{x, ladder_latency(m.levels, x) * (1 + noise(rng))};
  };
  std::vector<CurvePoint> pts;
  const double step = std::log(ratio);
  for (double t = 0; min_bytes * std::exp(t) <= max_bytes; t += step)
    pts.push_back(
        measure(std::round(min_bytes * std::exp(t + step * std::fabs(jitter(rng))) / 128) * 128));
  RefineOptions ro;
  ro.min_ratio = 1.0 + (ratio - 1.0) / 16;
  for (int r = 0; r < rounds; ++r)
    for (double x : refinement_points(pts, ro)) pts.push_back(measure(std::round(x / 128) * 128));
  return pts;
}

std::vector<Observation> to_observations(const std::string& probe,
                                         const std::vector<CurvePoint>& pts) {
  std::vector<Observation> out;
  for (const auto& p : pts) {
    Observation o;
    o.family = std::string(kFamily.name);
    o.probe = probe;
    o.params = {{memory_chase::kFootprintColumn, std::to_string(static_cast<long long>(p.x))},
                {kStrideColumn, "128"}};
    o.value = o.p05 = o.p50 = o.p95 = p.y;
    o.unit = "cycles";
    o.reps = 9;
    out.push_back(o);
    o.unit = "ns";  // the harness adds these; the analysis must ignore them
    o.value = p.y / 1.755;
    out.push_back(o);
  }
  return out;
}

void append(std::vector<Observation>& to, const std::vector<Observation>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

std::map<std::string, Parameter> by_name(const std::vector<Parameter>& ps) {
  std::map<std::string, Parameter> m;
  for (const auto& p : ps) m[p.name] = p;
  return m;
}

// The latency parameters inferred from tests/data/<a>.csv and <b>.csv, by name; an empty
// map for a file that is absent.
std::pair<std::map<std::string, Parameter>, std::map<std::string, Parameter>> recorded_pair(
    const std::string& a, const std::string& b) {
  auto infer = [](const std::string& file) {
    const std::string path = data_file(file + ".csv");
    if (!std::filesystem::exists(path)) return std::map<std::string, Parameter>{};
    Metadata meta;
    auto obs = read_observations(path, &meta);
    return by_name(infer_latency(obs, meta));
  };
  return {infer(a), infer(b)};
}

const Metadata kH100Meta = {{"l2_bytes", "52428800"}, {"shared_per_sm_bytes", "233472"}};

// H100-like: L1 with the largest carve-out, a near and a far L2 partition, HBM.
struct H100Like {
  double l1 = 240 * KiB, segment = 25 * MiB, l2 = 50 * MiB;
  Model global{{{33, 240 * KiB}, {262, 25 * MiB}, {470, 50 * MiB}, {780, 0}}};
  Model cg{{{250, 25 * MiB}, {460, 50 * MiB}, {770, 0}}};
  Model nc{{{35, 240 * KiB}, {265, 25 * MiB}, {475, 50 * MiB}, {785, 0}}};
  Model shared{{{29, 0}}};
  Model constant{{{24, 2 * KiB}, {90, 32 * KiB}, {230, 0}}};

  std::vector<Observation> observations(double noise, unsigned seed = 7) {
    for (Model* m : {&global, &cg, &nc, &shared, &constant}) m->noise = noise;
    std::vector<Observation> obs;
    append(obs, to_observations(kLdGlobalProbe, sweep(global, 1 * KiB, 225 * MiB, seed)));
    append(obs, to_observations(kLdCgProbe, sweep(cg, 1 * KiB, 225 * MiB, seed + 1)));
    append(obs, to_observations(kLdNcProbe, sweep(nc, 1 * KiB, 225 * MiB, seed + 2)));
    append(obs,
           to_observations(kSharedProbe, sweep(shared, 1 * KiB, 227 * KiB, seed + 3, 1, 1.414)));
    append(obs, to_observations(kConstantProbe, sweep(constant, 256, 64 * KiB, seed + 4)));
    return obs;
  }
};

void expect_near(const std::map<std::string, Parameter>& p, const std::string& name, double want,
                 double rel) {
  auto it = p.find(name);
  ASSERT_NE(it, p.end()) << name << " not inferred";
  EXPECT_NEAR(it->second.value, want, rel * want) << name;
  EXPECT_LE(it->second.low, it->second.value) << name;
  EXPECT_GE(it->second.high, it->second.value) << name;
  EXPECT_GT(it->second.confidence, 0.0) << name;
  EXPECT_LE(it->second.confidence, 1.0) << name;
  EXPECT_EQ(it->second.evidence, std::string(kFamily.name) + ".csv") << name;
}

// A size is right when the true capacity lies between the sweep points that bracket the knee
// and the bracket is tight. `slack`: just past a capacity the model's latency rises by less
// than the noise tolerance (more so for a gradual knee), so the level is left a little late.
void expect_bracket(const std::map<std::string, Parameter>& p, const std::string& name,
                    double capacity, double max_width, double slack = 1.005) {
  auto it = p.find(name);
  ASSERT_NE(it, p.end()) << name << " not inferred";
  EXPECT_LE(it->second.low, capacity * slack) << name;
  EXPECT_GE(it->second.high, capacity - 128) << name;
  EXPECT_LE(it->second.high / it->second.low, max_width) << name;
  EXPECT_EQ(it->second.unit, "bytes");
}

}  // namespace

// --- segmentation ---------------------------------------------------------------------------

TEST(Segmentation, FlatCurveIsOnePlateauWithoutKnees) {
  std::vector<CurvePoint> pts;
  for (int i = 0; i < 12; ++i) pts.push_back({1024.0 * (i + 1), 30.0 + (i % 2) * 0.2});
  Segmentation s = segment_curve(pts);
  ASSERT_EQ(s.plateaus.size(), 1u);
  EXPECT_TRUE(s.knees.empty());
  EXPECT_NEAR(s.plateaus[0].level, 30.1, 0.11);
  EXPECT_EQ(s.plateaus[0].first, 0u);
  EXPECT_EQ(s.plateaus[0].last, 11u);
}

TEST(Segmentation, SharpStepGivesOneKneeBracketedByNeighbours) {
  std::vector<CurvePoint> pts;
  for (int i = 0; i < 20; ++i) {
    double x = 1000.0 * std::pow(1.2, i);
    pts.push_back({x, x <= 20000 ? 40.0 : 300.0});
  }
  Segmentation s = segment_curve(pts);
  ASSERT_EQ(s.plateaus.size(), 2u);
  ASSERT_EQ(s.knees.size(), 1u);
  EXPECT_LE(s.knees[0].low, 20000);
  EXPECT_GT(s.knees[0].high, 20000);
  EXPECT_EQ(s.knees[0].high, s.knees[0].arrive);
  EXPECT_NEAR(s.knees[0].ratio, 7.5, 1e-9);
}

TEST(Segmentation, UnsortedAndInvalidPointsAreHandled) {
  std::vector<CurvePoint> pts = {{4096, 30}, {1024, 30},  {-1, 5},
                                 {2048, 30}, {8192, NAN}, {3000, 30}};
  Segmentation s = segment_curve(pts);
  ASSERT_EQ(s.points.size(), 4u);
  EXPECT_EQ(s.points.front().x, 1024);
  ASSERT_EQ(s.plateaus.size(), 1u);
}

TEST(Segmentation, LoneOutlierDoesNotSplitAPlateau) {
  std::vector<CurvePoint> pts;
  for (int i = 0; i < 15; ++i) pts.push_back({1000.0 * (i + 1), i == 7 ? 80.0 : 40.0});
  Segmentation s = segment_curve(pts);
  ASSERT_EQ(s.plateaus.size(), 1u);
  EXPECT_EQ(s.plateaus[0].members, 14u);
  EXPECT_DOUBLE_EQ(s.plateaus[0].level, 40.0);
}

TEST(Segmentation, RampIsNotAPlateau) {
  // 40 flat, then a long steady climb to 400, then flat: two plateaus, the ramp between.
  std::vector<CurvePoint> pts;
  for (int i = 0; i < 40; ++i) {
    double y = i < 10 ? 40 : i < 30 ? 40 * std::pow(10.0, (i - 9) / 21.0) : 400;
    pts.push_back({1000.0 * std::pow(1.15, i), y});
  }
  Segmentation s = segment_curve(pts);
  ASSERT_EQ(s.plateaus.size(), 2u);
  EXPECT_EQ(s.plateaus[0].last, 9u);
  EXPECT_GE(s.plateaus[1].first, 29u);
  EXPECT_GT(s.knees[0].arrive / s.knees[0].high, 5.0);  // a gradual knee
}

// A short shelf that wobbles (the far L2 partition: 1.5 swings of +-8 % between the near level
// and DRAM), at any phase of its swing: read as a shelf (shelf_levels), its level is the mean of
// its swings, within the 3 % a latency is held to.
TEST(Segmentation, WobblingShelfIsReadWithinTheTolerance) {
  for (double phase = 0; phase < 2 * M_PI; phase += M_PI / 8) {
    std::vector<CurvePoint> pts;
    for (double e = 10; e <= 20.01; e += 1.0 / 6) pts.push_back({std::exp2(e), 200});
    for (double e = 20.25; e <= 21.01; e += 1.0 / 12)
      pts.push_back({std::exp2(e), 400 * (1 + 0.08 * std::sin(2 * M_PI * (e - 20.25) / 0.5 + phase))});
    for (double e = 21.5; e <= 25.01; e += 1.0 / 6) pts.push_back({std::exp2(e), 700});
    SegmentOptions shelf;
    shelf.shelf_levels = true;
    const Segmentation s = segment_curve(pts, shelf);
    ASSERT_EQ(s.plateaus.size(), 3u) << phase;
    EXPECT_NEAR(s.plateaus[1].level, 400, 0.03 * 400) << phase;
  }
}

TEST(Segmentation, NoiseIsEstimatedRobustly) {
  std::mt19937 rng(3);
  std::normal_distribution<double> n(0, 0.02);
  std::vector<CurvePoint> pts;
  for (int i = 0; i < 200; ++i) pts.push_back({double(i + 1), (i < 100 ? 50 : 500) * (1 + n(rng))});
  EXPECT_NEAR(curve_noise(pts), 0.02, 0.006);
  Segmentation s = segment_curve(pts);
  EXPECT_EQ(s.plateaus.size(), 2u);
}

TEST(Segmentation, RefinementTargetsTheKnee) {
  std::vector<CurvePoint> pts;
  for (int i = 0; i < 20; ++i) {
    double x = 1000.0 * std::pow(1.5, i);
    pts.push_back({x, x <= 50000 ? 40.0 : 300.0});
  }
  auto next = refinement_points(pts);
  ASSERT_FALSE(next.empty());
  // the step lies between 1000*1.5^9 (38443) and 1000*1.5^10 (57665)
  for (double x : next) {
    EXPECT_GT(x, 38443);
    EXPECT_LT(x, 57665);
  }
  RefineOptions tight;
  tight.min_ratio = 1.6;
  EXPECT_TRUE(refinement_points(pts, tight).empty());
}

// --- the ladder -----------------------------------------------------------------------------

TEST(LatencyLadder, H100LikeSplitL2) {
  H100Like h;
  auto p = by_name(infer_latency(h.observations(0.005), kH100Meta));
  expect_near(p, param::l1_hit_latency, 33, 0.02);
  expect_bracket(p, param::l1_size, h.l1, 1.05);
  expect_near(p, param::l2_near_hit_latency, 250, 0.02);
  expect_bracket(p, param::l2_segment_size, h.segment, 1.05);
  expect_near(p, param::l2_far_hit_latency, 460, 0.03);
  expect_bracket(p, param::l2_size, h.l2, 1.05);
  expect_near(p, param::dram_latency, 770, 0.03);
  expect_near(p, param::readonly_hit_latency, 35, 0.02);
  expect_near(p, param::shared_latency, 29, 0.02);
  expect_near(p, param::constant_hit_latency, 24, 0.02);
  EXPECT_GT(p[param::l1_hit_latency].confidence, 0.8);
  EXPECT_GT(p[param::l2_size].confidence, 0.5);
}

TEST(LatencyLadder, NoisyCurvesStillGiveTheLadder) {
  H100Like h;
  auto p = by_name(infer_latency(h.observations(0.025, 11), kH100Meta));
  expect_near(p, param::l1_hit_latency, 33, 0.05);
  expect_near(p, param::l2_near_hit_latency, 250, 0.05);
  expect_near(p, param::l2_far_hit_latency, 460, 0.06);
  expect_near(p, param::dram_latency, 770, 0.06);
  expect_near(p, param::l1_size, h.l1, 0.15);
  expect_near(p, param::l2_size, h.l2, 0.15);
}

TEST(LatencyLadder, GradualKneesGiveAnIntervalSpanningTheTransition) {
  H100Like h;
  h.global.levels[0].sharpness = 1.5;  // random-replacement L1
  h.nc.levels[0].sharpness = 1.5;
  h.cg.levels[1].sharpness = 3;  // soft far-partition capacity
  auto p = by_name(infer_latency(h.observations(0.005, 5), kH100Meta));
  // A size is read where half the step (in log) is climbed; the interval spans the transition
  // (this model's level starts to empty at the capacity), so it covers the capacity.
  expect_bracket(p, param::l1_size, h.l1, 8.0, 1.03);
  expect_bracket(p, param::l2_size, h.l2, 2.0, 1.03);
  expect_near(p, param::l2_far_hit_latency, 460, 0.05);
  // the soft far partition still holds 12 % of the lines at twice its size: DRAM's plateau
  // starts climbing late
  expect_near(p, param::dram_latency, 770, 0.05);
}

TEST(LatencyLadder, UnsplitL2HasNoFarLevel) {
  // Volta-like (V100: L1 28, 128 KiB; L2 193, 6 MiB; DRAM 375).
  Model g{{{28, 128 * KiB}, {193, 6 * MiB}, {375, 0}}};
  Model cg{{{185, 6 * MiB}, {370, 0}}};
  std::vector<Observation> obs;
  append(obs, to_observations(kLdGlobalProbe, sweep(g, 1 * KiB, 27 * MiB)));
  append(obs, to_observations(kLdCgProbe, sweep(cg, 1 * KiB, 27 * MiB, 2)));
  auto p = by_name(infer_latency(obs, {{"l2_bytes", "6291456"}, {"shared_per_sm_bytes", "98304"}}));
  expect_near(p, param::l1_hit_latency, 28, 0.02);
  expect_bracket(p, param::l1_size, 128 * KiB, 1.06);
  expect_near(p, param::l2_hit_latency, 185, 0.02);
  expect_bracket(p, param::l2_size, 6 * MiB, 1.06);
  expect_near(p, param::dram_latency, 370, 0.02);
  EXPECT_EQ(p.count(param::l2_far_hit_latency), 0u);
  EXPECT_EQ(p.count(param::l2_segment_size), 0u);
  EXPECT_EQ(p.count(param::shared_latency), 0u);  // not measured, not invented
}

TEST(LatencyLadder, KeplerLikeValuesWithoutMetadata) {
  // K80-like: L1 35 cycles in 16 KiB, L2 200 cycles in 1.5 MiB, DRAM ~ 450; no metadata, so the
  // ladder is read from the structure alone.
  Model g{{{35, 16 * KiB}, {200, 1.5 * MiB}, {450, 0}}};
  Model cg{{{195, 1.5 * MiB}, {445, 0}}};
  Model sh{{{26, 0}}};
  Model cn{{{30, 2 * KiB}, {92, 32 * KiB}, {220, 0}}};
  std::vector<Observation> obs;
  append(obs, to_observations(kLdGlobalProbe, sweep(g, 1 * KiB, 7 * MiB)));
  append(obs, to_observations(kLdCgProbe, sweep(cg, 1 * KiB, 7 * MiB, 3)));
  append(obs, to_observations(kSharedProbe, sweep(sh, 1 * KiB, 48 * KiB, 4, 1, 1.414)));
  append(obs, to_observations(kConstantProbe, sweep(cn, 256, 64 * KiB, 5)));
  auto p = by_name(infer_latency(obs, {}));
  expect_near(p, param::l1_hit_latency, 35, 0.02);
  expect_bracket(p, param::l1_size, 16 * KiB, 1.05);
  expect_near(p, param::l2_hit_latency, 195, 0.02);
  expect_bracket(p, param::l2_size, 1.5 * MiB, 1.05);
  expect_near(p, param::dram_latency, 445, 0.02);
  expect_near(p, param::shared_latency, 26, 0.02);
  expect_near(p, param::constant_hit_latency, 30, 0.02);
  EXPECT_EQ(p.count(param::l2_far_hit_latency), 0u);
}

TEST(LatencyLadder, LoadsThatSkipL1GiveNoL1) {
  // Kepler's default: global loads not cached in L1, so ld.global looks like ld.cg.
  Model g{{{200, 1.5 * MiB}, {450, 0}}};
  std::vector<Observation> obs;
  append(obs, to_observations(kLdGlobalProbe, sweep(g, 1 * KiB, 7 * MiB)));
  append(obs, to_observations(kLdCgProbe, sweep(g, 1 * KiB, 7 * MiB, 9)));
  auto p = by_name(infer_latency(obs, {{"l2_bytes", "1572864"}}));
  EXPECT_EQ(p.count(param::l1_hit_latency), 0u);
  EXPECT_EQ(p.count(param::l1_size), 0u);
  expect_near(p, param::l2_hit_latency, 200, 0.02);
  expect_bracket(p, param::l2_size, 1.5 * MiB, 1.06);
}

TEST(LatencyLadder, WithoutLdCgTheL2ComesFromLdGlobal) {
  H100Like h;
  std::vector<Observation> obs;
  for (const auto& o : h.observations(0.005))
    if (o.probe == kLdGlobalProbe) obs.push_back(o);
  auto p = by_name(infer_latency(obs, kH100Meta));
  expect_near(p, param::l1_hit_latency, 33, 0.02);
  expect_near(p, param::l2_near_hit_latency, 262, 0.02);
  expect_near(p, param::l2_far_hit_latency, 470, 0.03);
  expect_bracket(p, param::l2_size, h.l2, 1.06);
  EXPECT_NE(p[param::l2_size].method.find("ld.global"), std::string::npos);
}

TEST(LatencyLadder, SweepThatStopsInL2InventsNoDram) {
  Model cg{{{250, 25 * MiB}, {460, 50 * MiB}, {770, 0}}};
  auto obs = to_observations(kLdCgProbe, sweep(cg, 1 * KiB, 20 * MiB));
  auto p = by_name(infer_latency(obs, kH100Meta));
  EXPECT_EQ(p.count(param::dram_latency), 0u);
  EXPECT_EQ(p.count(param::l2_size), 0u);
}

TEST(LatencyLadder, TlbStepPastDramIsNotTakenForDram) {
  // A step past the L2 (TLB reach) must not turn DRAM into a "far L2".
  Model cg{{{250, 25 * MiB}, {460, 50 * MiB}, {770, 120 * MiB}, {950, 0}}};
  auto obs = to_observations(kLdCgProbe, sweep(cg, 1 * KiB, 400 * MiB));
  auto p = by_name(infer_latency(obs, kH100Meta));
  expect_near(p, param::l2_far_hit_latency, 460, 0.03);
  expect_bracket(p, param::l2_size, 50 * MiB, 1.05);
  expect_near(p, param::dram_latency, 770, 0.03);
}

TEST(LatencyLadder, QuickSweepStillSplitsTheL2) {
  // --quick: coarse steps of 2^(1/2), two rounds of refinement.
  H100Like h;
  for (unsigned seed : {1u, 2u, 3u}) {
    auto obs = to_observations(kLdCgProbe, sweep(h.cg, 1 * KiB, 225 * MiB, seed, 2, 1.414213562));
    auto p = by_name(infer_latency(obs, kH100Meta));
    expect_near(p, param::l2_near_hit_latency, 250, 0.02);
    expect_near(p, param::l2_far_hit_latency, 460, 0.03);
    expect_near(p, param::dram_latency, 770, 0.03);
    expect_bracket(p, param::l2_segment_size, h.segment, 1.2);
    expect_bracket(p, param::l2_size, h.l2, 1.2);
  }
}

TEST(LatencyLadder, StepInsideTheNearL2IsNotTakenForTheFarPartition) {
  // A small step inside the near partition (TLB reach, say) before the real split at 25 MiB.
  Model cg{{{250, 8 * MiB}, {290, 25 * MiB}, {460, 50 * MiB}, {770, 0}}};
  auto obs = to_observations(kLdCgProbe, sweep(cg, 1 * KiB, 225 * MiB));
  auto p = by_name(infer_latency(obs, kH100Meta));
  expect_near(p, param::l2_near_hit_latency, 250, 0.02);
  expect_bracket(p, param::l2_segment_size, 25 * MiB, 1.05);
  expect_near(p, param::l2_far_hit_latency, 460, 0.03);
  expect_bracket(p, param::l2_size, 50 * MiB, 1.05);
}

TEST(LatencyLadder, CreepBeforeTheCliffDoesNotMoveTheSize) {
  // The H100's L1 misses a little before it is full (up to 4 % above the hit level in the last
  // 5 % of its capacity), by a different amount in each run; the size stays at the cliff.
  H100Like h;
  auto obs = h.observations(0.002);
  auto crept = obs;
  for (auto& o : crept)
    if (o.probe == kLdGlobalProbe && o.param(memory_chase::kFootprintColumn) > 0.93 * h.l1 &&
        o.param(memory_chase::kFootprintColumn) <= h.l1)
      o.value *= 1.04;
  auto a = by_name(infer_latency(obs, kH100Meta));
  auto b = by_name(infer_latency(crept, kH100Meta));
  expect_bracket(b, param::l1_size, h.l1, 1.05);
  EXPECT_EQ(a[param::l1_size].low, b[param::l1_size].low);
  EXPECT_EQ(a[param::l1_size].high, b[param::l1_size].high);
}

TEST(LatencyLadder, FewLineFootprintsDoNotBiasTheL2Level) {
  // A chase over a few lines visits a few L2 slices: the level there is off by a few % (up or
  // down, depending on where the pages landed); it is read from footprints of L2/64 and up.
  H100Like h;
  for (double bias : {1.03, 0.97}) {
    auto obs = h.observations(0.002);
    for (auto& o : obs)
      if (o.probe == kLdCgProbe && o.param(memory_chase::kFootprintColumn) < 128 * KiB)
        o.value *= bias;
    auto p = by_name(infer_latency(obs, kH100Meta));
    expect_near(p, param::l2_near_hit_latency, 250, 0.003);
    EXPECT_GT(p[param::l2_near_hit_latency].confidence, 0.9);
    EXPECT_NE(p[param::l2_near_hit_latency].method.find("L2/64"), std::string::npos);
  }
}

TEST(LatencyLadder, ShelfBetweenThePartitionsIsNotTheFarLevel) {
  // A run of points part-way up the ramp from the near to the far level (the H100 showed one at
  // 494 cycles, 30-31 MiB, in one run only): the far level is the one the L2 size ends.
  Model cg{{{250, 25 * MiB}, {400, 34 * MiB}, {460, 50 * MiB}, {770, 0}}};
  auto p =
      by_name(infer_latency(to_observations(kLdCgProbe, sweep(cg, 1 * KiB, 225 * MiB)), kH100Meta));
  expect_near(p, param::l2_near_hit_latency, 250, 0.02);
  expect_bracket(p, param::l2_segment_size, 25 * MiB, 1.05);
  expect_near(p, param::l2_far_hit_latency, 460, 0.03);
  expect_bracket(p, param::l2_size, 50 * MiB, 1.05);
  expect_near(p, param::dram_latency, 770, 0.03);
}

TEST(LatencyLadder, RoundTripsThroughTheObservationsFile) {
  H100Like h;
  auto obs = h.observations(0.005);
  Metadata meta = kH100Meta;
  auto path = std::filesystem::temp_directory_path() / "gpuprobe_test_latency.csv";
  {
    std::ofstream f(path);
    f << format_observations(meta, obs);
  }
  Metadata read_meta;
  auto back = read_observations(path.string(), &read_meta);
  std::filesystem::remove(path);
  auto direct = infer_latency(obs, meta);
  auto via_file = analyze(std::string(kFamily.name), back, read_meta);  // the registered analyzer
  ASSERT_EQ(direct.size(), via_file.size());
  for (size_t i = 0; i < direct.size(); ++i) {
    EXPECT_EQ(direct[i].name, via_file[i].name);
    EXPECT_NEAR(direct[i].value, via_file[i].value, 1e-9 * direct[i].value);
  }
}

TEST(LatencyLadder, RefinedSweepIsShortAndRepeatable) {
  H100Like h;
  h.cg.noise = 0.005;
  auto a = sweep(h.cg, 1 * KiB, 225 * MiB, 21);
  auto b = sweep(h.cg, 1 * KiB, 225 * MiB, 22);
  EXPECT_LT(a.size(), 110u);
  auto pa = by_name(infer_latency(to_observations(kLdCgProbe, a), kH100Meta));
  auto pb = by_name(infer_latency(to_observations(kLdCgProbe, b), kH100Meta));
  for (const char* name :
       {param::l2_near_hit_latency, param::l2_far_hit_latency, param::dram_latency})
    EXPECT_NEAR(pa[name].value, pb[name].value, 0.01 * pa[name].value) << name;
  EXPECT_NEAR(pa[param::l2_size].value, pb[param::l2_size].value, 0.05 * pa[param::l2_size].value);
}

// --- the H100 ---------------------------------------------------------------------------------

TEST(LatencyLadder, RecordedH100Curve) {
  const std::string path = std::string(GPUPROBE_TEST_DATA) + "/h100_latency.csv";
  REQUIRE_RECORDED(std::filesystem::exists(path)) << path;
  Metadata meta;
  auto obs = read_observations(path, &meta);
  auto p = by_name(infer_latency(obs, meta));
  auto in = [&](const std::string& name, double lo, double hi) {
    auto it = p.find(name);
    ASSERT_NE(it, p.end()) << name << " not inferred from " << path;
    EXPECT_GE(it->second.value, lo) << name;
    EXPECT_LE(it->second.value, hi) << name;
  };
  in(param::l1_hit_latency, 20, 60);
  in(param::l1_size, 64 * KiB, 512 * KiB);
  in(param::l2_near_hit_latency, 150, 400);
  in(param::l2_size, 25 * MiB, 100 * MiB);
  in(param::dram_latency, 400, 1200);
  in(param::shared_latency, 15, 60);
  in(param::readonly_hit_latency, 20, 60);
  in(param::constant_hit_latency, 10, 60);
  EXPECT_LT(p[param::l1_hit_latency].value, p[param::l2_near_hit_latency].value);
  EXPECT_LT(p[param::l2_near_hit_latency].value, p[param::dram_latency].value);
  if (p.count(param::l2_far_hit_latency)) {
    EXPECT_GT(p[param::l2_far_hit_latency].value, p[param::l2_near_hit_latency].value);
    EXPECT_LT(p[param::l2_far_hit_latency].value, p[param::dram_latency].value);
    EXPECT_LT(p[param::l2_segment_size].value, p[param::l2_size].value);
  }
}

// The family's criterion: repeating the family gives latencies within 1 % and the same sizes (the
// sweep points that bracket each capacity overlap). The two runs were made one after the other
// on the same H100 in the first session: the whole suite, then the latency family alone.
TEST(LatencyLadder, RecordedH100RunIsRepeatable) {
  auto [a, b] = recorded_pair("h100_latency_first_session", "h100_latency_first_session_repeat");
  REQUIRE_RECORDED(!a.empty() && !b.empty()) << "the first session's two H100 runs are absent";
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.size(), 11u);
  for (const auto& [name, pa] : a) {
    ASSERT_EQ(b.count(name), 1u) << name << " inferred from one run only";
    const Parameter& pb = b.at(name);
    if (pa.unit == "cycles") {
      EXPECT_NEAR(pa.value, pb.value, 0.01 * pa.value) << name;
    } else if (pa.unit == "levels") {
      EXPECT_EQ(pa.value, pb.value) << name;
    } else {
      EXPECT_EQ(pa.unit, "bytes") << name;
      if (name == param::l2_segment_size) {
        // Where the near partition ends depends on which partition the run's physical pages
        // land in, which changes from one allocation to the next: on the H100 the two runs put
        // it 2.3 % apart (24.2 and 24.8 MiB). The "same sizes" holds for the
        // capacities; the segment is held to 5 %.
        EXPECT_NEAR(pa.value, pb.value, 0.05 * pa.value) << name;
        continue;
      }
      EXPECT_LE(pa.low, pb.high) << name;
      EXPECT_LE(pb.low, pa.high) << name;
    }
  }
}

// Two H100s of the same kind on different days (the first session's run and the latest):
// the latencies agree to 3 % (they moved by up to 2 %: another board, another clock history),
// the level count is the same.
TEST(LatencyLadder, RecordedH100SessionsAgree) {
  auto [a, b] = recorded_pair("h100_latency_first_session", "h100_latency");
  REQUIRE_RECORDED(!a.empty() && !b.empty()) << "a recorded H100 latency run is absent";
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, pa] : a) {
    ASSERT_EQ(b.count(name), 1u) << name;
    if (pa.unit == "cycles") {
      EXPECT_NEAR(pa.value, b.at(name).value, 0.03 * pa.value) << name;
    }
  }
}

// A file that repeats its rows (a 244k-row latency.csv once was a run's rows many times
// over) is the same curve: rows of one footprint are one point, and the ladder is the run's.
TEST(LatencyLadder, RepeatedRowsAreOnePointEach) {
  const std::string path = std::string(GPUPROBE_TEST_DATA) + "/h100_latency.csv";
  REQUIRE_RECORDED(std::filesystem::exists(path)) << path;
  Metadata meta;
  const auto obs = read_observations(path, &meta);
  std::vector<Observation> thrice;
  for (int k = 0; k < 3; ++k) append(thrice, obs);
  EXPECT_EQ(latency_curve(thrice, kLdCgProbe).size(), latency_curve(obs, kLdCgProbe).size());
  const auto once = infer_latency(obs, meta), again = infer_latency(thrice, meta);
  ASSERT_EQ(once.size(), again.size());
  for (size_t i = 0; i < once.size(); ++i) {
    EXPECT_EQ(once[i].name, again[i].name);
    EXPECT_EQ(once[i].value, again[i].value) << once[i].name;
    EXPECT_EQ(once[i].confidence, again[i].confidence) << once[i].name;
  }
}

// The H100's l1_size interval once reached 291.6 KiB, past the 256 KiB its unified
// L1/shared array holds. No interval goes past shared memory per SM + 32 KiB (the run's
// shared_per_sm_bytes), whatever the step's shape; a reading past it is cut and trusted less.
TEST(LatencyLadder, L1IntervalStaysWithinTheUnifiedArray) {
  const double most = 233472 + 32 * KiB;  // kH100Meta's shared memory per SM + 32 KiB
  const std::string path = std::string(GPUPROBE_TEST_DATA) + "/h100_latency.csv";
  REQUIRE_RECORDED(std::filesystem::exists(path)) << path;
  Metadata meta;
  auto recorded = by_name(infer_latency(read_observations(path, &meta), meta));
  ASSERT_EQ(analysis::meta_number(meta, "shared_per_sm_bytes"), 233472);
  EXPECT_LE(recorded[param::l1_size].high, most);
  EXPECT_GE(recorded[param::l1_size].high, recorded[param::l1_size].value);
  EXPECT_NE(recorded[param::l1_size].method.find("unified L1/shared array"), std::string::npos);
  H100Like h;
  h.global.levels[0].sharpness = 1.5;  // a gradual L1 whose step runs far past the array
  auto p = by_name(infer_latency(h.observations(0.005, 5), kH100Meta));
  EXPECT_LE(p[param::l1_size].high, most);
  EXPECT_LE(p[param::l1_size].low, p[param::l1_size].value);
  EXPECT_LE(p[param::l1_size].value, p[param::l1_size].high);
  // an L1 read past the bound (a model of 300 KiB) is cut to it, below confidence 0.5
  Model big = h.global;
  big.levels[0] = {33, 300 * KiB};
  auto b = by_name(
      infer_latency(to_observations(kLdGlobalProbe, sweep(big, KiB, 225 * MiB)), kH100Meta));
  EXPECT_EQ(b[param::l1_size].value, most);
  EXPECT_LT(b[param::l1_size].confidence, 0.5);
  // without the attribute nothing is cut
  auto free = by_name(infer_latency(to_observations(kLdGlobalProbe, sweep(big, KiB, 225 * MiB)),
                                    {{"l2_bytes", "52428800"}}));
  EXPECT_GT(free[param::l1_size].value, most);
}

// --- other designs' ladders ------------------------------------------------------------------

namespace {

// The chase another vendor's GPU gives (a public curve converted: ld_global's alone), over the
// family's own sweep (1 KiB to 1 GiB).
std::vector<Observation> one_chase(const Model& m, unsigned seed) {
  return to_observations(kLdGlobalProbe, sweep(m, KiB, 1024 * MiB, seed));
}

}  // namespace

// CDNA 3 (MI300X): a 256 MB Infinity Cache at about 456 cycles before DRAM at about 880, with a
// TLB reach inside it (+70 cycles past 32 MiB: a level of its own, the step 1.16x). The cache read
// as DRAM before, the TLB step's level being too close to be a cache's: a level that a farther,
// slower tier follows is never DRAM.
TEST(LatencyLadder, LastLevelCacheBehindATlbStepIsNotDram) {
  Model m{{{120, 32 * KiB, 20},
           {240, 4 * MiB, 12},
           {456, 32 * MiB, 30},
           {526, 256 * MiB, 8},
           {880, 0}}};
  for (const Metadata& meta : {Metadata{{"l2_bytes", "4194304"}}, Metadata{}})
    for (unsigned seed : {1u, 2u, 3u}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + (meta.empty() ? ", no metadata" : ""));
      auto p = by_name(infer_latency(one_chase(m, seed), meta));
      expect_near(p, param::l1_hit_latency, 120, 0.03);
      expect_near(p, param::l2_hit_latency, 240, 0.03);
      expect_near(p, param::llc_hit_latency, 456, 0.03);
      expect_near(p, param::dram_latency, 880, 0.03);
      EXPECT_EQ(p[param::cache_levels].value, 3);
      expect_near(p, param::llc_size, 256 * MiB, 0.1);  // the step past the TLB's, not the TLB's
    }
}

// RDNA 2: a 128 KB mid cache at about 120 cycles between a 16 KB L0 and a 4 MB L2 at about 220
// (then a 128 MB Infinity Cache). Read as the L2 at 0.97 before: with the runtime's L2 size the
// step nearest it is the L2's and the levels before it are L1-class; with no metadata at all
// the names are a guess (below 0.5) and the method says why.
TEST(LatencyLadder, MidCacheBeforeTheL2IsNamed) {
  Model m{{{75, 16 * KiB, 20},
           {120, 128 * KiB, 12},
           {220, 4 * MiB, 12},
           {400, 128 * MiB, 8},
           {720, 0}}};
  for (unsigned seed : {1u, 2u, 3u}) {
    auto p = by_name(infer_latency(one_chase(m, seed), {{"l2_bytes", "4194304"}}));
    expect_near(p, param::l1_hit_latency, 75, 0.03);
    expect_near(p, param::mid_cache_hit_latency, 120, 0.03);
    expect_near(p, param::mid_cache_size, 128 * KiB, 0.1);
    expect_near(p, param::l2_hit_latency, 220, 0.03);
    expect_near(p, param::l2_size, 4 * MiB, 0.1);
    expect_near(p, param::llc_hit_latency, 400, 0.03);
    expect_near(p, param::dram_latency, 720, 0.03);
    EXPECT_EQ(p[param::cache_levels].value, 4);
    EXPECT_GT(p[param::mid_cache_hit_latency].confidence, 0.5);
    auto guess = by_name(infer_latency(one_chase(m, seed), {}));
    for (const char* name : {param::mid_cache_hit_latency, param::l2_hit_latency,
                             param::llc_hit_latency, param::cache_levels}) {
      ASSERT_EQ(guess.count(name), 1u) << name;
      EXPECT_LT(guess[name].confidence, 0.5) << name;
      EXPECT_NE(guess[name].method.find("named by their order and sizes alone"), std::string::npos)
          << name;
    }
    expect_near(guess, param::mid_cache_hit_latency, 120, 0.03);
    expect_near(guess, param::l2_hit_latency, 220, 0.03);
  }
}

// Blackwell (B200): two dies, the second die's L2 half at 660-690 cycles past a ~330-cycle L2,
// DRAM at about 860: near and far L2 as Hopper's partitions, and no last-level cache, though
// DRAM is only 1.3x the far half.
TEST(LatencyLadder, SecondDiesL2HalfIsTheFarL2) {
  Model g{{{33, 240 * KiB}, {330, 63 * MiB, 30}, {675, 126 * MiB, 30}, {860, 0}}};
  Model cg{{{330, 63 * MiB, 30}, {675, 126 * MiB, 30}, {860, 0}}};
  const Metadata meta = {{"l2_bytes", "132120576"}, {"shared_per_sm_bytes", "233472"}};
  for (unsigned seed : {1u, 2u, 3u}) {
    std::vector<Observation> obs = one_chase(g, seed);
    append(obs, to_observations(kLdCgProbe, sweep(cg, KiB, 1024 * MiB, seed + 10)));
    auto p = by_name(infer_latency(obs, meta));
    expect_near(p, param::l2_near_hit_latency, 330, 0.03);
    expect_near(p, param::l2_far_hit_latency, 675, 0.03);
    expect_near(p, param::l2_segment_size, 63 * MiB, 0.1);
    expect_near(p, param::l2_size, 126 * MiB, 0.1);
    expect_near(p, param::dram_latency, 860, 0.03);
    EXPECT_EQ(p.count(param::llc_hit_latency), 0u);
    EXPECT_EQ(p[param::cache_levels].value, 2);
  }
}
