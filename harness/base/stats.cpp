#include "base/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace gpuprobe {

static double sorted_percentile(const std::vector<double>& s, double q) {
  if (s.empty()) return std::numeric_limits<double>::quiet_NaN();
  double pos = q * static_cast<double>(s.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, s.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return s[lo] + (s[hi] - s[lo]) * frac;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return sorted_percentile(v, q);
}

double median(std::vector<double> v) { return percentile(std::move(v), 0.5); }

Summary summarize(const std::vector<double>& v) {
  Summary s;
  s.n = static_cast<int>(v.size());
  if (v.empty()) {
    s.p05 = s.p50 = s.p95 = s.mean = s.min = s.max = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  s.p05 = sorted_percentile(sorted, 0.05);
  s.p50 = sorted_percentile(sorted, 0.50);
  s.p95 = sorted_percentile(sorted, 0.95);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  s.min = sorted.front();
  s.max = sorted.back();
  return s;
}

}  // namespace gpuprobe
