// The stop handlers: one request stops the run at the next step; timeout(1)'s double delivery
// (the command, then its process group) is one request; a second request later ends at once.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "base/signals.hpp"

namespace gpuprobe {
namespace {

TEST(SignalsDeathTest, TwoSignalsAtOnceAreOneRequest) {
  EXPECT_EXIT(
      {
        install_stop_handlers();
        std::raise(SIGINT);
        std::raise(SIGINT);
        std::exit(stop_signal() == SIGINT ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(SignalsDeathTest, ASecondRequestLaterEndsAtOnce) {
  EXPECT_EXIT(
      {
        install_stop_handlers();
        std::raise(SIGTERM);
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));
        std::raise(SIGTERM);
        std::exit(0);
      },
      ::testing::KilledBySignal(SIGTERM), "");
}

TEST(SignalsDeathTest, AStopRequestThrowsInterrupted) {
  EXPECT_EXIT(
      {
        install_stop_handlers();
        std::raise(SIGINT);
        try {
          throw_if_stopped();
        } catch (const Interrupted& e) {
          std::exit(e.sig == SIGINT ? 0 : 1);
        }
        std::exit(2);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace gpuprobe
