#include "core/signals.hpp"

#include <csignal>

namespace gpuprobe {

namespace {

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int sig) { g_stop = sig; }

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // the second Ctrl-C gets the default action: exit now
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int stop_signal() { return g_stop; }

std::string signal_name(int sig) {
  if (sig == SIGINT) return "SIGINT";
  if (sig == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(sig);
}

void throw_if_stopped() {
  if (int s = stop_signal()) throw Interrupted{s};
}

}  // namespace gpuprobe
