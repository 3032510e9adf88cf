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
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/analyzer.hpp"
#include "core/cli.hpp"
#include "core/csv.hpp"
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

ReportPaths resolve_paths(std::vector<std::string>& args) {
  std::string source = env_or("GPUPROBE_SOURCE_DIR", GPUPROBE_SOURCE_DIR);
  ReportPaths p;
  p.plots_dir = env_or("GPUPROBE_PLOTS_DIR", source + "/plots");
  p.reference = env_or("GPUPROBE_REFERENCE", source + "/results/reference/documented_figures.csv");
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto take = [&](const std::string& flag, std::string* dst) {
      if (a == flag) {
        if (i + 1 >= args.size()) throw UsageError(flag + ": missing value");
        *dst = args[++i];
        return true;
      }
      if (a.rfind(flag + "=", 0) == 0) {
        *dst = a.substr(flag.size() + 1);
        return true;
      }
      return false;
    };
    if (!take("--plots", &p.plots_dir) && !take("--reference", &p.reference)) rest.push_back(a);
  }
  args = rest;
  p.gnuplot = find_on_path(env_or("GNUPLOT", "gnuplot"));
  return p;
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
    for (int i = 0; i < 2 && std::getline(f, line); ++i) {
      if (line.rfind("# family:", 0) == 0) s.family = trim_copy(line.substr(9));
      if (line.rfind("# title:", 0) == 0) s.title = trim_copy(line.substr(8));
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

RunData load_run(const std::string& dir, const std::set<std::string>& known, Diagnostics& diag) {
  std::error_code ec;
  if (const FolderKind kind = folder_kind(dir); kind != FolderKind::run)
    throw std::runtime_error(dir + ": " + folder_kind_name(kind) + ", not a run folder");
  RunData run;
  run.dir = dir;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".csv") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());

  run.params_path = (fs::path(dir) / "parameters.csv").string();
  bool have_params = false;
  if (fs::exists(run.params_path)) {
    CsvTable t;
    if (read_table(run.params_path, &t, diag)) {
      run.meta = t.meta;
      try {
        run.params = parameters_from_table(t);
        run.param_lines = t.row_lines;
        have_params = true;
      } catch (const CsvError& e) {
        diag.error(e.what());
      }
    }
  }

  std::vector<std::pair<std::string, std::vector<Observation>>> observed;
  Metadata first_meta;
  for (const auto& path : files) {
    std::string stem = fs::path(path).stem().string();
    if (stem == "parameters" || stem == "families" || stem == "invalid") continue;
    CsvTable t;
    if (!read_table(path, &t, diag)) continue;
    if (t.header.size() < 2 || t.header[0] != "family" || t.header[1] != "probe") {
      diag.warn(path + ":" + std::to_string(header_line(read_file(path))) +
                ": not an observations file (its header does not begin 'family,probe'): ignored");
      continue;
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
      continue;
    }
    bool consistent = true;
    for (size_t r = 0; r < obs.size() && consistent; ++r) {
      if (obs[r].family == stem) continue;
      diag.error(path + ":" + std::to_string(t.row_lines[r]) + ": family '" + obs[r].family +
                 "' in a file named " + stem + ".csv");
      consistent = false;
    }
    if (!consistent) continue;
    if (!known.count(stem))
      diag.warn(path + ": unknown family '" + stem +
                "' (no probe family, analyzer or figure script of this gpuprobe knows it): "
                "kept, not drawn");
    if (first_meta.empty()) first_meta = t.meta;
    run.families.emplace_back(stem, path);
    observed.emplace_back(stem, std::move(obs));
  }
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
    std::string words, label_words;
    for (size_t i = 0; i < files.size(); ++i) {
      std::string name = "in/" + std::to_string(i + 1) + ".csv";
      fs::create_symlink(fs::absolute(files[i]), st.dir / name);
      words += (i ? " " : "") + name;
      label_words += (i ? " " : "") + labels.at(i);
    }
    if (fs::exists(paths.reference)) {
      fs::create_symlink(fs::absolute(paths.reference), st.dir / "ref.csv");
    } else {
      // No documented figures: a reference whose one row matches no quantity keeps the
      // scripts' reference lookups valid, and draws no reference mark.
      std::ofstream(st.dir / "ref.csv") << "arch,gpu,cc,quantity,value,unit,method_note,source\n"
                                        << "none,none,0.0,none,0,none,none,none\n";
    }
    std::string expr = "files='" + words + "'; labels='" + label_words +
                       "'; ref='ref.csv'; out='out/" + script.name + "'";
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

