// The chip's topology: the SM x L2 latency map (partitions, each SM's near one, per-SM
// spreads read from both sides) and GPCs from cluster capacity, placement and L2 contention
// (analysis/gpcs), on synthetic observations and on the recorded H100 run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <random>

#include "analysis/analyzer.hpp"
#include "analysis/gpcs.hpp"
#include "analysis/l2_topology.hpp"
#include "base/parameter_names.hpp"
#include "observation_rows.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"

namespace gpuprobe {
namespace {

// nsm SMs, the first half near partition 0; lines alternate between partitions; near 250,
// far 350 cycles, per-SM offsets and noise.
l2_topology::LatencyMap two_partitions(int nsm, int nlines, double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, noise);
  l2_topology::LatencyMap m;
  for (int s = 0; s < nsm; ++s) {
    m.sms.push_back(s * 2);  // SM ids need not be contiguous
    std::vector<double> row;
    const int near = s < nsm / 2 ? 0 : 1;
    for (int j = 0; j < nlines; ++j) row.push_back((j % 2 == near ? 250 : 350) + s % 7 + n(rng));
    m.lat.push_back(row);
  }
  return m;
}

TEST(L2Topology, TwoPartitionsAndEachSmsNearOne) {
  auto m = two_partitions(132, l2_topology::kLines, 3, 1);
  l2_topology::Topology t;
  ASSERT_TRUE(l2_topology::infer(m, &t));
  EXPECT_EQ(t.partitions, 2);
  EXPECT_EQ(t.split_sms, 132);
  for (int j = 2; j < l2_topology::kLines; ++j)
    EXPECT_EQ(t.line_group[size_t(j)], t.line_group[size_t(j % 2)]);
  EXPECT_NE(t.line_group[0], t.line_group[1]);
  for (int s = 1; s < 132; ++s) EXPECT_EQ(t.sm_group[size_t(s)] == t.sm_group[0], s < 66) << s;
  EXPECT_NEAR(t.near_median[0], 250, 5);
  EXPECT_NEAR(t.far_median[0], 350, 5);
  // Heat-map orders are permutations.
  auto lo = l2_topology::line_order(m, t), so = l2_topology::sm_order(m, t);
  std::sort(lo.begin(), lo.end());
  std::sort(so.begin(), so.end());
  for (size_t k = 0; k < lo.size(); ++k) EXPECT_EQ(lo[k], int(k));
  for (size_t k = 0; k < so.size(); ++k) EXPECT_EQ(so[k], int(k));
}

TEST(L2Topology, OneLevelIsOnePartition) {
  auto m = two_partitions(16, 64, 3, 2);
  for (auto& row : m.lat)
    for (auto& v : row) v = 250 + std::fmod(v, 5);  // every line near for every SM
  l2_topology::Topology t;
  ASSERT_TRUE(l2_topology::infer(m, &t));
  EXPECT_EQ(t.partitions, 1);
  EXPECT_EQ(t.split_sms, 0);
  EXPECT_FALSE(l2_topology::infer({}, &t));
}

TEST(L2Topology, GroupsMergeThroughSharedSms) {
  auto g = l2_topology::co_scheduled_groups({{1, 2}, {2, 3}, {7, 8}, {4}});
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0], (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(g[1], (std::vector<int>{4}));
  EXPECT_EQ(g[2], (std::vector<int>{7, 8}));
}

TEST(L2Topology, AnalyzerFromRows) {
  auto m = two_partitions(20, 40, 2, 3);
  std::vector<Observation> obs;
  for (size_t i = 0; i < m.sms.size(); ++i)
    for (size_t j = 0; j < m.lat[i].size(); ++j)
      obs.push_back(make_row(std::string(l2_topology::kFamily.name), l2_topology::kFirstReadProbe,
                             {{l2_topology::kSmColumn, std::to_string(m.sms[i])},
                              {l2_topology::kLineColumn, std::to_string(j)}},
                             m.lat[i][j], "cycles", 0));
  // Two GPCs of 10 SMs, bridged by clusters of 4 and 2.
  int launch = 0;
  for (int base : {0, 20}) {
    for (int k = 0; k < 10; k += 2, ++launch)
      for (int r = 0; r < 4; ++r)
        obs.push_back(make_row(std::string(l2_topology::kFamily.name),
                               l2_topology::kClusterPlacementProbe,
                               {{l2_topology::kLaunchColumn, std::to_string(launch)},
                                {l2_topology::kClusterSizeColumn, "4"},
                                {l2_topology::kClusterColumn, "0"},
                                {l2_topology::kRankColumn, std::to_string(r)}},
                               base + (k + r) % 10 * 2, l2_topology::kSmUnit, 0));
  }
  auto ps = analyze(std::string(l2_topology::kFamily.name), obs);
  expect_well_formed(ps);
  EXPECT_DOUBLE_EQ(find(ps, param::l2_partitions)->value, 2);
  EXPECT_DOUBLE_EQ(find(ps, "l2_near_sm_count_0")->value + find(ps, "l2_near_sm_count_1")->value,
                   20);
  EXPECT_NE(find(ps, param::l2_near_hit_latency_sm_spread), nullptr);
  EXPECT_NE(find(ps, param::l2_far_hit_latency_sm_spread), nullptr);
  EXPECT_DOUBLE_EQ(find(ps, param::gpc_count)->value, 2);
}

TEST(L2Topology, WriterSideSeesEveryLineNear) {
  // SMs 0..65 sit beside the writer: every line near. The others see two levels.
  auto m = two_partitions(132, l2_topology::kLines, 3, 4);
  for (int s = 0; s < 66; ++s)
    for (auto& v : m.lat[size_t(s)]) v = std::min(v, 260.0);
  l2_topology::Topology t;
  ASSERT_TRUE(l2_topology::infer(m, &t));
  EXPECT_EQ(t.partitions, 2);
  EXPECT_EQ(t.split_sms, 66);
  for (int s = 1; s < 132; ++s) EXPECT_EQ(t.sm_group[size_t(s)] == t.sm_group[0], s < 66) << s;
  EXPECT_TRUE(std::isnan(t.far_median[0]));
  EXPECT_NEAR(t.far_median[100], 350, 5);
}

// Model chips over seeds: 2..4 partitions (lines dealt round-robin, SMs in equal blocks), a
// writer side that sees every line near, noise of a few cycles and stray outlier cells; the
// partition count and each SM's near group must come out right for nearly every seed.
TEST(L2Topology, ModelChipsOverSeeds) {
  int right = 0, trials = 0;
  for (int parts : {2, 3, 4})
    for (unsigned seed = 0; seed < 20; ++seed, ++trials) {
      std::mt19937 rng(seed * 31 + parts);
      std::normal_distribution<double> noise(0, 4);
      std::uniform_real_distribution<double> u(0, 1);
      const int nsm = 120, nl = l2_topology::kLines;
      l2_topology::LatencyMap m;
      std::vector<int> truth;
      for (int s = 0; s < nsm; ++s) {
        const int near = s * parts / nsm;
        truth.push_back(near);
        const bool writer_side = parts == 2 && near == 0;
        m.sms.push_back(s);
        std::vector<double> row;
        for (int j = 0; j < nl; ++j) {
          double v = (j % parts == near || writer_side ? 280 : 420 + 15 * (j % parts)) + (s % 9) +
                     noise(rng);
          if (u(rng) < 0.01) v += 300;  // a stray slow read
          row.push_back(v);
        }
        m.lat.push_back(row);
      }
      l2_topology::Topology t;
      if (!l2_topology::infer(m, &t) || t.partitions != parts) continue;
      // Groups are numbered in first-seen order: map them through SM 0's and the others'.
      std::map<int, int> to_truth;
      bool ok = true;
      for (int s = 0; s < nsm && ok; ++s) {
        const int g = t.sm_group[size_t(s)];
        auto it = to_truth.find(g);
        if (it == to_truth.end()) to_truth[g] = truth[size_t(s)];
        else ok = it->second == truth[size_t(s)];
      }
      right += ok && int(to_truth.size()) == parts;
    }
  EXPECT_GE(right, trials * 95 / 100) << right << " of " << trials;
}

TEST(L2Topology, RecordedH100) {
  SKIP_WITHOUT(l2_topology::kFamily.name);
  auto ps = recorded_parameters(std::string(l2_topology::kFamily.name));
  expect_well_formed(ps);
  EXPECT_DOUBLE_EQ(find(ps, param::l2_partitions)->value, 2);
  EXPECT_GE(find(ps, param::l2_partitions)->confidence, 0.8);
  // 132 SMs, half beside each partition.
  EXPECT_NEAR(find(ps, "l2_near_sm_count_0")->value, 66, 8);
  EXPECT_NEAR(find(ps, "l2_near_sm_count_1")->value, 66, 8);
  EXPECT_LT(find(ps, param::l2_near_hit_latency_sm_spread)->value, 60);
  EXPECT_LT(find(ps, param::l2_far_hit_latency_sm_spread)->value, 80);
  // H100 SXM has 8 GPCs: the count is an upper bound, its range must hold 8 and say it is unsure.
  const Parameter* gpc = find(ps, param::gpc_count);
  EXPECT_LE(gpc->low, 8);
  EXPECT_GE(gpc->high, 8);
  EXPECT_LE(gpc->confidence, 0.5);
}

using l2_topology::ContentionCell;
using l2_topology::GpcInput;

// Domains as SM id lists, consecutive ids, in the order given.
std::vector<std::vector<int>> groups_of(const std::vector<int>& sizes) {
  std::vector<std::vector<int>> out;
  int next = 0;
  for (int s : sizes) {
    out.emplace_back(size_t(s));
    std::iota(out.back().begin(), out.back().end(), next);
    next += s;
  }
  return out;
}

// A chip whose clusters form in `domains`, clusters up to `largest` blocks, every domain seen
// whole in placements.
GpcInput chip(const std::vector<int>& domains, int largest) {
  GpcInput in;
  in.sm_count = std::accumulate(domains.begin(), domains.end(), 0);
  in.unit = 2;
  in.capacity = l2_topology::capacity_of(domains, largest);
  in.groups = groups_of(domains);
  return in;
}

// The H100 SXM as its driver reports it: c(k) of the committed runs (k = 2..16).
const std::map<int, int> kH100Capacity = {{2, 66}, {3, 39}, {4, 30}, {5, 22}, {6, 17},
                                          {7, 15}, {8, 15}, {9, 9},  {10, 7}, {11, 7},
                                          {12, 7}, {13, 7}, {14, 7}, {15, 7}, {16, 7}};
const std::vector<int> kH100Domains = {18, 18, 16, 16, 16, 16, 16, 8, 2, 2, 2, 2};

TEST(Gpcs, H100CapacityFitsOneDomainPartition) {
  auto s = l2_topology::domain_partitions(kH100Capacity, 132, 2, {});
  ASSERT_TRUE(s.complete);
  ASSERT_EQ(s.partitions.size(), 1u);
  EXPECT_EQ(s.partitions[0], kH100Domains);
  // The eight-GPC reading of 18,18,18,18,18,16,16,10 fits c(2), c(4), c(8), c(16) but not c(3).
  auto other = l2_topology::capacity_of({18, 18, 18, 18, 18, 16, 16, 10}, 16);
  EXPECT_EQ(other[2], 66);
  EXPECT_EQ(other[16], 7);
  EXPECT_NE(other[3], kH100Capacity.at(3));
}

TEST(Gpcs, CapacityOfIsTheFloorModel) {
  auto c = l2_topology::capacity_of({18, 16, 10}, 4);
  EXPECT_EQ(c[1], 44);
  EXPECT_EQ(c[2], 22);
  EXPECT_EQ(c[3], 6 + 5 + 3);
  EXPECT_EQ(c[4], 4 + 4 + 2);
}

// Chips whose domains are their GPCs, clusters up to 16: one partition, the right count.
TEST(Gpcs, KnownConfigurationsWithClustersOf16) {
  const std::vector<std::pair<std::vector<int>, int>> chips = {
      {{18, 18, 16, 16, 16, 16, 16, 16}, 8},  // H100 SXM: 132 SMs, 8 GPCs
      {{18, 16, 16, 16, 16, 16, 16}, 7},      // an H100 PCIe reading: 114 SMs, 7 GPCs
      {{16, 16, 14, 14, 14, 14, 14, 12}, 8},  // another: 114 SMs, 8 GPCs
      {{16, 16, 16, 16, 16, 14, 14}, 7},      // A100: 108 SMs, 7 GPCs
      {{18, 18, 18, 18, 18, 16, 16, 10}, 8},  // uneven
      {{18, 12, 12, 8, 6}, 5},                // very uneven
  };
  for (const auto& [domains, gpcs] : chips) {
    SCOPED_TRACE(::testing::PrintToString(domains));
    auto e = l2_topology::estimate_gpcs(chip(domains, 16));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->value, gpcs);
    EXPECT_EQ(e->low, gpcs);
    EXPECT_EQ(e->high, gpcs);
    EXPECT_GE(e->confidence, 0.5);
    EXPECT_EQ(e->partitions, 1u);
  }
}

