#include "app/spread.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "app/cli.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/run_dir.hpp"
#include "base/stats.hpp"

namespace fs = std::filesystem;

namespace gpuprobe {

// Fewer runs than this have no spread to speak of.
constexpr size_t kMinRuns = 2;
// A spread under this fraction of the median is never flagged: a value given with no interval
// (low = high) still differs between runs in its last digits, and the tightest tolerance in
// docs/parameters.md is 2 %.
constexpr double kNegligibleSpread = 1e-3;

// A parameter whose tolerance docs/parameters.md gives as "not compared ..." (suite_wall_time:
// the run's own wall time) claims no precision about the GPU: its spread is listed, not flagged.
bool compared(const std::string& name) {
  const CatalogEntry* e = find_parameter(name);
  double tol = 0;
  return !e || tolerance_fraction(e->tolerance, &tol);
}

std::vector<SpreadRow> spread_of(const std::vector<std::vector<Parameter>>& runs) {
  struct Values {
    std::string unit;
    std::vector<double> values, widths;
  };
  std::map<std::string, Values> by_name;
  for (const auto& run : runs)
    for (const auto& p : run) {
      Values& v = by_name[p.name];
      if (v.unit.empty()) v.unit = p.unit;
      if (!std::isfinite(p.value)) continue;
      v.values.push_back(p.value);
      if (std::isfinite(p.high - p.low)) v.widths.push_back(std::max(0.0, p.high - p.low));
    }
  std::vector<SpreadRow> out;
  for (const auto& [name, v] : by_name) {
    SpreadRow r;
    r.parameter = name;
    r.unit = v.unit;
    r.n = static_cast<int>(v.values.size());
    if (r.n > 0) {
      r.median = median(v.values);
      r.min = *std::min_element(v.values.begin(), v.values.end());
      r.max = *std::max_element(v.values.begin(), v.values.end());
      r.relative_spread = r.median != 0 ? (r.max - r.min) / std::fabs(r.median) : 0;
      r.median_interval = v.widths.empty() ? 0 : median(v.widths);
      r.exceeds = v.values.size() >= kMinRuns && compared(name) &&
                  r.max - r.min > std::max(r.median_interval, kNegligibleSpread * std::fabs(r.median));
    }
    out.push_back(r);
  }
  return out;
}

namespace {

struct SpreadArgs {
  std::vector<std::string> runs;
  std::string out;
};

constexpr const char* kSpreadUsage = "usage: gpuprobe spread RUN_DIR RUN_DIR... [--out FILE]";

// The run folder a path names, without a trailing separator.
fs::path run_folder(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  return p.has_filename() || !p.has_parent_path() ? p : p.parent_path();
}

SpreadArgs parse_spread_args(const std::vector<std::string>& args) {
  SpreadArgs a;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--out") {
      if (i + 1 >= args.size()) throw UsageError("spread: --out: missing value");
      a.out = args[++i];
    } else if (args[i].rfind("--", 0) == 0) {
      throw UsageError("spread: unknown option '" + args[i] + "' (" + kSpreadUsage + ")");
    } else {
      a.runs.push_back(args[i]);
    }
  }
  if (a.runs.size() < kMinRuns) throw UsageError(std::string("spread: needs at least two run folders (") + kSpreadUsage + ")");
  // Beside the runs, never inside one ("RUN/" names the folder RUN as "RUN" does).
  if (a.out.empty()) a.out = (run_folder(a.runs.front()).parent_path() / "spread.csv").string();
  return a;
}

std::string meta_of(const Metadata& meta, const std::string& key) {
  for (const auto& [k, v] : meta)
    if (k == key) return v;
  return "";
}

}  // namespace

int spread_main(const std::vector<std::string>& args) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::printf("%s\n  the spread of each parameter over runs of one GPU against its interval, as CSV\n"
                "  (default: spread.csv in the folder of the first run; scripts/repeat.sh makes the runs)\n",
                kSpreadUsage);
    return 0;
  }
  const SpreadArgs a = parse_spread_args(args);
  check_output_path(a.out);  // before any work
  std::vector<std::vector<Parameter>> runs;
  std::vector<std::string> rejected;  // rows not used, each said
  std::string gpu, ids;
  std::set<std::string> versions;
  std::set<std::string> seen;  // a run named twice would count its values twice
  for (const auto& dir : a.runs) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(dir, ec);
    if (!seen.insert(ec ? dir : canonical.string()).second)
      throw std::runtime_error("spread: " + dir +
                               " is named twice: a run against itself has no spread");
    const fs::path file = fs::path(dir) / "parameters.csv";
    if (!fs::exists(file)) throw std::runtime_error("spread: " + file.string() + ": no such file (not a run folder?)");
    Metadata meta;
    runs.push_back(read_parameters(file.string(), &meta, &rejected));
    const std::string this_gpu = meta_of(meta, "gpu");
    if (!gpu.empty() && this_gpu != gpu)
      throw std::runtime_error("spread: " + dir + " is a run of " + this_gpu + ", not of " + gpu +
                               " (across GPUs: gpuprobe compare --fleet)");
    gpu = this_gpu;
    ids += (ids.empty() ? "" : " ") + run_folder(dir).filename().string();
    versions.insert(meta_of(meta, "gpuprobe_version"));
  }
  std::string version_text;
  for (const auto& v : versions) version_text += (version_text.empty() ? "" : " ") + v;
  std::vector<std::vector<std::string>> rows;
  int flagged = 0;
  for (const SpreadRow& r : spread_of(runs)) {
    flagged += r.exceeds;
    rows.push_back({r.parameter, r.unit, std::to_string(r.n), format_number(r.median), format_number(r.min),
                    format_number(r.max), format_number(r.relative_spread), format_number(r.median_interval),
                    r.exceeds ? "1" : "0"});
  }
  const Metadata meta = {{"gpu", gpu},
                         {"runs", ids},
                         {"gpuprobe_versions", version_text},
                         {"spread_exceeds_interval", "max - min over the runs > the median of the runs' high - low"}};
  write_file_atomic(a.out, format_csv(meta,
                                      {"parameter", "unit", "n", "median", "min", "max", "relative_spread",
                                       "median_interval_width", "spread_exceeds_interval"},
                                      rows));
  std::printf("%s written: %zu parameters over %zu runs, %d whose spread exceeds their interval\n", a.out.c_str(),
              rows.size(), runs.size(), flagged);
  for (const auto& r : rejected) std::fprintf(stderr, "gpuprobe spread: %s\n", r.c_str());
  return checked_stdout("gpuprobe spread", rejected.empty() ? 0 : 1);
}

}  // namespace gpuprobe
