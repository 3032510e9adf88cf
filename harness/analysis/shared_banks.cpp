#include "analysis/shared_banks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/catalog.hpp"
#include "base/code_check.hpp"
#include "base/csv.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe::shared_banks {

std::vector<long long> stride_offsets(int access_bytes, int stride) {
  std::vector<long long> out(kWarpLanes);
  for (int t = 0; t < kWarpLanes; ++t)
    out[t] = static_cast<long long>(stride) * t * access_bytes;
  return out;
}

std::vector<long long> conflict_offsets(const BankModel& m, int ways, int lanes_per_word) {
  if (ways < 1 || lanes_per_word < 1 || m.banks < 1 || m.width < 4)
    throw std::invalid_argument("conflict_offsets: ways, lanes_per_word, banks >= 1, width >= 4");
  const long long pitch = static_cast<long long>(m.banks) * m.width;
  std::vector<long long> out(kWarpLanes);
  for (int t = 0; t < kWarpLanes; ++t) {
    int group = t / lanes_per_word;
    int bank = group / ways;
    if (bank >= m.banks) return {};  // more groups than banks x ways: the pattern cannot be built
    out[t] = (group % ways) * pitch + static_cast<long long>(bank) * m.width;
  }
  return out;
}

int bank_wavefronts(const BankModel& m, int access_bytes, const std::vector<long long>& offsets) {
  if (m.banks < 1 || m.width < 1 || access_bytes < 1)
    throw std::invalid_argument("bank_wavefronts: banks, width and access_bytes must be >= 1");
  const long long row_bytes = static_cast<long long>(m.banks) * m.width;
  const size_t phase =
      static_cast<size_t>(std::clamp<long long>(row_bytes / access_bytes, 1, kWarpLanes));
  int total = 0;
  for (size_t start = 0; start < offsets.size(); start += phase) {
    std::map<long long, std::set<long long>> rows_of_bank;
    for (size_t i = start; i < std::min(start + phase, offsets.size()); ++i)
      for (long long w = offsets[i] / m.width; w <= (offsets[i] + access_bytes - 1) / m.width; ++w)
        rows_of_bank[w % m.banks].insert(w / m.banks);
    size_t deepest = 0;
    for (const auto& [bank, rows] : rows_of_bank) deepest = std::max(deepest, rows.size());
    total += static_cast<int>(deepest);
  }
  return total;
}

std::string chase_kernel_name(int access_bytes) {
  return "shared_banks::chase_kernel<" + std::to_string(access_bytes) + ">";
}
std::string request_kernel_name(int access_bytes) {
  return "shared_banks::request_kernel<" + std::to_string(access_bytes) + ">";
}