// Clusters of at most 8 leave domains past 8 SMs open: several partitions fit; the interval
// must hold the truth, and a value that is wrong must come with a confidence under 0.5.
TEST(Gpcs, SmallClustersGiveAWideIntervalNeverAConfidentWrongValue) {
  const std::vector<std::pair<std::vector<int>, int>> chips = {
      {{18, 18, 16, 16, 16, 16, 16, 16}, 8},
      {{16, 16, 16, 16, 16, 14, 14}, 7},
      {{18, 18, 18, 18, 18, 16, 16, 10}, 8},
  };
  for (const auto& [domains, gpcs] : chips)
    for (int largest : {6, 8}) {
      SCOPED_TRACE(::testing::PrintToString(domains) + " clusters up to " +
                   std::to_string(largest));
      GpcInput in = chip(domains, largest);
      in.groups.clear();  // placements that only saw pairs: no group bounds the domains
      for (int sm = 0; sm < in.sm_count; sm += 2) in.groups.push_back({sm, sm + 1});
      auto e = l2_topology::estimate_gpcs(in);
      ASSERT_TRUE(e);
      EXPECT_LE(e->low, gpcs);
      EXPECT_GE(e->high, gpcs);
      EXPECT_GT(e->high, e->low);
      if (e->value != gpcs) {
        EXPECT_LT(e->confidence, 0.5);
      }
    }
}

