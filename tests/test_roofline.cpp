// The roofline family's counts against hand arithmetic, its sizes, its file's round trip, and
// the rule that it feeds no parameter.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "analysis/analyzer.hpp"
#include "analysis/energy.hpp"
#include "analysis/roofline.hpp"
#include "base/observation.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
using namespace roofline;

std::map<std::string, double> as_map(const Counts& c) {
  std::map<std::string, double> m;
  for (const auto& x : c) {
    EXPECT_FALSE(m.count(x.item)) << x.item << " counted twice";
    m[x.item] = x.value;
  }
  return m;
}

TEST(Roofline, TriadCountsByHand) {
  // 1024 floats a buffer, two passes, L2-resident: 1024 x 2 FMAs, 8 B read and 4 B written each.
  EXPECT_EQ(as_map(triad_counts(1024, 2, true)),
            (std::map<std::string, double>{{energy::kFp32Fma, 2048},
                                           {kL2Read, 16384},
                                           {energy::kL2NearRead, 16384},
                                           {kL2Write, 8192},
                                           {kFootprint, 12288}}));
  EXPECT_EQ(as_map(triad_counts(1024, 1, false)),
            (std::map<std::string, double>{{energy::kFp32Fma, 1024},
                                           {kL2Read, 8192},
                                           {energy::kDramRead, 8192},
                                           {energy::kDramWrite, 4096},
                                           {kFootprint, 12288}}));
}

TEST(Roofline, DotStencilAndPolynomialCountsByHand) {
  EXPECT_EQ(as_map(dot_counts(4096, 8)), (std::map<std::string, double>{{energy::kFp32Fma, 4096},
                                                                        {energy::kDramRead, 32768},
                                                                        {kL2Read, 32768},
                                                                        {kAtomicGlobal, 8},
                                                                        {kFootprint, 32772}}));
  // A 4^3 cube: 8 interior points (7 loads, 7 FP32 ops each), 56 boundary points (1 load).
  EXPECT_EQ(as_map(stencil7_counts(4)),
            (std::map<std::string, double>{{energy::kFp32Fma, 56},
                                           {energy::kL1Read, 4 * (56 + 56)},
                                           {energy::kDramRead, 256},
                                           {energy::kDramWrite, 256},
                                           {kL2Read, 256},
                                           {kFootprint, 512}}));
  EXPECT_EQ(as_map(fp64_poly_counts(1000, 512)),
            (std::map<std::string, double>{{energy::kFp64Fma, 512000},
                                           {energy::kDramRead, 8000},
                                           {energy::kDramWrite, 8000},
                                           {kL2Read, 8000},
                                           {kFootprint, 16000}}));
}

TEST(Roofline, SgemmCountsByHand) {
  // 256^3: 4 blocks of 256 threads; each thread reads 8 + 8 floats of shared memory per k (256
  // of them), each block stages 2 x 128 x 8 floats per K step (32 of them).
  EXPECT_EQ(as_map(sgemm_counts(256)),
            (std::map<std::string, double>{{energy::kFp32Fma, 16777216},
                                           {energy::kSharedRead, 1024.0 * 256 * 64},
                                           {energy::kSharedWrite, 4.0 * 32 * 8192},
                                           {kL2Read, 4.0 * 32 * 8192},
                                           {energy::kDramRead, 8.0 * 65536},
                                           {energy::kDramWrite, 4.0 * 65536},
                                           {kFootprint, 12.0 * 65536}}));
}

TEST(Roofline, TensorTransposeAndHistogramCountsByHand) {
  // 2 blocks, 3 trips: per block and trip 128 rows of A and 256 of B, 256 bf16 each (196608 B,
  // the held-out GEMM's stage bytes), 128 x 256 x 256 multiply-adds; C 128 x 256 floats a block.
  EXPECT_EQ(as_map(tensor_gemm_counts(2, 3)),
            (std::map<std::string, double>{{energy::kWgmmaBf16, 6.0 * 128 * 256 * 256},
                                           {energy::kL2NearRead, 6.0 * 196608},
                                           {kL2Read, 6.0 * 196608},
                                           {energy::kSharedWrite, 6.0 * 196608},
                                           {energy::kDramWrite, 2.0 * 131072},
                                           {kFootprint, 2.0 * 65536 + 131072 + 2.0 * 131072}}));
  EXPECT_EQ(as_map(transpose_counts(64)),
            (std::map<std::string, double>{{energy::kDramRead, 16384},
                                           {energy::kDramWrite, 16384},
                                           {kL2Read, 16384},
                                           {energy::kSharedWrite, 16384},
                                           {energy::kSharedRead, 16384},
                                           {kFootprint, 32768}}));
  EXPECT_EQ(as_map(histogram_counts(1000, 4096)),
            (std::map<std::string, double>{{energy::kDramRead, 4000},
                                           {kL2Read, 4000},
                                           {kAtomicGlobal, 1000},
                                           {kFootprint, 4000 + 4 * 4096}}));
}

TEST(Roofline, EveryKernelIsCountedInKnownItemsAndUnits) {
  const Sizes z = sizes_for(50u << 20, 132, uint64_t(40) << 30);
  const std::vector<std::string> extra = {kFootprint, kL2Read, kL2Write};
  for (const auto& k : kernels()) {
    SCOPED_TRACE(k);
    const Counts c = counts_of(k, z, 132, 1056);
    EXPECT_FALSE(c.empty());
    for (const auto& x : c) {
      const bool level = energy::is_level(x.item);
      const bool op = x.item == kAtomicGlobal || x.item.rfind("tensor_", 0) == 0 ||
                      std::count(energy::alu_ops().begin(), energy::alu_ops().end(), x.item);
      const bool bytes = level || std::count(extra.begin(), extra.end(), x.item);
      EXPECT_TRUE(op || bytes) << x.item << " is no item of the energy family nor the roofline's";
      EXPECT_EQ(x.unit, bytes ? "B" : "op") << x.item;
      EXPECT_GT(x.value, 0) << x.item;
    }
  }
  EXPECT_THROW(counts_of("no_such_kernel", z, 132, 1), std::invalid_argument);
}

