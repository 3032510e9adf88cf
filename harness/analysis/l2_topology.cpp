#include "analysis/l2_topology.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "analysis/analyzer.hpp"
#include "analysis/clusters.hpp"
#include "analysis/common/util.hpp"
#include "analysis/gpcs.hpp"
#include "base/catalog.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"
#include "base/stats.hpp"

namespace gpuprobe {

namespace l2_topology {

double split_threshold(std::vector<double> row, double* gap) {
  std::sort(row.begin(), row.end());
  constexpr size_t kSideShare = 10;  // a level holds at least 1/10 of the lines: not a glitch
  const size_t n = row.size(), margin = std::max<size_t>(1, n / kSideShare);
  double best = 0, at = NAN;
  for (size_t i = margin; i + margin <= n && i < n; ++i) {
    const double g = row[i] - row[i - 1];
    if (g > best) {
      best = g;
      at = 0.5 * (row[i] + row[i - 1]);
    }
  }
  *gap = best;
  return best >= kMinLevelGap ? at : NAN;
}

std::pair<std::vector<double>, std::vector<double>> split_levels(const std::vector<double>& row) {
  double gap = 0;
  const double thr = split_threshold(row, &gap);
  std::pair<std::vector<double>, std::vector<double>> out;
  for (double v : row) (std::isnan(thr) || v < thr ? out.first : out.second).push_back(v);
  return out;
}

namespace {

// A group with fewer than 1/kStrayShare of the lines (and fewer than 2) is stray lines, not a
// partition: each joins the big group it is closest to.
constexpr int kStrayShare = 20;

// near[i][j]: line j is on split SM i's lower level; counts the split SMs and their smallest gap.
std::vector<std::vector<char>> near_patterns(const LatencyMap& m, Topology& t) {
  const size_t nl = m.lat[0].size();
  std::vector<std::vector<char>> near;
  t.gap_min = std::numeric_limits<double>::infinity();
  for (const auto& row : m.lat) {
    double gap = 0;
    const double thr = split_threshold(row, &gap);
    if (std::isnan(thr)) continue;
    ++t.split_sms;
    t.gap_min = std::min(t.gap_min, gap);
    std::vector<char> v(nl);
    for (size_t j = 0; j < nl; ++j) v[j] = row[j] < thr;
    near.push_back(v);
  }
  if (t.split_sms == 0) t.gap_min = 0;
  return near;
}

// Lines by their pattern over the split SMs: greedy, against each group's first line; stray
// groups joined to the closest big one. Sets t.line_group and returns the number of big
// groups (0: none).
int group_lines(const std::vector<std::vector<char>>& near, size_t nl, Topology& t) {
  t.line_group.assign(nl, -1);
  std::vector<size_t> reps;
  std::vector<int> members;
  auto mismatch = [&](size_t a, size_t b) {
    size_t d = 0;
    for (const auto& v : near) d += v[a] != v[b];
    return near.empty() ? 0.0 : double(d) / double(near.size());
  };
  for (size_t j = 0; j < nl; ++j) {
    int g = -1;
    for (size_t k = 0; k < reps.size() && g < 0; ++k)
      if (mismatch(j, reps[k]) <= kGroupMismatch) g = int(k);
    if (g < 0) {
      g = int(reps.size());
      reps.push_back(j);
      members.push_back(0);
    }
    t.line_group[j] = g;
    ++members[size_t(g)];
  }
  const int min_members = std::max(2, int(nl) / kStrayShare);
  std::vector<int> renumber(reps.size(), -1);
  int big = 0;
  for (size_t k = 0; k < reps.size(); ++k)
    if (members[k] >= min_members) renumber[k] = big++;
  if (big == 0) return 0;
  for (size_t j = 0; j < nl; ++j) {
    int g = t.line_group[j];
    if (renumber[size_t(g)] < 0) {
      double best = 2;
      for (size_t k = 0; k < reps.size(); ++k)
        if (renumber[k] >= 0 && mismatch(j, reps[k]) < best) {
          best = mismatch(j, reps[k]);
          g = int(k);
        }
    }
    t.line_group[j] = renumber[size_t(g)];
  }
  return big;
}

// With two groups, the one the split SMs find far: where the writer's side keeps its lines
// (-1 otherwise).
int writer_side(const LatencyMap& m, const Topology& t, const std::vector<std::vector<char>>& near) {
  const int big = t.partitions;
  if (big != 2) return -1;
  const size_t nl = t.line_group.size();
  std::vector<int> far_votes(size_t(big), 0);
  size_t k = 0;
  for (size_t i = 0; i < m.lat.size(); ++i) {
    double gap = 0;
    if (std::isnan(split_threshold(m.lat[i], &gap))) continue;
    std::vector<int> near_count(size_t(big), 0), count(size_t(big), 0);
    for (size_t j = 0; j < nl; ++j) {
      near_count[size_t(t.line_group[j])] += near[k][j];
      ++count[size_t(t.line_group[j])];
    }
    for (int g = 0; g < big; ++g)
      if (2 * near_count[size_t(g)] < count[size_t(g)]) ++far_votes[size_t(g)];
    ++k;
  }
  return int(std::max_element(far_votes.begin(), far_votes.end()) - far_votes.begin());
}

// One SM's near group and its near and far medians.
void place_sm(const std::vector<double>& row, int writer, Topology& t) {
  const int big = t.partitions;
  double gap = 0;
  const bool split = !std::isnan(split_threshold(row, &gap));
  std::vector<std::vector<double>> by(static_cast<size_t>(big));
  for (size_t j = 0; j < row.size(); ++j) by[size_t(t.line_group[j])].push_back(row[j]);
  int best = -1;
  double best_med = 0;
  for (int g = 0; g < big; ++g) {
    const double md = median(by[size_t(g)]);
    if (best < 0 || md < best_med) {
      best = g;
      best_med = md;
    }
  }
  if (!split && big > 1) {
    best = writer;
    best_med = best >= 0 ? median(by[size_t(best)]) : NAN;
  }
  std::vector<double> far;
  if (split)
    for (int g = 0; g < big; ++g)
      if (g != best) far.insert(far.end(), by[size_t(g)].begin(), by[size_t(g)].end());
  t.sm_group.push_back(big > 1 ? best : 0);
  t.near_median.push_back(best_med);
  t.far_median.push_back(far.empty() ? NAN : median(far));
}

// Groups numbered by the lowest SM near each (sms is in SM order): which group is found
// first depends on the lines' order in one sweep, so without this a quick and a full run of
// one GPU could call the same partition 0 in one and 1 in the other.
void number_by_lowest_sm(Topology& t) {
  std::vector<int> renumber(size_t(t.partitions), -1);
  int next = 0;
  for (int g : t.sm_group)
    if (g >= 0 && g < t.partitions && renumber[size_t(g)] < 0) renumber[size_t(g)] = next++;
  for (auto& r : renumber)
    if (r < 0) r = next++;
  for (auto& g : t.sm_group)
    if (g >= 0 && g < t.partitions) g = renumber[size_t(g)];
  for (auto& g : t.line_group)
    if (g >= 0 && g < t.partitions) g = renumber[size_t(g)];
}

}  // namespace

bool infer(const LatencyMap& m, Topology* out) {
  const size_t nsm = m.sms.size();
  if (nsm == 0 || m.lat.size() != nsm || m.lat[0].empty()) return false;
  const size_t nl = m.lat[0].size();
  for (const auto& row : m.lat)
    if (row.size() != nl) return false;
  Topology t;
  const auto near = near_patterns(m, t);
  t.partitions = group_lines(near, nl, t);
  if (t.partitions == 0) return false;
  // Each split SM's near group: the one whose lines it reads fastest. An SM that saw one
  // level had every line answered nearby: on A100/H100 a partition keeps copies of lines its
  // own SMs touched, and the lines were just written from one SM, so its partition's SMs see
  // all of them near. With two groups such an SM belongs to the group the split SMs find far
  // (that one is where the writer's side keeps its lines); its far latency is not seen.
  const int writer = writer_side(m, t, near);
  for (const auto& row : m.lat) place_sm(row, writer, t);
  number_by_lowest_sm(t);
  *out = t;
  return true;
}

bool latency_map(const std::vector<Observation>& obs, LatencyMap* out) {
  std::map<int, std::map<int, double>> cells;
  for (const auto& o : select(obs, kFirstReadProbe, "cycles")) {
    const double sm = o.param(kSmColumn), line = o.param(kLineColumn);
    if (!(sm >= 0 && sm < 1e6 && line >= 0 && line < 1e6)) continue;
    cells[int(sm)][int(line)] = o.value;
  }
  if (cells.empty()) return false;
  LatencyMap m;
  const std::map<int, double>& first = cells.begin()->second;
  for (const auto& [sm, row] : cells) {
    if (row.size() != first.size()) continue;  // an SM with missing lines is left out
    std::vector<double> v;
    for (const auto& [line, value] : row) v.push_back(value);
    m.sms.push_back(sm);
    m.lat.push_back(v);
  }
  *out = m;
  return !m.sms.empty();
}

std::vector<int> line_order(const LatencyMap& m, const Topology& t) {
  const size_t nl = t.line_group.size();
  std::vector<double> mean(nl, 0);
  for (const auto& row : m.lat)
    for (size_t j = 0; j < nl && j < row.size(); ++j) mean[j] += row[j];
  std::vector<size_t> idx(nl);
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return t.line_group[a] != t.line_group[b] ? t.line_group[a] < t.line_group[b] : mean[a] < mean[b];
  });
  std::vector<int> pos(nl);
  for (size_t k = 0; k < nl; ++k) pos[idx[k]] = int(k);
  return pos;
}

