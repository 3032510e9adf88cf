#include "analysis/host_link.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/code_check.hpp"
#include "base/stats.hpp"

namespace gpuprobe {

namespace host_link {

std::vector<long long> transfer_sizes(bool quick) {
  std::vector<long long> out;
  const long long last = quick ? (64ll << 20) : (1ll << 30);
  for (long long b = 4096; b <= last; b *= 4) out.push_back(b);
  return out;
}

// One point on the plateau could be a curve still rising: its confidence keeps this share.
constexpr double kOnePointFactor = 0.6;
// A plateau range as wide as its value still keeps this share (the level was reached).
constexpr double kWideRangeFloor = 0.2;

bool plateau(const std::vector<Observation>& rows, Plateau* out) {
  double best = 0;
  for (const auto& o : rows) best = std::max(best, o.value);
  if (!(best > 0)) return false;
  std::vector<double> on;
  Plateau p;
  p.low = 1e300;
  p.high = 0;
  p.confidence = 1;
  p.first_size = -1;
  for (const auto& o : rows) {
    if (o.value < kPlateauFraction * best) continue;
    on.push_back(o.value);
    p.low = std::min(p.low, o.value);
    p.high = std::max(p.high, o.value);
    const long long size = static_cast<long long>(o.param("bytes"));
    if (p.first_size < 0 || size < p.first_size) p.first_size = size;
    p.confidence = std::min(p.confidence, analysis::spread_confidence(o));
  }
  p.points = int(on.size());
  p.value = median(on);
  // One point on the plateau could be the start of a curve still rising: less sure.
  if (p.points < 2) p.confidence *= kOnePointFactor;
  long long largest = 0;
  for (const auto& o : rows) largest = std::max(largest, static_cast<long long>(o.param("bytes")));
  p.at_largest = p.points < 2 && p.first_size == largest;
  // Larger copies that fall off the plateau (pageable staging, a host memory limit) widen the
  // range to what they got, and a wide range is a less certain figure.
  for (const auto& o : rows)
    if (static_cast<long long>(o.param("bytes")) >= p.first_size) p.low = std::min(p.low, o.value);
  p.confidence *= std::clamp(1 - (p.high - p.low) / p.value, kWideRangeFloor, 1.0);
  *out = p;
  return true;
}

namespace {

std::vector<CodeExpectation> host_link_expectations() {
  CodeExpectation copy;
  copy.source = std::string(kFamily.name);
  copy.kernel = "host_link::sm_copy";
  copy.probe = "sm_h2d";
  copy.ptx = {{R"(^ld\.global(\.nc)?\.v4\.u32 )", -1, false}, {R"(^st\.global\.v4\.u32 )", -1, false}};
  copy.sass = {{R"(^LDG\.E\.128)", -1, false}, {R"(^STG\.E\.128)", -1, false}};
  CodeExpectation chase;
  chase.source = std::string(kFamily.name);
  chase.kernel = "host_link::host_chase";
  chase.probe = "mapped_latency";
  // System-scope loads: the host's memory answers every one, no GPU cache may.
  chase.ptx = {{R"(^ld\.(relaxed\.sys|volatile)\.global\.u64 )", 1, false}};  // volatile before sm_70
  chase.sass = {{R"(^LDG\.E\.64)", 1, false}};  // the .sys scope is checked in the PTX
  return {copy, chase};
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(host_link_expectations);

}  // namespace

}  // namespace host_link

std::vector<Parameter> analyze_host_link(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  struct Link {
    const char* probe;
    const char* name;
    const char* method;
  };
  const Link links[] = {
      {"ce_h2d_pinned", "h2d_bandwidth_pinned", "copy_engine: cudaMemcpyAsync pinned host -> device"},
      {"ce_d2h_pinned", "d2h_bandwidth_pinned", "copy_engine: cudaMemcpyAsync device -> pinned host"},
      {"ce_bidir_pinned", "bidir_bandwidth_pinned",
       "copy_engine: H2D and D2H at once on two streams, bytes of both over the time of both"},
      {"ce_h2d_pageable", "h2d_bandwidth_pageable", "copy_engine: cudaMemcpyAsync pageable host -> device"},
      {"ce_d2h_pageable", "d2h_bandwidth_pageable", "copy_engine: cudaMemcpyAsync device -> pageable host"},
      {"sm_h2d", "h2d_bandwidth_sm", "sm_copy: kernel loads from mapped pinned host memory, 16 B per thread"},
      {"sm_d2h", "d2h_bandwidth_sm", "sm_copy: kernel stores to mapped pinned host memory, 16 B per thread"},
  };
  for (const Link& l : links) {
    host_link::Plateau p;
    if (!host_link::plateau(select(obs, l.probe, "GB/s"), &p)) continue;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "%s; median of the %d transfer sizes within %.0f %% of the best, from %lld bytes "
                  "on; events around the copies",
                  l.method, p.points, 100 * (1 - host_link::kPlateauFraction), p.first_size);
    std::string method = buf;
    if (p.at_largest) method += "; the best is the largest transfer measured: the curve may still rise past it";
    out.push_back({l.name, p.value, "GB/s", p.low, p.high, p.confidence, method, "host_link.csv"});
  }
  for (const auto& o : select(obs, "mapped_latency", "ns")) {
    char buf[240];
    std::snprintf(buf, sizeof buf,
                  "pointer_chase: one thread, ld.relaxed.sys over %.0f lines %.0f B apart in mapped "
                  "pinned host memory; clock64 cycles per load at the measured SM clock",
                  o.param("hops"), o.param("stride_bytes"));
    out.push_back(analysis::measured("host_mapped_latency", o, buf, "host_link.csv"));
  }
  return out;
}

GPUPROBE_REGISTER_ANALYZER(host_link::kFamily, analyze_host_link);

}  // namespace gpuprobe
