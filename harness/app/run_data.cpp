// Reading a run directory without trusting it: its parameters, its observation files, and
// what each says about the GPU (app/report.hpp: load_run, run_labels).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>

#include "analysis/analyzer.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/probe.hpp"
#include "app/report.hpp"
#include "app/report_detail.hpp"
#include "app/run_analysis.hpp"
#include "base/run_dir.hpp"

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

// Line of the header row (the first line that is neither blank nor '#'), for messages about it.
int header_line(const std::string& text) {
  int line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    ++line;
    size_t nl = text.find('\n', pos);
    std::string l = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (!l.empty() && l != "\r" && l[0] != '#') return line;
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return line;
}

int count_lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n')) +
         (text.empty() || text.back() == '\n' ? 0 : 1);
}

std::string figure_label(const std::string& gpu) {
  std::string out;
  for (char c : gpu) out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '-';
  return out;
}

}  // namespace

bool read_table(const std::string& path, CsvTable* t, Diagnostics& diag, bool rows_expected) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    diag.error(path + ": cannot read (" + e.what() + ")");
    return false;
  }
  if (!text.empty() && text.back() != '\n')
    diag.warn(path + ":" + std::to_string(count_lines(text)) +
              ": last line does not end in a newline (truncated file?)");
  try {
    *t = parse_csv(text, path);
  } catch (const CsvError& e) {
    diag.error(e.what());
    return false;
  }
  if (!rows_expected || t->header.empty() || t->header[0] != "family" || !t->rows.empty()) return true;
  diag.warn(path + ":" + std::to_string(header_line(text)) + ": header only, no rows");
  return true;
}

std::set<std::string> known_families(const std::vector<FigureScript>& scripts) {
  std::set<std::string> k;
  for (const auto& f : probe_families()) k.insert(f->name());
  for (const auto& [name, fn] : analyzers()) k.insert(name);
  for (const auto& s : scripts) k.insert(s.family);
  return k;
}

std::string RunData::file_of(const std::string& family) const {
  for (const auto& [f, path] : families)
    if (f == family) return path;
  return "";
}

std::string RunData::meta_value(const std::string& key) const {
  for (const auto& [k, v] : meta)
    if (k == key) return v;
  return "";
}

namespace {

// RUN_DIR/parameters.csv into `run`; false when it is missing or cannot be read.
bool read_run_parameters(RunData& run, Diagnostics& diag) {
  run.params_path = (fs::path(run.dir) / "parameters.csv").string();
  if (!fs::exists(run.params_path)) return false;
  CsvTable t;
  if (!read_table(run.params_path, &t, diag)) return false;
  run.meta = t.meta;
  try {
    std::vector<std::string> rejected;
    run.params = parameters_from_table(t, &rejected, &run.param_lines);
    for (const auto& r : rejected) diag.error(r);  // edited or corrupted: said, and left out
    return true;
  } catch (const CsvError& e) {
    diag.error(e.what());
    return false;
  }
}

// The files of one run name one GPU (their metadata); throws, one line, when they do not.
void check_one_gpu(const RunData& run,
                   const std::vector<std::pair<std::string, Metadata>>& family_meta) {
  std::vector<std::pair<std::string, Metadata>> metas = family_meta;
  if (fs::exists(run.params_path)) metas.emplace_back("parameters.csv", run.meta);
  try {
    const fs::path families = fs::path(run.dir) / "families.csv";
    if (fs::exists(families)) metas.emplace_back("families.csv", read_csv(families.string()).meta);
  } catch (const CsvError&) {  // reported where families.csv is read for its rows
  }
  if (const std::string fault = metadata_fault(metas); !fault.empty())
    throw std::runtime_error((fs::path(run.dir) / fault).string() + ": not read");
  if (const std::string conflict = identity_conflict(metas); !conflict.empty())
    throw std::runtime_error(run.dir + ": " + conflict + ": not read");
}

// One observations file, or nothing after saying why: not one, malformed, or holding another
// family's rows.
std::optional<std::vector<Observation>> read_family_file(const std::string& path, const std::string& stem,
                                                         CsvTable& t, Diagnostics& diag) {
  if (!read_table(path, &t, diag)) return std::nullopt;
  if (t.header.size() < 2 || t.header[0] != "family" || t.header[1] != "probe") {
    diag.warn(path + ":" + std::to_string(header_line(read_file(path))) +
              ": not an observations file (its header does not begin 'family,probe'): ignored");
    return std::nullopt;
  }
  std::vector<Observation> obs;
  try {
    obs = observations_from_table(t);
  } catch (const CsvError& e) {
    std::string m = e.what();
    // The reader names the file; the header is where an observations file goes wrong.
    if (m.rfind(path + ": not an observations file", 0) == 0)
      m = path + ":" + std::to_string(header_line(read_file(path))) + m.substr(path.size());
    diag.error(m);
    return std::nullopt;
  }
  for (size_t r = 0; r < obs.size(); ++r) {
    if (obs[r].family == stem) continue;
    diag.error(path + ":" + std::to_string(t.row_lines[r]) + ": family '" + obs[r].family +
               "' in a file named " + stem + ".csv");
    return std::nullopt;
  }
  if (const std::string unusable = drop_unusable_rows(t, obs); !unusable.empty())
    diag.warn(unusable);
  return obs;
}

using FamilyObservations = std::vector<std::pair<std::string, std::vector<Observation>>>;

// Every family file of the run that reads cleanly, into run.families; the metadata of the first.
FamilyObservations read_family_files(RunData& run, const std::set<std::string>& known,
                                     std::vector<std::pair<std::string, Metadata>>* metas,
                                     Diagnostics& diag) {
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(run.dir, ec))
    if (e.path().extension() == ".csv") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  FamilyObservations observed;
  for (const auto& path : files) {
    std::string stem = fs::path(path).stem().string();
    if (is_run_level_file(stem)) continue;
    CsvTable t;
    auto obs = read_family_file(path, stem, t, diag);
    if (!obs) continue;
    if (!known.count(stem))
      diag.warn(path + ": unknown family '" + stem +
                "' (no probe family, analyzer or figure script of this gpuprobe knows it): "
                "kept, not drawn");
    metas->emplace_back(fs::path(path).filename().string(), t.meta);
    run.families.emplace_back(stem, path);
    observed.emplace_back(stem, std::move(*obs));
  }
  return observed;
}