std::vector<int> sm_order(const LatencyMap& m, const Topology& t) {
  std::vector<size_t> idx(m.sms.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return t.sm_group[a] != t.sm_group[b] ? t.sm_group[a] < t.sm_group[b] : m.sms[a] < m.sms[b];
  });
  std::vector<int> pos(idx.size());
  for (size_t k = 0; k < idx.size(); ++k) pos[idx[k]] = int(k);
  return pos;
}

std::vector<std::vector<int>> co_scheduled_groups(const std::vector<std::vector<int>>& clusters) {
  std::map<int, int> parent;
  std::function<int(int)> root = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const auto& c : clusters)
    for (int sm : c)
      if (!parent.count(sm)) parent[sm] = sm;
  for (const auto& c : clusters)
    for (size_t k = 1; k < c.size(); ++k) {
      const int a = root(c[0]), b = root(c[k]);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  std::map<int, std::vector<int>> groups;
  for (const auto& [sm, p] : parent) groups[root(sm)].push_back(sm);
  std::vector<std::vector<int>> out;
  for (auto& [r, g] : groups) out.push_back(g);
  return out;
}

namespace {

std::vector<CodeExpectation> l2_topology_expectations() {
  CodeExpectation lat{
      std::string(kFamily.name), "l2_topology::line_latency", kFirstReadProbe, {}, {}};
  // Each line read twice (first, again), L2 only, each read timed alone.
  lat.ptx = {{R"(^ld\.global\.cg\.u32 )", 2, false}};
  lat.sass = {{R"(^LDG\.E\.STRONG\.GPU|^LDG\.E)", -1, false}};
  CodeExpectation touch{
      std::string(kFamily.name), "l2_topology::touch_lines", kFirstReadProbe, {}, {}};
  touch.ptx = {{R"(^st\.global\.cg\.u32 )", 1, false}};
  touch.sass = {{R"(^STG)", -1, false}};
  CodeExpectation place{
      std::string(kFamily.name), "l2_topology::placement", kClusterPlacementProbe, {}, {}};
  place.ptx = {{R"(%smid)", -1, false}};
  place.sass = {{R"(SR_VIRTUALSMID|SR_SMID|S2R|S2UR)", -1, false}};
  // The timed chase: L2-only loads, one at a time (the streams around it are load, not timed).
  CodeExpectation contend{
      std::string(kFamily.name), "l2_topology::gpc_contention", kGpcContentionProbe, {}, {}};
  contend.ptx = {{R"(^ld\.global\.cg\.u32 )", -1, false}};
  contend.sass = {{R"(^LDG\.E)", -1, false}};
  return {lat, touch, place, contend};
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(l2_topology_expectations);

}  // namespace

namespace {
// l2_partitions: two levels seen by kSplitShareSure of the SMs is a clear split; fewer leave it
// in doubt; one level everywhere may be one partition or near copies hiding the far one.
constexpr double kSplitSureConfidence = 0.8, kSplitDoubtConfidence = 0.4;
constexpr double kOneLevelConfidence = 0.5;
// Each partition's SM count rests on the split and on every SM's grouping: a little less sure.
constexpr double kSmCountShare = 0.9;
// The SM spread of L2 latency is a range over SMs, its low end only a 5-95 % bound.
constexpr double kSmSpreadConfidence = 0.6;
// A per-SM level median counts for the spread only over this many lines: over fewer it moves
// with which L2 slices the lines happen to lie in (the 24 % between runs of the 96-line map).
constexpr int kMinLevelLines = 32;
// A median's standard error is about 1.2533 sigma / sqrt(n); p05..p95 of a normal spans 3.29
// sigma. The spread's high end adds kSpreadSeMargin of the largest SM's standard error.
constexpr double kMedianSe = 1.2533, kP05P95Sigmas = 3.29, kSpreadSeMargin = 2;
// tpc_count: c(2) pairs every SM and every even cluster is built of those pairs (the driver's
// own placement); short of sure because a pair is read as a TPC.
constexpr double kTpcConfidence = 0.8;
}  // namespace

namespace {

// l2_partitions and, for a split L2, each partition's SM count.
void partition_parameters(const l2_topology::LatencyMap& m, const l2_topology::Topology& t,
                          std::vector<Parameter>& out) {
  const double nsm = double(m.sms.size());
  // Sure when nearly every SM saw two clear levels; one level everywhere is one partition,
  // or a GPU whose near copies hide the far one: less sure.
  const double split_share = t.split_sms / nsm;
  // (A quarter of the SMs seeing two levels is plenty: the writer's side sees one.)
  const double conf = t.partitions > 1 ? (split_share >= l2_topology::kSplitShareSure ? kSplitSureConfidence
                                                                                     : kSplitDoubtConfidence)
                                       : kOneLevelConfidence;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "stride_sweep: first ld.global.cg of %zu L2-resident lines (written just before) "
                "from each of %zu SMs; lines grouped by the SMs they are near for (%d SMs saw two "
                "levels, smallest gap %.0f cycles)",
                t.line_group.size(), m.sms.size(), t.split_sms, t.gap_min);
  out.push_back({param::l2_partitions, double(t.partitions), "partitions", double(t.partitions),
                 double(t.partitions), conf, buf, std::string(l2_topology::kFamily.name) + ".csv"});
  if (t.partitions < 2) return;
  for (int g = 0; g < t.partitions; ++g) {
    const double n = double(std::count(t.sm_group.begin(), t.sm_group.end(), g));
    out.push_back({param::l2_near_sm_count(g), n, "SMs", n, n, conf * kSmCountShare,
                   "stride_sweep: SMs near line group " + std::to_string(g) +
                       " (those that saw two levels: the faster group; the rest: the group the "
                       "others find far)",
                   std::string(l2_topology::kFamily.name) + ".csv"});
  }
}

// Each SM's near or far median (NaN: not seen) and its standard error.
struct SmLevels {
  std::vector<double> near, far, near_se, far_se;
  int min_lines = 0;  // fewest lines behind any median
};

// From sm_level rows (the median over each SM's kLevelLines reads, split at its own
// threshold); false when the run has none (runs before them: the map's medians serve).
bool sm_levels(const std::vector<Observation>& obs, SmLevels* out) {
  // Named: by_sm points into it past the loop.
  const std::vector<Observation> rows = select(obs, l2_topology::kSmLevelProbe, "cycles");
  std::map<int, std::pair<const Observation*, const Observation*>> by_sm;
  for (const auto& o : rows) {
    const double sm = o.param(l2_topology::kSmColumn);
    if (!(sm >= 0) || o.reps < kMinLevelLines) continue;
    (o.param_text(l2_topology::kLevelColumn) == "far" ? by_sm[int(sm)].second
                                                      : by_sm[int(sm)].first) = &o;
  }
  if (by_sm.empty()) return false;
  SmLevels l;
  l.min_lines = 1 << 30;
  auto se = [](const Observation& o) {
    return kMedianSe * (o.p95 - o.p05) / kP05P95Sigmas / std::sqrt(double(std::max(o.reps, 1)));
  };
  for (const auto& [sm, pair] : by_sm) {
    for (int far = 0; far < 2; ++far) {
      const Observation* o = far ? pair.second : pair.first;
      (far ? l.far : l.near).push_back(o ? o->value : NAN);
      (far ? l.far_se : l.near_se).push_back(o ? se(*o) : NAN);
      if (o) l.min_lines = std::min(l.min_lines, o->reps);
    }
  }
  *out = l;
  return true;
}

// The spread over SMs of one latency (NaN for an SM that did not see it): max - min is the
// figure, the 5-95 % range of SMs bounds it from below, each median's standard error widens
// it above (se empty: the map's medians, no error known).
void sm_spread(const std::vector<double>& v, const std::vector<double>& se, const std::string& name,
               const std::string& what, std::vector<Parameter>& out) {
  std::vector<double> f;
  double worst_se = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) continue;
    f.push_back(v[i]);
    if (i < se.size() && std::isfinite(se[i])) worst_se = std::max(worst_se, se[i]);
  }
  if (f.size() < 2) return;
  const auto [lo, hi] = std::minmax_element(f.begin(), f.end());
  const double p05 = percentile(f, 0.05), p95 = percentile(f, 0.95);
  out.push_back({name, *hi - *lo, "cycles", p95 - p05, *hi - *lo + kSpreadSeMargin * worst_se,
                 kSmSpreadConfidence,
                 "stride_sweep: max - min over " + std::to_string(f.size()) +
                     " SMs of each SM's median first-read latency of " + what +
                     " (low: 5-95 % range of SMs; high: plus twice the largest median's "
                     "standard error)",
                 std::string(l2_topology::kFamily.name) + ".csv"});
}

