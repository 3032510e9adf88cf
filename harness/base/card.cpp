#include "base/card.hpp"

#include <cstdio>

namespace gpuprobe {

Metadata card_metadata(const CardIdentity& card) {
  Metadata m = {{"gpu_uuid", card.uuid},
                {"gpu_serial", card.serial},
                {"vbios_version", card.vbios},
                {"board_part_number", card.board_part}};
  if (!card.cuda_uuid.empty()) m.emplace_back("cuda_uuid", card.cuda_uuid);
  return m;
}

std::string card_unknown(const std::string& why) { return "unknown (" + why + ")"; }

std::string format_gpu_uuid(const unsigned char b[16]) {
  char s[64];
  std::snprintf(s, sizeof s,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return s;
}

std::string card_key(const Metadata& meta) {
  for (const auto& [k, v] : meta)
    if (k == "gpu_uuid") return v.empty() || v.rfind("unknown", 0) == 0 ? kUnrecordedCard : v;
  return kUnrecordedCard;
}

std::string card_text(const Metadata& meta) {
  const std::string key = card_key(meta);
  if (key == kUnrecordedCard) {
    for (const auto& [k, v] : meta)
      if (k == "gpu_uuid") return "Card: not identified (NVML gave no UUID: " + v + ").";
    return "Card: not recorded (this run was made before runs named their card).";
  }
  std::string text = "Card: `" + key + "`";
  const char* sep = " (";
  const std::pair<const char*, const char*> details[] = {
      {"gpu_serial", "serial"}, {"vbios_version", "VBIOS"}, {"board_part_number", "board part"}};
  for (const auto& [key_name, said] : details)
    for (const auto& [k, v] : meta)
      if (k == key_name) {
        text += sep + std::string(said) + " " + v;
        sep = ", ";
      }
  return text + (sep[0] == ',' ? ")." : ".");
}

std::string card_short(const std::string& key) {
  const size_t dash = key.find('-', 4);  // after "GPU-"
  return key.rfind("GPU-", 0) == 0 && dash != std::string::npos ? key.substr(0, dash) : key;
}

}  // namespace gpuprobe