// The run's GPU, compute capability and format, each from its metadata, with a note where
// one is missing; evidence files the parameters name that the run lacks.
void check_run_identity(RunData& run, Diagnostics& diag) {
  const std::string& dir = run.dir;
  run.gpu = run.meta_value("gpu");
  if (run.gpu.empty()) {
    run.gpu = fs::path(dir).lexically_normal().filename().string();
    if (run.gpu.empty()) run.gpu = fs::path(dir).lexically_normal().parent_path().filename().string();
    diag.warn(dir + ": no '# gpu=' metadata: labelled '" + run.gpu + "'");
  }
  std::string cc = run.meta_value("compute_capability");
  if (std::sscanf(cc.c_str(), "%d.%d", &run.cc_major, &run.cc_minor) != 2) {
    run.cc_major = run.cc_minor = 0;
    if (!run.meta.empty())
      diag.warn(dir + ": no '# compute_capability=' metadata: documented figures matched by name only");
  }
  std::string version = run.meta_value("gpuprobe_version");
  if (version.empty() && !run.meta.empty())
    diag.warn(dir + ": no '# gpuprobe_version=' metadata (written by an older gpuprobe?): read "
              "as the current format");
  for (size_t i = 0; i < run.params.size(); ++i) {
    const std::string ev = evidence_path(run.params[i].evidence);
    if (!ev.empty() && run.param_lines[i] > 0 && !fs::exists(fs::path(dir) / ev))
      diag.warn(run.params_path + ":" + std::to_string(run.param_lines[i]) + ": evidence '" + ev +
                "' is not in the run");
  }
}

}  // namespace

RunData load_run(const std::string& dir, const std::set<std::string>& known, Diagnostics& diag) {
  if (const FolderKind kind = folder_kind(dir); kind != FolderKind::run)
    throw std::runtime_error(dir + ": " + folder_kind_name(kind) + ", not a run folder");
  RunData run;
  run.dir = dir;
  const bool have_params = read_run_parameters(run, diag);
  std::vector<std::pair<std::string, Metadata>> family_meta;
  FamilyObservations observed = read_family_files(run, known, &family_meta, diag);
  check_one_gpu(run, family_meta);
  if (run.meta.empty() && !family_meta.empty()) run.meta = family_meta.front().second;

  if (!have_params && !fs::exists(run.params_path)) {
    diag.warn(run.params_path + ": missing (an older or interrupted run): parameters inferred "
              "again from the observations with this gpuprobe's analyzers");
    // The one path `analyze` takes (app/run_analysis.hpp), its warnings and errors as they are.
    RunAnalysis a = analyze_run_dir(dir);
    for (const auto& w : a.warnings) diag.warn(w);
    for (const auto& e : a.errors) diag.error(e);
    merge_parameters(run.params, a.params);
    run.param_lines.assign(run.params.size(), 0);
  }
  check_run_identity(run, diag);
  return run;
}

std::vector<std::string> run_labels(const std::vector<RunData>& runs) {
  // The model token ("H100") where it tells the runs apart; the whole name, then the run-id
  // where it does not.
  auto model = [](const std::string& gpu) {
    std::string cur, best;
    for (size_t i = 0; i <= gpu.size(); ++i) {
      char c = i < gpu.size() ? gpu[i] : ' ';
      if (std::isalnum(static_cast<unsigned char>(c))) {
        cur += c;
        continue;
      }
      bool digit = std::any_of(cur.begin(), cur.end(), [](char d) { return std::isdigit(static_cast<unsigned char>(d)); });
      bool size = cur.size() > 2 && (cur.substr(cur.size() - 2) == "GB" || cur.substr(cur.size() - 2) == "gb");
      if (best.empty() && digit && !size) best = cur;
      cur.clear();
    }
    return best.empty() ? gpu : best;
  };
  std::vector<std::string> labels;
  for (const auto& r : runs) labels.push_back(figure_label(model(r.gpu)));
  auto unique = [&]() {
    std::set<std::string> s(labels.begin(), labels.end());
    return s.size() == labels.size();
  };
  if (!unique()) {
    labels.clear();
    for (const auto& r : runs) labels.push_back(figure_label(r.gpu));
  }
  if (!unique()) {
    for (size_t i = 0; i < runs.size(); ++i) {
      std::string id = runs[i].meta_value("run_id");
      labels[i] += "-" + (id.empty() ? std::to_string(i + 1) : figure_label(id));
    }
  }
  return labels;
}

}  // namespace gpuprobe