void spread_parameters(const std::vector<Observation>& obs, const l2_topology::Topology& t,
                       std::vector<Parameter>& out) {
  SmLevels l;
  if (sm_levels(obs, &l)) {
    const std::string lines = "at least " + std::to_string(l.min_lines) + " lines";
    sm_spread(l.near, l.near_se, param::l2_near_hit_latency_sm_spread,
              "its near lines (" + lines + ", the pass written from the other partition)", out);
    sm_spread(l.far, l.far_se, param::l2_far_hit_latency_sm_spread, "its far lines (" + lines + ")",
              out);
    return;
  }
  sm_spread(t.near_median, {}, param::l2_near_hit_latency_sm_spread, "its near group's lines", out);
  if (t.partitions > 1)
    sm_spread(t.far_median, {}, param::l2_far_hit_latency_sm_spread,
              "the other groups' lines, over the " + std::to_string(t.split_sms) +
                  " SMs that saw them far",
              out);
}

}  // namespace

namespace {

// What the cluster placements and the occupancy counts hold.
struct Placements {
  std::map<int, int> capacity;                            // c(k)
  std::vector<std::pair<int, std::vector<int>>> clusters;  // (size, SMs by rank)
  std::set<int> sms;
  int largest = 0;
};

Placements read_placements(const std::vector<Observation>& obs) {
  Placements p;
  std::map<std::pair<int, int>, std::map<int, int>> by_cluster;  // (launch, cluster) -> rank -> SM
  std::map<std::pair<int, int>, int> size_of;
  for (const auto& o : select(obs, l2_topology::kClusterPlacementProbe, l2_topology::kSmUnit)) {
    const double launch = o.param(l2_topology::kLaunchColumn),
                 c = o.param(l2_topology::kClusterColumn),
                 size = o.param(l2_topology::kClusterSizeColumn);
    const double rank = o.param(l2_topology::kRankColumn);
    if (!(launch >= 0 && c >= 0 && size >= 1 && rank >= 0 && o.value >= 0)) continue;
    by_cluster[{int(launch), int(c)}][int(rank)] = int(o.value);
    size_of[{int(launch), int(c)}] = int(size);
    p.largest = std::max(p.largest, int(size));
  }
  std::map<std::pair<int, int>, int> per_launch;  // (launch, size) -> clusters
  for (const auto& [key, ranks] : by_cluster) {
    std::vector<int> sms;
    for (const auto& [r, sm] : ranks) sms.push_back(sm);
    p.sms.insert(sms.begin(), sms.end());
    p.clusters.emplace_back(size_of[key], sms);
    ++per_launch[{key.first, size_of[key]}];
  }
  // c(k): the occupancy rows where the run has them, else the clusters one launch held (the
  // probe launches as many as the occupancy calculator allows).
  for (const auto& o : select(obs, l2_topology::kClusterCapacityProbe, clusters::kClustersUnit))
    if (o.param(l2_topology::kClusterSizeColumn) >= 1 && o.value >= 0)
      p.capacity[int(o.param(l2_topology::kClusterSizeColumn))] = int(o.value);
  if (p.capacity.empty())
    for (const auto& [key, n] : per_launch) p.capacity[key.second] = std::max(p.capacity[key.second], n);
  return p;
}

std::vector<l2_topology::ContentionCell> contention_cells(const std::vector<Observation>& obs) {
  std::vector<l2_topology::ContentionCell> cells;
  for (const auto& o : select(obs, l2_topology::kGpcContentionProbe, "cycles")) {
    const double probe = o.param(l2_topology::kProbeSmColumn),
                 hog = o.param(l2_topology::kHogSmColumn);
    if (probe >= 0 && std::isfinite(hog)) cells.push_back({int(probe), int(hog), o.value});
  }
  return cells;
}

// gpc_count (analysis/gpcs.hpp) and tpc_count.
void gpc_parameters(const std::vector<Observation>& obs, const Metadata& meta, std::vector<Parameter>& out) {
  const Placements p = read_placements(obs);
  if (p.clusters.empty()) return;
  l2_topology::GpcInput in;
  const double meta_sms = analysis::meta_number(meta, "sm_count");
  in.sm_count = p.capacity.count(1) ? p.capacity.at(1) : std::isfinite(meta_sms) ? int(meta_sms) : int(p.sms.size());
  in.capacity = p.capacity;
  in.unit = l2_topology::tpc_unit(p.clusters, in.sm_count, p.capacity);
  std::vector<std::vector<int>> lists;
  for (const auto& c : p.clusters) lists.push_back(c.second);
  in.groups = l2_topology::co_scheduled_groups(lists);
  in.contention = contention_cells(obs);
  const auto e = l2_topology::estimate_gpcs(in);
  if (!e) return;
  std::string sizes;
  for (int s : e->sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(s);
  out.push_back(
      {param::gpc_count, double(e->value), "GPCs", double(e->low), double(e->high), e->confidence,
       "cluster_launch: c(k) clusters of k blocks (one per SM) that the occupancy "
       "calculator (a driver query that knows the floorswept chip) fits for k = 2.." +
           std::to_string(p.largest) + ", and where " + std::to_string(p.clusters.size()) +
           " launched clusters landed; " + e->reading +
           (e->contention_used ? "; SMs per GPC " : "; SMs of the domains read as GPCs ") + sizes,
       std::string(l2_topology::kFamily.name) + ".csv"});
  if (in.unit == 2) {
    const double tpcs = in.sm_count / 2.0;
    out.push_back({param::tpc_count, tpcs, "TPCs", tpcs, tpcs, kTpcConfidence,
                   "cluster_launch: SM pairs that every cluster of 2 blocks (one per SM) takes, "
                   "c(2) = SMs / 2, and of which every even cluster is built (ranks 2i, 2i+1)",
                   std::string(l2_topology::kFamily.name) + ".csv"});
  }
}

}  // namespace

std::vector<Parameter> analyze_l2_topology(const std::vector<Observation>& obs, const Metadata& meta) {
  std::vector<Parameter> out;
  l2_topology::LatencyMap m;
  l2_topology::Topology t;
  if (l2_topology::latency_map(obs, &m) && l2_topology::infer(m, &t)) {
    partition_parameters(m, t, out);
    spread_parameters(obs, t, out);
  }
  gpc_parameters(obs, meta, out);
  return out;
}

GPUPROBE_REGISTER_ANALYZER(l2_topology::kFamily, analyze_l2_topology);

}  // namespace l2_topology
}  // namespace gpuprobe
