// gpuprobe: one binary, a handful of commands (`gpuprobe --help`; app/cli.cpp).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "analysis/roofline.hpp"
#include "app/anchor.hpp"
#include "app/catalog_doc.hpp"
#include "app/cli.hpp"
#include "app/compare.hpp"
#include "app/export.hpp"
#include "app/report.hpp"
#include "app/roofline.hpp"
#include "app/run_analysis.hpp"
#include "base/signals.hpp"
#include "app/spread.hpp"
#include "gpu/device.hpp"
#include "program/runner.hpp"

int main(int argc, char** argv) {
  using namespace gpuprobe;
  // Kernels in different streams share this many hardware queues (8 by default), which would
  // cap the measured kernel concurrency at 8 instead of the GPU's own limit. A user's setting
  // wins; the concurrency family records the value it ran with.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (!args.empty() && args[0] == "spread") return spread_main({args.begin() + 1, args.end()});
    Options opt = parse_command_line(args);
    if (opt.command == "help") {
      std::fputs(opt.help.c_str(), stdout);
      return checked_stdout("gpuprobe", 0);
    }
    // A report stopped by a signal removes its temporaries and leaves the run as it was
    // (`run` installs the same handlers once it has a folder to keep).
    if (opt.command == "report" || opt.command == "compare" || opt.command == roofline::kCommand)
      install_stop_handlers();
    if (opt.command == "list") return print_list();
    if (opt.command == "info") return print_info(opt);
    if (opt.command == "analyze") return analyze_main(opt);
    if (opt.command == "report") return report_main(opt.rest);
    if (opt.command == "compare") return compare_main(opt.rest);
    if (opt.command == "export") return export_main(opt.rest);
    if (opt.command == "catalog") return catalog_main(opt.rest);
    if (opt.command == "anchor") return anchor_main(opt.rest);
    if (opt.command == roofline::kCommand) return roofline_main(opt.rest);
    return run_suite(opt, argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "gpuprobe: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuprobe: %s\n", e.what());
    return 1;
  }
}
