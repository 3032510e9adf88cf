#include "base/signals.hpp"

#include <csignal>
#include <ctime>

namespace gpuprobe {

namespace {

volatile std::sig_atomic_t g_stop = 0;
timespec g_first{};  // when the first request came (written once, before g_stop)

// timeout(1) signals the command and then its whole process group, so one request can arrive
// twice at once: a second signal within this long of the first is the same request.
constexpr double kSameRequestSeconds = 1.0;

void on_signal(int sig) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  if (!g_stop) {
    g_first = now;
    g_stop = sig;
    return;
  }
  const double since = static_cast<double>(now.tv_sec - g_first.tv_sec) +
                       static_cast<double>(now.tv_nsec - g_first.tv_nsec) * 1e-9;
  if (since < kSameRequestSeconds) return;
  std::signal(sig, SIG_DFL);  // a second request: the default action, exit now
  std::raise(sig);
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
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
