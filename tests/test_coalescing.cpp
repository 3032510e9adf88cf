// The coalescing case study: the PTX of its layouts and the recorded H100 speedups.
#include <gtest/gtest.h>

#include "ptx_dir.hpp"
#include "recorded.hpp"

#include "analysis/coalescing.hpp"
#include "base/observation.hpp"

using namespace gpuprobe;

TEST(BandwidthPtx, CaseStudyLayoutsCompileToTheirAccesses) {
  const std::string co = test::newest_ptx_text(std::string(coalescing::kFamily.name));
  if (co.empty())
    FAIL() << "no PTX in " << GPUPROBE_PTX_DIR
           << "/sm_<arch>: the gpuprobe_ptx_files target writes it";
  // AoS: three 4-byte loads per structure (no wider load is legal at 4-byte alignment);
  // the read-only path; L2-only; the shared-memory staging.
  EXPECT_NE(co.find("ld.global.f32 "), std::string::npos);
  EXPECT_NE(co.find("ld.global.nc.f32 "), std::string::npos);
  EXPECT_NE(co.find("ld.global.cg.f32 "), std::string::npos);
  EXPECT_NE(co.find("ld.shared.f32 "), std::string::npos);
  EXPECT_EQ(co.find("ld.global.v2.f32 "), std::string::npos);
}

TEST(RecordedH100, CaseStudySpeedupsAreSensible) {
  auto obs = recorded_observations(std::string(coalescing::kFamily.name));
  REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_coalescing.csv";
  auto speedups =
      select(obs, std::string(coalescing::kReadProbe) + coalescing::kSpeedupSuffix, "x");
  auto writes = select(obs, std::string(coalescing::kWriteProbe) + coalescing::kSpeedupSuffix, "x");
  speedups.insert(speedups.end(), writes.begin(), writes.end());
  ASSERT_FALSE(speedups.empty());
  for (const auto& o : speedups) {
    EXPECT_GT(o.value, 0.3) << o.probe << " " << o.param_text(coalescing::kLayoutColumn);
    EXPECT_LT(o.value, 5) << o.probe << " " << o.param_text(coalescing::kLayoutColumn);
  }
  for (const auto& o : select(obs, coalescing::kReadProbe, "GB/s")) {
    EXPECT_GT(o.value, 100);
    EXPECT_LT(o.value, 10000);
  }
}
