#pragma once
// The operating point over a whole run: a thread that reads NVML's power, energy counter,
// clocks, temperature and clock-event reasons at a fixed period, each reading stamped with the
// time and the family running then (base/operating_point.hpp). It only reads: no setting of
// the GPU is changed.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/operating_point.hpp"
#include "gpu/nvml.hpp"

namespace gpuprobe {

class PowerSampler {
 public:
  using Clock = std::chrono::steady_clock;
  // Reads `nvml` every `period` from now until stop(); times count from `t0`. Where NVML has no
  // device it starts no thread and records nothing.
  PowerSampler(const Nvml& nvml, std::chrono::milliseconds period, Clock::time_point t0);
  ~PowerSampler();
  PowerSampler(const PowerSampler&) = delete;
  PowerSampler& operator=(const PowerSampler&) = delete;

  // The family the next samples belong to ("" between families).
  void set_family(const std::string& family);
  // The samples so far, in time order.
  std::vector<OperatingSample> samples() const;
  void stop();

 private:
  void loop();

  const Nvml& nvml_;
  const std::chrono::milliseconds period_;
  const Clock::time_point t0_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::string family_;
  std::vector<OperatingSample> samples_;
  std::thread thread_;
};

}  // namespace gpuprobe
