// Memory-structure inference (granularity, fine_grained, carveout, tlb) on synthetic traces
// with known line, sector, sets, ways and page size, through the CSV files, and on the
// curves recorded on the H100 (tests/data/h100_<family>.csv).
#include <gtest/gtest.h>

#include "parameter_checks.hpp"
#include "recorded.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <random>

#include "analysis/analyzer.hpp"
#include "analysis/memory_structure.hpp"
#include "core/csv.hpp"
#include "core/observation.hpp"

using namespace gpuprobe;

namespace {

constexpr double kKiB = 1024, kMiB = 1 << 20, kGiB = 1 << 30;

Observation row(const std::string& family, const std::string& probe, Params params, double v,
                const std::string& unit) {
  return Observation{family, probe, std::move(params), v, unit, v, v, v, 3};
}

std::string num(double v) { return format_number(v); }

void expect_sane(const Parameter& p) {
  EXPECT_GE(p.confidence, 0.0) << p.name;
  EXPECT_LE(p.confidence, 1.0) << p.name;
  EXPECT_LE(p.low, p.value) << p.name;
  EXPECT_GE(p.high, p.value) << p.name;
  EXPECT_FALSE(p.method.empty()) << p.name;
  EXPECT_FALSE(p.evidence.empty()) << p.name;
}

// Runs a BoundarySearch the way the probes do, on a predicate.
template <class Fits>
void search(BoundarySearch& s, Fits fits) {
  while (auto x = s.next()) s.add(*x, fits(*x));
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Shared pieces

TEST(MemoryStructure, SplitThresholdSeparatesHitsFromMisses) {
  std::mt19937 rng(1);
  std::normal_distribution<double> hit(35, 1.5), miss(260, 40);
  std::vector<double> v;
  for (int i = 0; i < 600; ++i) v.push_back(hit(rng));
  for (int i = 0; i < 60; ++i) v.push_back(miss(rng));
  double t = split_threshold(v);
  EXPECT_GT(t, 45);
  EXPECT_LT(t, 180);
  EXPECT_TRUE(std::isnan(split_threshold({5, 5, 5})));
  EXPECT_TRUE(std::isnan(split_threshold({})));
}

TEST(MemoryStructure, BoundarySearchPinsAnIntegerBoundary) {
  int calls = 0;
  BoundarySearch s(64, 1, 1 << 16, 2.0, 1, 0.0);
  while (auto x = s.next()) {
    ++calls;
    s.add(*x, *x <= 1234);
  }
  EXPECT_EQ(s.last_fit(), 1234);
  EXPECT_EQ(s.first_miss(), 1235);
  EXPECT_LT(calls, 25);
}

TEST(MemoryStructure, BoundarySearchShrinksAndGivesUp) {
  BoundarySearch down(4096, 1, 1e6, 2.0, 1, 0.0);
  search(down, [](double x) { return x <= 100; });
  EXPECT_EQ(down.last_fit(), 100);
  BoundarySearch never(64, 1, 1000, 2.0, 1, 0.0);
  search(never, [](double) { return true; });
  EXPECT_FALSE(never.bracketed());
  EXPECT_EQ(never.last_fit(), 1000);
  BoundarySearch always(64, 8, 1000, 2.0, 1, 0.0);
  search(always, [](double) { return false; });
  EXPECT_TRUE(std::isnan(always.last_fit()));
}

TEST(MemoryStructure, FirstMissBracket) {
  auto b = first_miss_bracket({{4, 1}, {1, 1}, {8, 5}, {16, 9}}, 2);
  ASSERT_TRUE(b && b->found());
  EXPECT_EQ(b->fit, 4);
  EXPECT_EQ(b->miss, 8);
  EXPECT_FALSE(first_miss_bracket({{1, 5}}, 2));
  auto none = first_miss_bracket({{1, 1}, {2, 1}}, 2);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->found());
}

// A cold sequential pass at 4 B: L1 constant misses every 64 B, L1.5 misses every 256 B.
TEST(MemoryStructure, LatencyLevelsFindTheLinesOfEachLevel) {
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> off, lat;
  for (int i = 0; i < 1024; ++i) {
    off.push_back(4.0 * i);
    double l = i % 64 == 0 ? 240 : i % 16 == 0 ? 90 : 30;
    lat.push_back(l + noise(rng));
  }
  lat[500] = 5000;  // one interruption is not a level
  auto levels = latency_levels(off, lat);
  ASSERT_EQ(levels.size(), 3u);
  EXPECT_NEAR(levels[0].latency, 30, 2);
  EXPECT_EQ(levels[1].period, 64);
  EXPECT_EQ(levels[2].period, 256);
  EXPECT_GT(levels[2].regularity, 0.9);
}

// ---------------------------------------------------------------------------------------
// granularity

namespace {

// Cold walk: base + penalty * min(1, stride / g), with noise.
std::vector<Observation> stride_rows(const std::string& path, double g, double base,
                                     double penalty, std::mt19937& rng,
                                     const std::vector<int>& widths = {4, 8, 16},
                                     double limit = 0) {
  std::normal_distribution<double> noise(0, 2);
  std::vector<Observation> out;
  for (int w : widths)
    for (double s = w; s <= 1024; s *= 2)
      for (const char* res : {"cold", "resident"}) {
        Params p = {{"path", path}, {"width_bytes", std::to_string(w)}, {"stride_bytes", num(s)}};
        if (limit) p.emplace_back("l2_fetch_limit_bytes", num(limit));
        p.emplace_back("residency", res);
        double y = std::string(res) == "cold" ? base + penalty * std::min(1.0, s / g) : base;
        out.push_back(row("granularity", "stride", p, y + noise(rng), "cycles"));
      }
  return out;
}

// Many chains over a footprint at a stride: L2 hits while the lines fit, DRAM beyond.
double l2_cycles(double footprint, double stride, double line, double capacity) {
  double used = stride < line ? footprint : footprint / stride * line;  // bytes of lines held
  double miss = std::clamp((used / capacity - 1.0) * 3, 0.0, 1.0);
  return 280 + 320 * miss;
}

std::vector<Observation> l2_capacity_rows(double line, double capacity) {
  std::vector<Observation> out;
  double limit = 0;
  for (double stride : {32.0, 96.0, 160.0, 224.0, 352.0}) {
    const double q = stride * 1056, lo = std::ceil(capacity / 4 / q) * q;
    const double hi = std::floor(4 * capacity * stride / 32 / q) * q;
    auto at = [&](double f) {
      double y = l2_cycles(f, stride, line, capacity);
      out.push_back(row("granularity", "l2_capacity",
                        {{"stride_bytes", num(stride)}, {"footprint_bytes", num(f)}}, y, "cycles"));
      return y;
    };
    double ylo = at(lo), yhi = at(hi);
    if (limit == 0) limit = 0.5 * (ylo + yhi);
    BoundarySearch s(lo, lo, hi, 2.0, q, 0.03);
    s.add(lo, true);
    s.add(hi, false);
    search(s, [&](double f) { return at(f) < limit; });
  }
  return out;
}

}  // namespace

TEST(Granularity, FitFindsTheFetchUnit) {
  for (double g : {32.0, 64.0, 128.0}) {
    std::mt19937 rng(static_cast<unsigned>(g));
    std::vector<std::pair<double, double>> pts;
    for (const auto& o : stride_rows("l1", g, 40, 230, rng, {4}))
      if (o.param_text("residency") == "cold") pts.emplace_back(o.param("stride_bytes"), o.value);
    auto f = fit_fetch_granularity(pts);
    ASSERT_TRUE(f) << g;
    EXPECT_EQ(f->granularity, g);
    EXPECT_NEAR(f->penalty, 230, 10);
    EXPECT_GT(f->separation, 0.5);
  }
}

TEST(Granularity, FlatOrStillRisingCurvesPinNothing) {
  std::vector<std::pair<double, double>> flat, rising;
  for (double s = 4; s <= 1024; s *= 2) {
    flat.emplace_back(s, 300);
    rising.emplace_back(s, 40 + 250 * s / 2048);
  }
  EXPECT_FALSE(fit_fetch_granularity(flat));
  EXPECT_FALSE(fit_fetch_granularity(rising));
  EXPECT_FALSE(fit_fetch_granularity({{4, 1}, {8, 2}}));
}

TEST(Granularity, AnalyzerReportsEveryPath) {
  std::mt19937 rng(7);
  std::vector<Observation> obs;
  auto add = [&](const std::vector<Observation>& v) { obs.insert(obs.end(), v.begin(), v.end()); };
  add(stride_rows("l1", 32, 40, 230, rng));
  add(stride_rows("readonly", 32, 45, 230, rng));
  add(stride_rows("l2", 64, 280, 350, rng, {4, 8, 16}, 64));  // default limit: 64 B fills
  add(stride_rows("l2", 32, 280, 350, rng, {4, 8, 16}, 32));  // smallest limit: the sector
  add(stride_rows("constant", 64, 30, 60, rng, {4}));
  add(l2_capacity_rows(128, 50 * kMiB));
  auto ps = analyze("granularity", obs);
  const std::map<std::string, double> want = {{"l1_sector_size", 32},
                                              {"readonly_line_size", 32},
                                              {"l2_sector_size", 32},
                                              {"constant_line_size", 64},
                                              {"l2_line_size", 128}};
  for (const auto& [name, v] : want) {
    const Parameter* p = find(ps, name);
    ASSERT_TRUE(p) << name;
    EXPECT_EQ(p->value, v) << name;
    EXPECT_EQ(p->unit, "bytes");
    EXPECT_EQ(p->evidence, "granularity.csv");
    EXPECT_GT(p->confidence, 0.5) << name;
    expect_sane(*p);
  }
  EXPECT_NE(find(ps, "l2_sector_size")->method.find("32 B"), std::string::npos);
}

TEST(Granularity, LineFitFromCapacityAtStrides) {
  for (double line : {64.0, 128.0, 256.0}) {
    std::vector<std::pair<double, double>> pts;
    for (double s : {32.0, 96.0, 160.0, 224.0, 288.0, 352.0, 480.0, 736.0})
      pts.emplace_back(s, 256 * kKiB * std::max(1.0, s / line) * (1 + 0.01 * std::sin(s)));
    auto f = fit_line_size(pts);
    ASSERT_TRUE(f) << line;
    EXPECT_EQ(f->line, line);
    EXPECT_NEAR(f->low, line, 0.05 * line);
    EXPECT_NEAR(f->high, line, 0.05 * line);
  }
  std::vector<std::pair<double, double>> flat = {{32, 1}, {64, 1}, {96, 1}, {160, 1}};
  EXPECT_FALSE(fit_line_size(flat));
}

TEST(Granularity, BytesPerRequest) {
  EXPECT_DOUBLE_EQ(bytes_per_request(2000, 2000), 128);
  EXPECT_DOUBLE_EQ(bytes_per_request(2000, 250), 1024);
  EXPECT_TRUE(std::isnan(bytes_per_request(0, 10)));
}

// ---------------------------------------------------------------------------------------
// fine_grained: a set-associative cache simulated access by access

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
      out.push_back(row("fine_grained", "capacity",
                        {{"series", series}, {"stride_bytes", num(stride)}, {"lines", num(k)}}, m,
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
    out.push_back(row("fine_grained", "replacement", {{"stride_bytes", "65536"}, {"lines", num(k)}},
                      c.misses_per_pass(65536, k) / k, "fraction"));
  }
  return out;
}

}  // namespace

