#pragma once
// JSON through nlohmann-json: objects keep the order their members were added in, which is the
// order the documented schemas (README, nvbandwidth's, MT4G's) list them.
#include <nlohmann/json.hpp>

#include <string>

namespace gpuprobe {

using Json = nlohmann::ordered_json;

// `v` rounded to `digits` significant digits (what printf's %.<digits>g keeps) as a JSON
// number, a whole number without a fraction; null for NaN and infinities, which JSON lacks.
Json json_number(double v, int digits = 15);

// Indented by two spaces, a newline at the end; bytes that are not UTF-8 become U+FFFD.
std::string json_text(const Json& j);

}  // namespace gpuprobe