namespace {

using analysis::fit_line;
using analysis::LineFit;

// What the timed loops must hold: every load of a trip, none merged or dropped, in the width
// meant; the latency loop as one dependent chain.
std::vector<CodeExpectation> shared_banks_expectations() {
  std::vector<CodeExpectation> out;
  for (int bytes : {4, 8, 16}) {
    const std::string w = bytes == 4 ? "u32" : bytes == 8 ? R"(v2\.u32)" : R"(v4\.u32)";
    const std::string ptx = R"(^ld\.volatile\.shared\.)" + w + " ";
    // LDS (or LDS.32), LDS.64, LDS.128, with whatever letter modifiers (.U) the compiler adds.
    const std::string sass =
        R"(^LDS(\.[A-Z]+)*)" +
        std::string(bytes == 4 ? R"((\.32)?)" : R"(\.)" + std::to_string(bytes * 8)) + " ";
    out.push_back({std::string(kFamily.name),
                   chase_kernel_name(bytes),
                   kStrideLatency,
                   {{ptx, kLoadsPerTrip, true}},
                   {{sass, kLoadsPerTrip, false}}});
    out.push_back({std::string(kFamily.name),
                   request_kernel_name(bytes),
                   kStrideThroughput,
                   {{ptx, kLoadsPerTrip, false}},
                   {{sass, kLoadsPerTrip, false}}});
  }
  return out;
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(shared_banks_expectations);

// How clearly the best model beats an alternative: the drop in weighted squared residual in
// units of the noise variance (at least 1 % relative noise is assumed, since no timing is
// better than that), mapped to [0, 1) as tanh(delta/4): a likelihood ratio of e^2 gives 0.76.
constexpr double kNoiseFloor = 1e-4;     // (1 % relative)^2: no timing is better than that
constexpr double kSeparationScale = 4.0;  // tanh(delta / 4): e^2 likelihood ratio -> 0.76
double separation(double ssr_best, double ssr_alt, int n) {
  double noise = std::max(ssr_best / std::max(n - 2, 1), kNoiseFloor);
  return std::tanh(std::max(0.0, ssr_alt - ssr_best) / noise / kSeparationScale);
}

std::string model_text(const BankModel& m) {
  return std::to_string(m.banks) + "x" + std::to_string(m.width) + " B";
}

// Relative residuals beyond this are outliers: they count as this much and no more, and do
// not steer the line.
constexpr double kOutlier = 0.3;

struct ModelScore {
  LineFit line;
  double floor = 1;
  double score = 0;  // sum of squared relative residuals, each capped at kOutlier^2
};

// How well measured = a + b * max(wavefronts, floor) explains `y`. The floor stands for an
// issue limit (a request that cannot go faster than `floor` passes even when conflict-free),
// which would otherwise pass for conflicts on the cheapest patterns. Residuals are relative,
// so a 2-way and a 32-way point weigh alike; one refit without the outliers keeps a few wild
// points from choosing the model.
// The issue floors tried, in wavefronts: none, and the passes a wide access may need.
constexpr double kIssueFloors[] = {1.0, 1.5, 2.0, 3.0, 4.0};
// A later floor replaces the best only if it scores better by more than rounding.
constexpr double kScoreTie = 1e-12;

ModelScore score_model(const std::vector<double>& wavefronts, const std::vector<double>& y) {
  ModelScore best;
  best.score = std::numeric_limits<double>::infinity();
  for (double floor : kIssueFloors) {
    std::vector<double> x, w;
    for (size_t i = 0; i < y.size(); ++i) {
      x.push_back(std::max(wavefronts[i], floor));
      w.push_back(1.0 / (y[i] * y[i]));
    }
    LineFit line = fit_line(x, y, w, true);
    for (size_t i = 0; i < y.size(); ++i)
      if (std::abs(y[i] - line.intercept - line.slope * x[i]) > kOutlier * y[i]) w[i] = 0;
    line = fit_line(x, y, w, true);
    double score = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      double r = (y[i] - line.intercept - line.slope * x[i]) / y[i];
      score += std::min(r * r, kOutlier * kOutlier);
    }
    if (score < best.score - kScoreTie) best = {line, floor, score};
  }
  return best;
}

}  // namespace

// The widest shared-memory access (a 16-byte vector) and the largest stride, in words, the probe
// sweeps, with room to spare.
constexpr double kMaxAccessBytes = 64;
constexpr double kMaxStride = 1 << 20;
// Fewer stride points than this cannot tell 15 candidate models apart.
constexpr size_t kMinFitPoints = 6;
// The slowest point must be this much above the fastest for any conflict to be read.
constexpr double kMinConflictRatio = 1.3;