std::string versus_documented(const Parameter& p, const DocumentedFigure& doc) {
  if (!std::isfinite(p.value) || !doc.numeric()) return "";
  if (std::isfinite(doc.value))
    return doc.value == 0 ? "" : "x" + format_printf("%.2f", p.value / doc.value);
  if (p.value >= doc.low && p.value <= doc.high) return "in range";
  double bound = p.value < doc.low ? doc.low : doc.high;
  return bound == 0 ? "" : "x" + format_printf("%.2f", p.value / bound) + (p.value < doc.low ? " of low" : " of high");
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
  return "### " + s.title + "\n\n![" + md_escape(s.title) + "](" + base + ".svg)\n\n[SVG](" + base +
         ".svg) · [PNG](" + base + ".png) · [PDF](" + base + ".pdf) · script `plots/" + s.name +
         ".gp`\n\n";
}

std::string messages_markdown(const Diagnostics& diag) {
  if (diag.warnings.empty() && diag.errors.empty()) return "";
  std::string out = "## Messages\n\n";
  for (const auto& e : diag.errors) out += "- error: " + md_escape(e) + "\n";
  for (const auto& w : diag.warnings) out += "- warning: " + md_escape(w) + "\n";
  return out + "\n";
}

namespace {

// A CSV of the run (families.csv, invalid.csv) as a markdown table, or "" when absent or empty.
std::string table_of(const std::string& path, Diagnostics& diag) {
  if (!fs::exists(path)) return "";
  CsvTable t;
  if (!read_table(path, &t, diag, false) || t.rows.empty()) return "";
  std::vector<std::vector<std::string>> rows = {t.header};
  rows.insert(rows.end(), t.rows.begin(), t.rows.end());
  return markdown_table(rows);
}

}  // namespace