TEST(Gpcs, H100WithoutContentionReadsEightAsAGuess) {
  GpcInput in;
  in.sm_count = 132;
  in.unit = 2;
  in.capacity = kH100Capacity;
  in.groups = groups_of(kH100Domains);
  auto e = l2_topology::estimate_gpcs(in);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->value, 8);
  EXPECT_EQ(e->low, 8);
  EXPECT_EQ(e->high, 12);
  EXPECT_LT(e->confidence, 0.5);
  EXPECT_FALSE(e->contention_used);
  EXPECT_EQ(e->domains, kH100Domains);
}

// Contention cells for H100-like domains: `slow(p, h)` cycles per load added when group h
// streams while group p's lowest SM chases, over a 300-cycle chase with a little noise.
std::vector<ContentionCell> contention(const std::vector<std::vector<int>>& groups,
                                       const std::function<double(size_t, size_t)>& slow) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 0.7);
  std::vector<ContentionCell> cells;
  for (size_t p = 0; p < groups.size(); ++p) {
    cells.push_back({groups[p][0], -1, 300 + noise(rng)});
    for (size_t h = 0; h < groups.size(); ++h)
      if (groups[h].size() > 2)
        cells.push_back({groups[p][0], groups[h][0], 300 + slow(p, h) + noise(rng)});
  }
  return cells;
}