std::optional<BankFit> fit_bank_geometry(const std::vector<Observation>& obs,
                                         const std::string& probe) {
  const std::string unit = probe == kStrideThroughput ? kPerRequest : "cycles";
  std::vector<int> access, stride;
  std::vector<double> y;
  for (const auto& o : analysis::finite_rows(obs, probe, unit)) {
    double a = o.param(kAccessBytesColumn), s = o.param(kStrideColumn);
    // Stride 0 is the broadcast: not a bank test. Widths and strides beyond any the probe
    // sweeps are no rows of it (and would not fit an int).
    if (!(a >= 1 && a <= kMaxAccessBytes && s >= 1 && s <= kMaxStride && o.value > 0)) continue;
    access.push_back(static_cast<int>(a));
    stride.push_back(static_cast<int>(s));
    y.push_back(o.value);
  }
  if (y.size() < kMinFitPoints) return std::nullopt;
  if (*std::max_element(y.begin(), y.end()) < kMinConflictRatio * *std::min_element(y.begin(), y.end()))
    return std::nullopt;  // no conflict visible anywhere: nothing to read banks from

  struct Candidate {
    BankModel m;
    ModelScore s;
  };
  std::vector<Candidate> cands;
  for (int banks : {8, 16, 32, 64, 128})
    for (int width : {4, 8, 16}) {
      BankModel m{banks, width};
      std::vector<double> p;
      for (size_t i = 0; i < y.size(); ++i)
        p.push_back(bank_wavefronts(m, access[i], stride_offsets(access[i], stride[i])));
      cands.push_back({m, score_model(p, y)});
    }
  auto best = std::min_element(
      cands.begin(), cands.end(),
      [](const Candidate& a, const Candidate& b) { return a.s.score < b.s.score; });
  BankFit r;
  r.model = best->m;
  r.intercept = best->s.line.intercept;
  r.slope = best->s.line.slope;
  r.floor = best->s.floor;
  r.points = static_cast<int>(y.size());
  r.rms = std::sqrt(best->s.score / r.points);
  r.r2 = best->s.line.sst > 0 ? 1 - best->s.line.ssr / best->s.line.sst : 0;
  r.probe = probe;
  double alt_banks = std::numeric_limits<double>::infinity(), alt_width = alt_banks;
  for (const auto& c : cands) {
    if (c.m.banks != r.model.banks && c.s.score < alt_banks) {
      alt_banks = c.s.score;
      r.banks_runner_up = c.m;
    }
    if (c.m.width != r.model.width && c.s.score < alt_width) {
      alt_width = c.s.score;
      r.width_runner_up = c.m;
    }
  }
  r.banks_separation = separation(best->s.score, alt_banks, r.points);
  r.width_separation = separation(best->s.score, alt_width, r.points);
  return r;
}

std::optional<BankFit> fit_bank_geometry(const std::vector<Observation>& obs) {
  auto tput = fit_bank_geometry(obs, kStrideThroughput);
  if (tput && bank_geometry_settled(*tput)) return tput;
  // An issue floor can make throughput ambiguous (32x4 B with a 2-pass floor looks like
  // 16x8 B); one warp's latency has no such floor.
  auto lat = fit_bank_geometry(obs, kStrideLatency);
  if (lat && bank_geometry_settled(*lat)) return lat;
  return tput ? tput : lat;
}

// How well the model explains the curve: its R^2, discounted once the relative residual
// passes 10 %.
constexpr double kResidualScale = 0.1;  // a 10 % relative residual halves the quality
double bank_fit_quality(const BankFit& f) {
  return std::clamp(f.r2, 0.0, 1.0) /
         (1.0 + (f.rms / kResidualScale) * (f.rms / kResidualScale));
}

bool bank_geometry_settled(const BankFit& f) {
  return bank_fit_quality(f) > kMinFitQuality && f.banks_separation >= kMinSeparation &&
         f.width_separation >= kMinSeparation;
}

constexpr double kSlopeSigmas = 2;

