#pragma once
// SIGINT and SIGTERM as a request to stop: the handler only records the signal, and the long
// loops (the runner's measure(), the report's rendering) look at it between steps, so that
// what was measured is written and temporary files are removed before the process exits
// with 128 + the signal. A second request (a signal more than a second after the first) ends
// the process at once.
#include <stdexcept>
#include <string>

namespace gpuprobe {

void install_stop_handlers();
// The signal that asked us to stop, or 0.
int stop_signal();
// "SIGINT", "SIGTERM", or the number.
std::string signal_name(int sig);

// Thrown where a stop request ends a step; not a std::exception, so that no handler of
// ordinary failures treats it as one.
struct Interrupted {
  int sig;
};
// Throws Interrupted when a stop was requested.
void throw_if_stopped();

}  // namespace gpuprobe
