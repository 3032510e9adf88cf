// `gpuprobe compare RUN --nvbandwidth FILE`: a run beside nvbandwidth's JSON of the same
// machine, test case by test case (app/nvbandwidth_json.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "app/nvbandwidth_json.hpp"
#include "app/report.hpp"
#include "base/json.hpp"
#include "base/stats.hpp"

namespace gpuprobe {

namespace {

// The word nvbandwidth's latency test cases carry in their names (device_to_device_latency_sm).
constexpr const char* kNvbLatencyWord = "latency";

using Cells = std::vector<std::vector<double>>;

// nvbandwidth's matrix of one test case: its strings as numbers, "N/A" as NaN.
Cells their_matrix(const Json& rows) {
  Cells m;
  for (const auto& row : rows) {
    std::vector<double> r;
    for (const auto& cell : row) {
      double v = NAN;
      if (cell.is_string() && !parse_number(cell.get<std::string>(), &v)) v = NAN;
      r.push_back(v);
    }
    m.push_back(r);
  }
  return m;
}

// A bidirectional case holds each direction's matrix and then their sum's, one after another
// (json_output.cpp appends every addTestcaseResults to the same bandwidth_matrix): its sums.
Cells sum_rows(const Cells& m) {
  const size_t width = m.empty() ? 0 : m.front().size();
  if (width == 0 || m.size() != 3 * width) return m;
  return Cells(m.end() - long(width), m.end());
}

std::string range_text(std::vector<double> v, const std::string& unit) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double mid = median(v);
  return human(mid, unit) + (*lo == *hi ? "" : " [" + human(*lo, "") + ", " + human(*hi, "") + "]");
}

}  // namespace

std::string nvbandwidth_side_by_side(const std::string& run_dir, const std::string& nvbandwidth_json) {
  Json root;
  try {
    root = Json::parse(nvbandwidth_json);
  } catch (const Json::exception& e) {
    throw std::runtime_error(std::string("not JSON: ") + e.what());
  }
  if (!root.is_object() || !root.contains("nvbandwidth") || !root["nvbandwidth"].contains("testcases"))
    throw std::runtime_error("not nvbandwidth's JSON (no nvbandwidth.testcases)");
  const NvbandwidthRun run = read_nvbandwidth_run(run_dir);
  std::map<std::string, Cells> ours;
  for (const auto& c : nvbandwidth_cases(run.families, run.gpus, run.device, true)) ours[c.name] = c.matrix;

  std::vector<std::vector<std::string>> rows = {
      {"nvbandwidth test case", "cells", "nvbandwidth", "gpuprobe", "gpuprobe / nvbandwidth"}};
  std::string unmatched;
  for (const auto& tc : root["nvbandwidth"]["testcases"]) {
    const std::string name = tc.value("name", "");
    auto mine = ours.find(name);
    const std::string status = tc.value("status", "?");
    if (status != "Passed" || !tc.contains("bandwidth_matrix") || mine == ours.end()) {
      unmatched += (unmatched.empty() ? "" : ", ") + name + " (" +
                   (status != "Passed"   ? status
                    : mine == ours.end() ? "no gpuprobe mode like it"
                                         : "no matrix") +
                   ")";
      continue;
    }
    const Cells theirs = sum_rows(their_matrix(tc["bandwidth_matrix"]));
    const std::string unit = name.find(kNvbLatencyWord) != std::string::npos ? "ns" : "GB/s";
    std::vector<double> a, b, ratio;
    for (size_t r = 0; r < theirs.size() && r < mine->second.size(); ++r)
      for (size_t c = 0; c < theirs[r].size() && c < mine->second[r].size(); ++c) {
        const double x = theirs[r][c], y = mine->second[r][c];
        if (!(std::isfinite(x) && std::isfinite(y) && x > 0)) continue;
        a.push_back(x);
        b.push_back(y);
        ratio.push_back(y / x);
      }
    if (a.empty()) {
      unmatched += (unmatched.empty() ? "" : ", ") + name + " (no cell measured by both)";
      continue;
    }
    rows.push_back(
        {"`" + name + "`", std::to_string(a.size()), range_text(a, unit), range_text(b, unit), range_text(ratio, "")});
  }
  std::string md =
      "Medians over the cells both measured, [lowest, highest]; the ratio is per cell. "
      "Bidirectional cases: nvbandwidth's sum of both directions.\n\n" +
      markdown_table(rows);
  if (!unmatched.empty()) md += "\nNot compared: " + unmatched + ".\n";
  return md;
}

}  // namespace gpuprobe
