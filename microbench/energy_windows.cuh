#pragma once
// The energy family's window (analysis/energy.hpp says why it is measured so): a load run back
// to back on the default stream until the NVML energy counter has stepped kIntervals + 1 times
// after kSettleS, its power the energy between the first and last step over their time, and
// its GPU time from CUDA events around the same launches. The energy and roofline families
// share it.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "analysis/energy.hpp"
#include "base/operating_point.hpp"
#include "base/signals.hpp"
#include "base/stats.hpp"
#include "gpu/cuda.cuh"
#include "gpu/nvml.hpp"

namespace gpuprobe::energy {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// --- One window ------------------------------------------------------------------------------

// What runs in a window: one launch at a time on the default stream (none for idle), with an
// optional companion on a side stream for the whole window (a resting block that keeps the GPU
// as the baseline holds it while copy engines work).
struct Work {
  std::string probe, operands;
  int active_sms = 0;
  double work_per_trip = 0;
  std::vector<std::pair<std::string, double>> components;  // held-out: per trip
  std::vector<std::pair<std::string, double>> per_launch;  // held-out: per launch
  std::function<void(int trips)> enqueue;                  // nullptr: idle
  int trips = 1;
};

struct Edge {
  double t, joules;
};

// A counter's power over the steps after `from`: energy between the first and the last over
// their time, and the spread of the intervals'.
struct CounterPower {
  double watts = 0, sd = 0;
  int intervals = 0;
};
inline std::optional<CounterPower> power_of(const std::vector<Edge>& edges, double from) {
  std::vector<Edge> e;
  for (const auto& x : edges)
    if (x.t >= from && e.size() < kIntervals + 1) e.push_back(x);
  if (e.size() < kIntervals + 1 || e.back().t <= e.front().t) return std::nullopt;
  CounterPower p;
  p.watts = (e.back().joules - e.front().joules) / (e.back().t - e.front().t);
  std::vector<double> each;
  for (size_t i = 1; i < e.size(); ++i)
    each.push_back((e[i].joules - e[i - 1].joules) / (e[i].t - e[i - 1].t));
  double var = 0;
  for (double w : each) var += (w - p.watts) * (w - p.watts);
  p.sd = each.size() > 1 ? std::sqrt(var / static_cast<double>(each.size() - 1)) : 0;
  p.intervals = static_cast<int>(each.size());
  return p;
}

// Whether the work before `e` is done: a launch that failed throws here, rather than leaving a
// window that never ends.
inline bool finished(cudaEvent_t e) {
  const cudaError_t r = cudaEventQuery(e);
  if (r == cudaErrorNotReady) return false;
  CUDA_CHECK(r);
  return true;
}

// Timing events around a window's launches, destroyed however the window ends.
struct GpuSpan {
  cudaEvent_t begin{}, end{};
  GpuSpan() {
    CUDA_CHECK(cudaEventCreate(&begin));
    CUDA_CHECK(cudaEventCreate(&end));
  }
  ~GpuSpan() {
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
  }
  GpuSpan(const GpuSpan&) = delete;
  GpuSpan& operator=(const GpuSpan&) = delete;
  double seconds() const {
    CUDA_CHECK(cudaEventSynchronize(end));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    return ms * 1e-3;
  }
};

struct WindowResult {
  double watts = 0, sd = 0, t_mid = 0, gpu_s = 0, sm_mhz = NAN, temp_c = NAN;
  int intervals = 0, launches = 0;
  unsigned long long reasons = 0;
};

class Meter {
 public:
  // `companion` launches the work a window keeps beside its load on a side stream until the
  // host sets *stop (none: windows without companions only).
  using Companion = std::function<void(cudaStream_t side, const volatile int* stop)>;
  Meter(std::vector<const Nvml*> counters, Clock::time_point t0, Companion companion = {})
      : counters_(std::move(counters)), t0_(t0), companion_(std::move(companion)), stop_(nullptr) {
    CUDA_CHECK(cudaHostAlloc(&stop_, sizeof(int), cudaHostAllocMapped));
    *stop_ = 0;
  }
  ~Meter() { cudaFreeHost(stop_); }
  Meter(const Meter&) = delete;
  Meter& operator=(const Meter&) = delete;
  double elapsed() const { return since(t0_); }

