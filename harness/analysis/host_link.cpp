#include "analysis/host_link.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"
#include "base/stats.hpp"

namespace gpuprobe {

namespace host_link {

std::vector<long long> transfer_sizes(bool quick) {
  std::vector<long long> out;
  const long long last = quick ? (64ll << 20) : (1ll << 30);
  for (long long b = 4096; b <= last; b *= 4) out.push_back(b);
  return out;
}

std::vector<size_t> disagreeing(const std::vector<double>& rates) {
  // (how far outside its neighbours' span, index): dips first, the deepest first, then spikes.
  std::vector<std::pair<double, size_t>> dips, spikes;
  const size_t n = rates.size();
  for (size_t i = 1; i < n; ++i) {
    double lo = rates[i - 1], hi = rates[i - 1];
    if (i + 1 < n) {
      lo = std::min(lo, rates[i + 1]);
      hi = std::max(hi, rates[i + 1]);
    } else {
      hi = rates[i];  // the largest size: only a fall below the one before it disagrees
    }
    if (rates[i] < (1 - kNeighbourTolerance) * lo) dips.push_back({lo / rates[i], i});
    else if (rates[i] * (1 - kNeighbourTolerance) > hi) spikes.push_back({rates[i] / hi, i});
  }
  std::sort(dips.rbegin(), dips.rend());
  std::sort(spikes.rbegin(), spikes.rend());
  std::vector<size_t> out;
  for (const auto& d : dips) out.push_back(d.second);
  for (const auto& s : spikes) out.push_back(s.second);
  return out;
}

int size_to_repeat(const std::vector<std::vector<double>>& passes, const std::vector<double>& cost,
                   double budget) {
  std::vector<double> merged;
  for (const auto& p : passes) merged.push_back(p.empty() ? 0 : median(p));
  for (size_t i : disagreeing(merged))
    if (int(passes[i].size()) < kMaxPasses && i < cost.size() && cost[i] <= budget) return int(i);
  return -1;
}

std::vector<SizeRate> size_rates(const std::vector<Observation>& rows) {
  std::map<long long, std::vector<const Observation*>> by_size;
  for (const auto& o : rows) {
    const double b = o.param(host_link::kBytesColumn);
    if (std::isfinite(b) && b > 0 && std::isfinite(o.value)) by_size[static_cast<long long>(b)].push_back(&o);
  }
  std::vector<SizeRate> out;
  for (const auto& [bytes, passes] : by_size) {
    SizeRate r;
    r.bytes = bytes;
    r.passes = int(passes.size());
    std::vector<double> values;
    r.low = 1e300;
    r.high = -1e300;
    for (const Observation* o : passes) {
      values.push_back(o->value);
      r.low = std::min(r.low, std::min(o->p05, o->value));
      r.high = std::max(r.high, std::max(o->p95, o->value));
    }
    r.value = median(values);
    r.confidence = analysis::spread_confidence(r.low, r.value, r.high);
    out.push_back(r);
  }
  return out;
}

// One point on the plateau could be a curve still rising: its confidence keeps this share.
constexpr double kOnePointFactor = 0.6;
// A plateau range as wide as its value still keeps this share (the level was reached).
constexpr double kWideRangeFloor = 0.2;

bool plateau(const std::vector<Observation>& rows, Plateau* out) {
  const std::vector<SizeRate> sizes = size_rates(rows);
  double best = 0;
  for (const auto& s : sizes) best = std::max(best, s.value);
  if (!(best > 0)) return false;
  std::vector<double> on;
  Plateau p;
  p.low = 1e300;
  p.high = 0;
  p.confidence = 1;
  p.first_size = -1;
  for (const auto& s : sizes) {
    if (s.value < kPlateauFraction * best) continue;
    on.push_back(s.value);
    p.low = std::min(p.low, s.value);
    p.high = std::max(p.high, s.value);
    if (p.first_size < 0) p.first_size = s.bytes;
    p.confidence = std::min(p.confidence, s.confidence);
  }
  p.points = int(on.size());
  p.value = median(on);
  // One point on the plateau could be the start of a curve still rising: less sure.
  if (p.points < 2) p.confidence *= kOnePointFactor;
  p.at_largest = p.points < 2 && p.first_size == sizes.back().bytes;
  // Larger copies that fall off the plateau (pageable staging, a host memory limit) widen the
  // range to what they got, and a wide range is a less certain figure.
  for (const auto& s : sizes)
    if (s.bytes >= p.first_size) p.low = std::min(p.low, s.value);
  p.confidence *= std::clamp(1 - (p.high - p.low) / p.value, kWideRangeFloor, 1.0);
  *out = p;
  return true;
}

// One size past kSustainedFrom alone may be a pass the host disturbed: less sure.
constexpr double kOneSizeFactor = 0.8;

bool sustained(const std::vector<Observation>& rows, Sustained* out) {
  Sustained s;
  std::vector<double> values;
  s.low = 1e300;
  s.high = -1e300;
  for (const auto& r : size_rates(rows)) {
    if (r.bytes < kSustainedFrom || !(r.value > 0)) continue;
    values.push_back(r.value);
    s.low = std::min(s.low, r.low);
    s.high = std::max(s.high, r.high);
    s.passes += r.passes;
  }
  s.sizes = int(values.size());
  if (s.sizes == 0) return false;
  s.value = median(values);
  s.confidence = analysis::spread_confidence(s.low, s.value, s.high) * (s.sizes < 2 ? kOneSizeFactor : 1);
  *out = s;
  return true;
}

namespace {

std::vector<CodeExpectation> host_link_expectations() {
  CodeExpectation copy;
  copy.source = std::string(kFamily.name);
  copy.kernel = "host_link::sm_copy";
  copy.probe = host_link::kSmH2dProbe;
  copy.ptx = {{R"(^ld\.global(\.nc)?\.v4\.u32 )", -1, false}, {R"(^st\.global\.v4\.u32 )", -1, false}};
  copy.sass = {{R"(^LDG\.E\.128)", -1, false}, {R"(^STG\.E\.128)", -1, false}};
  CodeExpectation chase;
  chase.source = std::string(kFamily.name);
  chase.kernel = "host_link::host_chase";
  chase.probe = host_link::kMappedLatencyProbe;
  // System-scope loads: the host's memory answers every one, no GPU cache may.
  chase.ptx = {{R"(^ld\.(relaxed\.sys|volatile)\.global\.u64 )", 1, false}};  // volatile before sm_70
  chase.sass = {{R"(^LDG\.E\.64)", 1, false}};  // the .sys scope is checked in the PTX
  return {copy, chase};
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(host_link_expectations);

}  // namespace

namespace {

struct Link {
  const char* probe;
  const char* name;
  const char* method;
  int directions;         // 2: bytes of both directions at once
  const char* peak = "";  // a pageable copy's: the best sizes' rate (`name` the sustained one)
};

// What the method text says beside a rate: the sizes measured again, and the link's own rate.
struct Context {
  double link_gbs = 0;  // raw, one direction (NVML, read while a copy ran); 0: not read
  std::string link_text;
  double memcpy_gbs = 0;  // the host's own memcpy at kSustainedFrom bytes; 0: not measured
};

Context read_context(const std::vector<Observation>& obs) {
  Context c;
  for (const auto& o : obs) {
    if (o.probe == host_link::kPcieLinkProbe && o.value > 0) {
      c.link_gbs = o.value;
      c.link_text = "PCIe gen " + analysis::num(o.param(host_link::kGenerationColumn), 2) + " x" +
                    analysis::num(o.param(host_link::kLanesColumn), 3) +
                    " (NVML, during a copy): " + analysis::num(o.value) + " GB/s raw each way";
    }
    if (o.probe == host_link::kHostMemcpyProbe && o.unit == "GB/s" && o.value > 0)
      c.memcpy_gbs = o.value;
  }
  return c;
}

// "; measured again where neighbouring sizes disagreed by more than 10 %: 1 GiB 50.9-83.1 GB/s
// over 3 passes (median kept)", or "" when no size was repeated.
std::string repeats_text(const std::vector<Observation>& rows) {
  std::string out;
  for (const auto& s : host_link::size_rates(rows)) {
    if (s.passes < 2) continue;
    out += (out.empty() ? "" : ", ") + analysis::bytes_text(double(s.bytes)) + " " +
           analysis::num(s.low) + "-" + analysis::num(s.high) + " GB/s over " +
           std::to_string(s.passes) + " passes";
  }
  if (out.empty()) return out;
  return "; measured again where neighbouring sizes disagreed by more than " +
         analysis::num(100 * host_link::kNeighbourTolerance) + " %: " + out + " (median kept)";
}

std::string link_share(const Context& c, double gbs, int directions) {
  if (!(c.link_gbs > 0)) return "";
  return "; " + analysis::num(100 * gbs / (directions * c.link_gbs)) + " % of the link's raw rate, " +
         c.link_text;
}

Parameter plateau_parameter(const Link& l, const std::string& name, const host_link::Plateau& p,
                            const std::string& extra) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s; median of the %d transfer sizes within %.0f %% of the best, from %lld bytes "
                "on; events around the copies",
                l.method, p.points, 100 * (1 - host_link::kPlateauFraction), p.first_size);
  std::string method = buf + extra;
  if (p.at_largest) method += "; the best is the largest transfer measured: the curve may still rise past it";
  return {name, p.value, "GB/s", p.low, p.high, p.confidence, method, "host_link.csv"};
}

// Pageable copies run at what the host's CPU and memory give the driver's staging: three full
// runs in a row on one 2 x H200 host gave D2H 11.4-17.2 GB/s, on others 9.0-14.8 and 9.9-15.0
// GB/s, each run's own interval a quarter of that (docs/repeatability.md).
constexpr double kPageableRunToRun = 0.3;
const std::string kPageableRunToRunWhy = "what runs in a row on one host moved";

// A pageable copy: the sustained rate under the link's name, its best sizes under its peak's.
void pageable(const Link& l, const std::vector<Observation>& rows, const Context& c,
              std::vector<Parameter>* out) {
  host_link::Plateau peak;
  if (!host_link::plateau(rows, &peak)) return;
  const std::string again = repeats_text(rows);
  host_link::Sustained s;
  if (host_link::sustained(rows, &s)) {
    std::string method = std::string(l.method) + "; sustained: median of the " + std::to_string(s.sizes) +
                         " transfer sizes of " + analysis::bytes_text(double(host_link::kSustainedFrom)) +
                         " and more" + (s.passes > s.sizes ? " (" + std::to_string(s.passes) + " passes)" : "") +
                         ", whose pages no host cache holds; low/high: their lowest p05 and "
                         "highest p95; the host's memory system sets it (the CPU copies through "
                         "pinned staging buffers)";
    if (c.memcpy_gbs > 0) method += "; the host's own memcpy of that size: " + analysis::num(c.memcpy_gbs) + " GB/s";
    method += "; best sizes " + analysis::num(peak.value) + " GB/s (" + l.peak + ")" + again;
    out->push_back({l.name, s.value, "GB/s", s.low, s.high, s.confidence, method, "host_link.csv"});
    analysis::widen_to_repeat(out->back(), kPageableRunToRun, kPageableRunToRunWhy);
  }
  out->push_back(plateau_parameter(l, l.peak, peak,
                                   "; the peak plateau of the size sweep, where the host's caches "
                                   "may still hold the source: not the sustained rate" +
                                       again));
  analysis::widen_to_repeat(out->back(), kPageableRunToRun, kPageableRunToRunWhy);
}

// The chain at one place of the buffer, or at several (other physical pages of the host):
// the median over the places, the interval from the lowest p05 to the highest p95.
void mapped_latency(const std::vector<Observation>& rows, std::vector<Parameter>* out) {
  if (rows.empty()) return;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "pointer_chase: one thread, ld.relaxed.sys over %.0f lines %.0f B apart in mapped "
                "pinned host memory; clock64 cycles per load at the measured SM clock",
                rows[0].param(host_link::kHopsColumn), rows[0].param(host_link::kStrideColumn));
  if (rows.size() == 1) {
    out->push_back(analysis::measured(param::host_mapped_latency, rows[0], buf, "host_link.csv"));
    return;
  }
  std::vector<double> values;
  double low = 1e300, high = -1e300;
  for (const auto& o : rows) {
    values.push_back(o.value);
    low = std::min(low, o.p05);
    high = std::max(high, o.p95);
  }
  const double v = median(values);
  const std::string method = std::string(buf) + "; the same chain at " + std::to_string(rows.size()) +
                             " places of the pinned buffer (other physical pages of the host): their "
                             "median, low/high the lowest p05 and highest p95 of them all";
  out->push_back({param::host_mapped_latency, v, "ns", low, high,
                  analysis::spread_confidence(low, v, high), method, "host_link.csv"});
}

}  // namespace

