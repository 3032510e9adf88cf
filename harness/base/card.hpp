#pragma once
// Which card a run was made on. Two runs of one card and two cards of one model are different
// evidence: every CSV header names the board (NVML's UUID, serial, VBIOS and part number), and
// `spread`, `compare --fleet` and the report group runs by the key below.
#include <string>

#include "base/csv.hpp"  // Metadata

namespace gpuprobe {

struct CardIdentity {
  // As NVML gives them, or "unknown (<why>)" where it does not (card_unknown()).
  std::string uuid, serial, vbios, board_part;
  std::string cuda_uuid;  // cudaDeviceProp::uuid as "GPU-..." (cross-check of `uuid`); "" unread
};

// The header keys, in this order: gpu_uuid, gpu_serial, vbios_version, board_part_number, and
// cuda_uuid where the CUDA runtime gave one.
Metadata card_metadata(const CardIdentity& card);

// A value NVML did not give: "unknown (<why>)", so that a header never drops a key silently.
std::string card_unknown(const std::string& why);

// cudaUUID_t's 16 bytes as NVML writes a UUID: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
std::string format_gpu_uuid(const unsigned char bytes[16]);

// The card a run's header names: its gpu_uuid, or kUnrecordedCard where the run did not record
// one (older runs) or NVML could not give it. Runs keyed "unrecorded" are never taken as one card.
constexpr const char* kUnrecordedCard = "unrecorded";
std::string card_key(const Metadata& meta);

// One sentence for a report's header: "Card: `GPU-...` (serial ..., VBIOS ..., board part ...)."
// or why the run names no card.
std::string card_text(const Metadata& meta);

// A card key shortened for tables: the first block of the UUID ("GPU-1a2b3c4d"), or the key.
std::string card_short(const std::string& key);

}  // namespace gpuprobe
