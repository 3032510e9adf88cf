#include "analysis/ilp_occupancy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"
#include "base/stats.hpp"

namespace gpuprobe::ilp_occupancy {

std::vector<int> warp_counts(int max_warps) {
  const std::vector<int> all = {1, 2, 3, 4, 6, 8, 12, 16, 20, 24, 32, 40, 48, 56, 64};
  std::vector<int> out;
  for (int w : all)
    if (w <= max_warps) out.push_back(w);
  if (out.empty() || out.back() != max_warps) out.push_back(max_warps);
  return out;
}

std::string fma_kernel_name(int ilp) { return "ilp::fma<" + std::to_string(ilp) + ">"; }
std::string load_kernel_name(int ilp) { return "ilp::load<" + std::to_string(ilp) + ">"; }

long long exclusive_shared_bytes(long long shared_per_sm, long long reserved, long long per_block_max,
                                 int blocks) {
  if (blocks < 1 || shared_per_sm <= 0) return -1;
  // Whole KiB, below the allocation granularity of any GPU so far.
  long long footprint = shared_per_sm / blocks / 1024 * 1024;
  long long dyn = std::min(footprint - reserved, per_block_max);
  if (dyn < 0) return -1;
  bool fits = blocks * (dyn + reserved) <= shared_per_sm;
  bool excludes = (blocks + 1) * (dyn + reserved) > shared_per_sm;
  return fits && excludes ? dyn : -1;
}

double confirmed_peak(std::vector<double> rates, double tolerance) {
  std::sort(rates.begin(), rates.end(), std::greater<>());
  for (size_t i = 0; i + 1 < rates.size(); ++i)
    if (rates[i + 1] >= (1 - tolerance) * rates[i]) return rates[i];
  return rates.empty() ? 0 : rates.front();
}

Knee knee(const std::vector<int>& warps, const std::vector<double>& rates, double peak,
          double fraction) {
  Knee k;
  for (size_t i = 0; i < warps.size() && i < rates.size(); ++i) {
    if (rates[i] >= fraction * peak) {
      k.found = true;
      k.warps = warps[i];
      k.warps_below = i > 0 ? warps[i - 1] : warps[i];
      k.rate = rates[i];
      break;
    }
  }
  return k;
}

namespace {

std::vector<CodeExpectation> ilp_expectations() {
  std::vector<CodeExpectation> out;
  for (int ilp : kIlps) {
    CodeExpectation f;
    f.source = std::string(kFamily.name);
    f.kernel = fma_kernel_name(ilp);
    f.probe = kFmaProbe;
    // With one chain the steps must stay one dependent chain, or ILP 1 would not be 1.
    f.ptx = {{R"(^fma\.rn\.f32 )", kFmaSteps, ilp == 1}};
    f.sass = {{R"(^FFMA R)", kFmaSteps, ilp == 1}};
    out.push_back(f);
    CodeExpectation l;
    l.source = std::string(kFamily.name);
    l.kernel = load_kernel_name(ilp);
    l.probe = kLoadProbe;
    // ILP loads per loop trip, not unrolled: a warp has exactly ILP loads in flight.
    l.ptx = {{R"(^ld\.global\.cg\.f32 )", ilp, false}};
    l.sass = {{R"(^LDG(\.[A-Z0-9]+)* R)", ilp, false}};
    out.push_back(l);
  }
  return out;
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(ilp_expectations);

}  // namespace

namespace {

// For an ILP that never reaches 90 % of the peak: its best rate as a fraction of the peak.
// The last point above the one before by more than the timing's noise (3 %): still rising.
constexpr double kStillRising = 1.03;
// A ceiling is a fraction of the confirmed peak, whose own uncertainty its rows do not carry;
// each kind's floor covers what runs in a row moved it (docs/repeatability.md, "Floors"): the
// load ceilings (lone spikes of the DRAM-load peak) 2.9 % over three runs on one H100 and
// 2.5 % on one H200; the FMA ceilings (the FMA pipe's own rate) 0.011 % and 0.026 %.
constexpr double kLoadCeilingRunToRun = 0.03;
constexpr double kFmaCeilingRunToRun = 0.0005;

// Still rising over the last sweep points means it lacked warps (the SM holds no more); flat
// means a ceiling of its own at that ILP (issue, register banks), which more warps do not lift.
Parameter ceiling(std::string (*name)(long ilp), int ilp,
                  const std::map<int, const Observation*>& points, double peak,
                  const char* peak_text, double run_to_run) {
  const Observation* best = nullptr;
  for (const auto& [w, row] : points)
    if (!best || row->value > best->value) best = row;
  const Observation* last = points.rbegin()->second;
  const Observation* before = points.size() > 1 ? std::next(points.rbegin())->second : last;
  bool rising = last->value > kStillRising * before->value;
  Parameter p;
  p.name = name(ilp);
  p.value = best->value / peak;
  p.unit = "ratio";
  p.low = best->p05 / peak;
  p.high = best->p95 / peak;
  p.confidence = analysis::spread_confidence(*best);
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "best rate with %d independent operations per thread over %s, at %g warps/SM; "
                "never 90 %%: %s at %g warps/SM, the most swept",
                ilp, peak_text, best->param(kWarpsColumn),
                rising ? "still rising (needs more warps than the SM holds)"
                       : "flat (a limit of this ILP that more warps do not lift)",
                double(points.rbegin()->first));
  p.method = buf;
  p.evidence = "ilp_occupancy.csv";
  analysis::widen_to_repeat(p, run_to_run, "what runs in a row moved the ceiling");
  return p;
}

// A knee at w warps whose sweep point below is w_below is placed to within w_below / w: the
// confidence keeps half for the measurement and scales the other half by that resolution
// (kUnknownResolution where no point below was swept).
constexpr double kResolutionShare = 0.5;
constexpr double kUnknownResolution = 0.5;
// warps x ILP at the knee agreeing across ILPs is the evidence; the least agreement still
// keeps kAgreementFloor (each knee was measured).
constexpr double kAgreementFloor = 0.1;

// Each probe's parameters: the numbered ones per ILP, and the warp-ops in flight.
struct Kind {
  const char* probe;
  std::string (*ceiling)(long ilp);
  std::string (*warps_90pct)(long ilp);
  const char* in_flight;
  double ceiling_run_to_run;
};
const Kind kKinds[] = {{kFmaProbe, param::fp32_fma_ceiling_ilp, param::fp32_fma_warps_90pct_ilp,
                        param::fp32_fma_in_flight_90pct, kFmaCeilingRunToRun},
                       {kLoadProbe, param::dram_load_ceiling_ilp, param::dram_load_warps_90pct_ilp,
                        param::dram_load_in_flight_90pct, kLoadCeilingRunToRun}};

// warps x ILP at the knees (`in_flight`; from the sweep points below them, `below`).
Parameter in_flight_parameter(const char* name, const std::vector<double>& in_flight,
                              const std::vector<double>& below) {
  Parameter p;
  p.name = name;
  p.value = median(in_flight);
  p.unit = "warp-ops/SM";
  // Each knee lies between its sweep point and the one below (H200: 160 warp-ops/SM in two
  // runs, 192 in a third, where the interval was 160-160).
  p.low = *std::min_element(below.begin(), below.end());
  p.high = *std::max_element(in_flight.begin(), in_flight.end());
  // If ILP substitutes for warps, warps x ILP at the knee is the same for every ILP.
  const auto [least, most] = std::minmax_element(in_flight.begin(), in_flight.end());
  p.confidence = std::clamp(*least / *most, kAgreementFloor, 1.0);
  p.method = "warps x ILP at the 90 % knee, median over ILP " + std::to_string(in_flight.size()) +
             " values (equal when ILP replaces occupancy); low/high: from the sweep point below "
             "the lowest knee to the highest";
  p.evidence = "ilp_occupancy.csv";
  return p;
}

}  // namespace

// Above any ILP or warps-per-SM count a GPU has (64 warps per SM on every NVIDIA part).
constexpr double kMaxSwept = 1024;

std::vector<Parameter> analyze_ilp_occupancy(const std::vector<Observation>& obs, const Metadata&) {
  using namespace ilp_occupancy;
  std::vector<Parameter> out;
  for (const Kind& kd : kKinds) {
    const std::string kind = kd.probe;
    std::map<int, std::map<int, const Observation*>> by_ilp;  // ilp -> warps -> row
    std::vector<double> all;
    std::string unit;
    for (const auto& o : obs) {
      if (o.probe != kind) continue;
      double ilp = o.param(kIlpColumn), w = o.param(kWarpsColumn);
      // Small whole numbers as the probe sweeps them; anything else is no row of it (and
      // would not convert to int).
      if (!(ilp >= 1 && ilp <= kMaxSwept) || !(w >= 1 && w <= kMaxSwept)) continue;
      by_ilp[int(ilp)][int(w)] = &o;
      all.push_back(o.value);
      unit = o.unit;
    }
    double peak = confirmed_peak(all);
    if (peak <= 0) continue;
    long spikes = std::count_if(all.begin(), all.end(), [&](double r) { return r > peak; });
    char peak_text[160];
    std::snprintf(peak_text, sizeof peak_text, "the %.4g %s peak (seen at two points within 3 %%%s)",
                  peak, unit.c_str(), spikes ? "; higher lone points set aside" : "");
    std::vector<double> in_flight, in_flight_below;
    for (const auto& [ilp, points] : by_ilp) {
      std::vector<int> warps;
      std::vector<double> rates;
      for (const auto& [w, row] : points) {
        warps.push_back(w);
        rates.push_back(row->value);
      }
      Knee k = knee(warps, rates, peak);
      if (!k.found) {
        out.push_back(ceiling(kd.ceiling, ilp, points, peak, peak_text, kd.ceiling_run_to_run));
        continue;
      }
      const Observation* at = points.at(k.warps);
      Parameter p;
      p.name = kd.warps_90pct(ilp);
      p.value = k.warps;
      p.unit = "warps/SM";
      p.low = k.warps_below;
      p.high = k.warps;
      // A knee between far-apart sweep points is placed less precisely.
      double resolution = k.warps_below > 0 ? double(k.warps_below) / k.warps : kUnknownResolution;
      p.confidence = analysis::spread_confidence(*at) *
                     (1 - kResolutionShare + kResolutionShare * resolution);
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "fewest warps per SM (exact occupancy) reaching 90 %% of %s with %d independent "
                    "operations per thread",
                    peak_text, ilp);
      p.method = buf;
      p.evidence = "ilp_occupancy.csv";
      out.push_back(p);
      in_flight.push_back(double(k.warps) * ilp);
      in_flight_below.push_back(double(k.warps_below) * ilp);
    }
    if (!in_flight.empty())
      out.push_back(in_flight_parameter(kd.in_flight, in_flight, in_flight_below));
  }
  return out;
}

GPUPROBE_REGISTER_ANALYZER(ilp_occupancy::kFamily, analyze_ilp_occupancy);

}  // namespace gpuprobe::ilp_occupancy
