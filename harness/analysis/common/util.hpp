#pragma once
// Helpers every analyzer shares, defined once: the confidence scale (docs/parameters.md,
// "Confidence"), metadata lookup, clamps and the small number texts of method strings.
#include <string>
#include <utility>
#include <vector>

#include "base/observation.hpp"

namespace gpuprobe::analysis {

// Lanes of a warp, the unit the probes build their access patterns in.
constexpr int kWarpLanes = 32;

// v limited to [0, 1]; NaN (and any non-finite v) gives 0, so that a failed computation can
// never pass through as a confidence.
double clamp01(double v);

// The leading number of a metadata value ("2619 (cudaDevAttrMemoryClockRate, peak)" -> 2619).
// NaN when the key is missing or its value does not start with a number: a caller tests
// std::isfinite (or a comparison, which NaN fails) before using it, never meets a silent 0.
double meta_number(const Metadata& meta, const std::string& key);
// The same for one value's text.
double leading_number(const std::string& text);

// The confidence scale (docs/parameters.md, "Confidence"). The relative spread of repeated
// measurements, (p95 - p05) / p50, gives 1 / (1 + kSpreadScale * spread): 1 for identical
// repetitions, 0.5 at 10 % spread, never below kSpreadFloor. A measurement whose spread
// cannot be computed (p50 <= 0, a non-finite quantile) gets kUnknownSpreadConfidence.
constexpr double kSpreadScale = 10.0;  // 10 % spread (p05..p95) halves the confidence
constexpr double kSpreadFloor = 0.05;  // a very noisy value is still a measurement, not nothing
constexpr double kUnknownSpreadConfidence = 0.3;  // no usable spread: low, but not discarded
double spread_confidence(double p05, double p50, double p95);
double spread_confidence(const Observation& o);

// A parameter read straight from one observation: its value and unit, p05..p95 as the
// interval, the spread's confidence.
Parameter measured(const std::string& name, const Observation& o, const std::string& method,
                   const std::string& evidence);

// The ratio of two measured parameters (unit "ratio"): the interval divides each end of the
// numerator's by the other end of the denominator's, the confidence is the weaker one's.
Parameter ratio_of(const std::string& name, const Parameter& num, const Parameter& den,
                   const std::string& method, const std::string& evidence);

// Widens p's interval to at least value x (1 -+ fraction): an error the repetitions of one run
// cannot show (a timing window's fixed cost), of a size repeated runs show (docs/repeatability.md).
void widen_to_at_least(Parameter& p, double fraction);
// widen_to_at_least for what runs in a row moved, and the method text says so:
// "; at least +-<fraction as %> %, <why>".
void widen_to_repeat(Parameter& p, double fraction, const std::string& why);

// An interval reaching past the parameter's tolerance says the value may be off by more than
// it, so its confidence (the chance of being right within the tolerance) is at most
// kPastToleranceConfidence * tolerance / half-width (below 0.5 from the first step past; an
// "exact" tolerance, 0, gives kPastToleranceConfidence to any interval wider than the value);
// one wider than +-kWideInterval stays below 0.3 whatever its tolerance. The method text says
// so and that closer repeats would narrow it. A non-positive value or no tolerance (< 0)
// leaves p as it is.
constexpr double kPastToleranceConfidence = 0.45;
constexpr double kWideInterval = 0.25;    // the width past which a value is only indicative
constexpr double kWideConfidence = 0.29;  // below the ambiguous-value cap of 0.3
void cap_confidence_by_width(Parameter& p, double tolerance);
// The words the cap adds to the method text, between the tolerance and the cap.
constexpr const char* kCappedByWidthText = " tolerance: confidence at most ";
// The same with the catalog's tolerance for p's name (none for a name it lacks or does not
// compare): every analyzer's parameters go through it (analysis/registry.cpp), and the
// run-level ones.
void cap_confidence_by_tolerance(Parameter& p);

// The rows of `probe` in `unit` with a finite value.
std::vector<Observation> finite_rows(const std::vector<Observation>& obs, const std::string& probe,
                                     const std::string& unit);
// The first row whose swept parameters have every (key, text) of `want`, or nullptr.
const Observation* find_row(const std::vector<Observation>& rows,
                            const std::vector<std::pair<std::string, std::string>>& want);
// The evidence file of a family's rows: "<family>.csv" of the first row, `fallback`.csv if none.
std::string evidence_file(const std::vector<Observation>& obs, const std::string& fallback);

// Number texts for method strings: `digits` significant digits; bytes in KiB.
std::string num(double v, int digits = 3);
std::string kib(double bytes);
// Bytes in the unit that reads best: "512 B", "48 KiB", "1.5 MiB", "80 GiB".
std::string bytes_text(double bytes);

// Weighted least squares y = intercept + slope x, with the residuals' sums and the standard
// errors of both coefficients: from the residual scatter (0 with fewer than three points), and
// from the weights alone, as they are where each weight is 1 / (the point's variance).
struct LineFit {
  double intercept = 0, slope = 0, ssr = 0, sst = 0, slope_se = 0, intercept_se = 0;
  double slope_se_weights = 0, intercept_se_weights = 0;
  int n = 0;
};
// A fit whose slope would be negative is replaced by the flat one when `forbid_negative_slope`
// (a model that cannot explain the curve).
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y,
                 const std::vector<double>& w, bool forbid_negative_slope);

}  // namespace gpuprobe::analysis
