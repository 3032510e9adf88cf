#include "app/cli.hpp"

#include "analysis/collectives.hpp"
#include "analysis/roofline.hpp"
#include "app/cli_parse.hpp"
#include "base/run_dir.hpp"
#include "base/version.hpp"

#ifdef GPUPROBE_HAVE_RE2
#include <re2/re2.h>
#else
#include <regex>
#endif
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <memory>

namespace gpuprobe {

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
  for (const auto& [flag, path] : {std::pair{"--benchmark_out", &o.benchmark_out},
                                   {"--json-nvbandwidth", &o.json_nvbandwidth}}) {
    if (path->empty()) continue;
    try {
      check_output_path(*path);
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string(flag) + ": " + e.what());
    }
    // Before the GPU is opened: a run's minutes are not spent on a file it cannot write.
    if (fs::is_directory(*path, ec))
      throw UsageError(std::string(flag) + ": " + *path + " is a folder, not a file");
    fs::path parent = fs::absolute(*path, ec).parent_path();
    if (!fs::is_directory(parent, ec))
      throw UsageError(std::string(flag) + ": no folder " + parent.string());
    require_writable_folder(flag, parent);
  }
}

int checked_stdout(const std::string& prefix, int code) {
  // A write that failed before (a buffer filled) left its errno, unless a later call changed it.
  const int earlier = errno;
  const bool flushed = std::fflush(stdout) == 0;
  const int why = flushed ? earlier : errno;
  if (flushed && !std::ferror(stdout)) return code;
  std::fprintf(stderr, "%s: cannot write standard output: %s\n", prefix.c_str(),
               why ? std::strerror(why) : "a write failed");
  return 1;
}

std::string one_line_error(const CLI::Error& e, const std::string& command) {
  std::string m = e.what();
  std::replace(m.begin(), m.end(), '\n', ' ');
  while (!m.empty() && m.back() == ' ') m.pop_back();
  return m + " (try '" + command + " --help')";
}

std::optional<int> parse_subcommand(CLI::App& app, const std::vector<std::string>& args,
                                    const std::string& prefix, const std::function<void()>& check) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  try {
    app.parse(reversed);
    if (check) check();
    return std::nullopt;
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return checked_stdout(prefix, 0);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s\n", prefix.c_str(), one_line_error(e, app.get_name()).c_str());
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s (try '%s --help')\n", prefix.c_str(), e.what(), app.get_name().c_str());
  }
  return 2;
}

CLI::Validator non_empty() {
  return CLI::Validator([](std::string& v) { return v.empty() ? std::string("empty name") : std::string(); },
                        "NONEMPTY");
}

CLI::Validator finite_positive() {
  return CLI::Validator(
      [](std::string& v) {
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        const bool number = !v.empty() && *end == '\0';
        return number && std::isfinite(x) && x > 0 ? std::string()
                                                    : "expected a positive number, got '" + v + "'";
      },
      "POSITIVE");
}

namespace {

constexpr const char* kProgram = "gpuprobe";

// A CUDA device ordinal: a handful of digits at most, so that it always fits an int.
constexpr size_t kMaxOrdinalDigits = 6;

void add_device(CLI::App& sub, Options& o) {
  sub.add_option("--device", o.device, "CUDA device ordinal")
      ->type_name("N")
      ->check(CLI::Validator(
          [](std::string& v) {
            const bool digits = !v.empty() && v.size() <= kMaxOrdinalDigits &&
                                std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
            return digits ? std::string() : "expected a non-negative whole number, got '" + v + "'";
          },
          ""))
      ->capture_default_str();
}

// The options of `run`. Google Benchmark's own --benchmark_* flags pass through as extras.
void add_run(CLI::App& app, Options& o) {
  CLI::App* run = app.add_subcommand(
      "run", "measure every selected probe family on the GPU, infer its parameters and write a run "
             "directory OUT/<gpu-slug>/<run-id>/");
  run->allow_extras();
  run->add_flag("--quick", o.quick, "a few seconds per family instead of the full sweeps");
  run->add_option("--filter", o.filter,
                  "only probes whose \"family/probe\" name matches (RE2 syntax, at most 1000 "
                  "characters; see 'gpuprobe list')")
      ->type_name("REGEX");
  run->add_option("--out", o.out, "root of run directories")
      ->type_name("DIR")
      ->check(non_empty())
      ->capture_default_str();
  add_device(*run, o);
  run->add_option("--reference", o.reference,
                  "documented figures (default: results/reference/documented_figures.csv)")
      ->type_name("CSV");
  run->add_option("--json-nvbandwidth", o.json_nvbandwidth,
                  "also write the host-link and P2P results as nvbandwidth's --json output (its "
                  "test-case names and layout, where the measurements mean the same)")
      ->type_name("FILE")
      ->check(non_empty());
  run->add_flag("--ranks-from-env", o.ranks_from_env,
                "this process is one rank of a job of one process per GPU (rank and size from "
                "GPUPROBE_RANK/GPUPROBE_NRANKS, srun's or mpirun's variables): the collectives "
                "family alone; rank 0 measures and writes the run, the others take part and "
                "write nothing");
  run->add_option("--nccl-id-file", o.nccl_id_file,
                  "with --ranks-from-env: a file every rank can read (a shared file system) "
                  "where rank 0 leaves NCCL's unique id; without it every rank takes the id "
                  "from NCCL_COMM_ID")
      ->type_name("FILE")
      ->check(non_empty());
  run->footer("Google Benchmark's own flags (--benchmark_*=VALUE) pass through; "
              "--benchmark_out=FILE also copies its JSON there.");
}

void add_analyze(CLI::App& app, Options& o) {
  CLI::App* an = app.add_subcommand(
      "analyze", "re-infer parameters from the run's observation files alone (no GPU) and write "
                 "RUN_DIR/parameters.csv (atomically)");
  an->add_option("RUN_DIR", o.positional, "the run directory")->required()->expected(1);
  an->add_flag("--stdout", o.to_stdout, "print parameters.csv instead of writing it");
  an->add_flag("-v,--verbose", o.verbose, "every warning, not only their count");
  an->add_flag("--drop-missing", o.drop_missing,
               "drop the parameters of a family whose file is missing or shorter than "
               "families.csv records (kept, with an error, without it)");
  an->add_option("--json-nvbandwidth", o.json_nvbandwidth,
                 "also write the host-link and P2P results as nvbandwidth's --json output")
      ->type_name("FILE")
      ->check(non_empty());
}

// report, compare, export, roofline and catalog parse their own arguments (their *_main), --help included.
void add_passed_on(CLI::App& app, const std::string& name, const std::string& what) {
  CLI::App* sub = app.add_subcommand(name, what);
  sub->prefix_command();
  sub->set_help_flag();
}

// The --benchmark_* flags `run` passes on; any other extra is a mistake.
void take_benchmark_flags(const std::vector<std::string>& extras, Options& o) {
  const std::string out_flag = "--benchmark_out=";
  for (const auto& a : extras) {
    if (a.rfind(out_flag, 0) == 0) {
      o.benchmark_out = a.substr(out_flag.size());
      if (o.benchmark_out.empty()) throw UsageError("--benchmark_out: empty file name");
    } else if (a.rfind("--benchmark_", 0) == 0) {
      o.benchmark_flags.push_back(a);
    } else {
      throw UsageError((a.rfind('-', 0) == 0 ? "unknown option '" : "unexpected argument '") + a +
                       "' for 'run' (try 'gpuprobe run --help')");
    }
  }
}

}  // namespace

