#include "analysis/dual_issue.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "analysis/pipes.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe::dual_issue {

const std::vector<PairInfo>& pairs() {
  // int32 is the logic op: integer adds go half to the FMA pipe (IMAD.IADD), which would
  // make fp32 + int32 look like a shared pipe for the compiler's reasons, not the SM's.
  static const std::vector<PairInfo> all = {
      {kFp32Int32Pair, pipes::kFp32FmaProbe, pipes::kInt32LogicProbe},
      {kFp32Fp64Pair, pipes::kFp32FmaProbe, pipes::kFp64FmaProbe},
      {kFp32SfuPair, pipes::kFp32FmaProbe, pipes::kSfuEx2Probe},
      {kFp32LdstPair, pipes::kFp32FmaProbe, pipes::kLdGlobalProbe},
      {kFp32SharedPair, pipes::kFp32FmaProbe, pipes::kLdstProbe},
      {kFp16Fp32Pair, pipes::kFp16x2FmaProbe, pipes::kFp32FmaProbe},
      {kFp32TensorPair, pipes::kFp32FmaProbe, pipes::kTensorMmaF16Probe},
  };
  return all;
}

std::string kernel_name(const std::string& a_type, const std::string& b_type, int a, int b) {
  return "dual_issue::paired<pipes::" + a_type + ", pipes::" + b_type + ", " + std::to_string(a) +
         ", " + std::to_string(b) + ">";
}

int balanced_mix(double rate_a, double rate_b, int steps_a, int steps_b) {
  double want = std::log(rate_a / rate_b);
  int best = -1;
  double best_gap = std::numeric_limits<double>::infinity();
  for (int i = 0; i < kMixCount; ++i) {
    if (kMixes[i].a == 0 || kMixes[i].b == 0) continue;
    double gap = std::fabs(std::log(double(kMixes[i].a) * steps_a / (double(kMixes[i].b) * steps_b)) - want);
    if (gap < best_gap) {
      best_gap = gap;
      best = i;
    }
  }
  return best;
}

// The verdicts' boundaries (dual_issue.hpp): at least this much of what single issue allows
// is separate pipes, at most kSharedBelow is one pipe taken in turns.
constexpr double kSeparateAbove = 0.8;
constexpr double kSharedBelow = 0.2;
// An overlap this close to a boundary could have fallen either side: its confidence is taken
// down by kNearBoundaryFactor.
constexpr double kNearBoundary = 0.05;
constexpr double kNearBoundaryFactor = 0.7;

// Each rate's window (calibrated to 1.5 ms) includes the launch's ramp and the span records,
// a fixed cost the repetitions of one run share: the ratios moved up to 0.066 % over three
// full runs in a row on one H200 and 0.045 % on one H100 (docs/repeatability.md, "Floors"),
// where their p05..p95 spanned 0.01 %. The interval is at least +-0.13 %.
constexpr double kWindowCost = 0.0013;

// A pair faster than the fastest solo stream, past the timing's noise (3 %), issues more than
// it: two at once (dual issue) or in slots that stream leaves free.
constexpr double kCoIssueMargin = 1.03;
const char* const kBeyondFastest = "beyond the fastest stream";
// When taking turns and running side by side differ by less than this share, the issue rate
// decides both and the overlap tells nothing.
constexpr double kIssueBoundGap = 0.1;

std::string verdict_for(double overlap) {
  if (!std::isfinite(overlap)) return "";
  if (overlap >= kSeparateAbove) return "separate pipes";
  if (overlap <= kSharedBelow) return "shared pipe";
  return "partial";
}

Verdict judge(double rate_a, double rate_b, double a_per_round, double b_per_round, double rate_pair,
              double issue_rate) {
  Verdict v;
  v.overlap = std::numeric_limits<double>::quiet_NaN();
  if (!(rate_a > 0 && rate_b > 0 && rate_pair > 0 && a_per_round > 0 && b_per_round > 0 && issue_rate > 0))
    return v;
  double ta = a_per_round / rate_a, tb = b_per_round / rate_b;
  double tp = (a_per_round + b_per_round) / rate_pair;
  double t_issue = (a_per_round + b_per_round) / issue_rate;
  double in_turn = ta + tb, side_by_side = std::max({ta, tb, t_issue});
  v.ratio = rate_pair / std::max(rate_a, rate_b);
  v.overlap = (in_turn - tp) / (in_turn - side_by_side);
  if (rate_pair > kCoIssueMargin * issue_rate) {
    v.verdict = kBeyondFastest;
  } else if (in_turn - side_by_side < kIssueBoundGap * in_turn) {
    v.verdict = "issue-bound";
    v.overlap = std::numeric_limits<double>::quiet_NaN();  // 0/0 in effect: nothing to tell
  } else {
    v.verdict = verdict_for(v.overlap);
  }
  return v;
}