TEST(FineGrained, LruCacheWithFewSets) {
  auto obs = fine_grained_rows(Cache{4, 48, 128, true});
  auto ps = analyze("fine_grained", obs);
  const Parameter* line = find(ps, "l1_line_size");
  const Parameter* sets = find(ps, "l1_sets");
  const Parameter* ways = find(ps, "l1_ways");
  ASSERT_TRUE(line && sets && ways);
  EXPECT_EQ(line->value, 128);
  EXPECT_EQ(sets->value, 4);
  EXPECT_EQ(ways->value, 48);
  EXPECT_GT(ways->confidence, 0.7);
  EXPECT_NE(ways->method.find("LRU-like"), std::string::npos) << ways->method;
  for (const auto* p : {line, sets, ways}) expect_sane(*p);
}

TEST(FineGrained, RandomReplacementWithManySets) {
  auto obs = fine_grained_rows(Cache{32, 6, 64, false});
  auto ps = analyze("fine_grained", obs);
  const Parameter* line = find(ps, "l1_line_size");
  const Parameter* sets = find(ps, "l1_sets");
  const Parameter* ways = find(ps, "l1_ways");
  ASSERT_TRUE(line && sets && ways);
  EXPECT_EQ(line->value, 64);
  EXPECT_EQ(sets->value, 32);
  EXPECT_EQ(ways->value, 6);
  EXPECT_NE(ways->method.find("not LRU"), std::string::npos) << ways->method;
}