Options parse_command_line(const std::vector<std::string>& args) {
  Options o;
  if (args.empty()) throw UsageError("missing command (try 'gpuprobe --help')");
  CLI::App app{"gpuprobe: characterise an NVIDIA GPU with microbenchmarks, and report, compare "
               "and export its runs from their CSV files alone",
               kProgram};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(kProgram) + " " + gpuprobe_version());
  app.footer("Each command lists its options with 'gpuprobe <command> --help'.");
  add_run(app, o);
  app.add_subcommand("list", "every probe family and probe with a one-line description (no GPU needed)");
  add_device(*app.add_subcommand("info", "the device, its measured SM clock, driver and runtime"), o);
  add_analyze(app, o);
  add_passed_on(app, "report", "render every figure of a run and write RUN_DIR/report.md (no GPU)");
  add_passed_on(app, "compare", "overlay runs of several GPUs and tabulate their parameters side by "
                                "side, or a fleet's outliers with --fleet (no GPU)");
  add_passed_on(app, "export",
                "a run's parameters as JSON, an Accel-Sim config fragment, AccelWattch energies or "
                "MT4G's JSON (no GPU)");
  add_passed_on(app, "anchor",
                "a run's collective figures beside nccl-tests' output or another run's (no GPU)");
  add_passed_on(app, roofline::kCommand,
                "the time and energy rooflines of runs from their parameters, with the roofline "
                "family's kernels predicted on them (no GPU)");
  add_passed_on(app, "catalog",
                "every parameter a run may write, with its unit, method and meaning, or "
                "docs/parameters.md's tables rewritten from it (no GPU)");
  app.add_subcommand("help", "this text");
  auto named = [&](const CLI::App* sub) { return sub->check_name(args[0]); };
  if (args[0].rfind('-', 0) != 0 && app.get_subcommands(named).empty())
    throw UsageError("unknown command '" + args[0] + "' (try 'gpuprobe --help')");

  const std::string overview = app.help();  // for `gpuprobe help`
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    o.command = "help";
    o.help = app.help();
    return o;
  } catch (const CLI::CallForVersion& v) {
    o.command = "help";
    o.help = std::string(v.what()) + "\n";
    return o;
  } catch (const CLI::ParseError& e) {
    std::string command = kProgram;
    for (const CLI::App* sub : app.get_subcommands()) command += " " + sub->get_name();
    throw UsageError(one_line_error(e, command));
  }
  CLI::App* sub = app.get_subcommands().front();
  o.command = sub->get_name();
  if (o.command == "help") o.help = overview;
  if (sub->get_prefix_command()) o.rest = sub->remaining();
  if (o.command == "run") take_benchmark_flags(sub->remaining(), o);
  if (!o.nccl_id_file.empty() && !o.ranks_from_env)
    throw UsageError("--nccl-id-file needs --ranks-from-env");
  // One rank of a job runs the collectives alone (program/ranks.cpp checks a filter given).
  if (o.ranks_from_env && o.filter.empty())
    o.filter = "^" + std::string(collectives::kFamily.name) + "/";
  if (!o.filter.empty()) filter_matches(o.filter, "");  // reject a malformed regex now
  return o;
}

}  // namespace gpuprobe
