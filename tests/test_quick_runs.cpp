// Quick is a faithful subset: every parameter a --quick run writes, whatever its confidence, lies
// within the interval of the full run of the same head on the same machine, widened by the
// parameter's tolerance (docs/parameters.md, the one table: tolerance_of below), and none of
// those a quick run leaves out (not_measured.csv). The pairs held are named in
// tests/committed_runs.hpp (kQuickFullPairs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "base/catalog.hpp"
#include "base/observation.hpp"
#include "app/run_analysis.hpp"
#include "committed_runs.hpp"

namespace fs = std::filesystem;

namespace gpuprobe {
namespace {

// "" when the quick run's value lies within the full run's interval (its value included),
// widened by `tol` (a fraction) on each side, else why not.
std::string disagreement(const Parameter& quick, const Parameter& full, double tol) {
  const double lo = std::min(full.low, full.value), hi = std::max(full.high, full.value);
  const double wlo = lo - tol * std::fabs(lo), whi = hi + tol * std::fabs(hi);
  if (quick.value >= wlo && quick.value <= whi) return "";
  return quick.name + ": quick " + std::to_string(quick.value) + " (confidence " +
         std::to_string(quick.confidence) + ") against full [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "] +- " + std::to_string(tol * 100) + " %";
}

TEST(QuickRuns, DisagreementUsesTheTolerance) {
  Parameter full{param::l1_hit_latency, 33, "cycles", 32.9, 33.1, 1, "", ""};
  Parameter quick = full;
  quick.value = quick.low = quick.high = 34;
  EXPECT_NE(disagreement(quick, full, 0), "");
  EXPECT_EQ(disagreement(quick, full, 0.03), "");
  quick.value = quick.low = quick.high = 35;
  EXPECT_NE(disagreement(quick, full, 0.03), "");
  quick.low = 33;  // its own interval reaching the full one does not excuse its value
  EXPECT_NE(disagreement(quick, full, 0.03), "");
  full.low = 31;  // the full run's own interval widens what agrees
  full.high = 34;
  EXPECT_EQ(disagreement(quick, full, 0.03), "");
}

struct RunInfo {
  fs::path dir;
  std::string gpu, version;
  bool quick = false;
  bool filtered = false;
};

RunInfo run_info(const fs::path& dir) {
  Metadata meta;
  read_parameters((dir / "parameters.csv").string(), &meta);
  RunInfo r{dir, dir.parent_path().filename().string(), "", false, false};
  for (const auto& [k, v] : meta) {
    if (k == "gpuprobe_version") r.version = v;
    if (k == "command_line") r.quick = r.quick || v.find("--quick") != std::string::npos;
    if (k == "quick") r.quick = r.quick || v == "1";
    if (k == "filter" && !v.empty()) r.filtered = true;
    if (k == "command_line" && v.find("--filter") != std::string::npos) r.filtered = true;
  }
  return r;
}

// Values of those pairs that their head's quick sweep got wrong and a later head fixes: the
// quick run, the parameter, the fix. A pair of the fixed head drops its entries; an entry whose
// value agrees fails, so that the list stays exact.
struct FixedSince {
  const char* quick;
  const char* name;
  const char* why;
};
const FixedSince kFixedSince[] = {
    {"nvidia-h200/20261125T225234Z", "dram_load_warps_90pct_ilp4",
     "quick swept 1, 2, 4 .. 64 warps: the knee landed on 64 against the full run's 40; quick "
     "sweeps the full run's warp counts since"},
    {"nvidia-h200/20261125T225234Z", "dram_load_warps_90pct_ilp8",
     "the same coarse grid: 32 against 20"},
};

TEST(QuickRuns, EachPairIsAQuickAndAFullRunOfOneHeadAndGpu) {
  ASSERT_GE(std::size(kQuickFullPairs), 2u) << "a pair for the H100 and one for the H200";
  for (const auto& pair : kQuickFullPairs) {
    SCOPED_TRACE(std::string(pair.quick) + " against " + pair.full);
    const fs::path quick = committed_run(pair.quick), full = committed_run(pair.full);
    ASSERT_TRUE(fs::exists(quick / "parameters.csv") && fs::exists(full / "parameters.csv"));
    const RunInfo q = run_info(quick), f = run_info(full);
    EXPECT_TRUE(q.quick);
    EXPECT_FALSE(f.quick);
    EXPECT_FALSE(q.filtered || f.filtered) << "a filtered run measures only part of the suite";
    EXPECT_EQ(q.gpu, f.gpu);
    EXPECT_EQ(q.version, f.version) << "one head";
  }
}

// The one tolerance table: docs/parameters.md's tolerance column, built into the catalog. A
// parameter it does not compare ("not compared ...") or does not list is not checked here.
bool tolerance_of(const std::string& name, double* tol) {
  const CatalogEntry* entry = find_parameter(name);
  return entry && tolerance_fraction(entry->tolerance, tol);
}

const FixedSince* fixed_since(const std::string& quick, const std::string& name) {
  for (const auto& f : kFixedSince)
    if (quick == f.quick && name == f.name) return &f;
  return nullptr;
}

// Both runs as this gpuprobe analyses their committed observations (what each wrote itself is
// held to that by tests/test_reanalysis.cpp): a quick run's subset is today's catalog's.
void expect_quick_agrees(const QuickFullPair& pair) {
  SCOPED_TRACE(std::string(pair.quick) + " against " + pair.full);
  std::map<std::string, Parameter> full;
  for (const auto& p : analyze_run_dir(committed_run(pair.full)).params) full[p.name] = p;
  for (const auto& p : analyze_run_dir(committed_run(pair.quick)).params) {
    EXPECT_FALSE(catalog().not_in_quick.count(p.name)) << p.name << " is listed as not measured by a quick run";
    double tol = 0;
    if (!tolerance_of(p.name, &tol)) continue;
    auto it = full.find(p.name);
    if (it == full.end()) {
      ADD_FAILURE() << p.name << ": written by the quick run, not by the full run";
      continue;
    }
    const std::string why = disagreement(p, it->second, tol);
    if (const FixedSince* f = fixed_since(pair.quick, p.name))
      EXPECT_NE(why, "") << p.name << " agrees: drop it from kFixedSince (" << f->why << ")";
    else
      EXPECT_EQ(why, "");
  }
}

TEST(QuickRuns, CommittedQuickRunsAgreeWithTheFullRun) {
  for (const auto& pair : kQuickFullPairs) expect_quick_agrees(pair);
}

TEST(QuickRuns, EveryToleranceIsReadable) {
  for (const auto& [name, e] : catalog().params) {
    double t = 0;
    bool compared = tolerance_fraction(e.tolerance, &t);
    EXPECT_TRUE(compared || e.tolerance.rfind("not compared", 0) == 0) << name << ": '" << e.tolerance << "'";
  }
  for (const auto& [name, why] : catalog().not_in_quick) {
    EXPECT_NE(find_parameter(name), nullptr) << name << " is not a canonical parameter";
    EXPECT_FALSE(why.empty()) << name;
  }
}

}  // namespace
}  // namespace gpuprobe