TEST(FineGrained, FullyAssociativeShowsNoConflicts) {
  auto obs = fine_grained_rows(Cache{1, 192, 128, true});
  auto ps = analyze("fine_grained", obs);
  // Fully associative and hashed look the same: no sets or ways, said in the line's method.
  EXPECT_FALSE(find(ps, "l1_sets"));
  EXPECT_FALSE(find(ps, "l1_ways"));
  const Parameter* line = find(ps, "l1_line_size");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->value, 128);
  EXPECT_NE(line->method.find("hashed"), std::string::npos) << line->method;
  EXPECT_NE(line->method.find("192 lines"), std::string::npos) << line->method;
  EXPECT_EQ(line->method.find("replacement"), std::string::npos) << line->method;
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
    obs.push_back(row("fine_grained", "trace",
                      {{"trace", "constant_cold"}, {"pass", "0"}, {"index", std::to_string(i)},
                       {"offset_bytes", num(4.0 * i)}},
                      l + (i % 3), "cycles"));
  }
  auto ps = analyze("fine_grained", obs);
  ASSERT_TRUE(find(ps, "constant_line_size"));
  EXPECT_EQ(find(ps, "constant_line_size")->value, 64);
  ASSERT_TRUE(find(ps, "constant_l15_line_size"));
  EXPECT_EQ(find(ps, "constant_l15_line_size")->value, 256);
}

