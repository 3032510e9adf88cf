#include "core/report.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/analyzer.hpp"
#include "core/cli.hpp"
#include "core/cli_parse.hpp"
#include "core/csv.hpp"
#include "core/data_paths.hpp"
#include "core/probe.hpp"
#include "core/run_analysis.hpp"
#include "core/run_dir.hpp"
#include "core/signals.hpp"
#include "core/summary.hpp"

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

const char* const kFormats[] = {"svg", "png", "pdf"};
constexpr int kGnuplotTimeoutS = 120;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string find_on_path(const std::string& exe) {
  if (exe.find('/') != std::string::npos) return access(exe.c_str(), X_OK) == 0 ? exe : "";
  std::string path = env_or("PATH", "/usr/bin:/bin");
  size_t start = 0;
  while (start <= path.size()) {
    size_t colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + exe;
    if (access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

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

// Reads and parses one CSV file; records the error and returns false when it cannot. A
// header without rows is worth a warning for observations, not for a list that is normally
// empty (invalid.csv).
bool read_table(const std::string& path, CsvTable* t, Diagnostics& diag, bool rows_expected = true) {
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

std::string trim_copy(const std::string& s) {
  size_t b = s.find_first_not_of(' ');
  size_t e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}


std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out;
}

// Runs argv in `cwd` with stdout and stderr into `log`; returns the exit status, or -1 when
// it could not start or ran past the timeout (then it is killed).
int run_process(const std::vector<std::string>& argv, const std::string& cwd,
                const std::string& log, int timeout_s) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    // gnuplot ends with us, even when we are killed outright.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
    int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int in = open("/dev/null", O_RDONLY);
    if (out < 0 || in < 0 || chdir(cwd.c_str()) != 0) _exit(127);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0) return -1;
    if (std::chrono::steady_clock::now() > deadline || stop_signal()) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// gnuplot's own messages, one per line, without blank lines.
std::vector<std::string> log_lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line))
    if (!trim_copy(line).empty()) out.push_back(trim_copy(line));
  return out;
}

// A temporary directory, unique to this process and call (mkdtemp), that removes itself on
// every way out: return, exception, and a stop signal (the loops look at it and return).
struct Staging {
  fs::path dir;
  explicit Staging(const fs::path& parent = fs::temp_directory_path(),
                   const std::string& prefix = "gpuprobe-render-") {
    std::string tmpl = (parent / (prefix + "XXXXXX")).string();
    if (!mkdtemp(tmpl.data()))
      throw std::runtime_error("cannot create a temporary directory in " + parent.string() +
                               ": " + std::strerror(errno));
    dir = tmpl;
  }
  ~Staging() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
};

std::string figure_label(const std::string& gpu) {
  std::string out;
  for (char c : gpu) out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '-';
  return out;
}

}  // namespace

void Diagnostics::warn(const std::string& m) { warnings.push_back(m); }

void Diagnostics::error(const std::string& m) { errors.push_back(m); }

void Diagnostics::print(const std::string& listed_in) const {
  print_messages(prefix, warnings, errors, false, "all listed in " + listed_in);
}

ReportPaths resolve_paths(const std::string& plots, const std::string& reference) {
  DataPaths found = find_data_paths();
  const char* source = std::getenv("GPUPROBE_SOURCE_DIR");
  if (source && *source)
    found = {std::string(source) + "/plots", std::string(source) + "/results/reference/documented_figures.csv"};
  ReportPaths p;
  p.plots_dir = !plots.empty() ? plots
                               : env_or("GPUPROBE_PLOTS_DIR", found.plots_dir.empty() ? "plots" : found.plots_dir);
  p.reference = !reference.empty() ? reference
                                   : env_or("GPUPROBE_REFERENCE", found.reference.empty()
                                                                      ? "results/reference/documented_figures.csv"
                                                                      : found.reference);
  p.gnuplot = find_on_path(env_or("GNUPLOT", "gnuplot"));
  return p;
}

void add_path_options(CLI::App& app, std::string* plots, std::string* reference) {
  app.add_option("--plots", *plots, "the figure scripts (default: GPUPROBE_PLOTS_DIR, else plots/ of this gpuprobe)")
      ->type_name("DIR")
      ->check(non_empty());
  app.add_option("--reference", *reference,
                 "documented figures (default: GPUPROBE_REFERENCE, else results/reference/documented_figures.csv)")
      ->type_name("CSV")
      ->check(non_empty());
}