std::vector<Parameter> analyze_shared_banks(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  const std::string evidence = analysis::evidence_file(obs, std::string(kFamily.name));
  std::optional<BankFit> fit = fit_bank_geometry(obs);
  if (fit) {
    const std::string how =
        (fit->probe == kStrideThroughput ? "cycles per warp request" : "one-warp latency") +
        std::string(" vs stride (4/8/16 B) fit to B-bank x W-byte models: best ") +
        model_text(fit->model) +
        (fit->floor > 1 ? " (issue floor " + format_number(fit->floor) + " passes)" : "");
    const double q = bank_fit_quality(*fit);
    // A quantity the curve cannot tell apart from its alternative is left out, not guessed.
    if (fit->banks_separation >= kMinSeparation && q > kMinFitQuality)
      out.push_back({param::shared_bank_count, static_cast<double>(fit->model.banks),
                     find_parameter(param::shared_bank_count)->unit,  // "banks", the catalog's
                     static_cast<double>(fit->model.banks), static_cast<double>(fit->model.banks),
                     q * fit->banks_separation, how + ", next " + model_text(fit->banks_runner_up),
                     evidence});
    if (fit->width_separation >= kMinSeparation && q > kMinFitQuality)
      out.push_back({param::shared_bank_width, static_cast<double>(fit->model.width), "bytes",
                     static_cast<double>(fit->model.width), static_cast<double>(fit->model.width),
                     q * fit->width_separation, how + ", next " + model_text(fit->width_runner_up),
                     evidence});
  }

  auto bw = analysis::finite_rows(obs, kBandwidth, "B/clk/SM");
  if (!bw.empty()) {
    auto peak = *std::max_element(
        bw.begin(), bw.end(),
        [](const Observation& a, const Observation& b) { return a.value < b.value; });
    std::string how = "ld.shared " + peak.param_text(kAccessBytesColumn) + " B/lane, " +
                      peak.param_text(kWarpsPerSmColumn) +
                      " warps/SM, conflict-free, clock64 per SM";
    if (fit)
      how += "; banks x width = " + std::to_string(fit->model.banks * fit->model.width) + " B/clk";
    out.push_back(analysis::measured(param::shared_bandwidth_per_sm, peak, how, evidence));
  }

  // The conflict ladder: one warp, N lanes per bank on N distinct rows, one lane per word.
  std::vector<double> ways, lat, ones;
  for (const auto& o : analysis::finite_rows(obs, kConflictLatency, "cycles"))
    if (o.param(kLanesPerWordColumn) == 1 && o.param(kWaysColumn) >= 1) {
      ways.push_back(o.param(kWaysColumn));
      lat.push_back(o.value);
      ones.push_back(1.0);
    }
  std::set<double> distinct(ways.begin(), ways.end());
  if (distinct.size() >= 3) {
    LineFit f = fit_line(ways, lat, ones, false);
    std::string how =
        "one-warp dependent ld.shared, N-way conflicts N=" + format_number(*distinct.begin()) +
        ".." + format_number(*distinct.rbegin()) + ": slope of latency vs N";
    std::vector<double> tw, tput, tones;
    for (const auto& o : analysis::finite_rows(obs, kConflictThroughput, kPerRequest))
      if (o.param(kLanesPerWordColumn) == 1) {
        tw.push_back(o.param(kWaysColumn));
        tput.push_back(o.value);
        tones.push_back(1.0);
      }
    if (tw.size() >= 3)
      how += "; all warps: " +
             format_number(std::round(fit_line(tw, tput, tones, false).slope * 100) / 100) +
             " cycles/request per way";
    double r2 = f.sst > 0 ? 1 - f.ssr / f.sst : 0;
    // The interval: the slope +- kSlopeSigmas standard errors (about 95 %).
    out.push_back({param::shared_conflict_penalty_per_way, f.slope, "cycles",
                   f.slope - kSlopeSigmas * f.slope_se, f.slope + kSlopeSigmas * f.slope_se,
                   analysis::clamp01(r2), how, evidence});
  }
  return out;
}

GPUPROBE_REGISTER_ANALYZER(shared_banks::kFamily, analyze_shared_banks);

}  // namespace gpuprobe::shared_banks
