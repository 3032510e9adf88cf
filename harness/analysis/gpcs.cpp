#include "analysis/gpcs.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>

#include "base/stats.hpp"

namespace gpuprobe::l2_topology {

namespace {

// Bounds on the partition search: c(k) that leave much open (domains far past the largest
// cluster, K = 8 on a 132-SM chip) allow very many partitions; past these the search stops
// and says so (a lower confidence), so that a test or a run never waits on it.
constexpr long kSearchNodes = 1000000;
constexpr size_t kKeptPartitions = 64;
// Nodes of the check that each co-scheduled group fits one domain of a partition; past it the
// partition is kept (undecided), never dropped: a true partition must not be lost.
constexpr long kPackNodes = 20000;

struct Search {
  explicit Search(const std::map<int, int>& capacity) : c(capacity) {}
  const std::map<int, int>& c;
  int sm_count = 0, unit = 1, largest = 1;  // largest: K, the largest contiguous cluster size
  std::vector<int> groups;                  // largest first
  PartitionSearch out;
  long nodes = 0;
};

// The domains c(2..K) force beside `big` (domains larger than K, which c(k <= K) cannot tell
// apart by themselves): N(k), the number of domains of at least k SMs, is c(k) minus N(2k),
// N(3k), ..., from k = K down; false when no multiset has those N.
bool complete_domains(const Search& s, const std::vector<int>& big, std::vector<int>* parts) {
  const int k_max = s.largest;
  std::vector<long> n(size_t(k_max) + 2, 0);
  n[size_t(k_max) + 1] = long(big.size());
  auto at_least = [&](long k) -> long {
    if (k <= k_max) return n[size_t(k)];
    return std::count_if(big.begin(), big.end(), [&](int b) { return b >= k; });
  };
  for (int k = k_max; k >= 2; --k) {
    long v = s.c.at(k);
    for (long m = 2; m * k <= s.sm_count; ++m) v -= at_least(m * k);
    n[size_t(k)] = v;
  }
  *parts = big;
  for (int k = k_max; k >= 2; --k) {
    const long exact = n[size_t(k)] - n[size_t(k) + 1];
    if (exact < 0 || (exact > 0 && k % s.unit != 0)) return false;
    parts->insert(parts->end(), size_t(exact), k);
  }
  const long rest = s.sm_count - std::accumulate(parts->begin(), parts->end(), 0L);
  if (rest < 0 || (rest > 0 && s.unit > 1)) return false;
  parts->insert(parts->end(), size_t(rest), 1);
  std::sort(parts->rbegin(), parts->rend());
  return true;
}

// Whether groups[i..] fit into the rooms left, each group in one room.
bool groups_fit(const std::vector<int>& groups, std::vector<int>& room, size_t i, long& budget) {
  if (i == groups.size()) return true;
  if (--budget < 0) return true;  // undecided: keep the partition
  std::set<int> tried;            // rooms with the same space left give the same outcome
  for (size_t d = 0; d < room.size(); ++d) {
    if (room[d] < groups[i] || !tried.insert(room[d]).second) continue;
    room[d] -= groups[i];
    const bool fit = groups_fit(groups, room, i + 1, budget);
    room[d] += groups[i];
    if (fit) return true;
  }
  return false;
}

// Tallies a partition that fits: its count of domains larger than one TPC, its domains.
void count(Search& s, const std::vector<int>& parts) {
  const int multi = int(std::count_if(parts.begin(), parts.end(), [&](int d) { return d > s.unit; }));
  PartitionSearch& o = s.out;
  o.fewest_multi = o.count == 0 ? multi : std::min(o.fewest_multi, multi);
  o.most_domains = std::max(o.most_domains, int(parts.size()));
  o.lone_domains = o.lone_domains || multi < int(parts.size());
  ++o.by_multi[multi];
  ++o.count;
  if (o.partitions.size() < kKeptPartitions) o.partitions.push_back(parts);
}

// Whether domains `big` (larger than K) leave for the smaller domains what c(k) asks: each
// k's clusters not held by `big`, c(k) - sum floor(b / k), between 0 and floor(rest / k) for
// the rest of the SMs. Adding a domain only moves both bounds the wrong way: false prunes.
bool room_left(const Search& s, const std::vector<int>& big, int sum) {
  const int rest = s.sm_count - sum;
  for (int k = 2; k <= s.largest; ++k) {
    long held = 0;
    for (int b : big) held += b / k;
    const long left = s.c.at(k) - held;
    if (left < 0 || left > rest / k) return false;
  }
  return rest >= 0;
}

// Depth-first over multisets of domains larger than K (non-increasing), each completed by
// what c(2..K) force.
void search_big(Search& s, std::vector<int>& big, int max_size, int sum) {
  if (++s.nodes > kSearchNodes) {
    s.out.complete = false;
    return;
  }
  std::vector<int> parts;
  if (complete_domains(s, big, &parts)) {
    long budget = kPackNodes;
    std::vector<int> room = parts;
    if (groups_fit(s.groups, room, 0, budget)) count(s, parts);
  }
  const int smallest = (s.largest / s.unit + 1) * s.unit;  // the first size past K
  for (int b = std::min(max_size, s.sm_count - sum) / s.unit * s.unit; b >= smallest; b -= s.unit) {
    big.push_back(b);
    if (room_left(s, big, sum + b)) search_big(s, big, b, sum + b);
    big.pop_back();
    if (!s.out.complete) return;
  }
}

}  // namespace

PartitionSearch domain_partitions(const std::map<int, int>& capacity, int sm_count, int unit,
                                  const std::vector<int>& group_sizes) {
  Search s(capacity);
  s.sm_count = sm_count;
  s.unit = std::max(1, unit);
  while (capacity.count(s.largest + 1)) ++s.largest;
  if (s.largest < 2 || sm_count <= 0) return s.out;
  s.groups = group_sizes;
  std::sort(s.groups.rbegin(), s.groups.rend());
  std::vector<int> big;
  if (room_left(s, big, 0)) search_big(s, big, sm_count, 0);
  return s.out;
}

std::map<int, int> capacity_of(const std::vector<int>& domains, int largest) {
  std::map<int, int> c;
  for (int k = 1; k <= largest; ++k) {
    int n = 0;
    for (int d : domains) n += d / k;
    c[k] = n;
  }
  return c;
}

int tpc_unit(const std::vector<std::pair<int, std::vector<int>>>& clusters, int sm_count,
             const std::map<int, int>& capacity) {
  const auto c2 = capacity.find(2);
  if (c2 == capacity.end() || 2 * c2->second != sm_count) return 1;
  std::map<int, int> partner;
  for (const auto& [size, sms] : clusters) {
    if (size != 2 || sms.size() != 2) continue;
    for (int r : {0, 1}) {
      const auto [it, fresh] = partner.emplace(sms[size_t(r)], sms[size_t(1 - r)]);
      if (!fresh && it->second != sms[size_t(1 - r)]) return 1;  // an SM paired two ways
    }
  }
  if (partner.empty()) return 1;
  for (const auto& [size, sms] : clusters) {
    if (size % 2 != 0 || int(sms.size()) != size) continue;
    for (size_t r = 0; r + 1 < sms.size(); r += 2) {
      const auto it = partner.find(sms[r]);
      if (it == partner.end() || it->second != sms[r + 1]) return 1;
    }
  }
  return 2;
}

namespace {

// Contention calibration. A chase's cycles per load move by a few cycles between launches;
// a shared link saturated by the streaming SMs should add tens. Own-group slowdowns must be
// at least kSameGpcRatio times the typical other-group one (floored at the noise) and
// kMinSlowdownGap cycles above it, in at least kMinCalibration groups of each kind.
constexpr double kNoiseCycles = 2;
constexpr double kSameGpcRatio = 2;
constexpr double kMinSlowdownGap = 10;
constexpr int kMinCalibration = 2;
// Other-group pairs at or above the threshold (two groups of one GPC, or contention that is
// not per GPC): past this share of them the reading does not tell GPCs apart.
constexpr double kMaxCrossLinkShare = 0.1;
// A slowdown within this share of the own/other gap of the threshold is read as undecided.
constexpr double kAmbiguousShare = 0.25;
// An own-group calibration needs the group's other TPCs to stream: at least this many.
constexpr int kMinOwnHogTpcs = 2;

using Slowdowns = std::map<std::pair<size_t, size_t>, double>;  // (probe group, hog group)

Slowdowns slowdowns(const std::vector<std::vector<int>>& groups, const std::vector<ContentionCell>& cells) {
  std::map<int, size_t> group_of;
  for (size_t g = 0; g < groups.size(); ++g)
    for (int sm : groups[g]) group_of[sm] = g;
  std::map<int, double> base;
  for (const auto& c : cells)
    if (c.hog_sm < 0 && std::isfinite(c.cycles)) base[c.probe_sm] = c.cycles;
  Slowdowns out;
  for (const auto& c : cells) {
    if (c.hog_sm < 0 || !std::isfinite(c.cycles)) continue;
    const auto b = base.find(c.probe_sm);
    const auto p = group_of.find(c.probe_sm), h = group_of.find(c.hog_sm);
    if (b == base.end() || p == group_of.end() || h == group_of.end()) continue;
    out[{p->second, h->second}] = c.cycles - b->second;
  }
  return out;
}

// Each one-TPC group: joined to the single multi-TPC group whose streaming slows it past the
// threshold, standing apart when none does, undecided otherwise.
void join_lone_groups(const std::vector<std::vector<int>>& groups, const Slowdowns& slow, int unit,
                      ContentionReading& r) {
  const double margin = kAmbiguousShare * (r.own_min - r.cross_median);
  for (size_t p = 0; p < groups.size(); ++p) {
    if (int(groups[p].size()) > unit) continue;
    std::vector<size_t> above;
    bool undecided = false;
    for (size_t h = 0; h < groups.size(); ++h) {
      if (int(groups[h].size()) <= unit) continue;
      const auto it = slow.find({p, h});
      if (it == slow.end()) {
        undecided = true;  // a group it was not tested against
        continue;
      }
      if (it->second >= r.threshold) above.push_back(h);
      if (std::fabs(it->second - r.threshold) < margin) undecided = true;
    }
    if (undecided || above.size() > 1) ++r.ambiguous;
    else if (above.size() == 1) r.joins.emplace_back(p, above[0]);
  }
}

}  // namespace

ContentionReading read_contention(const std::vector<std::vector<int>>& groups,
                                  const std::vector<ContentionCell>& cells, int unit) {
  ContentionReading r;
  const Slowdowns slow = slowdowns(groups, cells);
  auto multi = [&](size_t g) { return int(groups[g].size()) > unit; };
  std::vector<double> own, cross;
  for (const auto& [ph, d] : slow) {
    const auto [p, h] = ph;
    if (!multi(h)) continue;
    if (p == h) {
      if (int(groups[p].size()) >= (kMinOwnHogTpcs + 1) * unit) own.push_back(d);
    } else if (multi(p)) {
      cross.push_back(d);
    }
  }
  r.own_pairs = int(own.size());
  r.cross_pairs = int(cross.size());
  if (r.own_pairs < kMinCalibration || r.cross_pairs < kMinCalibration) {
    r.why = "too few groups to calibrate on";
    return r;
  }
  r.own_min = *std::min_element(own.begin(), own.end());
  r.cross_median = median(cross);
  r.threshold = 0.5 * (r.own_min + r.cross_median);
  for (double d : cross) r.cross_links += d >= r.threshold;
  if (r.own_min < kSameGpcRatio * std::max(r.cross_median, kNoiseCycles) ||
      r.own_min - r.cross_median < kMinSlowdownGap) {
    r.why = "streaming from a probe's own group slows it no more than other groups do";
    return r;
  }
  if (r.cross_links > kMaxCrossLinkShare * r.cross_pairs) {
    r.why = "other groups slow probes as much as their own (contention not per GPC)";
    return r;
  }
  r.informative = true;
  join_lone_groups(groups, slow, unit, r);
  return r;
}

namespace {

// Confidence of gpc_count, by what decided it. Contention that placed every one-TPC domain:
// a measured grouping, short of sure because "shares a link" is read as "shares a GPC".
constexpr double kContentionConfidence = 0.8;
// One domain partition fits and has no one-TPC domain: GPCs are read as the domains (a GPC
// holding two domains would be missed).
constexpr double kDomainsConfidence = 0.7;
// One-TPC domains not placed by a measurement: counted into other GPCs, a plausible guess.
constexpr double kLoneGuessConfidence = 0.4;
// No partition fits c(k): the floor model fails on this chip; the groups alone are a guess.
constexpr double kNoFitConfidence = 0.2;
// The partition search stopped at its budget: partitions it did not reach may read otherwise.
constexpr double kIncompleteShare = 0.5;

std::string sizes_text(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// GPCs as the domains (one-TPC domains counted into others), over every fitting partition:
// the count most partitions give, the interval over all of them. A search cut short bounds
// the domains only by the TPCs, c(unit).
void read_domains(const GpcInput& in, const PartitionSearch& search, GpcEstimate& e) {
  const auto mode = std::max_element(search.by_multi.begin(), search.by_multi.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  e.value = std::max(mode->first, 1);
  e.low = search.complete ? std::max(search.fewest_multi, 1) : 1;
  const auto tpcs = in.capacity.find(in.unit);
  e.high = std::max(search.most_domains, e.value);
  if (!search.complete) e.high = std::max(e.high, tpcs != in.capacity.end() ? tpcs->second : in.sm_count);
  for (const auto& p : search.partitions) {
    if (int(std::count_if(p.begin(), p.end(), [&](int d) { return d > in.unit; })) != mode->first) continue;
    e.domains = p;
    for (int d : p)
      if (d > in.unit) e.sizes.push_back(d);
    break;
  }
  e.confidence = (search.lone_domains ? kLoneGuessConfidence : kDomainsConfidence) / double(search.by_multi.size()) *
                 (search.complete ? 1.0 : kIncompleteShare);
  char buf[360];
  std::snprintf(buf, sizeof buf,
                "%zu domain partition%s fit%s c(k) and the placements%s (%s%s); GPCs read as the "
                "domains of two TPCs or more%s",
                search.count, search.count == 1 ? "" : "s", search.count == 1 ? "s" : "",
                search.complete ? "" : " (search cut short)", search.count == 1 ? "" : "e.g. ",
                sizes_text(e.domains).c_str(),
                search.lone_domains ? ", one-TPC domains counted into other GPCs (a guess: nothing "
                                      "measured places them)"
                                    : "");
  e.reading = buf;
}

// GPCs from the contention reading: every multi-TPC group one GPC, one-TPC groups joined to
// theirs, standing apart, or undecided (the interval).
void read_joins(const GpcInput& in, const ContentionReading& r, GpcEstimate& e) {
  std::vector<int> size(in.groups.size());
  for (size_t g = 0; g < in.groups.size(); ++g) size[g] = int(in.groups[g].size());
  std::set<size_t> joined;
  for (const auto& [lone, multi] : r.joins) {
    size[multi] += size[lone];
    joined.insert(lone);
  }
  int multi = 0, apart = 0;
  for (size_t g = 0; g < in.groups.size(); ++g) {
    if (joined.count(g)) continue;
    if (int(in.groups[g].size()) > in.unit) {
      ++multi;
      e.sizes.push_back(size[g]);
    } else {
      ++apart;
    }
  }
  apart -= r.ambiguous;
  std::sort(e.sizes.rbegin(), e.sizes.rend());
  e.value = multi + apart;
  e.low = multi + (apart > 0 ? 1 : 0);
  e.high = multi + apart + r.ambiguous;
  e.confidence = kContentionConfidence / double(e.high - e.low + 1);
  e.contention_used = true;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "; L2 chase slowed %.0f+ cycles/load by its own group streaming, %.0f (median) by "
                "another: %zu one-TPC domain%s joined to a GPC, %d standing apart, %d undecided",
                r.own_min, r.cross_median, r.joins.size(), r.joins.size() == 1 ? "" : "s", apart,
                r.ambiguous);
  e.reading += buf;
}

}  // namespace

std::optional<GpcEstimate> estimate_gpcs(const GpcInput& in) {
  if (in.groups.empty() || in.sm_count <= 0) return std::nullopt;
  std::vector<int> group_sizes;
  for (const auto& g : in.groups) group_sizes.push_back(int(g.size()));
  std::sort(group_sizes.rbegin(), group_sizes.rend());
  const PartitionSearch search = domain_partitions(in.capacity, in.sm_count, in.unit, group_sizes);
  GpcEstimate e;
  e.partitions = search.count;
  e.complete = search.complete;
  if (search.count == 0) {
    const int multi = int(std::count_if(group_sizes.begin(), group_sizes.end(), [&](int s) { return s > in.unit; }));
    const int placed = std::accumulate(group_sizes.begin(), group_sizes.end(), 0);
    e.domains = group_sizes;
    e.value = e.low = std::max(multi, 1);
    e.high = int(group_sizes.size()) + std::max(0, in.sm_count - placed) / std::max(in.unit, 1);
    e.confidence = kNoFitConfidence;
    e.reading = "no domain partition fits c(k) (clusters here are not formed per domain of SMs as "
                "modelled); GPCs read as the co-scheduled groups of two TPCs or more";
    return e;
  }
  read_domains(in, search, e);
  // The contention reading counts groups: only where they are the domains themselves.
  const bool groups_are_domains = search.count == 1 && search.partitions[0] == group_sizes;
  if (!groups_are_domains || in.contention.empty()) return e;
  const ContentionReading r = read_contention(in.groups, in.contention, in.unit);
  if (!r.informative) {
    e.reading += "; contention probe not informative: " + r.why;
    return e;
  }
  e.sizes.clear();
  read_joins(in, r, e);
  return e;
}

}  // namespace gpuprobe::l2_topology