TEST(FineGrained, NothingFromNothing) {
  EXPECT_TRUE(analyze("fine_grained", {}).empty());
  EXPECT_TRUE(analyze("granularity", {}).empty());
  EXPECT_TRUE(analyze("carveout", {}).empty());
  EXPECT_TRUE(analyze("tlb", {}).empty());
}

// ---------------------------------------------------------------------------------------
// carveout

namespace {

std::vector<Observation> carveout_rows(const std::map<int, double>& l1_by_percent) {
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(0, 0.3);
  std::vector<Observation> out;
  for (const auto& [pct, cap] : l1_by_percent) {
    auto at = [&](double f) {
      // Random replacement: misses grow gradually past the capacity.
      double miss = f <= cap ? 0 : std::min(1.0, (f - cap) / cap * 2);
      double y = 38 + 230 * miss + noise(rng);
      out.push_back(row("carveout", "chase",
                        {{"carveout_percent", std::to_string(pct)},
                         {"shared_request_bytes", num(std::ceil(pct * 228 * kKiB / 100))},
                         {"footprint_bytes", num(f)}},
                        y, "cycles"));
      return y;
    };
    double hit = at(4 * kKiB);
    BoundarySearch s(4 * kKiB, 4 * kKiB, 2 * (228 + 64) * kKiB, 2.0, kKiB, 0.01);
    s.add(4 * kKiB, true);
    search(s, [&](double f) { return at(f) <= kL1FitFactor * hit; });
  }
  return out;
}

}  // namespace