GpcInput h100_with(const std::function<double(size_t, size_t)>& slow) {
  GpcInput in;
  in.sm_count = 132;
  in.unit = 2;
  in.capacity = kH100Capacity;
  in.groups = groups_of(kH100Domains);
  in.contention = contention(in.groups, slow);
  return in;
}

// Groups 0..7 are the multi-TPC domains, 8..11 the lone TPCs; the lone TPCs lie in group 7's
// GPC (the domain of 8 SMs), as on the H100.
double gpc_of(size_t g) { return g >= 8 ? 7 : double(g); }

TEST(Gpcs, ContentionJoinsLoneTpcsToTheirGpc) {
  auto e = l2_topology::estimate_gpcs(
      h100_with([](size_t p, size_t h) { return gpc_of(p) == gpc_of(h) ? 40 : 3; }));
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->contention_used);
  EXPECT_EQ(e->value, 8);
  EXPECT_EQ(e->low, 8);
  EXPECT_EQ(e->high, 8);
  EXPECT_GE(e->confidence, 0.7);
  EXPECT_EQ(e->sizes, (std::vector<int>{18, 18, 16, 16, 16, 16, 16, 16}));
}

TEST(Gpcs, LoneTpcsThatStandApartAreGpcs) {
  // Lone TPCs slowed by no group: GPCs of their own (at least one more than the domains).
  auto e =
      l2_topology::estimate_gpcs(h100_with([](size_t p, size_t h) { return p == h ? 40 : 3; }));
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->contention_used);
  EXPECT_EQ(e->value, 12);
  EXPECT_EQ(e->low, 9);
  EXPECT_EQ(e->high, 12);
  EXPECT_LT(e->confidence, 0.5);
}

