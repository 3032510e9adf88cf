// Which card ran (base/card.hpp): the header keys every run writes, the text of a value NVML
// does not give, the CUDA UUID's spelling, the key that groups runs by card, and NVML's answer
// on a machine without it (this one: the loader says why, in every key).
#include <gtest/gtest.h>

#include "base/card.hpp"
#include "gpu/nvml.hpp"

namespace gpuprobe {
namespace {

std::string value_of(const Metadata& m, const std::string& key) {
  for (const auto& [k, v] : m)
    if (k == key) return v;
  return "(absent)";
}

TEST(Card, HeaderNamesTheBoardUnderItsFourKeys) {
  CardIdentity c{"GPU-1a2b3c4d-0000-1111-2222-333344445555", "1652922001234", "96.00.74.00.01",
                 card_unknown("nvmlDeviceGetBoardPartNumber: Not Supported"),
                 "GPU-1a2b3c4d-0000-1111-2222-333344445555"};
  const Metadata m = card_metadata(c);
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].first, "gpu_uuid");
  EXPECT_EQ(m[1].first, "gpu_serial");
  EXPECT_EQ(m[2].first, "vbios_version");
  EXPECT_EQ(m[3].first, "board_part_number");
  EXPECT_EQ(m[4].first, "cuda_uuid");
  EXPECT_EQ(value_of(m, "gpu_serial"), "1652922001234");
  EXPECT_EQ(value_of(m, "board_part_number"),
            "unknown (nvmlDeviceGetBoardPartNumber: Not Supported)");
  c.cuda_uuid.clear();  // the CUDA UUID unread: its key left out, NVML's four kept
  EXPECT_EQ(card_metadata(c).size(), 4u);
  EXPECT_EQ(card_key(m), c.uuid);
  EXPECT_EQ(card_short(card_key(m)), "GPU-1a2b3c4d");
}

TEST(Card, RunsThatNameNoCardAreUnrecorded) {
  EXPECT_EQ(card_key({{"gpu", "NVIDIA H100 80GB HBM3"}}), kUnrecordedCard);
  EXPECT_EQ(card_key({{"gpu_uuid", card_unknown("libnvidia-ml.so.1 not found")}}), kUnrecordedCard);
  EXPECT_EQ(card_key({{"gpu_uuid", ""}}), kUnrecordedCard);
  EXPECT_EQ(card_short(kUnrecordedCard), kUnrecordedCard);
}

TEST(Card, ReportHeaderSentenceNamesTheCardOrWhyNot) {
  EXPECT_EQ(card_text({{"gpu_uuid", "GPU-ab"},
                       {"gpu_serial", "165"},
                       {"vbios_version", "96.00"},
                       {"board_part_number", "692-2G520"}}),
            "Card: `GPU-ab` (serial 165, VBIOS 96.00, board part 692-2G520).");
  EXPECT_EQ(card_text({{"gpu_uuid", "GPU-ab"}}), "Card: `GPU-ab`.");
  EXPECT_EQ(card_text({{"gpu", "NVIDIA H100 80GB HBM3"}}),
            "Card: not recorded (this run was made before runs named their card).");
  EXPECT_EQ(
      card_text({{"gpu_uuid", "unknown (nvmlDeviceGetUUID: Not Supported)"}}),
      "Card: not identified (NVML gave no UUID: unknown (nvmlDeviceGetUUID: Not Supported)).");
}

TEST(Card, CudaUuidIsSpelledAsNvmlSpellsIt) {
  const unsigned char b[16] = {0x1a, 0x2b, 0x3c, 0x4d, 0x00, 0x01, 0xff, 0x10,
                               0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99};
  EXPECT_EQ(format_gpu_uuid(b), "GPU-1a2b3c4d-0001-ff10-2233-445566778899");
}

// Without the NVML library every key still appears, each saying why it has no value.
TEST(Card, NvmlAbsentGivesEachKeyItsReason) {
  Nvml nvml("0000:00:00.0");
  const CardIdentity c = nvml.card();
  if (nvml.read().available)
    GTEST_SKIP() << "NVML is present here: the absent path is not what runs";
  for (const std::string& v : {c.uuid, c.serial, c.vbios, c.board_part}) {
    EXPECT_EQ(v.rfind("unknown (", 0), 0u) << v;
    EXPECT_EQ(v.back(), ')') << v;
    EXPECT_GT(v.size(), std::string("unknown ()").size()) << v;
  }
  EXPECT_EQ(card_key(card_metadata(c)), kUnrecordedCard);
}

}  // namespace
}  // namespace gpuprobe
