#include "core/cli.hpp"

#ifdef GPUPROBE_HAVE_RE2
#include <re2/re2.h>
#else
#include <regex>
#endif
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>

namespace gpuprobe {

std::string usage_text() {
  return R"(usage: gpuprobe <command> [options]

Commands:
  run [--quick] [--filter REGEX] [--out DIR] [--device N] [--reference CSV]
        measure every selected probe family on the GPU, infer its parameters and write a
        run directory DIR/<gpu-slug>/<run-id>/ (DIR defaults to results)
  list  every probe family and probe with a one-line description (no GPU needed)
  info [--device N]
        the device, its measured SM clock, driver and runtime
  analyze RUN_DIR [--stdout] [-v] [--json-nvbandwidth FILE]
        re-infer parameters from the run's observation files alone (no GPU) and write
        RUN_DIR/parameters.csv (atomically); --stdout prints it instead; -v lists every warning
  report RUN_DIR [--style paper]
        render every figure of a run and write RUN_DIR/report.md (no GPU)
  compare RUN_DIR RUN_DIR... [--out DIR] [--table markdown|latex|csv]
        overlay runs of several GPUs and tabulate their parameters side by side (no GPU)
  export RUN_DIR --json|--accel-sim|--mt4g [--out FILE]
        a run's parameters as JSON, an Accel-Sim config fragment or MT4G's JSON (no GPU)
  compare --fleet RUN_DIR... [--csv FILE] [--z Z] [--min-deviation F]
        each GPU's deviation from the fleet median per parameter, outliers flagged (no GPU)
  help, --help, -h
        this text

Options of run:
  --quick           a few seconds per family instead of the full sweeps
  --filter REGEX    only probes whose "family/probe" name matches (RE2 syntax, at most 1000
                    characters; see `gpuprobe list`)
  --out DIR         root of run directories (default: results)
  --device N        CUDA device ordinal (default: 0)
  --reference CSV   documented figures (default: results/reference/documented_figures.csv)
  --benchmark_*     Google Benchmark's own flags; --benchmark_out=FILE also copies the JSON
  --json-nvbandwidth FILE
                    also write the host-link and P2P results as nvbandwidth's --json output
                    (its test-case names and layout, where the measurements mean the same)
)";
}

namespace {

// A filter names families and probes; nothing longer or deeper is a mistake, and the caps
// bound the compiled pattern whatever is pasted in.
constexpr size_t kMaxFilterLength = 1000;
constexpr int kMaxFilterNesting = 50;

void check_filter_size(const std::string& filter) {
  if (filter.size() > kMaxFilterLength)
    throw UsageError("--filter: " + std::to_string(filter.size()) + " characters; at most " +
                     std::to_string(kMaxFilterLength));
  int depth = 0, deepest = 0;
  for (size_t i = 0; i < filter.size(); ++i) {
    if (filter[i] == '\\') ++i;
    else if (filter[i] == '(') deepest = std::max(deepest, ++depth);
    else if (filter[i] == ')') --depth;
  }
  if (deepest > kMaxFilterNesting)
    throw UsageError("--filter: parentheses nested " + std::to_string(deepest) + " deep; at most " +
                     std::to_string(kMaxFilterNesting));
}

#ifdef GPUPROBE_HAVE_RE2
using Compiled = re2::RE2;
std::unique_ptr<Compiled> compile(const std::string& filter) {
  re2::RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_unique<re2::RE2>(filter, opts);
  if (!re->ok()) throw UsageError("--filter: not a valid regular expression (" + re->error() + ")");
  return re;
}
// RE2 runs in linear time and without recursion.
bool search(const std::string& name, const Compiled& re) { return re2::RE2::PartialMatch(name, re); }
#else
using Compiled = std::regex;
std::unique_ptr<Compiled> compile(const std::string& filter) {
  try {
    return std::make_unique<std::regex>(filter, std::regex::ECMAScript);
  } catch (const std::regex_error&) {
    throw UsageError("--filter: not a valid regular expression: '" + filter + "'");
  }
}
bool search(const std::string& name, const Compiled& re) { return std::regex_search(name, re); }
#endif

// The compiled filter, kept between calls: filter_matches() runs for every probe.
const Compiled& compiled(const std::string& filter) {
  static std::string pattern;
  static std::unique_ptr<Compiled> re;
  if (!re || pattern != filter) {
    check_filter_size(filter);
    re = compile(filter);
    pattern = filter;
  }
  return *re;
}

}  // namespace

bool filter_matches(const std::string& filter, const std::string& name) {
  if (filter.empty()) return true;
  return search(name, compiled(filter));
}

