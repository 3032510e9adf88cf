#pragma once
#include "app/cli.hpp"

namespace gpuprobe {

// `gpuprobe run`: measures every selected family, writes the run directory, prints the
// summary. Returns the exit code: 0 when every family ran, 1 when any failed (what was
// measured is kept).
int run_suite(const Options& opt, int argc, char** argv);
// `gpuprobe info`
int print_info(const Options& opt);
// `gpuprobe list`
int print_list();

}  // namespace gpuprobe