TEST(Carveout, CapacityPerPreferenceAndTheLargest) {
  const std::map<int, double> l1 = {
      {0, 256 * kKiB}, {25, 192 * kKiB}, {50, 124 * kKiB}, {100, 28 * kKiB}};
  auto obs = carveout_rows(l1);
  auto caps = l1_capacity_by_carveout(obs);
  ASSERT_EQ(caps.size(), l1.size());
  for (const auto& c : caps) {
    double truth = l1.at(static_cast<int>(c.percent));
    EXPECT_LE(c.l1_bytes, truth * 1.06) << c.percent;
    EXPECT_GE(c.l1_bytes, truth * 0.97) << c.percent;
    EXPECT_GT(c.miss_bytes, c.l1_bytes);
  }
  auto ps = analyze("carveout", obs);
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].name, "l1_size_no_miss");
  EXPECT_NEAR(ps[0].value, 256 * kKiB, 0.06 * 256 * kKiB);
  EXPECT_GT(ps[0].confidence, 0.7);
  expect_sane(ps[0]);
}

// ---------------------------------------------------------------------------------------
// tlb

namespace {

// L1 TLB of e1 entries, L2 TLB of e2 entries, each entry covering `entry` bytes; an L1 TLB
// miss costs `l1_miss` cycles, a walk 520 more.
std::vector<Observation> tlb_rows(double entry, double e1, double e2, double max_bytes,
                                  double l1_miss = 110, double sigma = 3) {
  std::mt19937 rng(9);
  std::normal_distribution<double> noise(0, sigma);
  std::vector<Observation> out;
  auto sweep = [&](double stride, double max_fp) {
    for (double k = 0; std::round(std::exp2(k / 4)) * stride <= max_fp; ++k) {
      double n = std::round(std::exp2(k / 4));
      double pages = stride < entry ? std::ceil(n * stride / entry) : n;
      double y = 290 + (pages > e1 ? l1_miss : 0) + (pages > e2 ? 520 : 0) + noise(rng);
      out.push_back(row("tlb", "chase",
                        {{"stride_bytes", num(stride)}, {"footprint_bytes", num(n * stride)}}, y,
                        "cycles"));
    }
  };
  for (double s : {256 * kKiB, 512 * kKiB, 1 * kMiB, 2 * kMiB, 4 * kMiB, 8 * kMiB, 16 * kMiB,
                   32 * kMiB, 64 * kMiB})
    sweep(s, std::min(max_bytes, e1 * std::max(s, entry) * 4));
  sweep(entry, max_bytes);
  return out;
}

}  // namespace

TEST(Tlb, PageEntryCoverageAndMissLatency) {
  auto obs = tlb_rows(2 * kMiB, 16, 2048, 64 * kGiB);
  auto ps = analyze("tlb", obs);
  const Parameter* entry = find(ps, "tlb_page_entry_size");
  const Parameter* l1 = find(ps, "tlb_l1_coverage");
  const Parameter* l2 = find(ps, "tlb_l2_coverage");
  const Parameter* miss = find(ps, "tlb_miss_latency");
  ASSERT_TRUE(entry && l1 && l2 && miss);
  EXPECT_EQ(entry->value, 2 * kMiB);
  EXPECT_LE(l1->value, 32 * kMiB);
  EXPECT_GE(l1->value, 32 * kMiB / 1.2);
  EXPECT_LE(l2->value, 4 * kGiB);
  EXPECT_GE(l2->value, 4 * kGiB / 1.2);
  EXPECT_NEAR(miss->value, 630, 10);
  for (const auto* p : {entry, l1, l2, miss}) expect_sane(*p);
}

