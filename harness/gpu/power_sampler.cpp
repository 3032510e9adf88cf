#include "gpu/power_sampler.hpp"

namespace gpuprobe {

PowerSampler::PowerSampler(const Nvml& nvml, std::chrono::milliseconds period, Clock::time_point t0)
    : nvml_(nvml), period_(period), t0_(t0) {
  if (!nvml_.read().available) return;
  thread_ = std::thread([this] { loop(); });
}

PowerSampler::~PowerSampler() { stop(); }

void PowerSampler::set_family(const std::string& family) {
  std::lock_guard<std::mutex> lock(mu_);
  family_ = family;
}

std::vector<OperatingSample> PowerSampler::samples() const {
  std::lock_guard<std::mutex> lock(mu_);
  return samples_;
}

void PowerSampler::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PowerSampler::loop() {
  auto next = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    lock.unlock();
    OperatingSample s = nvml_.sample();  // outside the lock: an NVML call takes a while
    s.t_s = std::chrono::duration<double>(Clock::now() - t0_).count();
    lock.lock();
    s.family = family_;
    samples_.push_back(std::move(s));
    // A fixed period, not a fixed pause: the calls' own time does not stretch it.
    next += period_;
    if (next < Clock::now()) next = Clock::now();
    wake_.wait_until(lock, next, [this] { return stopping_; });
  }
}

}  // namespace gpuprobe
