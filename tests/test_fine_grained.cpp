// fine_grained: a set-associative cache simulated access by access (known line, sets, ways),
// through the CSV files, and the H100 traces.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <random>

#include "analysis/carveout.hpp"
#include "analysis/fine_grained.hpp"
#include "analysis/granularity.hpp"
#include "analysis/tlb.hpp"
#include "memory_chase_checks.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"
#include "base/parameter_names.hpp"

using namespace gpuprobe;
using namespace gpuprobe::chase_test;
using namespace gpuprobe::fine_grained;

namespace {

struct Cache {
  Cache(int s, int w, double l, bool is_lru) : sets(s), ways(w), line(l), lru(is_lru) {}
  int sets, ways;
  double line;
  bool lru;
  std::mt19937 rng{11};
  std::vector<std::vector<std::pair<long long, long long>>> tags;  // (tag, last use)
  long long now = 0;

  bool access(double addr) {
    long long l = static_cast<long long>(addr / line);
    auto& set = tags[static_cast<size_t>(l % sets)];
    ++now;
    for (auto& t : set)
      if (t.first == l) {
        t.second = now;
        return true;
      }
    if (static_cast<int>(set.size()) < ways) {
      set.emplace_back(l, now);
    } else if (lru) {
      *std::min_element(set.begin(), set.end(),
                        [](const auto& a, const auto& b) { return a.second < b.second; }) = {l, now};
    } else {
      set[std::uniform_int_distribution<size_t>(0, set.size() - 1)(rng)] = {l, now};
    }
    return false;
  }
  // The probe's chain: K lines at a stride in a jumping single cycle; passes 3-4 counted.
  double misses_per_pass(double stride, double k) {
    tags.assign(static_cast<size_t>(sets), {});
    const long long n = static_cast<long long>(k);
    long long step = std::max<long long>(1, static_cast<long long>(0.618 * static_cast<double>(n)));
    while (n > 2 && std::gcd(step, n) != 1) ++step;
    double misses = 0;
    for (int pass = 0; pass < 4; ++pass)
      for (long long v = 0; v < n; ++v)
        if (!access(static_cast<double>(v * step % n) * stride) && pass >= 2) ++misses;
    return misses / 2;
  }
};

std::vector<Observation> fine_grained_rows(Cache c) {
  std::vector<Observation> out;
  auto sweep = [&](const std::string& series, double stride) {
    BoundarySearch s(64, 1, 65536, 2.0, 1, 0.01);
    search(s, [&](double k) {
      double m = c.misses_per_pass(stride, k);
      out.push_back(
          row(std::string(kFamily.name), kCapacityProbe,
              {{kSeriesColumn, series}, {kStrideColumn, num(stride)}, {kLinesColumn, num(k)}}, m,
              "misses"));
      return m <= kMissesPerPassLimit;
    });
  };
  for (double s : {32.0, 96.0, 160.0, 224.0, 288.0, 352.0, 480.0, 736.0}) sweep("line", s);
  for (double s = c.line; s <= 128 * kKiB; s *= 2) {
    sweep("sets", s);
    auto sf = fit_sets(capacity_by_stride(out, "sets"));
    if (sf && sf->plateau_points >= 3) break;
  }
  auto sf = fit_sets(capacity_by_stride(out, "sets"));
  if (sf && sf->halving_before) {
    double k = sf->ways + 1;
    out.push_back(row(std::string(kFamily.name), kReplacementProbe,
                      {{kStrideColumn, "65536"}, {kLinesColumn, num(k)}},
                      c.misses_per_pass(65536, k) / k, "fraction"));
  }
  return out;
}

}  // namespace

namespace {

// The simulated cache's own line, sets and ways found, each sane, the ways' method naming the
// replacement; returns the parameters.
std::vector<Parameter> expect_structure(Cache c, const std::string& replacement) {
  const int sets = c.sets, ways = c.ways;
  const double line = c.line;
  auto ps = analyze(std::string(kFamily.name), fine_grained_rows(std::move(c)));
  const Parameter* found[] = {find(ps, param::l1_line_size), find(ps, param::l1_sets),
                              find(ps, param::l1_ways)};
  for (const auto* p : found) {
    EXPECT_TRUE(p);
    if (p) expect_sane(*p);
  }
  if (!found[0] || !found[1] || !found[2]) return ps;
  EXPECT_EQ(found[0]->value, line);
  EXPECT_EQ(found[1]->value, sets);
  EXPECT_EQ(found[2]->value, ways);
  EXPECT_NE(found[2]->method.find(replacement), std::string::npos) << found[2]->method;
  return ps;
}

}  // namespace

TEST(FineGrained, LruCacheWithFewSets) {
  const auto ps = expect_structure(Cache{4, 48, 128, true}, "LRU-like");
  const Parameter* ways = find(ps, param::l1_ways);
  ASSERT_NE(ways, nullptr);
  EXPECT_GT(ways->confidence, 0.7);
}

TEST(FineGrained, RandomReplacementWithManySets) {
  expect_structure(Cache{32, 6, 64, false}, "not LRU");
}

TEST(FineGrained, FullyAssociativeShowsNoConflicts) {
  auto obs = fine_grained_rows(Cache{1, 192, 128, true});
  auto ps = analyze(std::string(kFamily.name), obs);
  // Fully associative and hashed look the same: no sets or ways, said in the line's method.
  EXPECT_FALSE(find(ps, param::l1_sets));
  EXPECT_FALSE(find(ps, param::l1_ways));
  const Parameter* line = find(ps, param::l1_line_size);
  ASSERT_TRUE(line);
  EXPECT_EQ(line->value, 128);
  EXPECT_NE(line->method.find("hashed"), std::string::npos) << line->method;
  EXPECT_NE(line->method.find("192 lines"), std::string::npos) << line->method;
  EXPECT_EQ(line->method.find("; replacement"), std::string::npos) << line->method;
}