TEST(Roofline, SizesFollowTheDevice) {
  const uint64_t l2 = 50u << 20;
  const Sizes z = sizes_for(l2, 132, uint64_t(40) << 30);
  // The DRAM kernels' buffers span 4x L2 each; the L2 triad a quarter of L2 in all.
  EXPECT_GE(4 * z.triad_dram + 4096, 4 * l2);
  EXPECT_LE(48 * z.triad_l2, l2);
  EXPECT_GT(48 * z.triad_l2 * 100, 96 * l2);
  EXPECT_GE(4 * z.stencil * z.stencil * z.stencil, 4 * l2);
  EXPECT_GE(4 * z.transpose * z.transpose, 4 * l2);
  EXPECT_EQ(z.transpose % kTransposeTile, 0u);
  EXPECT_EQ(z.sgemm % kSgemmTile, 0u);
  // At least eight C tiles per SM.
  EXPECT_GE((z.sgemm / kSgemmTile) * (z.sgemm / kSgemmTile), 8u * 132);
  EXPECT_EQ(z.triad_dram % 1024, 0u);
  // A smaller memory shrinks the DRAM buffers to fit.
  const uint64_t cap = 100u << 20;
  const Sizes s = sizes_for(l2, 132, cap);
  EXPECT_LE(12 * s.triad_dram, cap);
  EXPECT_LE(8 * s.dot, cap);
  EXPECT_LE(8 * s.stencil * s.stencil * s.stencil, cap);
  EXPECT_LE(8 * s.transpose * s.transpose, cap);
  EXPECT_LE(4 * s.histogram, cap);
  // The check sizes fit the kernels' shapes.
  const Sizes c = check_sizes();
  EXPECT_EQ(c.sgemm % kSgemmTile, 0u);
  EXPECT_EQ(c.transpose % kTransposeTile, 0u);
  EXPECT_EQ(c.triad_dram % 4, 0u);
  EXPECT_EQ(c.dot % 4, 0u);
}

// One kernel's rows as the probe writes them.
std::vector<Observation> one_kernel_rows() {
  auto row = [](const char* metric, const std::string& item, double v, const std::string& unit,
                double half, int reps) {
    return Observation{std::string(kFamily.name),
                       kTriadDram,
                       {{kMetricColumn, metric}, {kItemColumn, item}},
                       v,
                       unit,
                       v - half,
                       v,
                       v + half,
                       reps};
  };
  std::vector<Observation> obs = {row(kTime, kLaunch, 2.5e-4, "s", 1e-6, 11),
                                  row(kEnergy, kLaunch, 0.175, "J", 0.002, 2),
                                  row(kPower, kLaunch, 700, "W", 8, 2)};
  for (const auto& c : triad_counts(52428800, 1, false))
    obs.push_back(row(kCount, c.item, c.value, c.unit, 0, 1));
  return obs;
}

TEST(Roofline, ASyntheticFileRoundTrips) {
  const auto obs = one_kernel_rows();
  const fs::path dir =
      fs::temp_directory_path() / ("gpuprobe_roofline_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path csv = dir / (std::string(kFamily.name) + ".csv");
  {
    std::ofstream f(csv);
    f << format_observations({{"gpu", "model"}}, obs);
  }
  Metadata meta;
  const auto back = read_observations(csv.string(), &meta);
  fs::remove_all(dir);
  ASSERT_EQ(back.size(), obs.size());
  for (size_t i = 0; i < obs.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(back[i].family, obs[i].family);
    EXPECT_EQ(back[i].probe, obs[i].probe);
    EXPECT_EQ(back[i].param_text(kMetricColumn), obs[i].param_text(kMetricColumn));
    EXPECT_EQ(back[i].param_text(kItemColumn), obs[i].param_text(kItemColumn));
    EXPECT_EQ(back[i].unit, obs[i].unit);
    EXPECT_DOUBLE_EQ(back[i].value, obs[i].value);
    EXPECT_DOUBLE_EQ(back[i].p05, obs[i].p05);
    EXPECT_DOUBLE_EQ(back[i].p95, obs[i].p95);
    EXPECT_EQ(back[i].reps, obs[i].reps);
  }
}

TEST(Roofline, FeedsNoParameter) {
  const std::string family(kFamily.name);
  EXPECT_FALSE(kFamily.no_analyzer.empty());
  EXPECT_FALSE(analyzers().count(family)) << "an analyzer reads roofline.csv";
  ASSERT_TRUE(family_descriptors().count(family)) << "GPUPROBE_DESCRIBE_FAMILY(roofline::kFamily)";
  EXPECT_TRUE(analyze(family, one_kernel_rows()).empty());
  // No other family's analyzer names the roofline family's file or its constants.
  for (const auto& e :
       fs::directory_iterator(fs::path(GPUPROBE_SOURCE_DIR) / "harness" / "analysis")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".cpp" || name.rfind(family, 0) == 0) continue;
    std::ifstream f(e.path());
    std::stringstream text;
    text << f.rdbuf();
    EXPECT_EQ(text.str().find(family), std::string::npos) << name << " reads the roofline family";
  }
}

}  // namespace
}  // namespace gpuprobe
