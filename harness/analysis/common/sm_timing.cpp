#include "analysis/common/sm_timing.hpp"

#include <algorithm>
#include <map>

#include "base/stats.hpp"

namespace gpuprobe {

namespace {

struct SmSpan {
  int64_t start, end;
  int blocks;
};

std::map<int32_t, SmSpan> by_sm(const std::vector<BlockSpan>& spans) {
  std::map<int32_t, SmSpan> sms;
  for (const auto& s : spans) {
    auto it = sms.try_emplace(s.sm, SmSpan{s.start, s.end, 0}).first;
    it->second.start = std::min(it->second.start, s.start);
    it->second.end = std::max(it->second.end, s.end);
    ++it->second.blocks;
  }
  return sms;
}

}  // namespace

std::vector<double> per_sm_rates(const std::vector<BlockSpan>& spans, double work_per_block) {
  std::vector<double> rates;
  for (const auto& [sm, t] : by_sm(spans))
    if (t.end > t.start) rates.push_back(t.blocks * work_per_block / double(t.end - t.start));
  return rates;
}

double sm_rate(const std::vector<BlockSpan>& spans, double work_per_block) {
  auto r = per_sm_rates(spans, work_per_block);
  return r.empty() ? 0 : median(r);
}

double chip_rate(const std::vector<BlockSpan>& spans, double work_per_block) {
  auto sms = by_sm(spans);
  int64_t longest = 0;
  for (const auto& [sm, t] : sms) longest = std::max(longest, t.end - t.start);
  if (longest <= 0) return 0;
  return double(spans.size()) * work_per_block / (double(longest) * double(sms.size()));
}

double median_sm_cycles(const std::vector<BlockSpan>& spans) {
  std::vector<double> cycles;
  for (const auto& [sm, t] : by_sm(spans)) cycles.push_back(double(t.end - t.start));
  return cycles.empty() ? 0 : median(cycles);
}

}  // namespace gpuprobe