// Resident bytes per stride as the H100 showed them: a hashed index that odd strides load
// unevenly, power-of-two strides not at all.
TEST(FineGrained, LineBoundUnderUnevenConflicts) {
  const double c = 240 * kKiB;
  std::vector<std::pair<double, double>> odd = {
      {32, c},           {96, c},           {160, 255 * kKiB}, {224, 259 * kKiB},
      {288, 315 * kKiB}, {352, 260 * kKiB}, {480, 514 * kKiB}, {736, 408 * kKiB}};
  auto f = fit_line_bound(odd);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->line, 128);
  EXPECT_EQ(f->low, 96);
  EXPECT_TRUE(f->unique);
  auto all = odd;
  for (double s : {128.0, 256.0, 512.0, 1024.0}) all.emplace_back(s, 1920 * std::max(s, 128.0));
  f = fit_line_bound(all);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->line, 128);
  EXPECT_EQ(f->high, 128);
  EXPECT_EQ(f->low, 128);  // the 128 B stride keeps the 32 B stride's bytes
  EXPECT_EQ(f->tight, 3);
  // No growth at any stride: the line is beyond the sweep.
  EXPECT_FALSE(fit_line_bound({{32, c}, {64, c}, {96, c}}));
  // Bounds that exclude every power of two: nothing.
  EXPECT_FALSE(fit_line_bound({{32, c}, {96, c}, {160, c}, {288, 1.5 * c}}));
}

TEST(FineGrained, ConstantLevelsFromTheColdTrace) {
  std::vector<Observation> obs;
  for (int i = 0; i < 1024; ++i) {
    double l = i % 64 == 0 ? 245 : i % 16 == 0 ? 89 : 27;
    obs.push_back(row(std::string(kFamily.name), kTraceProbe,
                      {{kTraceColumn, "constant_cold"},
                       {kPassColumn, "0"},
                       {kIndexColumn, std::to_string(i)},
                       {kOffsetColumn, num(4.0 * i)}},
                      l + (i % 3), "cycles"));
  }
  auto ps = analyze(std::string(kFamily.name), obs);
  ASSERT_TRUE(find(ps, param::constant_line_size));
  EXPECT_EQ(find(ps, param::constant_line_size)->value, 64);
  ASSERT_TRUE(find(ps, param::constant_l15_line_size));
  EXPECT_EQ(find(ps, param::constant_l15_line_size)->value, 256);
}

TEST(FineGrained, NothingFromNothing) {
  EXPECT_TRUE(analyze(std::string(kFamily.name), {}).empty());
  EXPECT_TRUE(analyze(std::string(granularity::kFamily.name), {}).empty());
  EXPECT_TRUE(analyze(std::string(carveout::kFamily.name), {}).empty());
  EXPECT_TRUE(analyze(std::string(tlb::kFamily.name), {}).empty());
}

// ---------------------------------------------------------------------------------------
// Through the CSV files: what the analysis reads back is what the probe wrote.

TEST(FineGrained, AnalysisIsTheSameFromTheWrittenFile) {
  auto obs = fine_grained_rows(Cache{4, 48, 128, true});
  auto dir = std::filesystem::temp_directory_path() / "gpuprobe_test_memory_structure";
  std::filesystem::create_directories(dir);
  auto path = (dir / "fine_grained.csv").string();
  {
    std::ofstream f(path);
    f << format_observations({{"gpu", "synthetic"}}, obs);
  }
  Metadata meta;
  auto back = read_observations(path, &meta);
  ASSERT_EQ(back.size(), obs.size());
  auto a = analyze(std::string(kFamily.name), obs),
       b = analyze(std::string(kFamily.name), back, meta);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].value, b[i].value);
    EXPECT_EQ(a[i].method, b[i].method);
  }
  std::filesystem::remove_all(dir);
}

TEST(H100, FineGrained) {
  REQUIRE_RECORDED(have(std::string(kFamily.name))) << "tests/data/h100_fine_grained.csv";
  auto ps = h100(std::string(kFamily.name));
  // 128 B lines of 32 B sectors, as documented since Volta: 96 B strides keep the 32 B
  // stride's bytes resident and 256 B strides twice as many.
  const Parameter* line = find(ps, param::l1_line_size);
  ASSERT_TRUE(line);
  EXPECT_EQ(line->value, 128);
  EXPECT_GE(line->confidence, 0.6);
  expect_sane(*line);
  const Parameter* sets = find(ps, param::l1_sets);
  const Parameter* ways = find(ps, param::l1_ways);
  EXPECT_EQ(!sets, !ways);
  if (sets && ways) {
    // sets * ways * line is the L1 at the family's carve-out: 16 KiB to 256 KiB on any GPU
    // with a unified L1 and shared memory.
    EXPECT_GE(sets->value, 2);
    double bytes = sets->value * ways->value * line->value;
    EXPECT_GE(bytes, 16 * kKiB);
    EXPECT_LE(bytes, 256 * kKiB);
  } else {
    EXPECT_NE(line->method.find("hashed"), std::string::npos) << line->method;
  }
  // What stays resident at 32 B spacing is the L1 at the smallest carve-out: most of 256 KiB.
  Metadata meta;
  auto obs = read_observations(std::string(GPUPROBE_TEST_DATA) + "/h100_fine_grained.csv", &meta);
  auto caps = capacity_by_stride(obs, "line");
  ASSERT_FALSE(caps.empty());
  EXPECT_EQ(caps.front().stride, 32);
  EXPECT_GE(caps.front().lines * 32, 192 * kKiB);
  EXPECT_LE(caps.front().lines * 32, 256 * kKiB);
}
