#include "base/observation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>


namespace gpuprobe {

const std::vector<std::string> kObservationTail = {"value", "unit", "p05", "p50", "p95", "reps"};

const std::vector<std::string> kParameterHeader = {"parameter", "value",      "unit",   "low",
                                                   "high",      "confidence", "method", "evidence"};

Observation Observation::scaled(double factor, std::string new_unit) const {
  Observation o = *this;
  o.unit = std::move(new_unit);
  o.value *= factor;
  o.p05 *= factor;
  o.p50 *= factor;
  o.p95 *= factor;
  return o;
}

double Observation::param(const std::string& key) const {
  for (const auto& [k, v] : params) {
    double x = 0;
    if (k == key && parse_number(v, &x)) return x;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::string Observation::param_text(const std::string& key) const {
  for (const auto& [k, v] : params)
    if (k == key) return v;
  return "";
}

std::string format_observations(const Metadata& meta, const std::vector<Observation>& obs) {
  std::vector<std::string> keys;
  for (const auto& o : obs)
    for (const auto& kv : o.params) {
      bool seen = false;
      for (const auto& k : keys) seen = seen || k == kv.first;
      if (!seen) keys.push_back(kv.first);
    }
  std::vector<std::string> header = {"family", "probe"};
  header.insert(header.end(), keys.begin(), keys.end());
  header.insert(header.end(), kObservationTail.begin(), kObservationTail.end());
  std::vector<std::vector<std::string>> rows;
  rows.reserve(obs.size());
  for (const auto& o : obs) {
    std::vector<std::string> r = {o.family, o.probe};
    for (const auto& k : keys) r.push_back(o.param_text(k));
    r.push_back(format_number(o.value));
    r.push_back(o.unit);
    r.push_back(format_number(o.p05));
    r.push_back(format_number(o.p50));
    r.push_back(format_number(o.p95));
    r.push_back(std::to_string(o.reps));
    rows.push_back(std::move(r));
  }
  return format_csv(meta, header, rows);
}

std::vector<Observation> observations_from_table(const CsvTable& t) {
  if (t.header.size() < 2 + kObservationTail.size() || t.header[0] != "family" ||
      t.header[1] != "probe")
    throw CsvError(t.path + ": not an observations file (header must begin 'family,probe,' "
                            "and end 'value,unit,p05,p50,p95,reps')");
  size_t tail = t.header.size() - kObservationTail.size();
  for (size_t i = 0; i < kObservationTail.size(); ++i)
    if (t.header[tail + i] != kObservationTail[i])
      throw CsvError(t.path + ": not an observations file (expected column '" +
                     kObservationTail[i] + "' where '" + t.header[tail + i] + "' is)");
  std::vector<Observation> out;
  out.reserve(t.rows.size());
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    Observation o;
    o.family = row[0];
    o.probe = row[1];
    for (size_t c = 2; c < tail; ++c)
      if (!row[c].empty()) o.params.emplace_back(t.header[c], row[c]);
    auto col = [&](size_t i) { return static_cast<int>(tail + i); };
    o.value = t.number(r, col(0));
    o.unit = row[tail + 1];
    o.p05 = t.number(r, col(2));
    o.p50 = t.number(r, col(3));
    o.p95 = t.number(r, col(4));
    double reps = t.number(r, col(5));
    if (!(reps >= 0 && reps <= std::numeric_limits<int>::max()) || reps != std::floor(reps))
      throw CsvError(t.path + ":" + std::to_string(t.row_lines[r]) +
                     ": column 'reps' must be a whole number");
    o.reps = static_cast<int>(reps);
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<Observation> read_observations(const std::string& path, Metadata* meta) {
  CsvTable t = read_csv(path);
  if (meta) *meta = t.meta;
  return observations_from_table(t);
}

std::string format_parameters(const Metadata& meta, const std::vector<Parameter>& params) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : params)
    rows.push_back({p.name, format_number(p.value), p.unit, format_number(p.low),
                    format_number(p.high), format_number(p.confidence), p.method, p.evidence});
  return format_csv(meta, kParameterHeader, rows);
}

bool plausible(double v) { return std::isfinite(v) && std::fabs(v) < kAbsurdMagnitude; }

std::string parameter_violation(const Parameter& p, bool positive, double slack) {
  if (p.name.empty()) return "no name";
  if (!plausible(p.value))
    return "value " + format_number(p.value) + " is not a finite, plausible number";
  if (!plausible(p.low) || !plausible(p.high))
    return "bounds " + format_number(p.low) + ".." + format_number(p.high) + " are not finite";
  if (positive && p.value <= 0)
    return "value " + format_number(p.value) + " <= 0 for a quantity that cannot be";
  if (positive && p.low < 0) return "low bound " + format_number(p.low) + " < 0";
  if (p.high < p.low) return "high " + format_number(p.high) + " < low " + format_number(p.low);
  const double miss = slack * std::fabs(p.value);
  if (p.value < p.low - miss || p.value > p.high + miss)
    return "value " + format_number(p.value) + " outside its bounds " + format_number(p.low) +
           ".." + format_number(p.high);
  if (!(p.confidence >= 0 && p.confidence <= 1))
    return "confidence " + format_number(p.confidence) + " outside [0, 1]";
  return "";
}


void merge_parameters(std::vector<Parameter>& params, const std::vector<Parameter>& found) {
  for (const auto& p : found) {
    auto same = std::find_if(params.begin(), params.end(),
                             [&](const Parameter& q) { return q.name == p.name; });
    if (same == params.end())
      params.push_back(p);
    else if (p.confidence > same->confidence)
      *same = p;
  }
}

std::string evidence_path(const std::string& evidence) {
  return evidence.substr(0, evidence.find("; "));
}

std::vector<Observation> select(const std::vector<Observation>& obs, const std::string& probe,
                                const std::string& unit) {
  std::vector<Observation> out;
  for (const auto& o : obs)
    if ((probe.empty() || o.probe == probe) && (unit.empty() || o.unit == unit)) out.push_back(o);
  return out;
}

}  // namespace gpuprobe