  // Runs `load` until every counter has stepped kIntervals + 1 times after the settling time.
  WindowResult run(const Work& load, const std::vector<int>& companion_devices) {
    throw_if_stopped();
    GpuSpan span;
    std::vector<std::vector<Edge>> edges(counters_.size());
    std::vector<Reading> last(counters_.size());
    std::vector<OperatingSample> samples;
    const double t_begin = elapsed();
    for (int dev : companion_devices) start_companion(dev);
    // However the window ends (a counter that never steps throws), the companions are told to stop.
    const std::unique_ptr<int, void (*)(int*)> stop_on_exit(stop_, [](int* flag) { *flag = 1; });
    CUDA_CHECK(cudaEventRecord(span.begin, nullptr));
    std::deque<std::unique_ptr<Event>> inflight;
    WindowResult r;
    double next_sample = t_begin;
    for (bool enough = false;;) {
      while (load.enqueue && !enough && inflight.size() < kInFlight) {
        load.enqueue(load.trips);
        CUDA_CHECK(cudaGetLastError());
        inflight.push_back(std::make_unique<Event>());
        CUDA_CHECK(cudaEventRecord(inflight.back()->get(), nullptr));
        ++r.launches;
      }
      read_counters(edges, last);
      const double now = elapsed();
      if (now >= next_sample) {
        samples.push_back(counters_.front()->sample());
        samples.back().t_s = now;
        next_sample = now + kSampleS;
      }
      while (!inflight.empty() && finished(inflight.front()->get())) inflight.pop_front();
      enough = std::all_of(edges.begin(), edges.end(), [&](const std::vector<Edge>& e) {
        return power_of(e, t_begin + kSettleS).has_value();
      });
      if (enough && inflight.empty()) break;
      if (now - t_begin > kWindowTimeoutS)
        throw std::runtime_error(load.probe + ": the energy counter did not step");
      std::this_thread::sleep_for(std::chrono::duration<double>(kPollS));
    }
    CUDA_CHECK(cudaEventRecord(span.end, nullptr));
    r.gpu_s = span.seconds();
    stop_companions(companion_devices);
    summarize_window(edges, samples, t_begin, &r);
    return r;
  }

 private:
  static constexpr size_t kInFlight = 3;  // launches queued: the GPU never waits for the host

  // A counter's last reading and when it was taken.
  struct Reading {
    unsigned long long mj = 0;
    double t = 0;
  };

  // A step is placed halfway between the reading before it and the one that saw it: within a
  // quarter of a poll, unless an NVML sample came between the two.
  void read_counters(std::vector<std::vector<Edge>>& edges, std::vector<Reading>& last) {
    for (size_t m = 0; m < counters_.size(); ++m) {
      unsigned long long mj = 0;
      std::string why;
      if (!counters_[m]->energy_mj(&mj, &why)) throw std::runtime_error("energy counter: " + why);
      const double now = elapsed();
      if (last[m].mj != 0 && mj != last[m].mj)
        edges[m].push_back({(last[m].t + now) / 2, mj * 1e-3});
      last[m] = {mj, now};
    }
  }

  void start_companion(int dev) {
    int current = 0;
    CUDA_CHECK(cudaGetDevice(&current));
    CUDA_CHECK(cudaSetDevice(dev));
    *stop_ = 0;
    if (!companion_)
      throw std::logic_error("energy windows: a companion was asked for but none given");
    companion_(side_for(dev), stop_);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaSetDevice(current));
  }
  void stop_companions(const std::vector<int>& devices) {
    *stop_ = 1;
    int current = 0;
    CUDA_CHECK(cudaGetDevice(&current));
    for (int dev : devices) {
      CUDA_CHECK(cudaSetDevice(dev));
      CUDA_CHECK(cudaStreamSynchronize(side_for(dev)));
    }
    CUDA_CHECK(cudaSetDevice(current));
    *stop_ = 0;
  }
  cudaStream_t side_for(int dev) {
    for (auto& [d, s] : side_)
      if (d == dev) return s->get();
    side_.emplace_back(dev, std::make_unique<Stream>());
    return side_.back().second->get();
  }

  void summarize_window(const std::vector<std::vector<Edge>>& edges,
                        const std::vector<OperatingSample>& samples, double t_begin,
                        WindowResult* r) {
    double var = 0, first = 1e300, lastt = 0;
    for (const auto& e : edges) {
      CounterPower p = *power_of(e, t_begin + kSettleS);
      r->watts += p.watts;
      var += p.sd * p.sd;
      r->intervals = std::max(r->intervals, p.intervals);
      for (const auto& x : e)
        if (x.t >= t_begin + kSettleS) first = std::min(first, x.t), lastt = std::max(lastt, x.t);
    }
    r->sd = std::sqrt(var);
    r->t_mid = (first + lastt) / 2;
    std::vector<double> sm, temp;
    for (const auto& s : samples) {
      if (s.t_s < t_begin + kSettleS) continue;
      if (std::isfinite(s.sm_clock_mhz)) sm.push_back(s.sm_clock_mhz);
      if (std::isfinite(s.temperature_c)) temp.push_back(s.temperature_c);
      r->reasons |= s.reasons;
    }
    if (!sm.empty()) r->sm_mhz = median(sm);
    if (!temp.empty()) r->temp_c = summarize(temp).mean;
  }

  std::vector<const Nvml*> counters_;
  Clock::time_point t0_;
  Companion companion_;
  std::vector<std::pair<int, std::unique_ptr<Stream>>> side_;
  int* stop_;
};

}  // namespace gpuprobe::energy
