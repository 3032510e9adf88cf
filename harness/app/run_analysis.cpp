#include "app/run_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include <sys/stat.h>

#include "analysis/analyzer.hpp"
#include "app/nvbandwidth_json.hpp"
#include "base/catalog.hpp"
#include "base/parameter_names.hpp"
#include "base/run_dir.hpp"

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

constexpr const char* kParametersFile = "parameters.csv";
constexpr const char* kFamiliesFile = "families.csv";

// The runner's own confidence in the SM clock it measured; the 0.1 MHz to which families.csv
// rounds it is far inside the parameter's 2 % tolerance.
constexpr double kRecoveredClockConfidence = 0.99;

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
  return s.empty() ? "none" : s;
}

// A parameter no observations file gives: the runner's own (family "run", evidence
// families.csv).
bool is_run_level(const std::string& name, const std::string& evidence) {
  const CatalogEntry* e = find_parameter(name);
  return evidence == kFamiliesFile || (e && e->family == "run");
}

std::string meta_of(const Metadata& meta, const std::string& key) {
  for (const auto& [k, v] : meta)
    if (k == key) return v;
  return "";
}

// The run-level parameters as families.csv's metadata records them: the SM clock's median and
// range (sm_clock_mhz, sm_clock_range_mhz "a..b") and the wall time (suite_wall_time_s).
std::vector<Parameter> recovered_run_level(const Metadata& families) {
  std::vector<Parameter> out;
  double mhz = 0, lo = 0, hi = 0;
  const std::string range = meta_of(families, "sm_clock_range_mhz");
  const size_t dots = range.find("..");
  if (parse_number(meta_of(families, "sm_clock_mhz"), &mhz) && dots != std::string::npos &&
      parse_number(range.substr(0, dots), &lo) && parse_number(range.substr(dots + 2), &hi))
    out.push_back(
        {param::sm_clock_measured, mhz, "MHz", std::min(lo, mhz), std::max(hi, mhz),
         kRecoveredClockConfidence,
         "clock_vs_globaltimer: clock64 vs %globaltimer on every SM, median of the readings taken "
         "before each family, as families.csv records it (to 0.1 MHz)",
         kFamiliesFile});
  double wall = 0;
  if (parse_number(meta_of(families, "suite_wall_time_s"), &wall))
    out.push_back({param::suite_wall_time, wall, "s", wall, wall, 1.0,
                   "host_clock: host steady clock, whole run, as families.csv records it",
                   kFamiliesFile});
  std::vector<Parameter> valid;
  for (auto& p : out)
    if (parameter_violation(p, true, 0).empty()) valid.push_back(std::move(p));
  return valid;
}

// The files of a run, parsed (or why not), with the run-level parameters found so far.
struct Inputs {
  const std::string& dir;
  std::map<std::string, CsvTable> tables;     // by file name, those that parse
  std::map<std::string, std::string> broken;  // by file name: why not
  std::string path(const std::string& name) const { return (fs::path(dir) / name).string(); }
  const CsvTable* table(const std::string& name) const {
    auto it = tables.find(name);
    return it == tables.end() ? nullptr : &it->second;
  }
};

Inputs parse_inputs(const std::string& dir, const std::vector<RunFile>& files) {
  Inputs in{dir, {}, {}};
  for (const auto& f : files) {
    if (!f.error.empty()) {
      in.broken[f.name] = f.error;
      continue;
    }
    try {
      in.tables.emplace(f.name, parse_csv(f.text, in.path(f.name)));
    } catch (const CsvError& e) {
      in.broken[f.name] = e.what();
    }
  }
  std::vector<std::pair<std::string, Metadata>> metas;
  for (const auto& [name, t] : in.tables) metas.emplace_back(name, t.meta);
  if (const std::string fault = metadata_fault(metas); !fault.empty())
    throw std::runtime_error(dir + "/" + fault + ": not analysed");
  if (const std::string conflict = identity_conflict(metas); !conflict.empty())
    throw std::runtime_error(dir + ": " + conflict + ": not analysed");
  return in;
}

