// Transpose: the padding speedup with its bounds, and the recorded H100 run.
#include <gtest/gtest.h>

#include "observation_rows.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"

#include "analysis/analyzer.hpp"
#include "analysis/transpose.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"

using namespace gpuprobe;

namespace {

const RowMaker row{0.02};

}  // namespace

TEST(TransposeAnalyzer, RatioWithBounds) {
  std::vector<Observation> obs = {
      row(std::string(transpose::kFamily.name), transpose::kTransposeProbe,
          {{transpose::kTypeColumn, "float"},
           {transpose::kPaddingColumn, "0"},
           {transpose::kSideColumn, "7040"}},
          300, "us"),
      row(std::string(transpose::kFamily.name), transpose::kTransposeProbe,
          {{transpose::kTypeColumn, "float"},
           {transpose::kPaddingColumn, "1"},
           {transpose::kSideColumn, "7040"}},
          150, "us"),
      row(std::string(transpose::kFamily.name), transpose::kTransposeProbe,
          {{transpose::kTypeColumn, "double"},
           {transpose::kPaddingColumn, "0"},
           {transpose::kSideColumn, "4992"}},
          200, "us")};
  auto ps = analyze(std::string(transpose::kFamily.name), obs);
  ASSERT_EQ(ps.size(), 1u);  // double has no padded time: nothing to compare
  EXPECT_EQ(ps[0].name, param::transpose_padding_speedup_float);
  EXPECT_DOUBLE_EQ(ps[0].value, 2.0);
  EXPECT_LT(ps[0].low, 2.0);
  EXPECT_GT(ps[0].high, 2.0);
}

TEST(RecordedH100, Transpose) {
  auto obs = recorded_observations(std::string(transpose::kFamily.name));
  REQUIRE_RECORDED(!obs.empty()) << "tests/data/h100_transpose.csv";
  auto ps = analyze(std::string(transpose::kFamily.name), obs);
  // Float: the unpadded tile's 32-way conflicts cost more shared-memory passes than the DRAM
  // time of a tile, so padding shows. Double: a tile moves twice the bytes for about the same
  // passes, so a DRAM-bound transpose may hide the conflicts; padding must not hurt.
  const Parameter* f = find(ps, param::transpose_padding_speedup_float);
  const Parameter* d = find(ps, param::transpose_padding_speedup_double);
  ASSERT_TRUE(f && d);
  EXPECT_GT(f->value, 1.2);
  EXPECT_LT(f->value, 40);
  EXPECT_GT(d->value, 0.95);
  EXPECT_LT(d->value, 40);
}
