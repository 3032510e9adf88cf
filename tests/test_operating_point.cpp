// The operating point of every family: the trace file, each family's summary from it, and the
// mark a value gets when it was measured while a power, thermal or slowdown reason was active,
// on a recorded trace (synthetic: tests/data/synthetic_power_trace.csv, the pipes family
// power-capped in 16 of its 40 samples).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "analysis/analyzer.hpp"
#include "analysis/latency.hpp"
#include "analysis/pipes.hpp"
#include "app/report.hpp"
#include "base/operating_point.hpp"
#include "recorded.hpp"

namespace gpuprobe {
namespace {

const std::string kTrace = std::string(GPUPROBE_TEST_DATA) + "/synthetic_power_trace.csv";
const std::string kPipes(pipes::kFamily.name);  // the family the trace shows throttled

TEST(OperatingPoint, ReasonsReadBackAsTheyWereWritten) {
  EXPECT_EQ(throttle_reason_text(0), "none");
  EXPECT_EQ(throttle_reason_text(0x4 | 0x40), "sw_power_cap|hw_thermal");
  EXPECT_EQ(throttle_reason_text(0x1000), "other");
  EXPECT_EQ(throttle_reason_mask("sw_power_cap|hw_thermal"), 0x44u);
  EXPECT_EQ(throttle_reason_mask("none"), 0u);
  for (const auto& r : throttle_reasons())
    EXPECT_EQ(throttle_reason_mask(throttle_reason_text(r.bit)), r.bit);
  EXPECT_EQ(kLimitingReasons & 0x1, 0u) << "an idle GPU is not a throttled one";
}

TEST(OperatingPoint, TraceRoundTripsAndSummarisesEachFamily) {
  const auto trace = trace_from_table(read_csv(kTrace));
  ASSERT_EQ(trace.size(), 84u);
  const auto again = trace_from_table(parse_csv(format_trace({}, trace), "again"));
  ASSERT_EQ(again.size(), trace.size());
  EXPECT_EQ(again[50].family, trace[50].family);
  EXPECT_EQ(again[83].reasons, trace[83].reasons);

  const OperatingPoint pipes = summarize_family(trace, kPipes);
  EXPECT_EQ(pipes.samples, 40);
  EXPECT_NEAR(pipes.limited_fraction, 0.4, 1e-12);
  EXPECT_EQ(pipes.reasons, 0x4u);
  EXPECT_EQ(pipes.sm_clock_min_mhz, 1755);
  EXPECT_EQ(pipes.sm_clock_mhz, 1980);
  // The counter's steps: about the samples' 320 W (it steps every 100 ms at the power then).
  EXPECT_NEAR(pipes.power_w, 320, 10);
  EXPECT_GE(pipes.power_max_w, 320);
  const OperatingPoint latency = summarize_family(trace, std::string(latency::kFamily.name));
  EXPECT_EQ(latency.limited_fraction, 0);
  EXPECT_EQ(throttle_reason_text(latency.reasons), "none");
  EXPECT_EQ(summarize_family(trace, "nope").samples, 0);
  EXPECT_EQ(operating_point_cells(summarize_family(trace, "nope")),
            std::vector<std::string>(operating_point_columns().size()));
  const auto cells = operating_point_cells(pipes);
  ASSERT_EQ(cells.size(), operating_point_columns().size());
  EXPECT_EQ(cells[6], "sw_power_cap");
  EXPECT_EQ(cells[7], "0.400");
}

// A family that ran power-capped: every value of it carries the reason in its evidence and a
// confidence lowered by 1 - 0.3 x 40 %; a family that did not is left as it was.
TEST(OperatingPoint, ARecordedThrottledFamilyMarksTheValuesItTouched) {
  const auto trace = trace_from_table(read_csv(kTrace));
  Metadata meta;
  const auto obs = read_observations(data_file("h100_" + kPipes + ".csv"), &meta);
  const auto plain = analyze(kPipes, obs, meta);
  ASSERT_FALSE(plain.empty());

  Metadata throttled = meta;
  add_operating_point_metadata(throttled, summarize_family(trace, kPipes));
  const auto marked = analyze(kPipes, obs, throttled);
  ASSERT_EQ(marked.size(), plain.size());
  for (size_t i = 0; i < marked.size(); ++i) {
    EXPECT_NEAR(marked[i].confidence, plain[i].confidence * (1 - kThrottlePenalty * 0.4), 1e-12)
        << marked[i].name;
    EXPECT_EQ(marked[i].value, plain[i].value);
    EXPECT_NE(marked[i].evidence.find("sw_power_cap active in 40 %"), std::string::npos)
        << marked[i].evidence;
    EXPECT_EQ(evidence_path(marked[i].evidence), plain[i].evidence);
    EXPECT_EQ(family_of(marked[i]), kPipes);
  }

  Metadata calm = meta;
  add_operating_point_metadata(calm, summarize_family(trace, std::string(latency::kFamily.name)));
  const auto unmarked = analyze(kPipes, obs, calm);
  for (size_t i = 0; i < unmarked.size(); ++i) {
    EXPECT_EQ(unmarked[i].confidence, plain[i].confidence);
    EXPECT_EQ(unmarked[i].evidence, plain[i].evidence);
  }
}

TEST(OperatingPoint, EvidenceNamesItsFileBeforeAnyNote) {
  EXPECT_EQ(evidence_path("pipes.csv"), "pipes.csv");
  EXPECT_EQ(evidence_path("pipes.csv; sw_power_cap active in 12 % of the family's NVML samples"),
            "pipes.csv");
  EXPECT_EQ(evidence_path(""), "");
}

}  // namespace
}  // namespace gpuprobe
