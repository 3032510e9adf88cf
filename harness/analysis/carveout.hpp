#pragma once
// L1 capacity at each shared-memory carve-out preference.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/common/memory_chase.hpp"
#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::carveout {

// A footprint fits in L1 while its cycles per access stay below this multiple of the hit
// level (the smallest footprint's).
constexpr double kL1FitFactor = 1.25;

struct CarveoutCapacity {
  double percent = 0;
  double shared_request = 0;  // bytes of shared memory the preference asks for
  double l1_bytes = 0;        // largest footprint that stayed resident
  double miss_bytes = 0;      // smallest larger footprint that did not
};
std::vector<CarveoutCapacity> l1_capacity_by_carveout(const std::vector<Observation>& obs);

std::vector<Parameter> analyze_carveout(const std::vector<Observation>& obs,
                                        const Metadata& meta);

// Code checks (base/code_check.hpp): the kernels that measure `probe` as the checks name them;
// empty for an unknown probe. Each has a registered expectation.
std::vector<std::string> kernels(const std::string& probe);

// The names of carveout.csv, each written by the driver and read by the analyzer and tests.
constexpr const char* kChaseProbe = "chase";  // cycles per access against footprint
// The derived rows: the largest footprint that stays in L1 at each carve-out. Named as the
// parameter it once gave (l1_size, now l1_size_no_miss), for the committed runs' rows.
constexpr const char* kL1SizeProbe = "l1_size";
constexpr const char* kPercentColumn = "carveout_percent";      // the carve-out preference
constexpr const char* kRequestColumn = "shared_request_bytes";  // shared memory it asks for

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"carveout", "carveout.gp"};

}  // namespace gpuprobe::carveout
