#!/bin/sh
# A new probe family from a name: the smallest family that works, to copy and change.
#   scripts/new-family.sh NAME [DIR]
# NAME is snake_case, what the family reveals. Into DIR (the source tree by default) it
# writes the five files of a family and adds its parameter to the catalog:
#   microbench/NAME.cu           the kernel beside its driver (ProbeFamily, sass_allows)
#   harness/analysis/NAME.hpp    its descriptor and its names: probe, sweep column, kernel
#   harness/analysis/NAME.cpp    the analyzer and the kernel's code expectations
#   plots/NAME.gp                its figure
#   tests/test_NAME.cpp          its tests, on synthetic observations with a known answer
#   harness/base/parameters/compute.hpp   + NAME_fma_latency (the catalog: one line)
# The example measures what a dependent fp32 FMA costs: a chain of FMAs, each waiting on the
# one before, timed at several lengths; the slope of cycles against length is the latency.
# Replace the kernel, the model and the parameter with yours. Then:
#   cmake --build build && ./build/gpuprobe catalog --markdown docs/parameters.md
#   ./build/gpuprobe catalog --suite docs/suite.md
#   ctest --test-dir build -R 'CamelName|Families|Catalog|Suite|Names'   (fma_chain: FmaChain)
# and, on a GPU, `./build/gpuprobe run --filter '^NAME/'`; its rows, copied to
# tests/data/h100_NAME.csv, let a test read a recorded run too (tests/recorded.hpp).
# DIR other than the tree (a check, tests/CMakeLists.txt): the catalog file is copied there
# with the new line, the tree is left as it is.
set -eu
name=${1:?usage: scripts/new-family.sh NAME [DIR]}
src=$(cd "$(dirname "$0")/.." && pwd)
dir=${2:-$src}
case $name in
  *[!a-z0-9_]* | [!a-z]*) echo "new-family.sh: '$name' is not snake_case (a-z, 0-9, _)" >&2; exit 2 ;;
esac
for f in microbench/$name.cu harness/analysis/$name.hpp harness/analysis/$name.cpp \
         plots/$name.gp tests/test_$name.cpp; do
  if [ -e "$dir/$f" ] || [ -e "$src/$f" ]; then echo "new-family.sh: $f exists" >&2; exit 2; fi
done
# The tests' suite name, in CamelCase: fma_chain -> FmaChain.
camel=$(echo "$name" | awk -F_ '{ for (i = 1; i <= NF; i++) printf "%s%s", toupper(substr($i, 1, 1)), substr($i, 2) }')
mkdir -p "$dir/microbench" "$dir/harness/analysis" "$dir/harness/base/parameters" "$dir/plots" "$dir/tests"

# One line in the catalog: parameters are named there and nowhere else.
catalog=harness/base/parameters/compute.hpp
if [ "$dir" != "$src" ]; then cp "$src/$catalog" "$dir/$catalog"; fi
cat >>"$dir/$catalog" <<EOF

// $name: a dependent fp32 FMA chain timed at several lengths (analysis/$name.cpp).
GPUPROBE_PARAMETER(${name}_fma_latency, "cycles", "$name", dependent_chain, "3 %",
                   "cycles from one fp32 FMA to the next that waits on its result")
EOF

cat >"$dir/harness/analysis/$name.hpp" <<EOF
#pragma once
// $name: what a dependent fp32 FMA costs, as the slope of a chain's cycles against its length
// (the fixed cost of starting and reading the clock falls into the intercept).
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::$name {

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"$name", "$name.gp"};
// The names its rows carry, each written by the driver and read by the analyzer and the tests.
constexpr const char* kChainProbe = "chain";
constexpr const char* kLengthColumn = "length";  // FMAs in the timed chain

constexpr int kUnroll = 64;  // FMAs per loop trip of the kernel
std::vector<int> lengths(bool quick);
std::string kernel_name();

std::vector<Parameter> analyze_$name(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace gpuprobe::$name
EOF

cat >"$dir/harness/analysis/$name.cpp" <<EOF
#include "analysis/$name.hpp"

#include <algorithm>
#include <cmath>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe::$name {

namespace {

// Below this fraction of the curve's variance left unexplained, the line holds.
constexpr double kFitFloor = 0.5;

std::vector<CodeExpectation> expectations() {
  CodeExpectation e;
  e.source = std::string(kFamily.name);
  e.kernel = kernel_name();
  e.probe = kChainProbe;
  // One chain: every FMA of a loop trip waits on the one before.
  e.ptx = {{R"(^fma\.rn\.f32 )", kUnroll, true}};
  e.sass = {{R"(^FFMA )", kUnroll, true}};
  return {e};
}

}  // namespace

std::vector<int> lengths(bool quick) {
  if (quick) return {kUnroll * 16, kUnroll * 64};
  return {kUnroll * 16, kUnroll * 32, kUnroll * 64, kUnroll * 128};
}

std::string kernel_name() { return std::string(kFamily.name) + "::chain"; }

std::vector<Parameter> analyze_$name(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<double> x, y, w;
  double confidence = 1;
  for (const auto& o : analysis::finite_rows(obs, kChainProbe, "cycles")) {
    const double length = o.param(kLengthColumn);
    if (!(length > 0)) continue;
    x.push_back(length);
    y.push_back(o.value);
    w.push_back(1);
    confidence = std::min(confidence, analysis::spread_confidence(o));
  }
  if (x.size() < 2) return {};
  const analysis::LineFit f = analysis::fit_line(x, y, w, true);
  if (!(f.slope > 0)) return {};
  Parameter p;
  p.name = param::${name}_fma_latency;
  p.value = f.slope;
  p.unit = "cycles";
  const double se = std::max(f.slope_se, 1e-3 * f.slope);
  p.low = f.slope - 2 * se;
  p.high = f.slope + 2 * se;
  const double unexplained = f.sst > 0 ? f.ssr / f.sst : 0;
  p.confidence = confidence * std::max(kFitFloor, 1 - unexplained);
  p.method = "slope of cycles against the length of a dependent fp32 FMA chain";
  p.evidence = analysis::evidence_file(obs, std::string(kFamily.name) + ".csv");
  return {p};
}

GPUPROBE_REGISTER_ANALYZER($name::kFamily, analyze_$name);
GPUPROBE_REGISTER_CODE_EXPECTATIONS(expectations);

}  // namespace gpuprobe::$name
EOF

