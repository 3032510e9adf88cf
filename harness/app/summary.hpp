#pragma once
// The table printed at the end of a run: each inferred parameter beside the documented
// figure for this GPU, where one is documented.
#include <functional>
#include <string>
#include <vector>

#include "base/observation.hpp"

namespace gpuprobe {

// `documented(parameter)` returns the documented figure as text ("33 cycles"), or "".
std::string format_summary(const std::vector<Parameter>& params,
                           const std::function<std::string(const Parameter&)>& documented);

// Human units for a parameter value: 50331648 bytes -> "48 MiB"; others as a number.
std::string human_value(double value, const std::string& unit);

}  // namespace gpuprobe