TEST(Tlb, SmallFirstStepOnANoisyCurve) {
  auto obs = tlb_rows(2 * kMiB, 32, 4096, 64 * kGiB, 25);
  auto ps = analyze("tlb", obs);
  const Parameter* entry = find(ps, "tlb_page_entry_size");
  const Parameter* l1 = find(ps, "tlb_l1_coverage");
  const Parameter* l2 = find(ps, "tlb_l2_coverage");
  ASSERT_TRUE(entry && l1 && l2);
  EXPECT_EQ(entry->value, 2 * kMiB);
  EXPECT_LE(l1->value, 64 * kMiB);
  EXPECT_GE(l1->value, 64 * kMiB / 1.2);
  EXPECT_LE(l2->value, 8 * kGiB);
  EXPECT_GE(l2->value, 8 * kGiB / 1.2);
}

TEST(Tlb, SecondLevelBeyondTheSweep) {
  auto obs = tlb_rows(2 * kMiB, 16, 1e9, 8 * kGiB);
  auto ps = analyze("tlb", obs);
  ASSERT_TRUE(find(ps, "tlb_l1_coverage"));
  EXPECT_FALSE(find(ps, "tlb_l2_coverage"));
  ASSERT_TRUE(find(ps, "tlb_miss_latency"));
  EXPECT_NEAR(find(ps, "tlb_miss_latency")->value, 110, 10);
  EXPECT_NE(find(ps, "tlb_miss_latency")->method.find("L1 TLB miss"), std::string::npos);
}

// As on the H100: 16 entries of 16 MiB whose miss costs 10 cycles on a 290-cycle L2 hit,
// points repeating to 0.5 cycles.
TEST(Tlb, TenCycleStepOfLargeEntries) {
  auto obs = tlb_rows(16 * kMiB, 16, 1e9, 64 * kGiB, 10, 0.5);
  auto ps = analyze("tlb", obs);
  const Parameter* entry = find(ps, "tlb_page_entry_size");
  const Parameter* l1 = find(ps, "tlb_l1_coverage");
  const Parameter* miss = find(ps, "tlb_miss_latency");
  ASSERT_TRUE(entry && l1 && miss);
  EXPECT_EQ(entry->value, 16 * kMiB);
  EXPECT_LE(l1->value, 256 * kMiB);
  EXPECT_GE(l1->value, 256 * kMiB / 1.2);
  EXPECT_NEAR(miss->value, 10, 1.5);
  EXPECT_FALSE(find(ps, "tlb_l2_coverage"));
}

// The H100's shape: the L2 TLB's step lies near the end of device memory, so it is measured
// in an aliased virtual space up to 1 TiB, at the entry size and twice it; a third level
// reaches 4x further, and small aliased footprints are not measured.
TEST(Tlb, SecondLevelInTheAliasedSpace) {
  auto obs = tlb_rows(16 * kMiB, 16, 1e9, 64 * kGiB, 10, 0.5);
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0, 0.5);
  const double entries2 = 4096;
  // An L2 TLB of 4096 entries of 16 MiB: at 32 MiB the step moves to 128 GiB.
  for (double stride : {16 * kMiB, 32 * kMiB}) {
    for (double k = 12; std::round(std::exp2(k / 2)) * stride <= 1024 * kGiB; ++k) {
      const double n = std::round(std::exp2(k / 2));
      const double fp = n * stride;
      double y = 294 + (fp > 256 * kMiB ? 10 : 0) + (fp > entries2 * stride ? 90 : 0) +
                 (fp > 256 * kGiB ? 750 : 0) + noise(rng);
      obs.push_back(row("tlb", "chase_aliased",
                        {{"stride_bytes", num(stride)}, {"footprint_bytes", num(n * stride)}}, y,
                        "cycles"));
    }
  }
  auto ps = analyze("tlb", obs);
  const Parameter* l1 = find(ps, "tlb_l1_coverage");
  const Parameter* l2 = find(ps, "tlb_l2_coverage");
  const Parameter* miss = find(ps, "tlb_miss_latency");
  ASSERT_TRUE(l1 && l2 && miss);
  EXPECT_LE(l1->value, 256 * kMiB);
  EXPECT_GE(l1->value, 256 * kMiB / 1.2);
  EXPECT_LE(l2->value, 64 * kGiB);
  EXPECT_GE(l2->value, 64 * kGiB / 1.5);
  EXPECT_NE(l2->method.find("virtual addresses"), std::string::npos);
  EXPECT_NE(l2->method.find("then"), std::string::npos) << l2->method;  // the third level
  EXPECT_NE(l2->method.find("at 32 MiB the step lies at 128 GiB"), std::string::npos) << l2->method;
  EXPECT_NE(l2->method.find("4096 entries of 16 MiB"), std::string::npos) << l2->method;
  EXPECT_NEAR(miss->value, 850, 5);
  expect_sane(*l2);
}