int report_main(const std::vector<std::string>& args_in) {
  Diagnostics diag;
  diag.prefix = "gpuprobe report";
  std::vector<std::string> args = args_in;
  ReportPaths paths;
  try {
    paths = resolve_paths(args);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "gpuprobe report: %s\n", e.what());
    return 2;
  }
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      std::printf("usage: gpuprobe report RUN_DIR [--plots DIR] [--reference CSV]\n");
      return 0;
    }
    if (a.rfind("-", 0) == 0) {
      std::fprintf(stderr, "gpuprobe report: unknown option '%s' (usage: gpuprobe report RUN_DIR "
                           "[--plots DIR] [--reference CSV])\n", a.c_str());
      return 2;
    }
  }
  if (args.size() != 1) {
    std::fprintf(stderr, "gpuprobe report: expected one RUN_DIR, got %zu\n", args.size());
    return 2;
  }
  const std::string dir = args[0];
  // report writes report.md and figures/ into the folder: only into a run's own.
  if (const FolderKind kind = folder_kind(dir); kind != FolderKind::run) {
    std::fprintf(stderr, "gpuprobe report: %s: %s, not a run folder\n", dir.c_str(),
                 folder_kind_name(kind));
    return 1;
  }
  try {
    std::vector<FigureScript> scripts = figure_scripts(paths.plots_dir, diag);
    std::set<std::string> known = known_families(scripts);
    RunData run = load_run(dir, known, diag);
    Reference ref = load_reference_or_report(paths.reference, diag);

    for (const auto& family : known)
      if (!fs::exists(fs::path(dir) / (family + ".csv")))
        diag.warn(dir + ": no " + family + ".csv: family '" + family + "' missing from this run");

    if (paths.gnuplot.empty())
      diag.error("gnuplot not found on PATH (install gnuplot, or set GNUPLOT=/path/to/gnuplot): "
                 "figures not rendered");
    std::string figures_md;
    std::vector<std::string> labels = run_labels({run});
    if (!paths.gnuplot.empty()) {
      // Rendered beside figures/ (same file system) and swapped in whole: a reader, or a
      // concurrent report, sees the old figures or the new ones, never a mix or stale ones.
      Staging staged(fs::path(dir), ".figures.tmp-");
      for (const auto& s : scripts) {
        if (stop_signal()) break;
        std::string csv = run.file_of(s.family);
        if (csv.empty()) continue;
        auto written = render_figure(paths, s, {csv}, labels, staged.dir.string(), diag);
        if (!written.empty()) figures_md += figure_markdown(s, "figures");
      }
      if (int sig = stop_signal()) {
        std::fprintf(stderr, "gpuprobe report: %s: stopped; figures/ and report.md left as they were\n",
                     signal_name(sig).c_str());
        return 128 + sig;
      }
      fs::permissions(staged.dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                      fs::perms::others_read | fs::perms::others_exec);
      replace_dir(staged.dir.string(), (fs::path(dir) / "figures").string());
    }

    std::vector<std::vector<std::string>> table = {
        {"parameter", "measured", "low to high", "conf.", "documented (this GPU)", "measured / documented"}};
    for (const auto& rep : representative_gpus()) table[0].push_back(rep.label);
    table[0].push_back("method (evidence)");
    std::set<int> cited;
    for (size_t i = 0; i < run.params.size(); ++i) {
      const Parameter& p = run.params[i];
      std::vector<std::string> row = {p.name, human(p.value, p.unit),
                                      human(p.low, p.unit) + " to " + human(p.high, p.unit),
                                      format_printf("%.2f", p.confidence)};
      auto mine = documented_for_gpu(ref, p.name, run.gpu, run.cc_major, run.cc_minor);
      if (mine && units_agree(run, i, *mine, ref.path, diag)) {
        row.push_back(documented_cell(*mine));
        row.push_back(versus_documented(p, *mine));
        cited.insert(mine->line);
      } else {
        row.insert(row.end(), {mine ? "unit differs [r" + std::to_string(mine->line) + "]" : "-", ""});
      }
      for (const auto& rep : representative_gpus()) {
        auto d = documented_for_arch(ref, p.name, rep.arch);
        if (!d) {
          row.push_back("-");
          continue;
        }
        cited.insert(d->line);
        std::string cell = documented_cell(*d);
        if (units_agree(run, i, *d, ref.path, diag)) {
          std::string v = versus_documented(p, *d);
          if (!v.empty()) cell += " (" + v + ")";
        }
        row.push_back(cell);
      }
      row.push_back(p.method + (p.evidence.empty() ? "" : " (" + p.evidence + ")"));
      table.push_back(row);
    }

    std::string md = "# gpuprobe report: " + run.gpu + "\n\n";
    std::string id = run.meta_value("run_id");
    md += "Run " + (id.empty() ? std::string("(no run-id)") : "`" + id + "`") + " in `" + dir +
          "`, written by gpuprobe " +
          (run.meta_value("gpuprobe_version").empty() ? "(unknown version)"
                                                      : run.meta_value("gpuprobe_version")) +
          "; this report by gpuprobe " + GPUPROBE_VERSION + " from the CSV files alone "
          "(`gpuprobe report " + dir + "`).\n\n";
    const std::string status = run.meta_value("run_status");
    if (status == "running" || status == "interrupted")
      md += "**Incomplete run** (run_status=" + status +
            (run.meta_value("interrupted").empty() ? "" : ", " + run.meta_value("interrupted")) +
            "): the families after that point were not measured.\n\n";
    md += "## Device and run\n\n";
    std::vector<std::vector<std::string>> meta_rows = {{"key", "value"}};
    for (const auto& [k, v] : run.meta) meta_rows.push_back({k, v});
    md += (run.meta.size() ? markdown_table(meta_rows) : "No metadata.\n") + "\n";
    std::string fam = table_of((fs::path(dir) / "families.csv").string(), diag);
    if (!fam.empty()) md += "## Families\n\n" + fam + "\n";
    std::string inv = table_of((fs::path(dir) / "invalid.csv").string(), diag);
    if (!inv.empty()) md += "## Invalid probes (not measured, not reported)\n\n" + inv + "\n";
    md += "## Inferred parameters\n\n";
    if (run.params.empty()) {
      md += "None.\n\n";
    } else {
      md += "Measured on this GPU, beside the documented figures for it and for the "
            "representative Kepler, Maxwell and Volta parts. Ratios are measured / documented; "
            "`[rN]` is line N of the documented figures (`" + ref.path + "`).\n\n" +
            markdown_table(table) + "\n";
      if (!cited.empty()) {
        md += "Documented figures cited:\n\n";
        for (const auto& f : ref.figures)
          if (cited.count(f.line))
            md += "- r" + std::to_string(f.line) + ": " + md_escape(f.gpu) + ", " + md_escape(f.quantity) +
                  " = " + md_escape(describe(f)) + ". " + md_escape(f.source) + "\n";
        md += "\n";
      }
    }
    md += "## Figures\n\n" + (figures_md.empty() ? std::string("None rendered.\n\n") : figures_md);
    md += messages_markdown(diag);
    write_file_atomic((fs::path(dir) / "report.md").string(), md);
    std::printf("%s/report.md written (%zu parameters)\n", dir.c_str(), run.params.size());
  } catch (const std::exception& e) {
    diag.print(dir + "/report.md");
    std::fprintf(stderr, "gpuprobe report: %s\n", e.what());
    return 1;
  }
  diag.print(dir + "/report.md");
  return diag.errors.empty() ? 0 : 1;
}

}  // namespace gpuprobe