TEST(Gpcs, ContentionThatIsNotPerGpcIsNotUsed) {
  // No difference: the reading falls back to the domains, a guess.
  auto flat = l2_topology::estimate_gpcs(h100_with([](size_t, size_t) { return 5; }));
  ASSERT_TRUE(flat);
  EXPECT_FALSE(flat->contention_used);
  EXPECT_LT(flat->confidence, 0.5);
  EXPECT_NE(flat->reading.find("not informative"), std::string::npos);
  // Half the chip slows everyone on it (a partition-wide link, not a GPC's).
  auto half = l2_topology::estimate_gpcs(
      h100_with([](size_t p, size_t h) { return (gpc_of(p) < 4) == (gpc_of(h) < 4) ? 40 : 3; }));
  ASSERT_TRUE(half);
  EXPECT_FALSE(half->contention_used);
  EXPECT_LT(half->confidence, 0.5);
}

TEST(Gpcs, LoneTpcSlowedByTwoGroupsIsUndecided) {
  auto e = l2_topology::estimate_gpcs(h100_with([](size_t p, size_t h) {
    if (p == 8) return h == 7 || h == 6 ? 40.0 : 3.0;
    return gpc_of(p) == gpc_of(h) ? 40.0 : 3.0;
  }));
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->contention_used);
  EXPECT_LE(e->low, 8);
  EXPECT_GE(e->high, 9);
  EXPECT_LT(e->confidence, 0.5);
}

TEST(Gpcs, CapacityThatNoPartitionFitsFallsBackToTheGroups) {
  GpcInput in = chip({16, 16, 16}, 8);
  in.capacity[3] += 4;  // not the floor model
  auto e = l2_topology::estimate_gpcs(in);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->partitions, 0u);
  EXPECT_EQ(e->value, 3);
  EXPECT_LE(e->confidence, 0.2);
}

TEST(Gpcs, TpcUnitFromPairs) {
  std::map<int, int> c = {{2, 4}};
  std::vector<std::pair<int, std::vector<int>>> clusters = {
      {2, {0, 1}}, {2, {2, 3}}, {2, {4, 5}}, {2, {6, 7}}, {4, {0, 1, 6, 7}}};
  EXPECT_EQ(l2_topology::tpc_unit(clusters, 8, c), 2);
  clusters.push_back({4, {0, 2, 1, 3}});  // ranks 0, 1 on two TPCs
  EXPECT_EQ(l2_topology::tpc_unit(clusters, 8, c), 1);
  EXPECT_EQ(l2_topology::tpc_unit({{2, {0, 1}}}, 8, {{2, 3}}), 1);  // c(2) does not pair every SM
}

