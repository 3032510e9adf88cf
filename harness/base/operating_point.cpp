#include "base/operating_point.hpp"

#include <algorithm>
#include <cmath>

#include "base/stats.hpp"

namespace gpuprobe {

namespace {

const std::vector<std::string> kTraceHeader = {"time_s",        "family",        "power_w",
                                               "power_avg_w",   "energy_j",      "sm_clock_mhz",
                                               "mem_clock_mhz", "temperature_c", "reasons"};

constexpr unsigned long long kIdleReason = 0x1;  // the GPU had no work: says nothing of a clock

// "" for NaN: a cell NVML did not answer.
std::string cell(double v, const char* fmt) {
  return std::isfinite(v) ? format_printf(fmt, v) : "";
}

double number_or_nan(const std::string& s) {
  double v = NAN;
  return parse_number(s, &v) ? v : NAN;
}

std::vector<double> finite(const std::vector<OperatingSample>& s, double OperatingSample::*field) {
  std::vector<double> out;
  for (const auto& x : s)
    if (std::isfinite(x.*field)) out.push_back(x.*field);
  return out;
}

std::string meta_text(const Metadata& meta, const std::string& key) {
  for (const auto& [k, v] : meta)
    if (k == key) return v;
  return "";
}

}  // namespace

const std::vector<ThrottleReason>& throttle_reasons() {
  static const std::vector<ThrottleReason> all = {
      {0x1, "gpu_idle"},    {0x2, "applications_clocks"}, {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"}, {0x10, "sync_boost"},         {0x20, "sw_thermal"},
      {0x40, "hw_thermal"}, {0x80, "hw_power_brake"},     {0x100, "display_clocks"}};
  return all;
}

std::string throttle_reason_text(unsigned long long mask) {
  if (mask == 0) return "none";
  std::string out;
  unsigned long long known = 0;
  for (const auto& r : throttle_reasons()) {
    known |= r.bit;
    if (mask & r.bit) out += (out.empty() ? "" : "|") + std::string(r.name);
  }
  if (mask & ~known) out += (out.empty() ? "" : "|") + std::string("other");
  return out;
}

unsigned long long throttle_reason_mask(const std::string& text) {
  unsigned long long mask = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t bar = text.find('|', start);
    std::string name =
        text.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    for (const auto& r : throttle_reasons())
      if (name == r.name) mask |= r.bit;
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  return mask;
}

std::string format_trace(const Metadata& meta, const std::vector<OperatingSample>& samples) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(samples.size());
  for (const auto& s : samples)
    rows.push_back({format_printf("%.4f", s.t_s), s.family, cell(s.power_w, "%.2f"),
                    cell(s.power_avg_w, "%.2f"), cell(s.energy_j, "%.3f"),
                    cell(s.sm_clock_mhz, "%.0f"), cell(s.mem_clock_mhz, "%.0f"),
                    cell(s.temperature_c, "%.0f"), throttle_reason_text(s.reasons)});
  return format_csv(meta, kTraceHeader, rows);
}

std::vector<OperatingSample> trace_from_table(const CsvTable& t) {
  std::vector<int> col;
  for (const auto& name : kTraceHeader) col.push_back(t.require(name));
  std::vector<OperatingSample> out;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    auto at = [&](size_t k) { return row.at(static_cast<size_t>(col[k])); };
    OperatingSample s;
    s.t_s = t.number(r, col[0]);
    s.family = at(1);
    s.power_w = number_or_nan(at(2));
    s.power_avg_w = number_or_nan(at(3));
    s.energy_j = number_or_nan(at(4));
    s.sm_clock_mhz = number_or_nan(at(5));
    s.mem_clock_mhz = number_or_nan(at(6));
    s.temperature_c = number_or_nan(at(7));
    s.reasons = throttle_reason_mask(at(8));
    out.push_back(s);
  }
  return out;
}

