#include "app/run_analysis.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <filesystem>
#include <stdexcept>

#include "analysis/analyzer.hpp"
#include "base/catalog.hpp"
#include "app/nvbandwidth_json.hpp"
#include "base/run_dir.hpp"

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
  return s.empty() ? "none" : s;
}

// The run-level parameters (SM clock, wall time) come from the run itself, not from any
// observations file: kept from the parameters.csv there is, never invented again.
std::vector<Parameter> run_level_parameters(const std::string& dir, RunAnalysis& a) {
  const std::string params_path = (fs::path(dir) / "parameters.csv").string();
  std::vector<Parameter> run_level;
  if (!file_exists(params_path)) return run_level;
  try {
    CsvTable t = read_csv(params_path);
    a.meta = t.meta;
    for (const auto& p : parameters_from_table(t))
      if (p.evidence == "families.csv") run_level.push_back(p);
  } catch (const CsvError& e) {
    a.warnings.push_back(std::string(e.what()) + " (its run-level parameters are lost)");
  }
  return run_level;
}

// One family's observations file: analysed and merged into `a`, or listed as skipped (with a
// warning where an analyzer needed it).
void analyze_family_file(const std::string& path, RunAnalysis& a) {
  const std::string name = fs::path(path).filename().string();
  const std::string stem = fs::path(path).stem().string();
  const bool used = analyzers().count(stem) > 0;
  auto skip = [&](const std::string& why, bool warn) {
    a.skipped.push_back(name + " (" + why + ")");
    if (warn) a.warnings.push_back(why);
  };
  CsvTable t;
  std::vector<Observation> obs;
  try {
    t = read_csv(path);
    obs = observations_from_table(t);
  } catch (const CsvError& e) {
    // A file no analyzer reads is only listed; one an analyzer needs is also a warning.
    skip(used ? e.what() : std::string(e.what()) + " (no analyzer reads it)", used);
    return;
  }
  if (a.meta.empty()) a.meta = t.meta;
  if (!used) return skip("no analyzer for family '" + stem + "'", false);
  auto stray = std::find_if(obs.begin(), obs.end(), [&](const Observation& o) { return o.family != stem; });
  if (stray != obs.end())
    return skip(path + ":" + std::to_string(t.row_lines[static_cast<size_t>(stray - obs.begin())]) +
                    ": family '" + stray->family + "' in a file named " + name,
                true);
  Analysis r = analyze_checked(stem, obs, t.meta);
  for (const auto& w : r.warnings) a.warnings.push_back(path + ": " + w);
  if (!r.error.empty()) {
    a.errors.push_back(path + ": " + r.error);
    a.skipped.push_back(name + " (analysis failed)");
    return;
  }
  a.analyzed.push_back(stem);
  merge_parameters(a.params, r.params);
}

// The status lines replace any an earlier analysis wrote.
void set_status_lines(RunAnalysis& a) {
  a.meta.erase(std::remove_if(a.meta.begin(), a.meta.end(),
                              [](const auto& kv) {
                                return kv.first == "analyzed" || kv.first == "skipped" ||
                                       kv.first == "warning";
                              }),
               a.meta.end());
  a.meta.emplace_back("analyzed", joined(a.analyzed));
  a.meta.emplace_back("skipped", joined(a.skipped));
  for (const auto& w : a.warnings) a.meta.emplace_back("warning", w);
  for (const auto& e : a.errors) a.meta.emplace_back("warning", "error: " + e);
}

}  // namespace

RunAnalysis analyze_run_dir(const std::string& dir) {
  if (const FolderKind kind = folder_kind(dir); kind != FolderKind::run)
    throw std::runtime_error(dir + ": " + folder_kind_name(kind) + ", not a run folder");
  RunAnalysis a;
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".csv") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());

  const std::vector<Parameter> run_level = run_level_parameters(dir, a);
  for (const auto& path : files)
    if (!is_run_level_file(fs::path(path).stem().string())) analyze_family_file(path, a);
  merge_parameters(a.params, run_level);
  if (fs::exists(fs::path(dir) / "not_measured.csv")) drop_not_quick(a.params);  // a quick run's subset
  set_status_lines(a);
  return a;
}

std::string format_run_analysis(const RunAnalysis& a) { return format_parameters(a.meta, a.params); }

void print_messages(const std::string& prefix, const std::vector<std::string>& warnings,
                    const std::vector<std::string>& errors, bool verbose,
                    const std::string& all_listed) {
  if (verbose)
    for (const auto& w : warnings) std::fprintf(stderr, "%s: warning: %s\n", prefix.c_str(), w.c_str());
  else if (!warnings.empty())
    std::fprintf(stderr, "%s: %zu warning(s), the first: %s (%s)\n", prefix.c_str(),
                 warnings.size(), warnings.front().c_str(), all_listed.c_str());
  for (const auto& e : errors) std::fprintf(stderr, "%s: %s\n", prefix.c_str(), e.c_str());
}

int analyze_main(const Options& opt) {
  const std::string prefix = "gpuprobe analyze";
  const std::string& dir = opt.positional.at(0);
  RunAnalysis a;
  try {
    a = analyze_run_dir(dir);
  } catch (const std::exception& e) {
    print_messages(prefix, {}, {e.what()}, opt.verbose);
    return 1;
  }
  if (opt.to_stdout) {
    std::cout << format_run_analysis(a) << std::flush;
  } else {
    const std::string out = (fs::path(dir) / "parameters.csv").string();
    write_file_atomic(out, format_run_analysis(a));
    std::printf("%s written: %zu parameters from %zu families (%s); skipped: %s\n", out.c_str(),
                a.params.size(), a.analyzed.size(), joined(a.analyzed).c_str(),
                joined(a.skipped).c_str());
  }
  if (!opt.json_nvbandwidth.empty()) write_nvbandwidth_json(dir, opt.json_nvbandwidth);
  print_messages(prefix, a.warnings, a.errors, opt.verbose);
  return a.errors.empty() ? 0 : 1;
}

}  // namespace gpuprobe