TEST(Tlb, PageEntryFit) {
  auto f = fit_page_entry({{256 * kKiB, 32 * kMiB},
                           {1 * kMiB, 32 * kMiB},
                           {2 * kMiB, 32 * kMiB},
                           {4 * kMiB, 64 * kMiB},
                           {8 * kMiB, 128 * kMiB}});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->entry_size, 2 * kMiB);
  EXPECT_EQ(f->entries, 16);
  EXPECT_EQ(f->sweep_stride, 2 * kMiB);
  EXPECT_EQ(f->strides_above, 2);
}

// ---------------------------------------------------------------------------------------
// Through the CSV files: what the analysis reads back is what the probe wrote.

TEST(MemoryStructure, AnalysisIsTheSameFromTheWrittenFile) {
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
  auto a = analyze("fine_grained", obs), b = analyze("fine_grained", back, meta);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].value, b[i].value);
    EXPECT_EQ(a[i].method, b[i].method);
  }
  std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------------------------------
// The H100 (tests/data/h100_<family>.csv, committed from a run)

namespace {

// tests/data/h100_<family><suffix>.csv analysed as `family` (suffix "_repeat": a second run).
std::vector<Parameter> h100(const std::string& family, const std::string& suffix = "") {
  std::string path = std::string(GPUPROBE_TEST_DATA) + "/h100_" + family + suffix + ".csv";
  if (!std::filesystem::exists(path)) return {};
  Metadata meta;
  auto obs = read_observations(path, &meta);
  return analyze(family, obs, meta);
}

bool have(const std::string& family) {
  return std::filesystem::exists(std::string(GPUPROBE_TEST_DATA) + "/h100_" + family + ".csv");
}

bool pow2(double v) { return v >= 1 && std::exp2(std::round(std::log2(v))) == v; }

}  // namespace

TEST(H100, Granularity) {
  REQUIRE_RECORDED(have("granularity")) << "tests/data/h100_granularity.csv";
  auto ps = h100("granularity");
  for (const char* name : {"l1_sector_size", "l2_sector_size", "readonly_line_size"}) {
    const Parameter* p = find(ps, name);
    ASSERT_TRUE(p) << name;
    EXPECT_TRUE(pow2(p->value)) << name;
    EXPECT_GE(p->value, 32) << name;
    EXPECT_LE(p->value, 128) << name;
    expect_sane(*p);
  }
  if (const Parameter* p = find(ps, "l2_line_size")) {
    EXPECT_GE(p->value, 32);
    EXPECT_LE(p->value, 256);
  }
  if (const Parameter* p = find(ps, "constant_line_size")) {
    EXPECT_GE(p->value, 16);
    EXPECT_LE(p->value, 256);
  }
}