cat >"$dir/microbench/$name.cu" <<EOF
// $name: one thread runs a chain of dependent fp32 FMAs, kUnroll per loop trip, and reads the
// clock around it; several lengths give the cycles per FMA as a slope (analysis/$name.cpp).
#include <string>
#include <vector>

#include "analysis/$name.hpp"
#include "block_timing.cuh"
#include "gpu/sass_check.hpp"

namespace gpuprobe::$name {

__global__ void chain(int trips, BlockSpan* spans, float* sink, int flag) {
  float x = threadIdx.x * 1e-3f + 1.0f;
  const float a = 0.999f;
  long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < trips; ++i) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
      asm volatile("fma.rn.f32 %0, %0, %1, 0f3F000000;" : "+f"(x) : "f"(a));
  }
  long long end = clock64();
  record_span(spans, start, end);
  keep(x, sink, flag);
}

namespace {

class ChainFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string($name::kFamily.name); }
  std::string description() const override {
    return "cycles of a dependent fp32 FMA chain against its length (an example family)";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{kChainProbe, "cycles of one thread's chain of dependent FMAs, per length"}};
  }
  void run(RunContext& ctx) override {
    if (!ctx.enabled(kChainProbe) || !sass_allows(ctx, kChainProbe, {kernel_name()})) return;
    DeviceBuffer<float> sink(1);
    SpanRecorder spans(1);
    for (int length : lengths(ctx.quick())) {
      const int trips = length / kUnroll;
      const int reps = ctx.quick() ? 3 : 5;
      Point pt{kChainProbe, {{kLengthColumn, std::to_string(length)}}, "cycles", reps};
      ctx.measure(pt, [&] {
        const double s = time_seconds([&] { chain<<<1, 1>>>(trips, spans.get(), sink.get(), 0); });
        return Sample{median_sm_cycles(spans.fetch()), s};
      });
    }
  }
};

GPUPROBE_REGISTER_FAMILY(ChainFamily);

}  // namespace
}  // namespace gpuprobe::$name
EOF

cat >"$dir/plots/$name.gp" <<EOF
# family: $name
# title: A dependent FMA chain: cycles against its length
# read: A straight line; its slope is the cycles one FMA waits for the one before.
load 'plots/style.gp'
set datafile missing NaN

chain(u) = is_probe("chain") && is_unit(u) ? column("length") : NaN
set xlabel "FMAs in the chain"
set ylabel "cycles"
set xrange [0:*]
set yrange [0:*]
set key top left noenhanced

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  plot for [i=1:words(files)] word(files, i) using (chain("cycles")):(column("value")) \\
         with linespoints ls i title word(labels, i)
}
EOF

cat >"$dir/tests/test_$name.cpp" <<EOF
// The $name family on synthetic observations with a known answer: a chain of 4 cycles per FMA
// and a fixed cost of 30, with noise; too few rows give no parameter.
#include <gtest/gtest.h>

#include <random>

#include "analysis/$name.hpp"
#include "analysis/analyzer.hpp"
#include "base/parameter_names.hpp"
#include "observation_rows.hpp"
#include "parameter_checks.hpp"

namespace gpuprobe {
namespace {

std::vector<Observation> chain_rows(double per_fma, double fixed, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(1.0, 0.002);
  std::vector<Observation> out;
  for (int length : $name::lengths(false))
    out.push_back(make_row(std::string($name::kFamily.name), $name::kChainProbe,
                           {{$name::kLengthColumn, std::to_string(length)}},
                           (per_fma * length + fixed) * noise(rng), "cycles", 0.002));
  return out;
}

TEST($camel, SlopeIsTheLatencyPerFma) {
  const auto ps = analyze(std::string($name::kFamily.name), chain_rows(4, 30, 1), {});
  expect_well_formed(ps, "$name.csv");
  const Parameter* p = find(ps, param::${name}_fma_latency);
  ASSERT_NE(p, nullptr);
  EXPECT_NEAR(p->value, 4, 0.05);
  EXPECT_LE(p->low, 4);
  EXPECT_GE(p->high, 4);
  EXPECT_GT(p->confidence, 0.5);
}

TEST($camel, OneLengthGivesNoParameter) {
  auto rows = chain_rows(4, 30, 2);
  rows.resize(1);
  const auto ps = analyze(std::string($name::kFamily.name), rows, {});
  EXPECT_EQ(find(ps, param::${name}_fma_latency), nullptr);
}

}  // namespace
}  // namespace gpuprobe
EOF
echo "new-family.sh: $name written into $dir"