std::vector<FigureScript> figure_scripts(const std::string& plots_dir, Diagnostics& diag) {
  std::vector<FigureScript> out;
  std::error_code ec;
  if (!fs::is_directory(plots_dir, ec)) {
    diag.error(plots_dir + ": no such plots directory (set --plots DIR or GPUPROBE_PLOTS_DIR)");
    return out;
  }
  for (const auto& e : fs::directory_iterator(plots_dir, ec)) {
    if (e.path().extension() != ".gp") continue;
    FigureScript s;
    s.name = e.path().stem().string();
    s.path = e.path().string();
    std::ifstream f(s.path);
    std::string line;
    for (int i = 0; i < 4 && std::getline(f, line); ++i) {
      if (line.rfind("# family:", 0) == 0) s.family = trim_copy(line.substr(9));
      if (line.rfind("# title:", 0) == 0) s.title = trim_copy(line.substr(8));
      if (line.rfind("# read:", 0) == 0) s.read = trim_copy(line.substr(7));
    }
    if (s.family.empty()) continue;
    if (s.title.empty()) s.title = s.name;
    out.push_back(s);
  }
  std::sort(out.begin(), out.end(),
            [](const FigureScript& a, const FigureScript& b) { return a.name < b.name; });
  return out;
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
    run.params = parameters_from_table(t);
    run.param_lines = t.row_lines;
    return true;
  } catch (const CsvError& e) {
    diag.error(e.what());
    return false;
  }
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
  return obs;
}

using FamilyObservations = std::vector<std::pair<std::string, std::vector<Observation>>>;

