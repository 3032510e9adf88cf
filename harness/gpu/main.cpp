// gpuprobe: one binary, a handful of commands (see usage_text()).
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "core/cli.hpp"
#include "core/compare.hpp"
#include "core/report.hpp"
#include "gpu/device.hpp"
#include "gpu/runner.hpp"

int main(int argc, char** argv) {
  using namespace gpuprobe;
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    Options opt = parse_command_line(args);
    if (opt.command == "help") {
      std::fputs(usage_text().c_str(), stdout);
      return 0;
    }
    if (opt.command == "list") return print_list();
    if (opt.command == "info") return print_info(opt);
    if (opt.command == "analyze") return analyze_run(opt);
    if (opt.command == "report") return report_main(opt.rest);
    if (opt.command == "compare") return compare_main(opt.rest);
    return run_suite(opt, argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "gpuprobe: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuprobe: %s\n", e.what());
    return 1;
  }
}