namespace {

std::vector<CodeExpectation> dual_issue_expectations() {
  std::vector<CodeExpectation> out;
  for (const auto& pair : pairs()) {
    const pipes::OpInfo* a = pipes::find_op(pair.a);
    const pipes::OpInfo* b = pipes::find_op(pair.b);
    for (const Mix& m : kMixes) {
      CodeExpectation e;
      e.source = std::string(kFamily.name);
      e.kernel = kernel_name(a->type, b->type, m.a, m.b);
      e.probe = pair.name;
      e.ptx = {{a->ptx, kRounds * m.a * a->ptx_per_apply, false},
               {b->ptx, kRounds * m.b * b->ptx_per_apply, false}};
      e.sass = {{a->sass, kRounds * m.a * a->sass_per_apply, false},
                {b->sass, kRounds * m.b * b->sass_per_apply, false}};
      e.min_arch = std::max(a->min_cc, b->min_cc);
      out.push_back(std::move(e));
    }
  }
  return out;
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(dual_issue_expectations);

}  // namespace

namespace {

// A pair this much faster than the fastest solo stream, past the timing's noise, issues more
// than that stream alone (the co-issue margin of judge()).
constexpr double kGainNamed = dual_issue::kCoIssueMargin;

// The fastest paired rate over the fastest solo stream: how much more two independent streams
// issue than the fastest one alone. The interval divides each rate's p05/p95 by the other's
// opposite end; the confidence is the weaker row's.
std::optional<Parameter> dual_issue_gain(const std::vector<Observation>& obs) {
  const Observation *solo = nullptr, *pair = nullptr;
  for (const auto& o : obs) {
    const std::string s = o.param_text(kStreamColumn);
    if ((s == "a" || s == "b") && (!solo || o.value > solo->value)) solo = &o;
    if (s == "pair" && (!pair || o.value > pair->value)) pair = &o;
  }
  if (!solo || !pair || !(solo->value > 0) || !(pair->value > 0)) return std::nullopt;
  const std::string ev = std::string(kFamily.name) + ".csv";
  Parameter p = analysis::ratio_of(param::dual_issue_gain, analysis::measured("", *pair, "", ev),
                                   analysis::measured("", *solo, "", ev), "", ev);
  std::string solo_op = solo->param_text(kStreamColumn);
  for (const auto& pi : dual_issue::pairs())
    if (solo->probe == pi.name) solo_op = solo_op == "a" ? pi.a : pi.b;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "fastest pair (%s, %.3g inst/clk/SM) over the fastest solo stream (%s alone in %s, %.3g); %s",
                pair->probe.c_str(), pair->value, solo_op.c_str(), solo->probe.c_str(), solo->value,
                p.value > kGainNamed
                    ? "above 1: two independent streams issue more than the fastest alone: dual issue, "
                      "or an issue slot wider than the fastest pipe (a 16-lane FP32 pipe takes a "
                      "scheduler's slot every other clock)"
                    : "about 1: the fastest stream already fills the issue slot");
  p.method = buf;
  return p;
}

}  // namespace

std::vector<Parameter> analyze_dual_issue(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  double issue = 0;
  for (const auto& o : obs)
    if (o.param_text(kStreamColumn) == "a" || o.param_text(kStreamColumn) == "b")
      issue = std::max(issue, o.value);
  for (const auto& pair : dual_issue::pairs()) {
    const Observation *a = nullptr, *b = nullptr, *p = nullptr;
    for (const auto& o : obs) {
      if (o.probe != pair.name) continue;
      std::string s = o.param_text(kStreamColumn);
      if (s == "a") a = &o;
      if (s == "b") b = &o;
      if (s == "pair") p = &o;
    }
    if (!a || !b || !p) continue;
    double na = p->param(kAPerRoundColumn), nb = p->param(kBPerRoundColumn);
    auto v = dual_issue::judge(a->value, b->value, na, nb, p->value, issue);
    if (v.verdict.empty()) continue;
    Parameter out_p;
    out_p.name = param::dual_issue_pair(pair.name);
    out_p.value = v.ratio;
    out_p.unit = "ratio";
    // The ratio's interval from both rows' quantiles (the paired row's over the faster solo's),
    // and at least what the windows' fixed costs leave between runs.
    const Observation* faster = a->value >= b->value ? a : b;
    out_p.low = faster->p95 > 0 ? p->p05 / faster->p95 : v.ratio;
    out_p.high = faster->p05 > 0 ? p->p95 / faster->p05 : v.ratio;
    analysis::widen_to_at_least(out_p, dual_issue::kWindowCost);
    out_p.confidence = std::min({analysis::spread_confidence(*a),
                                 analysis::spread_confidence(*b),
                                 analysis::spread_confidence(*p)});
    // An overlap next to a verdict's boundary could have fallen either side.
    using dual_issue::kNearBoundary, dual_issue::kSeparateAbove, dual_issue::kSharedBelow;
    if (v.verdict != dual_issue::kBeyondFastest && (std::fabs(v.overlap - kSeparateAbove) < kNearBoundary ||
                                     std::fabs(v.overlap - kSharedBelow) < kNearBoundary))
      out_p.confidence *= dual_issue::kNearBoundaryFactor;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "%s: %s + %s in one warp, %g:%g instructions per round; solo %.3g and %.3g, "
                  "paired %.3g inst/clk/SM, issue rate %.3g (fastest solo stream)",
                  v.verdict.c_str(), pair.a, pair.b, na, nb, a->value, b->value, p->value, issue);
    out_p.method = buf;
    if (std::isfinite(v.overlap)) {
      std::snprintf(buf, sizeof buf, "; overlap %.2f", v.overlap);
      out_p.method += buf;
    }
    out_p.method += "; interval: the paired row's p05..p95 over the faster solo's p95..p05, at least +-" +
                    analysis::num(100 * dual_issue::kWindowCost) + " % (the windows' fixed costs)";
    out_p.evidence = std::string(kFamily.name) + ".csv";
    out.push_back(out_p);
  }
  if (auto gain = dual_issue_gain(obs)) out.push_back(*gain);
  return out;
}

GPUPROBE_REGISTER_ANALYZER(dual_issue::kFamily, analyze_dual_issue);

}  // namespace gpuprobe::dual_issue