// What recovered_run_level() gives of `name`, or nullptr.
const Parameter* recovered(const std::vector<Parameter>& from, const std::string& name) {
  for (const auto& p : from)
    if (p.name == name) return &p;
  return nullptr;
}

// The run-level rows of a parameters.csv that was read: each kept, or recovered from
// families.csv when its row cannot be read; throws when neither.
std::vector<Parameter> kept_run_level(const Inputs& in, const CsvTable& t,
                                      const std::vector<Parameter>& recovery, RunAnalysis& a) {
  std::vector<std::string> rejected;
  std::vector<int> lines;
  std::vector<Parameter> rows = parameters_from_table(t, &rejected, &lines);
  for (const auto& r : rejected) a.warnings.push_back(r);
  std::vector<Parameter> out;
  for (const auto& p : rows)
    if (is_run_level(p.name, p.evidence)) out.push_back(p);
  const int name_col = t.require("parameter"), evidence_col = t.require("evidence");
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const std::string& name = t.rows[r][static_cast<size_t>(name_col)];
    if (!is_run_level(name, t.rows[r][static_cast<size_t>(evidence_col)])) continue;
    const bool read = std::find(lines.begin(), lines.end(), t.row_lines[r]) != lines.end();
    const bool have =
        std::any_of(out.begin(), out.end(), [&](const Parameter& p) { return p.name == name; });
    if (read || have) continue;
    const Parameter* back = recovered(recovery, name);
    if (!back)
      throw std::runtime_error(
          t.path + ":" + std::to_string(t.row_lines[r]) + ": " + name +
          ": unreadable, and no other file of the run gives it: not overwritten");
    a.warnings.push_back(t.path + ":" + std::to_string(t.row_lines[r]) + ": " + name +
                         ": unreadable; recovered from " + in.path(kFamiliesFile));
    out.push_back(*back);
  }
  return out;
}

// The run-level parameters of a parameters.csv emptied by this command's own redirection:
// what families.csv recovers, an error naming each one it cannot.
std::vector<Parameter> run_level_after_redirect(const Inputs& in,
                                                const std::vector<Parameter>& recovery,
                                                RunAnalysis& a) {
  std::string lost;
  for (const char* name : {param::sm_clock_measured, param::suite_wall_time})
    if (!recovered(recovery, name)) lost += (lost.empty() ? "" : ", ") + std::string(name);
  const std::string what = in.path(kParametersFile) +
                           " was emptied by the shell's redirection before analyze could read it";
  if (lost.empty())
    a.warnings.push_back(what + ": its run-level rows recovered from " + kFamiliesFile);
  else
    a.errors.push_back(
        what + ": " + lost + " lost (" + kFamiliesFile +
        " does not record it); 'gpuprobe analyze RUN_DIR' writes parameters.csv in place");
  return recovery;
}

// The run-level parameters: kept from parameters.csv, recovered where it is missing; throws
// where it cannot be read (writing over it would lose them).
std::vector<Parameter> run_level_parameters(const Inputs& in, const AnalyzeOptions& opt,
                                            RunAnalysis& a) {
  const CsvTable* families = in.table(kFamiliesFile);
  const std::vector<Parameter> recovery =
      families ? recovered_run_level(families->meta) : std::vector<Parameter>{};
  if (opt.parameters_emptied) return run_level_after_redirect(in, recovery, a);
  const bool present = in.table(kParametersFile) || in.broken.count(kParametersFile);
  if (!present) return recovery;  // an older or interrupted run, or one whose file was removed
  const std::string refusal =
      ": not overwritten: its rows that no observations file gives (sm_clock_measured, "
      "suite_wall_time) would be lost; move it aside to infer the rest again";
  if (auto it = in.broken.find(kParametersFile); it != in.broken.end())
    throw std::runtime_error(it->second + refusal);
  const CsvTable& t = *in.table(kParametersFile);
  a.meta = t.meta;
  try {
    return kept_run_level(in, t, recovery, a);
  } catch (const CsvError& e) {  // not a parameters file (a column missing)
    throw std::runtime_error(e.what() + refusal);
  }
}