TEST(H100, FineGrained) {
  REQUIRE_RECORDED(have("fine_grained")) << "tests/data/h100_fine_grained.csv";
  auto ps = h100("fine_grained");
  // 128 B lines of 32 B sectors, as documented since Volta: 96 B strides keep the 32 B
  // stride's bytes resident and 256 B strides twice as many.
  const Parameter* line = find(ps, "l1_line_size");
  ASSERT_TRUE(line);
  EXPECT_EQ(line->value, 128);
  EXPECT_GE(line->confidence, 0.6);
  expect_sane(*line);
  const Parameter* sets = find(ps, "l1_sets");
  const Parameter* ways = find(ps, "l1_ways");
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

TEST(H100, Carveout) {
  REQUIRE_RECORDED(have("carveout")) << "tests/data/h100_carveout.csv";
  auto ps = h100("carveout");
  const Parameter* l1 = find(ps, "l1_size_no_miss");
  ASSERT_TRUE(l1);
  EXPECT_GE(l1->value, 128 * kKiB);  // H100: 256 KiB of L1 and shared memory per SM
  EXPECT_LE(l1->value, 256 * kKiB);
  Metadata meta;
  auto obs = read_observations(std::string(GPUPROBE_TEST_DATA) + "/h100_carveout.csv", &meta);
  auto caps = l1_capacity_by_carveout(obs);
  ASSERT_GE(caps.size(), 2u);
  // More shared memory never leaves more L1.
  std::sort(caps.begin(), caps.end(),
            [](const auto& a, const auto& b) { return a.shared_request < b.shared_request; });
  EXPECT_GT(caps.front().l1_bytes, caps.back().l1_bytes);
}

TEST(H100, Tlb) {
  REQUIRE_RECORDED(have("tlb")) << "tests/data/h100_tlb.csv";
  auto ps = h100("tlb");
  // First step: a reach of a few hundred MiB (256 MiB on the first run) at every stride up
  // to the entry size (16 MiB), growing with the stride above it; a 10-cycle step.
  const Parameter* l1 = find(ps, "tlb_l1_coverage");
  const Parameter* e = find(ps, "tlb_page_entry_size");
  const Parameter* m = find(ps, "tlb_miss_latency");
  ASSERT_TRUE(l1 && e && m);
  EXPECT_GE(l1->value, 64 * kMiB);
  EXPECT_LE(l1->value, 1 * kGiB);
  EXPECT_TRUE(pow2(e->value));
  EXPECT_GE(e->value, 2 * kMiB);
  EXPECT_LE(e->value, 64 * kMiB);
  EXPECT_GE(l1->value / e->value, 4);  // a handful of entries at least
  EXPECT_GT(m->value, 4);
  EXPECT_LT(m->value, 1000);
  for (const auto* p : {l1, e, m}) expect_sane(*p);
  if (const Parameter* l2 = find(ps, "tlb_l2_coverage")) {
    EXPECT_GT(l2->value, 4 * l1->value);
    EXPECT_LE(l2->value, 80 * kGiB);
    expect_sane(*l2);
  }
}

// Two runs a minute apart (tests/data/h100_tlb.csv and h100_tlb_repeat.csv): the aliased
// chase finds the same L2 TLB reach (64 GiB: 2048 entries of 32 MiB) and a page walk beyond.
TEST(H100, TlbLastLevelsRepeat) {
  REQUIRE_RECORDED(have("tlb") && have("tlb_repeat")) << "no repeated H100 tlb run committed";
  auto a = h100("tlb"), b = h100("tlb", "_repeat");
  const Parameter* l2a = find(a, "tlb_l2_coverage");
  const Parameter* l2b = find(b, "tlb_l2_coverage");
  const Parameter* ma = find(a, "tlb_miss_latency");
  const Parameter* mb = find(b, "tlb_miss_latency");
  ASSERT_TRUE(l2a && l2b && ma && mb);
  for (const Parameter* p : {l2a, l2b}) {
    EXPECT_GE(p->value, 32 * kGiB) << p->method;
    EXPECT_LE(p->value, 96 * kGiB) << p->method;
    EXPECT_NE(p->method.find("virtual addresses"), std::string::npos);
  }
  EXPECT_NEAR(l2a->value / l2b->value, 1, 0.1);
  EXPECT_NEAR(ma->value / mb->value, 1, 0.1);
  EXPECT_GT(ma->value, 200);  // a page walk costs far more than the 10-cycle L1 TLB miss
}
