#include "core/cli.hpp"

#include <regex>

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
  analyze RUN_DIR [--json-nvbandwidth FILE]
        re-infer parameters from the run's observation files alone (no GPU), as CSV on stdout
  report RUN_DIR
        render every figure of a run and write RUN_DIR/report.md (no GPU)
  compare RUN_DIR RUN_DIR... [--out DIR]
        overlay runs of several GPUs and tabulate their parameters side by side (no GPU)
  compare --fleet RUN_DIR... [--csv FILE] [--z Z] [--min-deviation F]
        each GPU's deviation from the fleet median per parameter, outliers flagged (no GPU)
  help, --help, -h
        this text

Options of run:
  --quick           a few seconds per family instead of the full sweeps
  --filter REGEX    only probes whose "family/probe" name matches (see `gpuprobe list`)
  --out DIR         root of run directories (default: results)
  --device N        CUDA device ordinal (default: 0)
  --reference CSV   documented figures (default: results/reference/documented_figures.csv)
  --benchmark_*     Google Benchmark's own flags; --benchmark_out=FILE also copies the JSON
  --json-nvbandwidth FILE
                    also write the host-link and P2P results as nvbandwidth's --json output
                    (its test-case names and layout, where the measurements mean the same)
)";
}

bool filter_matches(const std::string& filter, const std::string& name) {
  if (filter.empty()) return true;
  try {
    return std::regex_search(name, std::regex(filter, std::regex::ECMAScript));
  } catch (const std::regex_error& e) {
    throw UsageError("--filter: not a valid regular expression: '" + filter + "'");
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
  static const std::vector<std::string> commands = {"run",     "list",   "info",
                                                    "analyze", "report", "compare"};
  bool known = false;
  for (const auto& c : commands) known = known || c == cmd;
  if (!known) throw UsageError("unknown command '" + cmd + "' (try 'gpuprobe --help')");
  o.command = cmd;

  if (cmd == "report" || cmd == "compare") {
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
    } else if (for_run && a.rfind("--benchmark_", 0) == 0) {
      o.benchmark_flags.push_back(a);
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