// One family's observations file: analysed and merged into `a`, or listed as skipped (with a
// warning where an analyzer needed it); `read` gets the number of observations it holds.
void analyze_family_file(const Inputs& in, const std::string& name, RunAnalysis& a,
                         std::map<std::string, size_t>& read) {
  const std::string path = in.path(name);
  const std::string stem = fs::path(name).stem().string();
  const bool used = analyzers().count(stem) > 0;
  auto skip = [&](const std::string& why, bool warn) {
    a.skipped.push_back(name + " (" + why + ")");
    if (warn) a.warnings.push_back(why);
  };
  // A file no analyzer reads is only listed; one an analyzer needs is also a warning.
  if (auto it = in.broken.find(name); it != in.broken.end())
    return skip(used ? it->second : it->second + " (no analyzer reads it)", used);
  const CsvTable& t = *in.table(name);
  std::vector<Observation> obs;
  try {
    obs = observations_from_table(t);
  } catch (const CsvError& e) {
    return skip(used ? e.what() : std::string(e.what()) + " (no analyzer reads it)", used);
  }
  if (a.meta.empty()) a.meta = t.meta;
  read[stem] = obs.size();
  if (!used) return skip("no analyzer for family '" + stem + "'", false);
  auto stray = std::find_if(obs.begin(), obs.end(), [&](const Observation& o) { return o.family != stem; });
  if (stray != obs.end()) {
    read[stem] = 0;
    return skip(path + ":" + std::to_string(t.row_lines[static_cast<size_t>(stray - obs.begin())]) +
                    ": family '" + stray->family + "' in a file named " + name,
                true);
  }
  Analysis r = analyze_family_rows(t, stem, std::move(obs));
  a.warnings.insert(a.warnings.end(), r.warnings.begin(), r.warnings.end());
  if (!r.error.empty()) {
    a.errors.push_back(r.error);
    a.skipped.push_back(name + " (analysis failed)");
    return;
  }
  a.analyzed.push_back(stem);
  merge_parameters(a.params, r.params);
}

// The rows of parameters.csv whose evidence is `file` (every row for ""), where it can be read.
std::vector<Parameter> rows_of_file(const Inputs& in, const AnalyzeOptions& opt,
                                    const std::string& file) {
  const CsvTable* t = in.table(kParametersFile);
  if (!t || opt.parameters_emptied) return {};
  std::vector<std::string> rejected;
  std::vector<Parameter> out;
  try {
    for (auto& p : parameters_from_table(*t, &rejected, nullptr))
      if (file.empty() || evidence_path(p.evidence) == file) out.push_back(std::move(p));
  } catch (const CsvError&) {  // reported where the run-level rows are kept
  }
  return out;
}

// What the run records of each family it measured: families.csv's `ok` rows with their
// observation counts, and the evidence files of parameters.csv's rows (a count unknown: 1).
std::map<std::string, std::string> recorded_families(const Inputs& in, const AnalyzeOptions& opt) {
  std::map<std::string, std::string> out;  // family -> "N" observations, "" when unknown
  if (const CsvTable* fam = in.table(kFamiliesFile)) {
    const int family_col = fam->column("family"), status_col = fam->column("status"),
              count_col = fam->column("observations");
    if (family_col >= 0 && status_col >= 0 && count_col >= 0)
      for (const size_t r : sound_family_rows(*fam))
        if (fam->rows[r][static_cast<size_t>(status_col)] == "ok")
          out[fam->rows[r][static_cast<size_t>(family_col)]] =
              fam->rows[r][static_cast<size_t>(count_col)];
  }
  for (const auto& p : rows_of_file(in, opt, "")) {
    const std::string stem = fs::path(evidence_path(p.evidence)).stem().string();
    if (!is_run_level_file(stem)) out.emplace(stem, "");
  }
  return out;
}

