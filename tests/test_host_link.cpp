// The host link: copy engine and SM copies, pageable and pinned, and mapped-memory latency,
// on synthetic observations and on the recorded H100 run.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <utility>

#include "analysis/analyzer.hpp"
#include "analysis/host_link.hpp"
#include "base/node.hpp"
#include "base/parameter_names.hpp"
#include "observation_rows.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"

namespace gpuprobe {
namespace {

// A link with a fixed cost per copy: t = overhead + bytes / peak.
std::vector<Observation> link_rows(const std::string& probe, double peak_gbs, double overhead_us) {
  std::vector<Observation> out;
  for (long long b : host_link::transfer_sizes(false)) {
    const double gbs = double(b) / (overhead_us * 1e-6 + double(b) / (peak_gbs * 1e9)) / 1e9;
    out.push_back(make_row(std::string(host_link::kFamily.name), probe,
                           {{host_link::kBytesColumn, std::to_string(b)}}, gbs, "GB/s", 0.01));
  }
  return out;
}

TEST(HostLink, SizesFrom4KiBTo1GiB) {
  auto s = host_link::transfer_sizes(false);
  EXPECT_EQ(s.front(), 4096);
  EXPECT_EQ(s.back(), 1ll << 30);
  EXPECT_EQ(host_link::transfer_sizes(true).back(), 64ll << 20);
}

TEST(HostLink, PlateauIgnoresSmallCopies) {
  auto rows = link_rows(host_link::kCeH2dPinnedProbe, 54, 5);
  host_link::Plateau p;
  ASSERT_TRUE(host_link::plateau(rows, &p));
  EXPECT_NEAR(p.value, 54, 2);
  EXPECT_GE(p.first_size, 1 << 20);  // 4 KiB copies pay the 5 us overhead
  EXPECT_GE(p.points, 2);
  EXPECT_FALSE(host_link::plateau({}, &p));
}

// A quick run's sizes stop at 64 MiB: where a link with a large cost per copy is still rising
// there, its best is one point at the largest size, less sure and said to be so.
TEST(HostLink, ABestAtTheLargestSizeMayStillRise) {
  std::vector<Observation> rows;
  for (const auto& o : link_rows(host_link::kCeD2hPageableProbe, 17, 3000))
    if (o.param(host_link::kBytesColumn) <= 64 * 1048576.0) rows.push_back(o);
  host_link::Plateau p;
  ASSERT_TRUE(host_link::plateau(rows, &p));
  EXPECT_TRUE(p.at_largest);
  EXPECT_LT(p.confidence, 0.65);
  const auto ps = analyze(std::string(host_link::kFamily.name), rows);
  EXPECT_EQ(find(ps, param::d2h_bandwidth_pageable),
            nullptr);  // no size reaches the sustained range
  const Parameter* d2h = find(ps, param::d2h_bandwidth_pageable_peak);
  ASSERT_NE(d2h, nullptr);
  EXPECT_NE(d2h->method.find("may still rise"), std::string::npos) << d2h->method;
  ASSERT_TRUE(host_link::plateau(link_rows(host_link::kCeD2hPageableProbe, 17, 5), &p));
  EXPECT_FALSE(p.at_largest);
}

// Links of 10..60 GB/s with 1..20 us per copy and 3 % noise: the plateau lands within 5 %.
TEST(HostLink, PlateauOverModelLinksAndSeeds) {
  int right = 0, trials = 0;
  for (double peak : {10.0, 25.0, 54.0})
    for (double overhead : {1.0, 5.0, 20.0})
      for (unsigned seed = 0; seed < 10; ++seed, ++trials) {
        std::mt19937 rng(seed);
        std::normal_distribution<double> noise(0, 0.03);
        auto rows = link_rows(host_link::kCeH2dPinnedProbe, peak, overhead);
        for (auto& o : rows) o.value = o.p50 = o.value * (1 + noise(rng));
        host_link::Plateau p;
        right += host_link::plateau(rows, &p) && std::fabs(p.value / peak - 1) < 0.05;
      }
  EXPECT_GE(right, trials * 95 / 100) << right << " of " << trials;
}

TEST(HostLink, AnalyzerNamesEveryLink) {
  std::vector<Observation> obs;
  for (auto [probe, peak] : {std::pair<const char*, double>{host_link::kCeH2dPinnedProbe, 54},
                             {host_link::kCeD2hPinnedProbe, 55},
                             {host_link::kCeBidirPinnedProbe, 92},
                             {host_link::kCeH2dPageableProbe, 14},
                             {host_link::kSmH2dProbe, 51},
                             {host_link::kSmD2hProbe, 52}}) {
    auto r = link_rows(probe, peak, 4);
    obs.insert(obs.end(), r.begin(), r.end());
  }
  obs.push_back(make_row(std::string(host_link::kFamily.name), host_link::kMappedLatencyProbe,
                         {{host_link::kHopsColumn, "256"}, {host_link::kStrideColumn, "4096"}},
                         1207, "ns", 0.01));
  auto ps = analyze(std::string(host_link::kFamily.name), obs);
  expect_well_formed(ps);
  for (const char* n :
       {param::h2d_bandwidth_pinned, param::d2h_bandwidth_pinned, param::bidir_bandwidth_pinned,
        param::h2d_bandwidth_pageable, param::h2d_bandwidth_sm, param::d2h_bandwidth_sm,
        param::host_mapped_latency})
    EXPECT_NE(find(ps, n), nullptr) << n;
  EXPECT_NEAR(find(ps, param::bidir_bandwidth_pinned)->value, 92, 3);
  EXPECT_NE(find(ps, param::h2d_bandwidth_pageable_peak), nullptr);
  EXPECT_EQ(find(ps, param::d2h_bandwidth_pageable), nullptr);  // not measured, not reported
  EXPECT_EQ(find(ps, param::d2h_bandwidth_pageable_peak), nullptr);
  EXPECT_DOUBLE_EQ(find(ps, param::host_mapped_latency)->value, 1207);
}

// A copy's rate rises smoothly with its size: a size below both neighbours (a dip) or above
// both (a spike) by more than 10 %, or a largest size falling more than that, disagrees.
TEST(HostLink, SizesWhoseNeighboursDisagree) {
  EXPECT_TRUE(host_link::disagreeing({1, 5, 17, 36, 48, 53, 55, 55, 55, 55}).empty());
  // CE H2D at 64 KiB, and the bidirectional curve: the dip first, then the size it makes a spike.
  EXPECT_EQ(host_link::disagreeing({1, 5, 2, 36, 48}), (std::vector<size_t>{2, 1}));
  EXPECT_EQ(host_link::disagreeing({84, 98, 49, 86, 95}), (std::vector<size_t>{2, 1}));
  EXPECT_EQ(host_link::disagreeing({10, 19.6, 16.9, 16.7}), std::vector<size_t>{1});  // a spike
  EXPECT_EQ(host_link::disagreeing({50, 55, 40}), std::vector<size_t>{2});  // the largest falls
  EXPECT_TRUE(host_link::disagreeing({50, 55, 52}).empty());                // ... within 10 %
  EXPECT_TRUE(host_link::disagreeing({}).empty());
  EXPECT_TRUE(host_link::disagreeing({7}).empty());
}

// The probe measures a disagreeing size again while it has passes and time left: the dip
// first; a third pass outvotes a disturbed one, and then the size agrees.
TEST(HostLink, SizeToRepeatWithinPassesAndBudget) {
  std::vector<std::vector<double>> passes = {{84}, {98}, {49}, {86}, {95}};
  const std::vector<double> cost = {0.01, 0.01, 0.02, 0.05, 0.2};
  EXPECT_EQ(host_link::size_to_repeat(passes, cost, 1), 2);
  EXPECT_EQ(host_link::size_to_repeat(passes, cost, 0.015), 1);  // the dip costs more than is left
  passes[2].push_back(50);  // measured again, as slow: still a dip
  EXPECT_EQ(host_link::size_to_repeat(passes, cost, 1), 2);
  passes[2].push_back(97);  // a third pass: median 50, still disagrees, but no passes are left
  EXPECT_EQ(host_link::size_to_repeat(passes, cost, 1), 1);
  passes[2] = {49, 97, 96};  // the disturbed pass outvoted: every size agrees
  EXPECT_EQ(host_link::size_to_repeat(passes, cost, 1), -1);
  EXPECT_EQ(host_link::size_to_repeat({}, {}, 1), -1);
}

// Passes of one size merge into the median of their medians, the interval over all of them.
TEST(HostLink, PassesOfASizeMerge) {
  std::vector<Observation> rows;
  for (auto [pass, v] : {std::pair<int, double>{1, 49}, {2, 97}, {3, 99}})
    rows.push_back(make_row(
        std::string(host_link::kFamily.name), host_link::kCeBidirPinnedProbe,
        {{host_link::kBytesColumn, "67108864"}, {host_link::kPassColumn, std::to_string(pass)}}, v,
        "GB/s", 0.01));
  rows.push_back(make_row(std::string(host_link::kFamily.name), host_link::kCeBidirPinnedProbe,
                          {{host_link::kBytesColumn, "16777216"}, {host_link::kPassColumn, "1"}},
                          95, "GB/s", 0.01));
  const auto sizes = host_link::size_rates(rows);
  ASSERT_EQ(sizes.size(), 2u);
  EXPECT_EQ(sizes[0].bytes, 16777216);
  EXPECT_EQ(sizes[1].passes, 3);
  EXPECT_DOUBLE_EQ(sizes[1].value, 97);
  EXPECT_DOUBLE_EQ(sizes[1].low, 49 * 0.99);
  EXPECT_DOUBLE_EQ(sizes[1].high, 99 * 1.01);
  EXPECT_LT(sizes[1].confidence, 0.2);  // the passes disagree: a wide spread
  const auto ps = analyze(std::string(host_link::kFamily.name), rows);
  const Parameter* bidir = find(ps, param::bidir_bandwidth_pinned);
  ASSERT_NE(bidir, nullptr);
  EXPECT_NEAR(bidir->value, 96, 1.01);
  EXPECT_NE(bidir->method.find("64 MiB 48.5-100 GB/s over 3 passes"), std::string::npos)
      << bidir->method;
}

// Pageable H2D as the H100 gives it: a peak where the source stays in the host's caches, then
// copies from host DRAM at about half of it. The headline is the sustained rate, the peak named.
TEST(HostLink, PageableHeadlineIsTheSustainedRate) {
  std::vector<Observation> rows;
  const double rates[] = {1.8, 6.7, 11.1, 16.1, 19.6, 16.9, 16.9, 16.7, 11.3, 10.7};
  const auto sizes = host_link::transfer_sizes(false);
  for (size_t i = 0; i < sizes.size(); ++i)
    rows.push_back(make_row(std::string(host_link::kFamily.name), host_link::kCeH2dPageableProbe,
                            {{host_link::kBytesColumn, std::to_string(sizes[i])}}, rates[i], "GB/s",
                            0.01));
  host_link::Sustained s;
  ASSERT_TRUE(host_link::sustained(rows, &s));
  EXPECT_EQ(s.sizes, 2);
  EXPECT_DOUBLE_EQ(s.value, 11);
  EXPECT_DOUBLE_EQ(s.low, 10.7 * 0.99);
  EXPECT_DOUBLE_EQ(s.high, 11.3 * 1.01);
  rows.push_back(make_row(std::string(host_link::kFamily.name), host_link::kHostMemcpyProbe,
                          {{host_link::kBytesColumn, "268435456"}}, 12.5, "GB/s", 0.02));
  const auto ps = analyze(std::string(host_link::kFamily.name), rows);
  const Parameter* h2d = find(ps, param::h2d_bandwidth_pageable);
  const Parameter* peak = find(ps, param::h2d_bandwidth_pageable_peak);
  ASSERT_NE(h2d, nullptr);
  ASSERT_NE(peak, nullptr);
  EXPECT_DOUBLE_EQ(h2d->value, 11);
  EXPECT_DOUBLE_EQ(peak->value, 19.6);
  EXPECT_NE(h2d->method.find("memcpy of that size: 12.5 GB/s"), std::string::npos) << h2d->method;
  EXPECT_NE(h2d->method.find(param::h2d_bandwidth_pageable_peak), std::string::npos) << h2d->method;
  EXPECT_FALSE(host_link::sustained({}, &s));
}

TEST(HostLink, PcieRateAfterTheLineCode) {
  EXPECT_NEAR(node::pcie_line_gbs(5, 16), 63.0, 0.05);  // 32 GT/s x 16 x 128/130 / 8
  EXPECT_NEAR(node::pcie_line_gbs(4, 16), 31.5, 0.05);
  EXPECT_NEAR(node::pcie_line_gbs(3, 8), 7.88, 0.01);
  EXPECT_DOUBLE_EQ(node::pcie_line_gbs(2, 16), 8.0);  // 5 GT/s, 8b/10b
  EXPECT_LT(node::pcie_line_gbs(0, 16), 0);
  EXPECT_LT(node::pcie_line_gbs(9, 16), 0);
  EXPECT_LT(node::pcie_line_gbs(5, 0), 0);
  // The share of it a copy reaches is in the method text.
  auto rows = link_rows(host_link::kCeH2dPinnedProbe, 55, 5);
  rows.push_back(make_row(std::string(host_link::kFamily.name), host_link::kPcieLinkProbe,
                          {{host_link::kGenerationColumn, "5"}, {host_link::kLanesColumn, "16"}},
                          node::pcie_line_gbs(5, 16), "GB/s", 0));
  const auto ps = analyze(std::string(host_link::kFamily.name), rows);
  const Parameter* h2d = find(ps, param::h2d_bandwidth_pinned);
  ASSERT_NE(h2d, nullptr);
  EXPECT_NE(h2d->method.find("% of the link's raw rate, PCIe gen 5 x16"), std::string::npos)
      << h2d->method;
}

// The mapped-memory chain at several places of the buffer: the median, the interval over all.
TEST(HostLink, MappedLatencyOverPlaces) {
  std::vector<Observation> rows;
  for (auto [offset, ns] :
       {std::pair<const char*, double>{"0", 1140}, {"268435456", 1152}, {"536870912", 1146}})
    rows.push_back(make_row(std::string(host_link::kFamily.name), host_link::kMappedLatencyProbe,
                            {{host_link::kHopsColumn, "256"},
                             {host_link::kStrideColumn, "4096"},
                             {host_link::kOffsetColumn, offset}},
                            ns, "ns", 0.002));
  const auto ps = analyze(std::string(host_link::kFamily.name), rows);
  const Parameter* p = find(ps, param::host_mapped_latency);
  ASSERT_NE(p, nullptr);
  EXPECT_DOUBLE_EQ(p->value, 1146);
  EXPECT_DOUBLE_EQ(p->low, 1140 * 0.998);
  EXPECT_DOUBLE_EQ(p->high, 1152 * 1.002);
  EXPECT_NE(p->method.find("at 3 places"), std::string::npos) << p->method;
}

TEST(HostLink, RecordedH100) {
  SKIP_WITHOUT(host_link::kFamily.name);
  auto ps = recorded_parameters(std::string(host_link::kFamily.name));
  expect_well_formed(ps);
  // PCIe 5.0 x16: ~64 GB/s raw, ~55 usable each way; both ways well above one way.
  EXPECT_NEAR(find(ps, param::h2d_bandwidth_pinned)->value, 54, 3);
  EXPECT_NEAR(find(ps, param::d2h_bandwidth_pinned)->value, 55, 3);
  EXPECT_GT(find(ps, param::bidir_bandwidth_pinned)->value,
            1.5 * find(ps, param::h2d_bandwidth_pinned)->value);
  EXPECT_LT(find(ps, param::h2d_bandwidth_pageable)->value,
            find(ps, param::h2d_bandwidth_pinned)->value / 2);
  EXPECT_NEAR(find(ps, param::d2h_bandwidth_sm)->value, 52, 3);
  EXPECT_NEAR(find(ps, param::host_mapped_latency)->value, 1150, 100);  // ns, a PCIe round trip
  EXPECT_LT(find(ps, param::h2d_bandwidth_sm)->confidence, 0.5);  // one noisy point on its plateau
}

}  // namespace
}  // namespace gpuprobe
