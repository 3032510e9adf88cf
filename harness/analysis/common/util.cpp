#include "analysis/common/util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "base/catalog.hpp"

namespace gpuprobe::analysis {

double clamp01(double v) { return std::isfinite(v) ? std::min(1.0, std::max(0.0, v)) : 0.0; }

double leading_number(const std::string& text) {
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  return end == text.c_str() ? std::numeric_limits<double>::quiet_NaN() : d;
}

double meta_number(const Metadata& meta, const std::string& key) {
  for (const auto& [k, v] : meta)
    if (k == key) return leading_number(v);
  return std::numeric_limits<double>::quiet_NaN();
}

double spread_confidence(double p05, double p50, double p95) {
  if (!(p50 > 0) || !std::isfinite(p05) || !std::isfinite(p95)) return kUnknownSpreadConfidence;
  const double spread = std::max(0.0, p95 - p05) / p50;
  return std::clamp(1.0 / (1.0 + kSpreadScale * spread), kSpreadFloor, 1.0);
}

double spread_confidence(const Observation& o) { return spread_confidence(o.p05, o.p50, o.p95); }

Parameter measured(const std::string& name, const Observation& o, const std::string& method,
                   const std::string& evidence) {
  return {name, o.value, o.unit, o.p05, o.p95, spread_confidence(o), method, evidence};
}

Parameter ratio_of(const std::string& name, const Parameter& num, const Parameter& den,
                   const std::string& method, const std::string& evidence) {
  const double v = num.value / den.value;
  return {name, v, "ratio", den.high > 0 ? num.low / den.high : v, den.low > 0 ? num.high / den.low : v,
          std::min(num.confidence, den.confidence), method, evidence};
}

void widen_to_at_least(Parameter& p, double fraction) {
  const double d = std::fabs(p.value) * fraction;
  p.low = std::min(p.low, p.value - d);
  p.high = std::max(p.high, p.value + d);
}

void widen_to_repeat(Parameter& p, double fraction, const std::string& why) {
  widen_to_at_least(p, fraction);
  p.method += "; at least +-" + num(100 * fraction) + " %, " + why;
}

void cap_confidence_by_width(Parameter& p, double tolerance) {
  if (!(p.value > 0) || tolerance < 0) return;
  // A floor of exactly the tolerance, read back from the interval, rounds a few ulps past it.
  constexpr double kRounding = 1e-9;
  const double half = std::max(p.high - p.value, p.value - p.low) / p.value;
  double cap = 1;
  if (half > tolerance * (1 + kRounding) + kRounding)
    cap = tolerance > 0 ? kPastToleranceConfidence * tolerance / half : kPastToleranceConfidence;
  if (half > kWideInterval) cap = std::min(cap, kWideConfidence);
  const char* narrow = " (what repeats closer, within a run and between runs, would narrow it)";
  if (p.confidence > cap) {
    p.confidence = cap;
    p.method += "; interval +-" + num(100 * half) + " % reaches past its " +
                (tolerance > 0 ? num(100 * tolerance) + " %" : std::string("exact")) +
                kCappedByWidthText + num(cap, 2) + narrow;
  } else if (half > kWideInterval) {
    // Already below the cap; a value only indicative still says what would make it more.
    p.method += "; interval +-" + num(100 * half) + " %, only indicative" + narrow;
  }
}

void cap_confidence_by_tolerance(Parameter& p) {
  const CatalogEntry* entry = find_parameter(p.name);
  double tolerance = 0;
  if (entry && tolerance_fraction(entry->tolerance, &tolerance))
    cap_confidence_by_width(p, tolerance);
}

std::vector<Observation> finite_rows(const std::vector<Observation>& obs, const std::string& probe,
                                     const std::string& unit) {
  std::vector<Observation> out;
  for (const auto& o : select(obs, probe, unit))
    if (std::isfinite(o.value)) out.push_back(o);
  return out;
}

const Observation* find_row(const std::vector<Observation>& rows,
                            const std::vector<std::pair<std::string, std::string>>& want) {
  for (const auto& o : rows) {
    bool all = true;
    for (const auto& [k, v] : want) all = all && o.param_text(k) == v;
    if (all) return &o;
  }
  return nullptr;
}

std::string evidence_file(const std::vector<Observation>& obs, const std::string& fallback) {
  return (obs.empty() ? fallback : obs.front().family) + ".csv";
}

std::string num(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string kib(double bytes) { return num(bytes / 1024, 4) + " KiB"; }

std::string bytes_text(double bytes) {
  char buf[64];
  if (bytes >= 1 << 30)
    std::snprintf(buf, sizeof buf, bytes >= 1000.0 * (1 << 30) ? "%.0f GiB" : "%.3g GiB", bytes / (1 << 30));
  else if (bytes >= 1 << 20)
    std::snprintf(buf, sizeof buf, "%.3g MiB", bytes / (1 << 20));
  else if (bytes >= 1 << 10)
    std::snprintf(buf, sizeof buf, "%.4g KiB", bytes / (1 << 10));
  else
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  return buf;
}

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y,
                 const std::vector<double>& w, bool forbid_negative_slope) {
  LineFit f;
  f.n = static_cast<int>(x.size());
  double W = 0, Sx = 0, Sy = 0, Sxx = 0, Sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    W += w[i];
    Sx += w[i] * x[i];
    Sy += w[i] * y[i];
    Sxx += w[i] * x[i] * x[i];
    Sxy += w[i] * x[i] * y[i];
  }
  if (W <= 0) return f;
  const double den = W * Sxx - Sx * Sx;
  f.slope = den > 0 ? (W * Sxy - Sx * Sy) / den : 0;
  if (forbid_negative_slope && f.slope < 0) f.slope = 0;
  f.intercept = (Sy - f.slope * Sx) / W;
  const double mean = Sy / W;
  for (size_t i = 0; i < x.size(); ++i) {
    double r = y[i] - f.intercept - f.slope * x[i];
    f.ssr += w[i] * r * r;
    f.sst += w[i] * (y[i] - mean) * (y[i] - mean);
  }
  if (den > 0) {
    f.slope_se_weights = std::sqrt(W / den);
    f.intercept_se_weights = std::sqrt(Sxx / den);
  }
  if (f.n > 2 && den > 0) {
    const double s2 = f.ssr / (f.n - 2);
    f.slope_se = std::sqrt(s2 * W / den);
    f.intercept_se = std::sqrt(s2 * Sxx / den);
  }
  return f;
}

}  // namespace gpuprobe::analysis