// Each family the run recorded (recorded_families) whose file no longer holds what it did
// (missing, unreadable, cut short): its rows of parameters.csv kept in place of what the file
// gives, an error; with --drop-missing, what the file gives, a warning.
void keep_lost_families(const Inputs& in, const std::map<std::string, size_t>& read,
                        const AnalyzeOptions& opt, RunAnalysis& a) {
  for (const auto& [family, count] : recorded_families(in, opt)) {
    double recorded = 1;
    if (!analyzers().count(family) || (!count.empty() && !parse_number(count, &recorded))) continue;
    const auto it = read.find(family);
    const size_t have = it == read.end() ? 0 : it->second;
    if (recorded <= 0 || static_cast<double>(have) >= recorded) continue;
    const std::string file = family + ".csv";
    const std::string why =
        in.path(file) + ": " +
        (it != read.end() ? "holds " + std::to_string(have) + " observations"
         : in.broken.count(file) || in.tables.count(file) ? std::string("cannot be read")
                                                          : std::string("missing")) +
        (count.empty() ? ", though parameters.csv names it as evidence"
                       : ", though families.csv records " + count + " of " + family);
    if (opt.drop_missing) {
      a.warnings.push_back(why + ": its parameters.csv rows dropped (--drop-missing)");
      continue;
    }
    const std::vector<Parameter> kept = rows_of_file(in, opt, file);
    a.params.erase(
        std::remove_if(a.params.begin(), a.params.end(),
                       [&](const Parameter& p) { return evidence_path(p.evidence) == file; }),
        a.params.end());
    merge_parameters(a.params, kept);
    a.errors.push_back(why + ": its " + std::to_string(kept.size()) +
                       " parameters kept from parameters.csv, not inferred again "
                       "(--drop-missing drops them)");
  }
}

