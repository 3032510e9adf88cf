#include "analysis/energy.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "analysis/pipes.hpp"
#include "base/code_check.hpp"
#include "base/operating_point.hpp"
#include "base/parameter_names.hpp"
#include "base/stats.hpp"

namespace gpuprobe::energy {

namespace {

// An energy's interval: -+ this many standard errors (p05..p95 of a normal error, as a
// window's power spread is recorded).
constexpr double kIntervalZ = kSpreadZ;
// No window's power is known better than this fraction: the counter counts whole millijoules
// and the host sees its steps within a poll (0.5 ms of a 100 ms step).
constexpr double kPowerFloor = 0.003;
// A window whose SM clock is this far from the static windows' ran at another operating
// point (voltage, leakage): it is left out of the fit.
constexpr double kClockShift = 0.02;
// Two rates whose slopes differ by more than this fraction: power is not linear in the rate
// (a clock moved, or the SMs left idle are not the baseline's), so the value is in doubt.
constexpr double kNonlinear = 0.2;
constexpr double kNonlinearFactor = 0.6;
// A fit's intercept this far from the static windows' power: the line misses the baseline.
constexpr double kInterceptShift = 0.03;
constexpr double kInterceptFactor = 0.7;
// One rate: the line rests on that rate and the baseline alone, with no check of linearity.
constexpr double kOneRateFactor = 0.8;
// Fits on two windows of ~0.5 s over NVML's 100 ms counter move between runs in a row on one
// H200 more than their own standard errors: 27-29 of 37 within 5 %, the others 6-21 %
// (docs/repeatability.md). A fit's interval reaches at least this much either side.
constexpr double kFitRunToRun = 0.1;

bool limited(const std::string& reasons) {
  return (throttle_reason_mask(reasons) & kLimitingReasons) != 0;
}

// A window's power error (W): its counter intervals' spread over their number, at least the floor.
double window_se(const Window& w) {
  const double se = w.intervals > 1 ? w.power_sd_w / std::sqrt(w.intervals) : w.power_sd_w;
  return std::max(se, kPowerFloor * w.power_w);
}

std::vector<const Window*> of_probe(const std::vector<Window>& windows, const std::string& probe) {
  std::vector<const Window*> out;
  for (const auto& w : windows)
    if (w.probe == probe && !limited(w.reasons)) out.push_back(&w);
  return out;
}

double mean_of(const std::vector<double>& v) { return summarize(v).mean; }

const Parameter* find(const std::vector<Parameter>& params, const std::string& name) {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace

bool is_heldout(const std::string& probe) { return probe.rfind(kHeldOutPrefix, 0) == 0; }

bool is_level(const std::string& probe) {
  return std::find(levels().begin(), levels().end(), probe) != levels().end();
}

std::string parameter_name(const std::string& item, bool zero_operands) {
  return is_level(item) ? param::level_energy_per_byte(item, zero_operands)
                        : param::op_energy(item, zero_operands);
}

std::vector<Window> windows_of(const std::vector<Observation>& obs) {
  std::map<int, Window> by_id;
  for (const auto& o : obs) {
    const double id = o.param(kWindowColumn);
    if (!std::isfinite(id)) continue;
    Window& w = by_id[static_cast<int>(id)];
    w.id = static_cast<int>(id);
    w.probe = o.probe;
    w.operands = o.param_text(kOperandsColumn);
    const double sms = o.param(kActiveSmsColumn);
    w.active_sms = static_cast<int>(std::lround(std::isfinite(sms) ? sms : 0));
    w.reasons = o.param_text(kReasonsColumn);
    const std::string component = o.param_text(kComponentColumn);
    if (o.unit == "W") {
      w.power_w = o.value;
      w.power_sd_w = (o.p95 - o.p05) / (2 * kSpreadZ);
      w.intervals = o.reps;
    } else if (o.unit == "Gop/s" || o.unit == "GB/s") {
      if (component.empty()) {
        w.rate = o.value * kRateScale;
        w.rate_unit = o.unit;
      } else {
        w.components.emplace_back(component, o.value * kRateScale);
      }
    } else if (o.unit == "MHz") {
      w.sm_clock_mhz = o.value;
    } else if (o.unit == "C") {
      w.temperature_c = o.value;
    } else if (o.unit == "s") {
      w.t_s = o.value;
    } else if (o.unit == "s/launch") {
      w.launch_s = o.value;
    }
  }
  std::vector<Window> out;
  for (auto& [id, w] : by_id)
    if (w.power_w > 0) out.push_back(std::move(w));
  return out;
}

double Baseline::drift(double t_s) const { return drift_w_per_s * (t_s - t_mean_s); }

double Baseline::at(int active_sms, double t_s) const {
  return static_w + drift(t_s) - std::max(0, sm_count - active_sms) * per_sm_w;
}

std::optional<Baseline> baseline_of(const std::vector<Window>& windows) {
  const auto stat = of_probe(windows, kStatic);
  if (stat.empty()) return std::nullopt;
  Baseline b;
  std::vector<double> t, p, w, clocks;
  for (const Window* s : stat) {
    t.push_back(s->t_s);
    p.push_back(s->power_w);
    w.push_back(1.0);
    clocks.push_back(s->sm_clock_mhz);
    b.sm_count = std::max(b.sm_count, s->active_sms);
  }
  b.windows = static_cast<int>(stat.size());
  b.static_w = mean_of(p);
  b.t_mean_s = mean_of(t);
  b.clock_mhz = median(clocks);
  double floor = 0;
  for (const Window* s : stat) floor = std::max(floor, window_se(*s));
  b.sd_w = floor;
  // Drift: a line through the static windows in time, where three or more span some time.
  const Summary ts = summarize(t);
  if (stat.size() >= 3 && ts.max > ts.min) {
    analysis::LineFit line = analysis::fit_line(t, p, w, false);
    b.drift_w_per_s = line.slope;
    b.static_w = line.intercept + line.slope * b.t_mean_s;
    b.sd_w = std::max(floor, std::sqrt(line.ssr / static_cast<double>(line.n - 2)));
  } else if (stat.size() == 2) {
    b.sd_w = std::max(floor, std::fabs(p[0] - p[1]) / std::sqrt(2.0));
  }
  // One resident SM against all: what each resident SM adds with nothing to issue.
  std::vector<double> per_sm;
  for (const Window* o : of_probe(windows, kStaticOneSm))
    if (b.sm_count > o->active_sms)
      per_sm.push_back((b.static_w + b.drift(o->t_s) - o->power_w) / (b.sm_count - o->active_sms));
  if (!per_sm.empty() && b.sm_count > 1) {
    b.per_sm_w = mean_of(per_sm);
    const Summary s = summarize(per_sm);
    b.per_sm_sd_w = std::max((s.max - s.min) / 2, std::hypot(b.sd_w, b.sd_w) / (b.sm_count - 1));
  }
  return b;
}

namespace {

// A fit's points: the zero-rate windows (static, or the NVLink pair at rest) and the item's,
// each corrected to every SM resident at the static windows' mean time, weighted by its error.
struct FitPoints {
  std::vector<double> x, y, w;
  std::vector<const Window*> mine;
  int excluded = 0;  // the item's windows left out
};

bool reclocked(const Window& win, const Baseline& base) {
  return base.clock_mhz > 0 && std::fabs(win.sm_clock_mhz / base.clock_mhz - 1) > kClockShift;
}

FitPoints fit_points(const std::vector<Window>& windows, const Baseline& base,
                     const std::string& item, const std::string& operands, bool pair) {
  FitPoints pts;
  for (const auto& win : windows) {
    const bool zero_rate = pair ? win.probe == kNvlinkBaseline : win.probe == kStatic;
    const bool mine = win.probe == item && win.operands == operands && win.rate > 0;
    if (!zero_rate && !mine) continue;
    if (limited(win.reasons) || (mine && reclocked(win, base))) {
      pts.excluded += mine ? 1 : 0;
      continue;
    }
    const double idle_sms = std::max(0, base.sm_count - win.active_sms);
    double var = window_se(win) * window_se(win);
    if (!pair) {
      // The static windows scatter about their line by sd_w: a point's baseline is that uncertain.
      var = zero_rate ? std::max(var, base.sd_w * base.sd_w)
                      : var + base.sd_w * base.sd_w + std::pow(idle_sms * base.per_sm_sd_w, 2);
    }
    pts.x.push_back(mine ? win.rate : 0);
    pts.y.push_back(win.power_w + (pair ? 0 : idle_sms * base.per_sm_w - base.drift(win.t_s)));
    pts.w.push_back(1 / var);
    if (mine) pts.mine.push_back(&win);
  }
  return pts;
}

// The checks that lower a fit's confidence, each with its note.
void judge(const FitPoints& pts, const analysis::LineFit& line, const Baseline& base, bool pair,
           EnergyFit& f) {
  std::vector<double> slopes;
  for (size_t i = 0; i < pts.x.size(); ++i)
    if (pts.x[i] > 0) slopes.push_back((pts.y[i] - line.intercept) / pts.x[i]);
  const Summary s = summarize(slopes);
  if (pts.mine.size() == 1) {
    f.confidence *= kOneRateFactor;
    f.notes += "; one rate";
  } else if (f.energy_j > 0 && (s.max - s.min) / f.energy_j > kNonlinear) {
    f.confidence *= kNonlinearFactor;
    f.notes += "; its rates' slopes differ by " +
               format_printf("%.0f", 100 * (s.max - s.min) / f.energy_j) + " %";
  }
  if (!pair && std::fabs(line.intercept / base.static_w - 1) > kInterceptShift) {
    f.confidence *= kInterceptFactor;
    f.notes += "; intercept " + analysis::num(line.intercept) + " W against static " +
               analysis::num(base.static_w) + " W";
  }
  if (f.excluded)
    f.notes += "; " + std::to_string(f.excluded) +
               " window(s) left out (a limiting clock-event reason, or " +
               "another SM clock than the static windows')";
}

}  // namespace

std::optional<EnergyFit> fit_energy(const std::vector<Window>& windows, const Baseline& base,
                                    const std::string& item, const std::string& operands) {
  const bool pair = item == kNvlinkWrite;  // two GPUs' counters: its own baseline windows
  const FitPoints pts = fit_points(windows, base, item, operands, pair);
  EnergyFit f;
  f.points = static_cast<int>(pts.mine.size());
  f.excluded = pts.excluded;
  if (pts.mine.empty() || pts.x.size() == pts.mine.size()) return std::nullopt;
  const analysis::LineFit line = analysis::fit_line(pts.x, pts.y, pts.w, false);
  f.energy_j = line.slope;
  f.intercept_w = line.intercept;
  const double se = std::max(line.slope_se, line.slope_se_weights);
  f.low_j = std::max(0.0, f.energy_j - kIntervalZ * se);
  f.high_j = f.energy_j + kIntervalZ * se;
  f.confidence = analysis::spread_confidence(f.low_j, f.energy_j, f.high_j);
  f.low_j = std::max(0.0, std::min(f.low_j, f.energy_j * (1 - kFitRunToRun)));
  f.high_j = std::max(f.high_j, f.energy_j * (1 + kFitRunToRun));
  f.notes += "; interval at least +-" + analysis::num(100 * kFitRunToRun) +
             " %, what runs in a row moved the fits";
  std::vector<double> clocks;
  for (const Window* p : pts.mine) {
    clocks.push_back(p->sm_clock_mhz);
    f.max_rate = std::max(f.max_rate, p->rate);
  }
  f.clock_mhz = median(clocks);
  judge(pts, line, base, pair, f);
  return f;
}

std::vector<HeldOutCheck> heldout_checks(const std::vector<Observation>& obs,
                                         const std::vector<Parameter>& params) {
  std::vector<HeldOutCheck> out;
  const Parameter* stat = find(params, param::static_power);
  for (const auto& win : windows_of(obs)) {
    if (!is_heldout(win.probe) || win.launch_s <= 0) continue;
    HeldOutCheck c;
    c.kernel = win.probe.substr(std::string(kHeldOutPrefix).size());
    c.measured_j = win.power_w * win.launch_s;
    if (limited(win.reasons)) c.note = "measured while " + win.reasons + " was active";
    std::string missing = stat ? "" : param::static_power;
    if (stat) c.terms.emplace_back(kStatic, stat->value * win.launch_s);
    for (const auto& [item, rate] : win.components) {
      const Parameter* e = find(params, parameter_name(item, false));
      if (e) c.terms.emplace_back(item, e->value * 1e-12 * rate * win.launch_s);
      else missing += (missing.empty() ? "" : ", ") + parameter_name(item, false);
    }
    if (!missing.empty()) {
      c.note = "not predicted: no " + missing;
    } else {
      c.predicted = true;
      for (const auto& term : c.terms) c.predicted_j += term.second;
      c.error = (c.predicted_j - c.measured_j) / c.measured_j;
    }
    out.push_back(c);
  }
  return out;
}

namespace {

std::string window_span(const std::vector<const Window*>& v) {
  std::vector<double> clocks, temps;
  for (const Window* w : v) {
    clocks.push_back(w->sm_clock_mhz);
    temps.push_back(w->temperature_c);
  }
  return std::to_string(v.size()) + " window(s), SM clock " +
         format_printf("%.0f", median(clocks)) + " MHz, " + analysis::num(summarize(temps).min) +
         ".." + analysis::num(summarize(temps).max) + " C (NVML)";
}

std::optional<Parameter> idle_power(const std::vector<Window>& windows,
                                    const std::string& evidence) {
  const auto idle = of_probe(windows, kIdle);
  if (idle.empty()) return std::nullopt;
  std::vector<double> p;
  double se = 0;
  for (const Window* w : idle) {
    p.push_back(w->power_w);
    se = std::max(se, window_se(*w));
  }
  const Summary s = summarize(p);
  const double half = std::max(kIntervalZ * se, (s.max - s.min) / 2);
  Parameter out{param::idle_power,
                s.mean,
                "W",
                s.mean - half,
                s.mean + half,
                0,
                "NVML energy counter over counter steps with nothing launched for " +
                    analysis::num(kIdleSettleS) + " s before; " + window_span(idle) +
                    "; the clocks and power state where the driver leaves an idle GPU",
                evidence};
  out.confidence = analysis::spread_confidence(out.low, out.value, out.high);
  return out;
}

Parameter static_power(const Baseline& b, const std::vector<Window>& windows,
                       const std::string& evidence) {
  const auto stat = of_probe(windows, kStatic);
  std::vector<double> t;
  for (const Window* w : stat) t.push_back(w->t_s);
  const Summary ts = summarize(t);
  const double a = b.static_w + b.drift(ts.min), z = b.static_w + b.drift(ts.max);
  Parameter out{
      param::static_power,
      b.static_w,
      "W",
      std::min(a, z) - kIntervalZ * b.sd_w,
      std::max(a, z) + kIntervalZ * b.sd_w,
      0,
      "every SM holding one block of sleeping warps (__nanosleep until a time): clocks up, "
      "nothing issued; " +
          window_span(stat) + "; drift " + analysis::num(b.drift_w_per_s) +
          " W/s over the family (the interval spans it); one resident SM adds " +
          analysis::num(b.per_sm_w) + " W; the intercept of every energy fit",
      evidence};
  out.confidence = analysis::spread_confidence(out.low, out.value, out.high);
  return out;
}

std::string item_method(const std::string& item, const std::string& operands, const EnergyFit& f,
                        const Baseline& b) {
  const bool level = is_level(item);
  std::string what;
  if (const pipes::OpInfo* op = pipes::find_op(item)) what = op->what;
  else if (const pipes::WgmmaInfo* wg = pipes::find_wgmma_op(item)) what = wg->what;
  else what = item;
  return "power against " + std::string(level ? "bytes" : "operations") +
         " per second: " + std::to_string(f.points) + " window(s) of " + what +
         " on a fraction of the SMs, up to " + analysis::num(f.max_rate) +
         (level ? " B/s" : " op/s") + ", with " + std::to_string(b.windows) +
         " static windows at rate 0; slope = energy per " + (level ? "byte" : "operation") +
         ", intercept " + analysis::num(f.intercept_w) + " W (static " + analysis::num(b.static_w) +
         " W); " + operands + " operands; SM clock " + format_printf("%.0f", f.clock_mhz) +
         " MHz (NVML)" + f.notes;
}

}  // namespace

// --- Code expectations ------------------------------------------------------------------------
// The kernels of microbench/energy.cu (the loop between its clock reads where it has them, the
// whole kernel otherwise), the streaming kernels of memory_streams.cuh it instantiates, and the
// held-out GEMM in tensor_wgmma.cu (sm_90a).
namespace {

constexpr int kGemmStepsPerStage = kGemmStageK / 16;  // bf16 wgmma k-steps of 16

std::vector<CodeExpectation> energy_expectations() {
  const std::string src(kFamily.name);
  const char* const ld_cg = R"(^ld\.global\.cg\.v4\.u32 )";
  const char* const ldg = R"(^LDG\.E\.128)";
  std::vector<CodeExpectation> out;
  for (const auto& [ops, ilp] : {std::pair{&alu_ops(), kAluIlp}, std::pair{&mma_ops(), kMmaIlp}})
    for (const auto& probe : *ops) {
      const pipes::OpInfo* op = pipes::find_op(probe);
      const int steps = ilp * kAluUnroll;
      out.push_back({src,
                     "energy::alu<pipes::" + std::string(op->type) + ", " + std::to_string(ilp) +
                         ", " + std::to_string(kAluUnroll) + ">",
                     probe,
                     {{op->ptx, steps * op->ptx_per_apply, false}},
                     {{op->sass, steps * op->sass_per_apply, false}},
                     op->min_cc});
    }
  out.push_back({src,
                 "energy::rest",
                 kStatic,
                 {{R"(^nanosleep\.u32 )", -1, false}},
                 {{"^NANOSLEEP", -1, false}},
                 70});
  out.push_back({src,
                 "energy::shared_stream<false>",
                 kSharedRead,
                 {{R"(^ld\.shared\.v4\.u32 )", kSharedUnroll, false}},
                 {{R"(^LDS\.128 )", kSharedUnroll, false}}});
  out.push_back({src,
                 "energy::shared_stream<true>",
                 kSharedWrite,
                 {{R"(^st\.shared\.v4\.u32 )", kSharedUnroll, false}},
                 {{R"(^STS\.128 )", kSharedUnroll, false}}});
  out.push_back({src,
                 "energy::fill_words",
                 kDramRead,
                 {{R"(^st\.global\.u32 )", -1, false}},
                 {{R"(^STG\.E )", -1, false}}});
  out.push_back(
      {src,
       "energy::triad",
       kHeldOutTriad,
       {{ld_cg, 2, false}, {R"(^st\.global\.v4\.u32 )", 1, false}, {R"(^fma\.rn\.f32 )", 4, false}},
       {{ldg, 2, false}, {R"(^STG\.E\.128 )", 1, false}, {"^FFMA R", 4, false}}});
  const int mixed = 4 * (kMixedFmasPerWord + 1);
  out.push_back({src,
                 "energy::fma_dram",
                 kHeldOutFmaDram,
                 {{ld_cg, 1, false}, {R"(^fma\.rn\.f32 )", mixed, false}},
                 {{ldg, 1, false}, {"^FFMA R", mixed, false}}});
  // memory_streams.cuh's kernels as this file instantiates them (L1 reads plain, the rest .cg):
  // 16-byte accesses of the kind meant, however often ptxas unrolls their loop.
  out.push_back({src,
                 "stream_read<16, 4, (Load)0, false>",
                 kL1Read,
                 {{R"(^ld\.global\.v4\.u32 )", -1, false}},
                 {{ldg, -1, false}}});
  out.push_back({src,
                 "stream_read<16, 4, (Load)2, false>",
                 kDramRead,
                 {{ld_cg, -1, false}},
                 {{ldg, -1, false}}});
  out.push_back({src,
                 "stream_store<16, 4, (Store)0, false>",
                 kDramWrite,
                 {{R"(^st\.global\.v4\.u32 )", -1, false}},
                 {{R"(^STG\.E\.128 )", -1, false}}});
  // The held-out GEMM, compiled for sm_90a alone with the pipes' wgmma kernels.
  out.push_back({"tensor_wgmma_sm90a",
                 "pipes::heldout_gemm",
                 kHeldOutGemm,
                 {{R"(^wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16 )",
                   kGemmStepsPerStage, false},
                  {ld_cg, kGemmCopyBatch, false}},
                 {{R"(^HGMMA\.64x256x16\.F32\.BF16 )", kGemmStepsPerStage, false},
                  {ldg, kGemmCopyBatch, false}},
                 90});
  return out;
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(energy_expectations);

}  // namespace

std::vector<Parameter> analyze_energy(const std::vector<Observation>& obs, const Metadata&) {
  const std::string evidence = analysis::evidence_file(obs, std::string(kFamily.name));
  const std::vector<Window> windows = windows_of(obs);
  std::vector<Parameter> out;
  if (auto idle = idle_power(windows, evidence)) out.push_back(*idle);
  const auto base = baseline_of(windows);
  if (!base) return out;
  out.push_back(static_power(*base, windows, evidence));
  std::set<std::pair<std::string, std::string>> items;
  for (const auto& w : windows)
    if (w.rate > 0 && !is_heldout(w.probe)) items.insert({w.probe, w.operands});
  for (const auto& [item, operands] : items) {
    auto f = fit_energy(windows, *base, item, operands);
    if (!f || !(f->energy_j > 0)) continue;
    out.push_back({parameter_name(item, operands == kZero), f->energy_j * 1e12,
                   is_level(item) ? "pJ/B" : "pJ/op", f->low_j * 1e12, f->high_j * 1e12,
                   f->confidence, item_method(item, operands, *f, *base), evidence});
  }
  return out;
}

GPUPROBE_REGISTER_ANALYZER(energy::kFamily, analyze_energy);

}  // namespace gpuprobe::energy
