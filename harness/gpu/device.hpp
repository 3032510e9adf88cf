#pragma once
// Device discovery and the measured SM clock: what the harness knows of the GPU before any
// probe runs.
#include <string>

#include "base/probe.hpp"

namespace gpuprobe {

// Thrown when there is no usable GPU: no device, no driver, a bad ordinal.
class NoDeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Selects device `ordinal` and reads its attributes (cudaDeviceGetAttribute, cudaMemGetInfo).
DeviceInfo open_device(int ordinal);

// The GPUs this process sees (cudaGetDeviceCount); 0 where CUDA cannot say (no driver), with
// the error cleared, so that a family asking whether it can run never fails for asking.
int visible_device_count();

struct ClockReading {
  double mhz = 0;         // median over SMs of clock64 cycles per %globaltimer microsecond
  double min_mhz = 0, max_mhz = 0;
  double window_ms = 0;   // how long each SM counted
};

// Runs a busy kernel on every SM (after a warm-up so that boost clocks settle) and compares
// clock64() with %globaltimer over the same window on each SM.
ClockReading measure_sm_clock(const DeviceInfo& dev);

}  // namespace gpuprobe
