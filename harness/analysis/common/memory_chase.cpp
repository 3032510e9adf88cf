#include "analysis/common/memory_chase.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/common/util.hpp"
#include "base/stats.hpp"

namespace gpuprobe {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using memory_chase::XY;
}  // namespace

double split_threshold(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }),
          v.end());
  std::sort(v.begin(), v.end());
  if (v.size() < 2 || v.front() == v.back()) return kNaN;
  std::vector<double> prefix(v.size() + 1, 0.0);
  for (size_t i = 0; i < v.size(); ++i) prefix[i + 1] = prefix[i] + v[i];
  const double n = static_cast<double>(v.size());
  double best = -1, threshold = kNaN;
  for (size_t k = 1; k < v.size(); ++k) {
    if (v[k] == v[k - 1]) continue;
    double w0 = static_cast<double>(k) / n, w1 = 1 - w0;
    double m0 = prefix[k] / static_cast<double>(k);
    double m1 = (prefix.back() - prefix[k]) / static_cast<double>(v.size() - k);
    double between = w0 * w1 * (m0 - m1) * (m0 - m1);
    if (between > best) {
      best = between;
      threshold = 0.5 * (v[k - 1] + v[k]);
    }
  }
  return threshold;
}

BoundarySearch::BoundarySearch(double start, double min_x, double max_x, double growth,
                               double quantum, double resolution)
    : start_(start), min_(min_x), max_(max_x), growth_(growth), quantum_(quantum),
      resolution_(resolution), lo_(kNaN), hi_(kNaN) {}

double BoundarySearch::round(double x) const {
  return std::max(quantum_, std::round(x / quantum_) * quantum_);
}

std::optional<double> BoundarySearch::next() const {
  if (std::isnan(lo_) && std::isnan(hi_)) return round(std::min(std::max(start_, min_), max_));
  if (std::isnan(lo_)) {  // only misses so far: shrink
    double x = round(hi_ / growth_);
    if (x >= hi_) x = hi_ - quantum_;
    if (x < min_) return std::nullopt;
    return x;
  }
  if (std::isnan(hi_)) {  // only fits so far: grow
    if (lo_ >= max_) return std::nullopt;
    double x = std::min(round(lo_ * growth_), std::floor(max_ / quantum_) * quantum_);
    if (x <= lo_) x = lo_ + quantum_;
    if (x > max_) return std::nullopt;
    return x;
  }
  if (hi_ - lo_ <= std::max(quantum_, resolution_ * lo_)) return std::nullopt;
  // Geometric midpoint across a wide bracket, arithmetic once it is narrow.
  double mid = round(hi_ > 2 * lo_ ? std::sqrt(lo_ * hi_) : 0.5 * (lo_ + hi_));
  if (mid <= lo_ || mid >= hi_) return std::nullopt;
  return mid;
}

void BoundarySearch::add(double x, bool fits) {
  if (fits) {
    if (std::isnan(lo_) || x > lo_) lo_ = x;
    if (!std::isnan(hi_) && hi_ <= lo_) hi_ = kNaN;  // the earlier miss was noise
  } else {
    if (std::isnan(hi_) || x < hi_) hi_ = x;
    if (!std::isnan(lo_) && lo_ >= hi_) lo_ = kNaN;
  }
}

bool BoundarySearch::bracketed() const { return !std::isnan(lo_) && !std::isnan(hi_); }

bool Bracket::found() const { return std::isfinite(miss); }

std::optional<Bracket> first_miss_bracket(XY xy, double limit) {
  std::sort(xy.begin(), xy.end());
  for (size_t i = 0; i < xy.size(); ++i) {
    if (xy[i].second > limit) {
      if (i == 0) return std::nullopt;
      return Bracket{xy[i - 1].first, xy[i].first};
    }
  }
  if (xy.empty()) return std::nullopt;
  return Bracket{xy.back().first, kNaN};
}

namespace memory_chase {

bool is_pow2(double v) {
  if (!(v >= 1) || v != std::floor(v)) return false;
  auto u = static_cast<unsigned long long>(v);
  return (u & (u - 1)) == 0;
}

double round_pow2(double v) { return std::exp2(std::round(std::log2(v))); }
// Rows of `probe` in `unit` whose text parameters match every (key, value) of `where`,
// grouped by the numeric parameter `key` and returned as (key, x_param, value) points.
std::map<double, XY> grouped(const std::vector<Observation>& obs, const std::string& probe,
                             const std::string& unit, const Params& where,
                             const std::string& group_key, const std::string& x_key) {
  std::map<double, XY> out;
  for (const auto& o : select(obs, probe, unit)) {
    bool match = true;
    for (const auto& [k, v] : where) match = match && o.param_text(k) == v;
    double g = group_key.empty() ? 0.0 : o.param(group_key);
    double x = o.param(x_key);
    if (match && std::isfinite(g) && std::isfinite(x) && std::isfinite(o.value))
      out[g].emplace_back(x, o.value);
  }
  for (auto& [g, xy] : out) std::sort(xy.begin(), xy.end());
  return out;
}

Parameter make_parameter(const std::string& name, double value, const std::string& unit, double low,
                         double high, double confidence, const std::string& method,
                         const std::string& evidence) {
  return {name, value, unit, low, high, analysis::clamp01(confidence), method, evidence};
}

std::string templ(const std::string& name, const std::vector<std::string>& args) {
  std::string s = name + "<";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + (s.back() == '>' ? " >" : ">");
}
std::string loader(int path, int width) {
  return templ("GlobalLoader", {"(Path)" + std::to_string(path), std::to_string(width)});
}
std::string chase_kernel(bool per_access, const std::string& ld) {
  return templ("memory_chase::chase", {per_access ? "true" : "false", ld});
}

InstructionRule ptx_load(int path, int width, bool chained) {
  const char* op[] = {R"(^ld\.global\.)", R"(^ld\.global\.nc\.)", R"(^ld\.global\.cg\.)"};
  const char* ty = width == 4 ? R"(u32 )" : width == 8 ? R"(u64 )" : R"(v2\.u64 )";
  return {std::string(op[path]) + ty, -1, chained};
}
InstructionRule sass_load(int path) {
  const char* re[] = {R"(^LDG\.E(\.64|\.128)?(\.SYS)? )", R"(^LDG\.E[.0-9A-Z]*\.CONSTANT)",
                      R"(^LDG\.E[.0-9A-Z]*\.STRONG\.GPU)"};
  return {re[path], -1, false};
}

CodeExpectation expectation(const std::string& source, const std::string& kernel,
                            const std::string& probe, InstructionRule ptx, InstructionRule sass) {
  CodeExpectation e;
  e.source = source;
  e.kernel = kernel;
  e.probe = probe;
  e.ptx = {std::move(ptx)};
  e.sass = {std::move(sass)};
  return e;
}

}  // namespace memory_chase
}  // namespace gpuprobe
