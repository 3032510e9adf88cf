#pragma once
// Code checks on the GPU machine: the SASS of this very program (`cuobjdump -sass` on
// /proc/<pid>/exe, run once and cached) against the expectations that families register in
// base/code_check.hpp. A probe whose kernels fail is reported invalid and not measured. When
// the SASS cannot be had (no cuobjdump, no SASS for this GPU in the binary), the check says so
// once on stderr and counts as unchecked, not failed.
#include <string>
#include <vector>

#include "base/code_check.hpp"
#include "base/probe.hpp"

namespace gpuprobe {

enum class SassStatus { ok, failed, unchecked };

struct SassVerdict {
  SassStatus status = SassStatus::unchecked;
  std::string why;
};

// Reads this program's SASS for the device now (cuobjdump takes seconds on a large binary),
// so that the time is not charged to whichever family checks first. Returns why it could not
// be had, or "".
std::string load_sass(const DeviceInfo& dev);

// Checks `kernel` (a kernel_name()) against its registered expectation's SASS rules.
SassVerdict check_kernel_sass(const DeviceInfo& dev, const std::string& kernel);

// The timed region of `kernel` in this program's SASS for the device (base/code_check.hpp's
// timed_region), for a run's evidence; empty when the SASS cannot be had.
std::vector<Instruction> timed_sass(const DeviceInfo& dev, const std::string& kernel);

// Whether `probe` may be measured: true when every kernel passes or is unchecked; false after
// ctx.invalid(probe, why) when one fails or has no expectation registered.
bool sass_allows(RunContext& ctx, const std::string& probe, const std::vector<std::string>& kernels);

}  // namespace gpuprobe