std::vector<Parameter> analyze_host_link(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  const Link links[] = {
      {host_link::kCeH2dPinnedProbe, param::h2d_bandwidth_pinned,
       "copy_engine: cudaMemcpyAsync pinned host -> device", 1},
      {host_link::kCeD2hPinnedProbe, param::d2h_bandwidth_pinned,
       "copy_engine: cudaMemcpyAsync device -> pinned host", 1},
      {host_link::kCeBidirPinnedProbe, param::bidir_bandwidth_pinned,
       "copy_engine: H2D and D2H at once on two streams, bytes of both over the time of both", 2},
      {host_link::kCeH2dPageableProbe, param::h2d_bandwidth_pageable,
       "copy_engine: cudaMemcpyAsync pageable host -> device", 1,
       param::h2d_bandwidth_pageable_peak},
      {host_link::kCeD2hPageableProbe, param::d2h_bandwidth_pageable,
       "copy_engine: cudaMemcpyAsync device -> pageable host", 1,
       param::d2h_bandwidth_pageable_peak},
      {host_link::kSmH2dProbe, param::h2d_bandwidth_sm,
       "sm_copy: kernel loads from mapped pinned host memory, 16 B per thread", 1},
      {host_link::kSmD2hProbe, param::d2h_bandwidth_sm,
       "sm_copy: kernel stores to mapped pinned host memory, 16 B per thread", 1},
  };
  const Context c = read_context(obs);
  for (const Link& l : links) {
    const std::vector<Observation> rows = select(obs, l.probe, "GB/s");
    if (std::string(l.probe).find("pageable") != std::string::npos) {
      pageable(l, rows, c, &out);
      continue;
    }
    host_link::Plateau p;
    if (host_link::plateau(rows, &p))
      out.push_back(plateau_parameter(l, l.name, p, repeats_text(rows) + link_share(c, p.value, l.directions)));
  }
  mapped_latency(select(obs, host_link::kMappedLatencyProbe, "ns"), &out);
  return out;
}

GPUPROBE_REGISTER_ANALYZER(host_link::kFamily, analyze_host_link);

}  // namespace host_link
}  // namespace gpuprobe
