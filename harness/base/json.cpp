#include "base/json.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace gpuprobe {

Json json_number(double v, int digits) {
  if (!std::isfinite(v)) return nullptr;
  // The %g text read back: nlohmann-json writes the shortest text that reads back the same.
  char text[40];
  std::snprintf(text, sizeof text, "%.*g", digits, v);
  const double rounded = std::strtod(text, nullptr);
  constexpr double kExactInteger = 9007199254740992.0;  // 2^53: every whole double below is exact
  if (rounded == std::floor(rounded) && std::fabs(rounded) < kExactInteger)
    return static_cast<std::int64_t>(rounded);
  return rounded;
}

std::string json_text(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"; }

}  // namespace gpuprobe