TEST(Gpcs, RecordedH100PlacementsGiveEightAndSixtySixTpcs) {
  SKIP_WITHOUT(l2_topology::kFamily.name);
  auto ps = recorded_parameters(std::string(l2_topology::kFamily.name));
  const Parameter* gpc = find(ps, param::gpc_count);
  ASSERT_NE(gpc, nullptr);
  // The run has no contention probe: eight, as a guess, with the lone TPCs' twelve above.
  EXPECT_EQ(gpc->value, 8);
  EXPECT_EQ(gpc->low, 8);
  EXPECT_EQ(gpc->high, 12);
  EXPECT_LT(gpc->confidence, 0.5);
  EXPECT_NE(gpc->method.find("18,18,16,16,16,16,16,8,2,2,2,2"), std::string::npos) << gpc->method;
  const Parameter* tpc = find(ps, param::tpc_count);
  ASSERT_NE(tpc, nullptr);
  EXPECT_EQ(tpc->value, 66);  // the published SXM5 figure
}

// Per-SM level rows: SM s near at 280 + s % 7, far at 480 + (s % 11), over 500 lines each.
std::vector<Observation> level_rows(int sms) {
  std::vector<Observation> obs;
  for (int s = 0; s < sms; ++s) {
    for (const char* level : {"near", "far"}) {
      const double v = std::string(level) == "near" ? 280 + s % 7 : 480 + s % 11;
      Observation o = make_row(std::string(l2_topology::kFamily.name), l2_topology::kSmLevelProbe,
                               {{l2_topology::kSmColumn, std::to_string(s)},
                                {l2_topology::kLevelColumn, level},
                                {l2_topology::kWriterColumn, "0"}},
                               v, "cycles", 0.02);
      o.reps = 500;
      obs.push_back(o);
    }
  }
  return obs;
}

TEST(L2Map, SpreadsFromEverySmsLevels) {
  auto obs = level_rows(132);
  // A map for the partitions: half the SMs near lines 0..31, the others near 32..63.
  for (int s = 0; s < 132; ++s)
    for (int j = 0; j < l2_topology::kLines; ++j) {
      const bool near = (j < 32) == (s < 66);
      obs.push_back(make_row(std::string(l2_topology::kFamily.name), l2_topology::kFirstReadProbe,
                             {{l2_topology::kSmColumn, std::to_string(s)},
                              {l2_topology::kLineColumn, std::to_string(j)}},
                             near ? 280 + s % 7 : 480 + s % 11, "cycles", 0));
    }
  auto ps = analyze(std::string(l2_topology::kFamily.name), obs, {});
  expect_well_formed(ps);
  EXPECT_EQ(find(ps, param::l2_partitions)->value, 2);
  EXPECT_EQ(find(ps, "l2_near_sm_count_0")->value, 66);
  EXPECT_EQ(find(ps, "l2_near_sm_count_1")->value, 66);
  const Parameter* far = find(ps, param::l2_far_hit_latency_sm_spread);
  ASSERT_NE(far, nullptr);
  EXPECT_DOUBLE_EQ(far->value, 10);
  EXPECT_GT(far->high, far->value);  // the medians' standard error
  EXPECT_NE(far->method.find("132 SMs"), std::string::npos) << far->method;
  EXPECT_DOUBLE_EQ(find(ps, param::l2_near_hit_latency_sm_spread)->value, 6);
}

TEST(L2Map, SplitLevelsAtTheSmsOwnThreshold) {
  std::vector<double> row;
  for (int j = 0; j < 100; ++j) row.push_back(j % 2 ? 300 + j % 5 : 500 + j % 3);
  auto [near, far] = l2_topology::split_levels(row);
  EXPECT_EQ(near.size(), 50u);
  EXPECT_EQ(far.size(), 50u);
  auto [one, none] = l2_topology::split_levels(std::vector<double>(50, 300));
  EXPECT_EQ(one.size(), 50u);
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace gpuprobe