OperatingPoint summarize_family(const std::vector<OperatingSample>& trace,
                                const std::string& family) {
  std::vector<OperatingSample> mine;
  for (const auto& s : trace)
    if (s.family == family) mine.push_back(s);
  OperatingPoint op;
  op.samples = static_cast<int>(mine.size());
  op.power_w = op.power_max_w = op.sm_clock_mhz = op.sm_clock_min_mhz = op.mem_clock_mhz =
      op.temperature_max_c = NAN;
  if (mine.empty()) return op;
  op.start_s = mine.front().t_s;
  op.end_s = mine.back().t_s;
  // The counter rises in steps about 100 ms apart: the energy between its first and last step
  // inside the family, over the time between the samples that first saw them.
  std::vector<std::pair<double, double>> steps;  // (t, energy) where the counter had moved
  double before = NAN;
  for (const auto& s : mine) {
    if (!std::isfinite(s.energy_j)) continue;
    if (std::isfinite(before) && s.energy_j != before) steps.emplace_back(s.t_s, s.energy_j);
    before = s.energy_j;
  }
  if (steps.size() >= 2 && steps.back().first > steps.front().first)
    op.power_w =
        (steps.back().second - steps.front().second) / (steps.back().first - steps.front().first);
  const std::vector<double> power = finite(mine, &OperatingSample::power_w);
  if (!power.empty()) {
    if (!std::isfinite(op.power_w)) op.power_w = summarize(power).mean;
    op.power_max_w = *std::max_element(power.begin(), power.end());
  }
  const std::vector<double> sm = finite(mine, &OperatingSample::sm_clock_mhz);
  if (!sm.empty()) {
    op.sm_clock_mhz = median(sm);
    op.sm_clock_min_mhz = *std::min_element(sm.begin(), sm.end());
  }
  const std::vector<double> mem = finite(mine, &OperatingSample::mem_clock_mhz);
  if (!mem.empty()) op.mem_clock_mhz = median(mem);
  const std::vector<double> temp = finite(mine, &OperatingSample::temperature_c);
  if (!temp.empty()) op.temperature_max_c = *std::max_element(temp.begin(), temp.end());
  int limited = 0;
  for (const auto& s : mine) {
    op.reasons |= s.reasons & ~kIdleReason;
    if (s.reasons & kLimitingReasons) ++limited;
  }
  op.limited_fraction = static_cast<double>(limited) / static_cast<double>(mine.size());
  return op;
}

const std::vector<std::string>& operating_point_columns() {
  static const std::vector<std::string> cols = {"power_w",           "power_max_w",
                                                "nvml_sm_clock_mhz", "nvml_sm_clock_min_mhz",
                                                "mem_clock_mhz",     "temperature_max_c",
                                                "throttle_reasons",  "throttled_fraction",
                                                "start_s",           "end_s"};
  return cols;
}

std::vector<std::string> operating_point_cells(const OperatingPoint& op) {
  if (op.samples == 0) return std::vector<std::string>(operating_point_columns().size());
  return {cell(op.power_w, "%.1f"),          cell(op.power_max_w, "%.1f"),
          cell(op.sm_clock_mhz, "%.0f"),     cell(op.sm_clock_min_mhz, "%.0f"),
          cell(op.mem_clock_mhz, "%.0f"),    cell(op.temperature_max_c, "%.0f"),
          throttle_reason_text(op.reasons),  format_printf("%.3f", op.limited_fraction),
          format_printf("%.3f", op.start_s), format_printf("%.3f", op.end_s)};
}

void add_operating_point_metadata(Metadata& meta, const OperatingPoint& op) {
  if (op.samples == 0) return;
  const auto cells = operating_point_cells(op);
  const auto& cols = operating_point_columns();
  for (const char* key : {"power_w", "nvml_sm_clock_mhz", "temperature_max_c", "throttle_reasons",
                          "throttled_fraction"}) {
    const size_t k = static_cast<size_t>(std::find(cols.begin(), cols.end(), key) - cols.begin());
    meta.emplace_back("family_" + std::string(key), cells[k].empty() ? "unknown" : cells[k]);
  }
}

bool mark_throttled(std::vector<Parameter>& params, const Metadata& meta) {
  const unsigned long long limiting =
      throttle_reason_mask(meta_text(meta, "family_throttle_reasons")) & kLimitingReasons;
  const double fraction = number_or_nan(meta_text(meta, "family_throttled_fraction"));
  if (!limiting || !(fraction > 0)) return false;
  const double factor = 1 - kThrottlePenalty * std::min(fraction, 1.0);
  const std::string note = "; " + throttle_reason_text(limiting) + " active in " +
                           format_printf("%.0f", 100 * fraction) +
                           " % of the family's NVML samples (" + kTraceFile + ")";
  for (auto& p : params) {
    p.confidence *= factor;
    p.evidence += note;
  }
  return true;
}

}  // namespace gpuprobe
