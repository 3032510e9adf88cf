// The figures: where the scripts, the documented figures and gnuplot are, and one figure
// rendered by gnuplot in a staging folder of its own, with a timeout (app/report.hpp).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/cli_parse.hpp"
#include "base/csv.hpp"
#include "base/data_paths.hpp"
#include "app/report.hpp"
#include "app/report_detail.hpp"
#include "base/catalog.hpp"
#include "base/run_dir.hpp"
#include "base/signals.hpp"

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

const char* const kFormats[] = {"svg", "png", "pdf"};
constexpr int kGnuplotTimeoutS = 120;
// A figure is drawn from files of at most this many rows: gnuplot reads a file once per curve
// and format (tlb.gp: 45 times) at about 5 us a row, so a 60 MB tlb.csv (527k rows) ran into
// the timeout above after two minutes; a full run's largest family file has 16k rows
// (l2_topology.csv). The analysis reads every row all the same.
constexpr size_t kMaxPlotRows = 200000;

// Data rows (neither blank nor '#') of a file, counted up to just past `limit`.
size_t data_rows(const std::string& path, size_t limit) {
  const std::string text = read_input_file(path);
  size_t rows = 0;
  for (size_t pos = 0; pos < text.size() && rows <= limit;) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    rows += nl > pos && text[pos] != '#' && text[pos] != '\r';
    pos = nl + 1;
  }
  return rows;
}

// False after recording why when a file has more rows than a figure is drawn from.
bool small_enough(const FigureScript& script, const std::vector<std::string>& files,
                  Diagnostics& diag) {
  for (const auto& f : files)
    if (data_rows(f, kMaxPlotRows) > kMaxPlotRows) {
      diag.error(
          script.path + ": " + f + " has more than " + std::to_string(kMaxPlotRows) +
          " rows, more than a figure is drawn from (its parameters are inferred from all of them)");
      return false;
    }
  return true;
}

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

}  // namespace

namespace {

// The folder, opened and locked without waiting; -1 when another process holds it.
int lock_dir(const fs::path& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
  close(fd);
  return -1;
}

}  // namespace

Staging::Staging(const fs::path& parent, const std::string& prefix) {
  std::string tmpl = (parent / (prefix + "XXXXXX")).string();
  if (!mkdtemp(tmpl.data()))
    throw std::runtime_error("cannot create a temporary directory in " + parent.string() + ": " +
                             std::strerror(errno));
  dir = tmpl;
  lock_fd_ = lock_dir(dir);
}

Staging::~Staging() {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (lock_fd_ >= 0) close(lock_fd_);
}

void remove_stale_staging(const fs::path& parent, const std::string& prefix) {
  std::error_code ec;
  std::vector<fs::path> stale;
  for (const auto& e : fs::directory_iterator(parent, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0 && e.is_directory(ec) &&
        !e.is_symlink(ec))
      stale.push_back(e.path());
  for (const auto& dir : stale) {
    const int fd = lock_dir(dir);
    if (fd < 0) continue;  // in use by a report that is running
    fs::remove_all(dir, ec);
    close(fd);
  }
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
    if (e.path().extension() != ".gp" || !e.is_regular_file(ec))
      continue;  // a FIFO would wait forever
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

std::string with_todays_names(const std::string& text, const std::string& column) {
  std::string out;
  std::istringstream in(text);
  long at = -1;  // the column's index, once the header is read (-2: no such column)
  for (std::string line; std::getline(in, line); out += line + "\n") {
    if (line.empty() || line.rfind('#', 0) == 0 || at == -2) continue;
    std::vector<std::string> fields;
    try {
      fields = split_csv_line(line);
    } catch (const CsvError&) {
      continue;  // the readers of the file say what is wrong with it
    }
    if (at == -1) {
      const auto it = std::find(fields.begin(), fields.end(), column);
      at = it == fields.end() ? -2 : it - fields.begin();
    } else if (size_t(at) < fields.size() &&
               canonical_name(fields[size_t(at)]) != fields[size_t(at)]) {
      fields[size_t(at)] = canonical_name(fields[size_t(at)]);
      line = join_csv(fields);
    }
  }
  return out;
}

std::string gnuplot_fault(const ReportPaths& paths) {
  if (paths.gnuplot.empty()) return "gnuplot not found";
  try {
    Staging st;
    const std::string log = (st.dir / "gnuplot.log").string();
    const int rc =
        run_process({paths.gnuplot, "-e", "set terminal svg; set output 'check.svg'; plot x"},
                    st.dir.string(), log, kGnuplotTimeoutS);
    std::error_code ec;
    if (rc == 0 && fs::file_size(st.dir / "check.svg", ec) > 0 && !ec) return "";
    const std::vector<std::string> lines = log_lines(log);
    return paths.gnuplot +
           (rc == -1 ? std::string(" did not run") : " exited with status " + std::to_string(rc)) +
           " on a plot of y = x" + (lines.empty() ? "" : ": " + lines.front());
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::vector<std::string> render_figure(const ReportPaths& paths, const FigureScript& script,
                                       const std::vector<std::string>& files,
                                       const std::vector<std::string>& labels,
                                       const std::string& out_dir, Diagnostics& diag) {
  if (paths.gnuplot.empty() || files.empty()) return {};
  try {
    if (!small_enough(script, files, diag)) return {};
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
      if (fs::is_regular_file(params)) {  // gnuplot would wait forever on a FIFO
        pname = "in/" + std::to_string(i + 1) + ".parameters.csv";
        std::ofstream(st.dir / pname) << with_todays_names(read_file(params.string()), "parameter");
      }
      param_words += (i ? " " : "") + pname;
    }
    if (fs::exists(paths.reference)) {
      std::ofstream(st.dir / "ref.csv")
          << with_todays_names(read_input_file(paths.reference), "quantity");
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

}  // namespace gpuprobe