// Each row of parameters.csv whose evidence names a family's file the run does not hold (a
// name mangled or renamed: "divergence.csv" with bytes after it) and that no analyzer gave
// again: nothing can infer it, so it is kept, and that is an error; with --drop-missing it is
// dropped, a warning.
void keep_rows_of_absent_files(const Inputs& in, const AnalyzeOptions& opt, RunAnalysis& a) {
  for (const auto& p : rows_of_file(in, opt, "")) {
    const std::string file = evidence_path(p.evidence);
    const size_t csv = file.rfind(".csv");
    if (csv == std::string::npos || !analyzers().count(file.substr(0, csv)) ||
        in.tables.count(file) || in.broken.count(file))
      continue;
    if (std::any_of(a.params.begin(), a.params.end(),
                    [&](const Parameter& q) { return q.name == p.name; }))
      continue;
    const std::string why = in.path(kParametersFile) + ": " + p.name + ": its evidence '" + file +
                            "' is not in the run";
    if (opt.drop_missing) {
      a.warnings.push_back(why + ": the row dropped (--drop-missing)");
      continue;
    }
    a.params.push_back(p);
    a.errors.push_back(why + ": the row kept, not inferred again (--drop-missing drops it)");
  }
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

namespace {

// families.csv's columns that are free text.
bool is_text_column(const std::string& column) {
  return column == "family" || column == "status" || column == "message" ||
         column == "throttle_reasons";
}

// Why row r of families.csv cannot be trusted, or "".
std::string family_row_fault(const CsvTable& t, size_t r) {
  const auto& row = t.rows[r];
  const std::string where = t.path + ":" + std::to_string(t.row_lines[r]) + ": ";
  if (row.empty() || row[0].empty()) return where + "a row without its family";
  for (size_t c = 0; c < t.header.size() && c < row.size(); ++c) {
    if (is_text_column(t.header[c]) || row[c].empty()) continue;
    double v = 0;
    const bool whole = t.header[c] != "observations" ||
                       row[c].find_first_not_of("0123456789") == std::string::npos;
    if (!parse_number(row[c], &v) || !std::isfinite(v) || v < 0 || !whole)
      return where + "column '" + t.header[c] + "' is '" + row[c] + "', not " +
             (t.header[c] == "observations" ? "a whole number" : "a finite number >= 0") +
             ": row not trusted";
  }
  return "";
}

}  // namespace

std::vector<std::string> families_faults(const CsvTable& families) {
  std::vector<std::string> out;
  for (size_t r = 0; r < families.rows.size(); ++r)
    if (std::string f = family_row_fault(families, r); !f.empty()) out.push_back(std::move(f));
  return out;
}

std::vector<size_t> sound_family_rows(const CsvTable& families) {
  std::vector<size_t> out;
  for (size_t r = 0; r < families.rows.size(); ++r)
    if (family_row_fault(families, r).empty()) out.push_back(r);
  return out;
}

std::string metadata_fault(const std::vector<std::pair<std::string, Metadata>>& files) {
  // Far above any GPU's SM count (an H100 has 132): a larger one is a corrupted header.
  constexpr double kMaxSmCount = 1e5;
  for (const auto& [file, meta] : files)
    for (const auto& [key, value] : meta) {
      if (key != "sm_count" && key != "l2_bytes" && key != "shared_per_sm_bytes" &&
          key != "global_mem_bytes" && key != "sm_clock_mhz")
        continue;
      double v = 0;
      const bool number = parse_number(value, &v) && std::isfinite(v) && v > 0;
      const bool whole = key != "sm_count" || (v == std::floor(v) && v <= kMaxSmCount);
      if (!number || !whole) return file + ": # " + key + "=" + value + ": not a value any GPU has";
    }
  return "";
}

std::string drop_unusable_rows(const CsvTable& t, std::vector<Observation>& obs) {
  std::set<std::string> seen;
  std::vector<Observation> kept;
  int first = 0;
  for (size_t r = 0; r < obs.size(); ++r) {
    std::string key = obs[r].probe + '\n' + obs[r].unit;
    for (const auto& [k, v] : obs[r].params) key += '\n' + k + '=' + v;
    if (seen.insert(key).second && !(obs[r].p05 > obs[r].p95)) {
      kept.push_back(std::move(obs[r]));
    } else if (first == 0) {
      first = r < t.row_lines.size() ? t.row_lines[r] : 0;
    }
  }
  const size_t dropped = obs.size() - kept.size();
  const size_t total = obs.size();
  obs = std::move(kept);
  if (dropped == 0) return "";
  return t.path + ":" + std::to_string(first) + ": " + std::to_string(dropped) + " of " +
         std::to_string(total) +
         " observation rows not used (a row given again, or p05 > p95), the first on this line";
}

std::vector<RunFile> read_run_files(const std::string& dir) {
  std::vector<RunFile> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".csv") continue;
    RunFile f;
    f.name = e.path().filename().string();
    try {
      f.text = read_input_file(e.path().string());
    } catch (const CsvError& err) {
      f.error = err.what();
    }
    files.push_back(std::move(f));
  }
  std::sort(files.begin(), files.end(),
            [](const RunFile& a, const RunFile& b) { return a.name < b.name; });
  return files;
}

Analysis analyze_family_rows(const CsvTable& t, const std::string& family,
                             std::vector<Observation> obs) {
  const size_t all_rows = obs.size();
  const std::string unusable = drop_unusable_rows(t, obs);
  Analysis r = analyze_checked(family, obs, t.meta);
  for (auto& w : r.warnings) w = t.path + ": " + w;
  if (!unusable.empty()) r.warnings.insert(r.warnings.begin(), unusable);
  if (!r.error.empty()) r.error = t.path + ": " + r.error;
  // A parameter inferred from part of its family says so where it is read.
  if (!unusable.empty())
    for (auto& p : r.params)
      p.evidence += "; from " + std::to_string(obs.size()) + " of the " + std::to_string(all_rows) +
                    " rows of " + fs::path(t.path).filename().string() + " (the rest not usable)";
  return r;
}