// Every family file of the run that reads cleanly, into run.families; the metadata of the first.
FamilyObservations read_family_files(RunData& run, const std::set<std::string>& known, Metadata* first_meta,
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
    if (first_meta->empty()) *first_meta = t.meta;
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
    const std::string& ev = run.params[i].evidence;
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
  Metadata first_meta;
  FamilyObservations observed = read_family_files(run, known, &first_meta, diag);
  if (run.meta.empty()) run.meta = first_meta;

  if (!have_params && !fs::exists(run.params_path)) {
    diag.warn(run.params_path + ": missing (an older or interrupted run): parameters inferred "
              "again from the observations with this gpuprobe's analyzers");
    for (const auto& [family, obs] : observed) {
      Analysis a = analyze_checked(family, obs, run.meta);
      for (const auto& w : a.warnings) diag.warn(w);
      if (!a.error.empty()) diag.error(a.error);
      merge_parameters(run.params, a.params);
    }
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

std::vector<std::string> render_figure(const ReportPaths& paths, const FigureScript& script,
                                       const std::vector<std::string>& files,
                                       const std::vector<std::string>& labels,
                                       const std::string& out_dir, Diagnostics& diag) {
  if (paths.gnuplot.empty() || files.empty()) return {};
  try {
    // gnuplot reads `files` as space-separated words and the scripts load 'plots/style.gp':
    // a staging directory of links gives every path a safe name relative to one place.
    Staging st;
    fs::create_directory(st.dir / "in");
    fs::create_directory(st.dir / "out");
    fs::create_directory_symlink(fs::absolute(paths.plots_dir), st.dir / "plots");
    std::string words, label_words, param_words;
    for (size_t i = 0; i < files.size(); ++i) {
      std::string name = "in/" + std::to_string(i + 1) + ".csv";
      fs::create_symlink(fs::absolute(files[i]), st.dir / name);
      words += (i ? " " : "") + name;
      label_words += (i ? " " : "") + labels.at(i);
      // The run's inferred parameters, for the figures to mark them ('-': none).
      fs::path params = fs::path(files[i]).parent_path() / "parameters.csv";
      std::string pname = "-";
      if (fs::exists(params)) {
        pname = "in/" + std::to_string(i + 1) + ".parameters.csv";
        fs::create_symlink(fs::absolute(params), st.dir / pname);
      }
      param_words += (i ? " " : "") + pname;
    }
    if (fs::exists(paths.reference)) {
      fs::create_symlink(fs::absolute(paths.reference), st.dir / "ref.csv");
    } else {
      // No documented figures: a reference whose one row matches no quantity keeps the
      // scripts' reference lookups valid, and draws no reference mark.
      std::ofstream(st.dir / "ref.csv") << "arch,gpu,cc,quantity,value,unit,method_note,source\n"
                                        << "none,none,0.0,none,0,none,none,none\n";
    }
    std::string expr = "files='" + words + "'; labels='" + label_words + "'; params='" + param_words +
                       "'; ref='ref.csv'; out='out/" + script.name + "'" +
                       (paths.style.empty() ? "" : "; style='" + paths.style + "'");
    std::string log = (st.dir / "gnuplot.log").string();
    int rc = run_process({paths.gnuplot, "-e", expr, "plots/" + script.name + ".gp"},
                         st.dir.string(), log, kGnuplotTimeoutS);
    std::vector<std::string> lines = log_lines(log);
    std::vector<std::string> missing, written;
    for (const char* ext : kFormats) {
      fs::path f = st.dir / "out" / (script.name + "." + ext);
      std::error_code ec;
      if (!fs::exists(f) || fs::file_size(f, ec) == 0) missing.push_back(ext);
    }
    if (rc != 0 || !missing.empty()) {
      std::string why = rc == -1 ? "did not finish within " + std::to_string(kGnuplotTimeoutS) + " s"
                                 : "exited with status " + std::to_string(rc);
      if (rc == 0) why = "wrote no " + missing.front() + " output";
      std::string detail;
      for (size_t i = 0; i < lines.size() && i < 3; ++i) detail += (i ? " / " : "") + lines[i];
      diag.error(script.path + ": gnuplot " + why + (detail.empty() ? "" : ": " + detail));
      return {};
    }
    for (const auto& l : lines) diag.warn(script.path + ": gnuplot: " + l);
    fs::create_directories(out_dir);
    for (const char* ext : kFormats) {
      std::string name = script.name + "." + ext;
      fs::path tmp = fs::path(out_dir) / ("." + name + ".tmp");
      fs::copy_file(st.dir / "out" / name, tmp, fs::copy_options::overwrite_existing);
      fs::rename(tmp, fs::path(out_dir) / name);
      written.push_back(name);
    }
    return written;
  } catch (const std::exception& e) {
    diag.error(script.path + ": cannot render into " + out_dir + ": " + e.what());
    return {};
  }
}

Reference load_reference_or_report(const std::string& path, Diagnostics& diag) {
  try {
    return load_reference(path);
  } catch (const std::exception& e) {
    diag.error(std::string(e.what()) + " (documented figures left out)");
    Reference empty;
    empty.path = path;
    return empty;
  }
}

std::string human(double value, const std::string& unit) {
  return trim_copy(human_value(value, unit));
}

std::string documented_cell(const DocumentedFigure& doc) {
  return describe(doc) + " [r" + std::to_string(doc.line) + "]";
}

bool units_agree(const RunData& run, size_t index, const DocumentedFigure& doc,
                 const std::string& reference_path, Diagnostics& diag) {
  const Parameter& p = run.params.at(index);
  if (same_unit(p.unit, doc.unit)) return true;
  int line = index < run.param_lines.size() ? run.param_lines[index] : 0;
  diag.warn(run.params_path + (line ? ":" + std::to_string(line) : "") + ": " + p.name + " in '" +
            p.unit + "' but the documented figure (" + reference_path + ":" +
            std::to_string(doc.line) + ") is in '" + doc.unit + "': not compared");
  return false;
}

std::string markdown_table(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "|";
    for (const auto& c : rows[r]) out += " " + md_escape(c) + " |";
    out += "\n";
    if (r == 0) {
      out += "|";
      for (size_t c = 0; c < rows[0].size(); ++c) out += " --- |";
      out += "\n";
    }
  }
  return out;
}

std::string figure_markdown(const FigureScript& s, const std::string& rel_dir) {
  std::string base = rel_dir + "/" + s.name;
  return "### " + s.title + "\n\n" + (s.read.empty() ? "" : s.read + "\n\n") + "![" + s.name + "](" +
         base + ".svg)\n\n";
}

std::string messages_markdown(const Diagnostics& diag, const std::string& dir) {
  if (diag.warnings.empty() && diag.errors.empty()) return "";
  std::string out = "## Messages\n\n";
  for (const auto& e : diag.errors) out += "- error: " + md_escape(relative_text(e, dir)) + "\n";
  for (const auto& w : diag.warnings) out += "- warning: " + md_escape(relative_text(w, dir)) + "\n";
  return out + "\n";
}

const Parameter* first_present(const RunData& run, const QuantityRow& row, size_t* index) {
  for (const char* n : row.names)
    for (size_t i = 0; i < run.params.size(); ++i)
      if (run.params[i].name == n) {
        if (index) *index = i;
        return &run.params[i];
      }
  return nullptr;
}

std::string family_of(const Parameter& p) {
  std::string stem = fs::path(p.evidence).stem().string();
  return stem.empty() || stem == "families" ? "run" : stem;
}

std::string relative_text(const std::string& text, const std::string& run_dir) {
  // The run's own files by their names; any other absolute path by ".../" and its last part.
  std::string out = text;
  if (!run_dir.empty()) {
    std::string prefix = fs::path(run_dir).lexically_normal().string();
    if (!prefix.empty() && prefix.back() != '/') prefix += '/';
    for (const std::string& p : {prefix, fs::absolute(run_dir).lexically_normal().string() + "/"}) {
      if (p.size() < 2) continue;
      for (size_t at; (at = out.find(p)) != std::string::npos;) out.erase(at, p.size());
    }
  }
  std::string result;
  for (size_t i = 0; i < out.size();) {
    bool starts = out[i] == '/' && (i == 0 || std::strchr(" `'\"(=:,", out[i - 1])) &&
                  i + 1 < out.size() && std::isalnum(static_cast<unsigned char>(out[i + 1]));
    if (!starts) {
      result += out[i++];
      continue;
    }
    size_t end = out.find_first_of(" `'\"),:", i);
    if (end == std::string::npos) end = out.size();
    std::string path = out.substr(i, end - i);
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    result += ".../" + fs::path(path).filename().string();
    i = end;
  }
  return result;
}

std::string documented_figure_cell(const Parameter& p, const DocumentedFigure& doc) {
  // Until the reference carries each figure's method: the ratio where the units agree.
  std::string cell = describe(doc);
  if (same_unit(p.unit, doc.unit) && cell.size() > p.unit.size() + 1 &&
      cell.compare(cell.size() - p.unit.size() - 1, std::string::npos, " " + p.unit) == 0)
    cell.resize(cell.size() - p.unit.size() - 1);  // the unit is the value's, shown beside it
  std::string ratio = versus_documented(p, doc);
  return ratio.empty() ? cell : cell + " (" + ratio + ")";
}

namespace {

// A table of the run as markdown, its rows chosen by `keep` (all when empty); "" when no row
// is left.
std::string markdown_of(const CsvTable& t,
                        const std::function<bool(const std::vector<std::string>&)>& keep = {}) {
  std::vector<std::vector<std::string>> rows = {t.header};
  for (const auto& r : t.rows)
    if (!keep || keep(r)) rows.push_back(r);
  return rows.size() > 1 ? markdown_table(rows) : "";
}

// A CSV of the run (invalid.csv, skipped.csv) as a markdown table, or "" when absent or empty.
std::string table_of(const std::string& path, Diagnostics& diag) {
  if (!fs::exists(path)) return "";
  CsvTable t;
  if (!read_table(path, &t, diag, false)) return "";
  return markdown_of(t);
}

// "126.8–126.9" in the value's unit (written once, in the value cell); "-" for a point.
std::string interval_text(const Parameter& p) {
  std::string lo = human(p.low, p.unit), hi = human(p.high, p.unit);
  if (lo == hi) return "-";
  size_t a = lo.rfind(' '), b = hi.rfind(' ');
  if (a != std::string::npos && b != std::string::npos && lo.substr(a) == hi.substr(b)) {
    lo.resize(a);
    if (hi.substr(b + 1) == p.unit) hi.resize(b);  // KiB, MiB stay: the value's scale may differ
  }
  return lo + "–" + hi;
}

// A source up to its first ';' (the others are in methods.md), at most kSourceMax characters.
constexpr size_t kSourceMax = 110;
std::string short_source(const std::string& source) {
  std::string s = source.substr(0, source.find(';'));
  if (s.size() <= kSourceMax) return s;
  size_t cut = s.rfind(' ', kSourceMax - 3);
  return s.substr(0, cut == std::string::npos ? kSourceMax - 3 : cut) + "...";
}

// Documented-figure cells cite their source by number ("[2]"); the sources are listed once.
struct Documenting {
  const RunData& run;
  const Reference& ref;
  Diagnostics& diag;
  std::set<int> cited;               // reference lines
  std::vector<std::string> sources;  // in order of first citation
  std::string cite(const DocumentedFigure& d) {
    cited.insert(d.line);
    // By the short form shown: sources that differ only past it are one entry.
    const std::string shown = short_source(d.source);
    auto it = std::find(sources.begin(), sources.end(), shown);
    if (it == sources.end()) it = sources.insert(sources.end(), shown);
    return "[" + std::to_string(it - sources.begin() + 1) + "]";
  }
  // The figure documented for this GPU; "-" when none.
  std::map<size_t, std::string> mine_cells;  // each warned about once
  std::string this_gpu(size_t index) {
    if (auto it = mine_cells.find(index); it != mine_cells.end()) return it->second;
    const Parameter& p = run.params[index];
    auto mine = documented_for_gpu(ref, p.name, run.gpu, run.cc_major, run.cc_minor);
    std::string& cell = mine_cells[index];
    if (!mine) cell = "-";
    else if (!units_agree(run, index, *mine, fs::path(ref.path).filename().string(), diag))
      cell = describe(*mine) + " " + cite(*mine);
    else cell = documented_figure_cell(p, *mine) + " " + cite(*mine);
    return cell;
  }
  // The figure documented for the representative part of `a`, for methods.md.
  std::string arch(size_t index, const std::string& a) {
    const Parameter& p = run.params[index];
    auto d = documented_for_arch(ref, p.name, a);
    if (!d) return "-";
    cited.insert(d->line);
    std::string line = " [line " + std::to_string(d->line) + "]";
    bool agree = units_agree(run, index, *d, fs::path(ref.path).filename().string(), diag);
    return (agree ? documented_figure_cell(p, *d) : describe(*d)) + line;
  }
};

// The headline: what a reader of a GPU characterisation looks for first.
// A parameter's method label (core/reference), "-" where it has none.
std::string shown_label(const Parameter& p) {
  std::string l = method_label(p);
  return l.empty() ? "-" : l;
}

const std::vector<QuantityRow>& headline_rows() {
  static const std::vector<QuantityRow> rows = {
      {"SM clock (measured)", {"sm_clock_measured"}},
      {"L1 hit latency", {"l1_hit_latency"}},
      {"L1 size", {"l1_size"}},
      {"L2 hit latency", {"l2_hit_latency", "l2_near_hit_latency"}},
      {"L2 hit latency, far partition", {"l2_far_hit_latency"}},
      {"L2 size", {"l2_size"}},
      {"DRAM latency", {"dram_latency"}},
      {"DRAM read bandwidth", {"dram_read_bandwidth"}},
      {"fp32 FMA rate", {"fp32_fma_throughput_per_sm"}},
      {"fp64 FMA rate", {"fp64_fma_throughput_per_sm"}},
      {"shared memory banks", {"shared_banks"}},
      {"shared memory bank width", {"shared_bank_width"}},
      {"bytes in flight per SM for 90 % of DRAM peak", {"dram_bytes_in_flight_90pct"}},
  };
  return rows;
}


}  // namespace

namespace {

// The figures of one run, drawn into its figure folder, or listed with why they were not.
struct DrawnFigures {
  std::string dir;  // relative to the run: figures, or figures/paper
  std::string markdown;
  std::vector<std::vector<std::string>> not_drawn = {{"figure", "why not drawn"}};
  std::map<std::string, std::vector<const FigureScript*>> of_family;
};

// Draws every figure of `run`; false when a stop signal cut it short (nothing replaced then).
bool draw_figures(const ReportPaths& paths, const std::vector<FigureScript>& scripts, const RunData& run,
                  const std::string& style, DrawnFigures& fig, Diagnostics& diag) {
  const bool paper = style == "paper";
  fig.dir = paper ? "figures/paper" : "figures";
  ReportPaths fig_paths = paths;
  if (paper) fig_paths.style = "paper";
  std::vector<std::string> labels = run_labels({run});
  // Rendered beside the figure folder (same file system) and swapped in whole: a reader, or a
  // concurrent report, sees the old figures or the new ones, never a mix or stale ones.
  const fs::path fig_path = fs::path(run.dir) / fig.dir;
  fs::create_directories(fig_path.parent_path());
  std::optional<Staging> staged;
  if (!paths.gnuplot.empty()) staged.emplace(fig_path.parent_path(), ".figures.tmp-");
  for (const auto& s : scripts) {
    if (stop_signal()) break;
    std::string csv = run.file_of(s.family);
    if (csv.empty()) {
      fig.not_drawn.push_back({s.name, "no " + s.family + ".csv in this run"});
      continue;
    }
    if (paths.gnuplot.empty()) {
      fig.not_drawn.push_back({s.name, "gnuplot not found"});
      continue;
    }
    Diagnostics fig_diag;
    fig_diag.prefix = diag.prefix;
    auto written = render_figure(fig_paths, s, {csv}, labels, staged->dir.string(), fig_diag);
    for (const auto& w : fig_diag.warnings) diag.warnings.push_back(w);
    if (written.empty()) {
      // A run without the probe a figure needs (an older run, a filtered one, another
      // vendor) leaves that figure out: a note, not a failure.
      std::string why = fig_diag.errors.empty() ? "gnuplot wrote nothing" : fig_diag.errors.front();
      fig.not_drawn.push_back({s.name, relative_text(why, run.dir)});
      diag.warnings.push_back(s.name + " not drawn: " + why);
      continue;
    }
    fig.markdown += figure_markdown(s, fig.dir);
    fig.of_family[s.family].push_back(&s);
  }
  if (stop_signal()) return false;
  if (staged) {
    fs::permissions(staged->dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                     fs::perms::others_read | fs::perms::others_exec);
    replace_dir(staged->dir.string(), fig_path.string());
  }
  return true;
}

// families.csv, read (and any fault in it reported) once. A family it accounts for
// (unsupported on this GPU, failed) is no surprise when its CSV is missing.
CsvTable read_families(const RunData& run, const std::set<std::string>& known, Diagnostics& diag) {
  CsvTable families;
  const std::string families_csv = (fs::path(run.dir) / "families.csv").string();
  if (fs::exists(families_csv)) read_table(families_csv, &families, diag, false);
  std::set<std::string> accounted;
  for (const auto& row : families.rows)
    if (!row.empty()) accounted.insert(row[0]);
  for (const auto& family : known)
    if (!fs::exists(fs::path(run.dir) / (family + ".csv")) && !accounted.count(family))
      diag.warn(run.dir + ": no " + family + ".csv: family '" + family + "' missing from this run");
  return families;
}

std::string report_intro(const RunData& run) {
  std::string md = "# gpuprobe report: " + run.gpu + "\n\n";
  std::string id = run.meta_value("run_id");
  std::string version = run.meta_value("gpuprobe_version");
  md += "Run " + (id.empty() ? std::string("(no run-id)") : "`" + id + "`") + " (gpuprobe " +
        (version.empty() ? "unknown" : version) + "), reported by gpuprobe " + GPUPROBE_VERSION +
        " from its CSV files. Methods in full: [methods.md](methods.md). Documented figures: "
        "(xR) is measured / documented, [N] their source. Metadata at the end.\n\n";
  const std::string status = run.meta_value("run_status");
  if (status == "running" || status == "interrupted")
    md += "**Incomplete run** (run_status=" + status +
          (run.meta_value("interrupted").empty() ? "" : ", " + run.meta_value("interrupted")) +
          "): the families after that point were not measured.\n\n";
  return md;
}

std::string headline_markdown(const RunData& run, Documenting& doc) {
  std::vector<std::vector<std::string>> head = {{"quantity", "value", "interval", "conf.", "documented (this GPU)"}};
  for (const auto& h : headline_rows()) {
    size_t index = 0;
    const Parameter* p = first_present(run, h, &index);
    if (!p) {
      head.push_back({h.label, "not measured", "", "", ""});
      continue;
    }
    head.push_back({std::string(h.label) + " (`" + p->name + "`)", human(p->value, p->unit), interval_text(*p),
                    format_printf("%.2f", p->confidence), doc.this_gpu(index)});
  }
  if (std::string mem = run.meta_value("global_mem_bytes"); !mem.empty()) {
    double bytes = std::strtod(mem.c_str(), nullptr);
    head.push_back({"DRAM size (device attribute, not measured)", human(bytes, "bytes"), "", "", ""});
  }
  return "## Headline\n\n" + markdown_table(head) + "\n";
}

// One family's table in report.md, and its methods and older architectures' figures in
// methods.md (appended to `methods`).
std::string family_markdown(const std::string& family, const RunData& run, Documenting& doc,
                            const DrawnFigures& fig, std::string& methods) {
  std::vector<size_t> members;
  for (size_t i = 0; i < run.params.size(); ++i)
    if (family_of(run.params[i]) == family) members.push_back(i);
  // The method and documented columns only where they say something: one label shared by
  // the whole family goes into its heading.
  std::set<std::string> labels_used;
  std::vector<std::string> documented;
  for (size_t i : members) {
    labels_used.insert(shown_label(run.params[i]));
    documented.push_back(doc.this_gpu(i));
  }
  bool any_documented = std::any_of(documented.begin(), documented.end(), [](const std::string& c) { return c != "-"; });
  std::vector<std::vector<std::string>> rows = {{"parameter", "value", "interval", "conf."}};
  if (labels_used.size() > 1) rows[0].push_back("method");
  if (any_documented) rows[0].push_back("documented");
  std::vector<std::vector<std::string>> older = {{"parameter"}};
  for (const auto& rep : representative_gpus()) older[0].push_back(rep.label);
  const std::string evidence = run.params[members.front()].evidence;
  methods += "## " + family + "\n\n";
  for (size_t k = 0; k < members.size(); ++k) {
    const Parameter& p = run.params[members[k]];
    rows.push_back({p.name, human(p.value, p.unit), interval_text(p), format_printf("%.2f", p.confidence)});
    if (labels_used.size() > 1) rows.back().push_back(shown_label(p));
    if (any_documented) rows.back().push_back(documented[k]);
    std::vector<std::string> o = {p.name};
    for (const auto& rep : representative_gpus()) o.push_back(doc.arch(members[k], rep.arch));
    if (std::any_of(o.begin() + 1, o.end(), [](const std::string& c) { return c != "-"; })) older.push_back(o);
    methods += "- `" + p.name + "`: " + md_escape(relative_text(p.method, run.dir)) +
               (p.evidence.empty() ? "" : " (" + p.evidence + ")") + "\n";
  }
  methods += "\n";
  if (older.size() > 1)
    methods += "Documented for the older architectures (measured / documented):\n\n" + markdown_table(older) + "\n";
  std::string md = "### " + family + (labels_used.size() == 1 ? ": " + *labels_used.begin() : std::string()) +
                   "\n\n" + markdown_table(rows) + "\n";
  md += "<details><summary>Evidence</summary>\n\n[" + evidence + "](" + evidence + ") · [methods](methods.md#" +
        family + ")";
  if (auto it = fig.of_family.find(family); it != fig.of_family.end())
    for (const FigureScript* s : it->second) md += " · [figure](" + fig.dir + "/" + s->name + ".svg)";
  return md + "\n\n</details>\n\n";
}

// One short table per family, in the order the run lists them.
std::string families_markdown(const RunData& run, Documenting& doc, const DrawnFigures& fig, std::string& methods) {
  std::vector<std::string> family_order;
  for (const auto& p : run.params)
    if (std::find(family_order.begin(), family_order.end(), family_of(p)) == family_order.end())
      family_order.push_back(family_of(p));
  std::string md = "## Parameters by family\n\n";
  if (run.params.empty()) md += "None inferred.\n\n";
  for (const auto& family : family_order) md += family_markdown(family, run, doc, fig, methods);
  return md;
}

std::string figures_section(const DrawnFigures& fig, bool have_gnuplot) {
  std::string md = "## Figures\n\n" + (fig.markdown.empty() ? std::string("None drawn.\n\n")
                                                              : "Each also as PNG and PDF beside its SVG in `" +
                                                                    fig.dir + "/`.\n\n" + fig.markdown);
  if (fig.not_drawn.size() > 1) {
    md += "### Figures not drawn\n\n" + markdown_table(fig.not_drawn) + "\n";
    if (!have_gnuplot)
      md += "To draw them: install gnuplot (or set `GNUPLOT` to its path) and run "
            "`gpuprobe report RUN_DIR` again.\n\n";
  }
  return md;
}

// The sources cited, in report.md; each figure by its reference line in methods.md.
std::string sources_markdown(const Documenting& doc, const Reference& ref, std::string& methods) {
  if (doc.sources.empty()) return "";
  std::string md = "## Sources of the documented figures\n\n";
  for (size_t k = 0; k < doc.sources.size(); ++k) md += std::to_string(k + 1) + ". " + md_escape(doc.sources[k]) + "\n";
  md += "\nEach figure, by its line in `" + fs::path(ref.path).filename().string() +
        "`: [methods.md](methods.md#documented-figures).\n\n";
  methods += "## Documented figures\n\n";
  for (const auto& f : ref.figures)
    if (doc.cited.count(f.line))
      methods += "- line " + std::to_string(f.line) + ": " + md_escape(f.gpu) + ", " + md_escape(f.quantity) +
                 " = " + md_escape(describe(f)) + ". " + md_escape(f.source) + "\n";
  methods += "\n";
  return md;
}

// Metadata, the families that did not run as asked, and the probes not measured.
std::string device_and_run(const RunData& run, const CsvTable& families, Diagnostics& diag, std::string& methods) {
  std::string md = "## Device and run\n\n";
  std::vector<std::vector<std::string>> meta_rows = {{"key", "value"}};
  for (const auto& [k, v] : run.meta) meta_rows.push_back({k, relative_text(v, run.dir)});
  md += (run.meta.size() ? markdown_table(meta_rows) : "No metadata.\n") + "\n";
  // Every family's wall time and clock in methods.md; here only those that did not run as
  // asked (unsupported on this GPU, failed, interrupted).
  std::string fam = markdown_of(families);
  if (!fam.empty()) methods += "## Families\n\n" + fam + "\n";
  std::string not_ok = markdown_of(families, [](const auto& r) { return r.size() > 1 && r[1] != "ok"; });
  if (!fam.empty())
    md += "### Families\n\n" + (not_ok.empty() ? std::string("All ran") : not_ok + "\nThe others ran") +
          "; wall times and clocks: [methods.md](methods.md#families).\n\n";
  const std::pair<const char*, const char*> notes[] = {
      {"invalid.csv", "Invalid probes (not measured, not reported)"},
      {"not_measured.csv", "Not measured by this quick run"},
      {"skipped.csv", "Skipped probes (this GPU cannot run them)"}};
  for (const auto& [file, title] : notes) {
    std::string t = table_of((fs::path(run.dir) / file).string(), diag);
    if (!t.empty()) md += "### " + std::string(title) + "\n\n" + t + "\n";
  }
  return md;
}

// report.md and methods.md of a run; the exit code.
int report_run(const ReportPaths& paths, const std::string& dir, const std::string& style, Diagnostics& diag) {
  std::vector<FigureScript> scripts = figure_scripts(paths.plots_dir, diag);
  std::set<std::string> known = known_families(scripts);
  RunData run = load_run(dir, known, diag);
  Reference ref = load_reference_or_report(paths.reference, diag);
  CsvTable families = read_families(run, known, diag);
  DrawnFigures fig;
  if (!draw_figures(paths, scripts, run, style, fig, diag)) {
    const int sig = stop_signal();
    std::fprintf(stderr, "gpuprobe report: %s: stopped; figures and report.md left as they were\n",
                 signal_name(sig).c_str());
    return 128 + sig;
  }
  // Counted with the other warnings (and listed in report.md), so that errors stay last.
  if (paths.gnuplot.empty())
    diag.warn("gnuplot not found on PATH: report.md written without figures (install gnuplot, "
              "or set GNUPLOT to its path)");

  Documenting doc{run, ref, diag, {}, {}, {}};
  std::string methods = "# Methods: " + run.gpu + "\n\nHow each parameter of run `" + run.meta_value("run_id") +
                        "` was measured and inferred, in full (report.md shows a label).\n\n";
  std::string md = report_intro(run) + headline_markdown(run, doc);
  md += families_markdown(run, doc, fig, methods);
  md += figures_section(fig, !paths.gnuplot.empty());
  md += sources_markdown(doc, ref, methods);
  md += messages_markdown(diag, dir);
  md += device_and_run(run, families, diag, methods);
  write_file_atomic((fs::path(dir) / "methods.md").string(), methods);
  write_file_atomic((fs::path(dir) / "report.md").string(), md);
  std::printf("%s/report.md written (%zu parameters, %zu figures not drawn)\n", dir.c_str(), run.params.size(),
              fig.not_drawn.size() - 1);
  diag.print(dir + "/report.md");
  return diag.errors.empty() ? 0 : 1;
}

}  // namespace

int report_main(const std::vector<std::string>& args) {
  Diagnostics diag;
  diag.prefix = "gpuprobe report";
  CLI::App app{"Renders every figure of a run and writes RUN_DIR/report.md and methods.md, from its CSV "
               "files alone (no GPU).",
               "gpuprobe report"};
  std::string dir, style, plots, reference;
  app.add_option("RUN_DIR", dir, "the run directory")->required();
  app.add_option("--style", style, "paper: vector PDF at column widths, into figures/paper/; web: the default")
      ->check(CLI::IsMember({"paper", "web"}));
  add_path_options(app, &plots, &reference);
  if (auto code = parse_subcommand(app, args, diag.prefix)) return *code;
  // report writes report.md and figures/ into the folder: only into a run's own.
  if (const FolderKind kind = folder_kind(dir); kind != FolderKind::run) {
    std::fprintf(stderr, "gpuprobe report: %s: %s, not a run folder\n", dir.c_str(), folder_kind_name(kind));
    return 1;
  }
  try {
    return report_run(resolve_paths(plots, reference), dir, style, diag);
  } catch (const std::exception& e) {
    diag.print(dir + "/report.md");
    std::fprintf(stderr, "gpuprobe report: %s\n", e.what());
    return 1;
  }
}

}  // namespace gpuprobe