namespace {

// The nearest folder at or above `p` that exists; a missing part below it would be created.
std::filesystem::path existing_ancestor(std::filesystem::path p) {
  std::error_code ec;
  p = std::filesystem::absolute(p, ec);
  while (!p.empty() && !std::filesystem::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
  return p;
}

void require_writable_folder(const std::string& flag, const std::filesystem::path& target) {
  std::filesystem::path at = existing_ancestor(target);
  std::error_code ec;
  if (!std::filesystem::is_directory(at, ec))
    throw UsageError(flag + ": " + at.string() + " is not a folder");
  if (::access(at.c_str(), W_OK | X_OK) != 0)
    throw UsageError(flag + ": cannot write in " + at.string());
}

}  // namespace

void validate_outputs(const Options& o) {
  namespace fs = std::filesystem;
  std::error_code ec;
  require_writable_folder("--out", o.out);
  if (!o.benchmark_out.empty()) {
    if (fs::is_directory(o.benchmark_out, ec))
      throw UsageError("--benchmark_out: " + o.benchmark_out + " is a folder, not a file");
    fs::path parent = fs::absolute(o.benchmark_out, ec).parent_path();
    if (!fs::is_directory(parent, ec))
      throw UsageError("--benchmark_out: no folder " + parent.string());
    require_writable_folder("--benchmark_out", parent);
  }
}

static int parse_int(const std::string& flag, const std::string& v) {
  size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || v.empty() || n < 0)
    throw UsageError(flag + ": expected a non-negative whole number, got '" + v + "'");
  return n;
}

Options parse_command_line(const std::vector<std::string>& args) {
  Options o;
  if (args.empty()) throw UsageError("missing command (try 'gpuprobe --help')");
  const std::string& cmd = args[0];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    o.command = "help";
    return o;
  }
  static const std::vector<std::string> commands = {"run",    "list",    "info",  "analyze",
                                                    "report", "compare", "export"};
  bool known = false;
  for (const auto& c : commands) known = known || c == cmd;
  if (!known) throw UsageError("unknown command '" + cmd + "' (try 'gpuprobe --help')");
  o.command = cmd;

  if (cmd == "report" || cmd == "compare" || cmd == "export") {
    o.rest.assign(args.begin() + 1, args.end());
    return o;
  }
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag) -> std::string {
      std::string prefix = flag + "=";
      if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
      if (i + 1 >= args.size()) throw UsageError(flag + ": missing value");
      return args[++i];
    };
    auto is = [&](const std::string& flag) { return a == flag || a.rfind(flag + "=", 0) == 0; };
    bool for_run = cmd == "run";
    if (a == "--help" || a == "-h") {
      o.command = "help";
    } else if (for_run && a == "--quick") {
      o.quick = true;
    } else if (for_run && is("--filter")) {
      o.filter = value("--filter");
      filter_matches(o.filter, "");  // reject a malformed regex now
    } else if (for_run && is("--out")) {
      o.out = value("--out");
      if (o.out.empty()) throw UsageError("--out: empty directory name");
    } else if ((for_run || cmd == "info") && is("--device")) {
      o.device = parse_int("--device", value("--device"));
    } else if (for_run && is("--reference")) {
      o.reference = value("--reference");
    } else if ((for_run || cmd == "analyze") && is("--json-nvbandwidth")) {
      o.json_nvbandwidth = value("--json-nvbandwidth");
      if (o.json_nvbandwidth.empty()) throw UsageError("--json-nvbandwidth: empty file name");
    } else if (for_run && a.rfind("--benchmark_out=", 0) == 0) {
      o.benchmark_out = a.substr(std::string("--benchmark_out=").size());
      if (o.benchmark_out.empty()) throw UsageError("--benchmark_out: empty file name");
    } else if (for_run && a.rfind("--benchmark_", 0) == 0) {
      o.benchmark_flags.push_back(a);
    } else if (cmd == "analyze" && a == "--stdout") {
      o.to_stdout = true;
    } else if (cmd == "analyze" && (a == "-v" || a == "--verbose")) {
      o.verbose = true;
    } else if (a.rfind("-", 0) == 0) {
      throw UsageError("unknown option '" + a + "' for '" + cmd + "' (try 'gpuprobe --help')");
    } else if (cmd == "analyze") {
      o.positional.push_back(a);
    } else {
      throw UsageError("unexpected argument '" + a + "' for '" + cmd + "'");
    }
  }
  if (cmd == "analyze" && o.positional.size() != 1 && o.command != "help")
    throw UsageError("analyze: expected one run directory");
  return o;
}

}  // namespace gpuprobe