Analysis analyze_family_text(const std::string& path, const std::string& text,
                             const std::string& family) {
  try {
    const CsvTable t = parse_csv(text, path);
    return analyze_family_rows(t, family, observations_from_table(t));
  } catch (const CsvError& e) {
    Analysis r;
    r.error = e.what();
    return r;
  }
}

RunAnalysis analyze_run_files(const std::string& dir, const std::vector<RunFile>& files,
                              const AnalyzeOptions& opt) {
  const Inputs in = parse_inputs(dir, files);
  RunAnalysis a;
  const std::vector<Parameter> run_level = run_level_parameters(in, opt, a);
  if (const CsvTable* families = in.table(kFamiliesFile))
    for (const auto& fault : families_faults(*families)) a.warnings.push_back(fault);
  if (a.meta.empty())
    if (const CsvTable* families = in.table(kFamiliesFile)) a.meta = families->meta;
  std::map<std::string, size_t> read;
  for (const auto& f : files)
    if (!is_run_level_file(fs::path(f.name).stem().string()))
      analyze_family_file(in, f.name, a, read);
  keep_lost_families(in, read, opt, a);
  keep_rows_of_absent_files(in, opt, a);
  merge_parameters(a.params, run_level);
  const bool quick = std::any_of(files.begin(), files.end(),
                                 [](const RunFile& f) { return f.name == "not_measured.csv"; });
  if (quick) drop_not_quick(a.params);  // a quick run's subset
  set_status_lines(a);
  return a;
}

RunAnalysis analyze_run_dir(const std::string& dir, const AnalyzeOptions& opt) {
  if (const FolderKind kind = folder_kind(dir); kind != FolderKind::run)
    throw std::runtime_error(dir + ": " + folder_kind_name(kind) + ", not a run folder");
  return analyze_run_files(dir, read_run_files(dir), opt);
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

namespace {

// How standard output stands to the run's parameters.csv: another file (0), that file emptied
// by the shell's `>` (1), or that file with its rows still in it, as `>>` leaves it (2).
int stdout_on_parameters(const std::string& path) {
  struct stat out {
  }, file{};
  if (::fstat(1, &out) != 0 || ::stat(path.c_str(), &file) != 0) return 0;
  if (out.st_dev != file.st_dev || out.st_ino != file.st_ino) return 0;
  return file.st_size == 0 ? 1 : 2;
}

}  // namespace

int analyze_main(const Options& opt) {
  const std::string prefix = "gpuprobe analyze";
  const std::string& dir = opt.positional.at(0);
  const std::string out = (fs::path(dir) / kParametersFile).string();
  RunAnalysis a;
  try {
    const int on_parameters = opt.to_stdout ? stdout_on_parameters(out) : 0;
    if (on_parameters == 2)
      throw std::runtime_error("standard output is " + out +
                               " itself: not appended to ('gpuprobe analyze " + dir +
                               "' writes it in place)");
    AnalyzeOptions ao;
    ao.parameters_emptied = on_parameters == 1;
    ao.drop_missing = opt.drop_missing;
    a = analyze_run_dir(dir, ao);
    if (opt.to_stdout) {
      std::fputs(format_run_analysis(a).c_str(), stdout);
    } else {
      write_file_atomic(out, format_run_analysis(a), RunFileRights::parameters);
      std::printf("%s written: %zu parameters from %zu families (%s); skipped: %s\n", out.c_str(),
                  a.params.size(), a.analyzed.size(), joined(a.analyzed).c_str(),
                  joined(a.skipped).c_str());
    }
    if (!opt.json_nvbandwidth.empty()) write_nvbandwidth_json(dir, opt.json_nvbandwidth);
  } catch (const std::exception& e) {
    print_messages(prefix, {}, {e.what()}, opt.verbose);
    return 1;
  }
  print_messages(prefix, a.warnings, a.errors, opt.verbose);
  return checked_stdout(prefix, a.errors.empty() ? 0 : 1);
}

}  // namespace gpuprobe
