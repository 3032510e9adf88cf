// `gpuprobe compare --fleet`: deviations from the fleet median and MAD-based outliers, on a
// fleet made of copies of a committed H100 run with small deterministic noise and three GPUs
// gone wrong: a slow one (DRAM bandwidth), a throttled clock, a degraded host link.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <filesystem>
#include <set>

#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "app/fleet.hpp"
#include "base/parameter_names.hpp"
#include "base/run_dir.hpp"
#include "committed_runs.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;


struct Fault {
  int member;
  std::string parameter;
  double factor;
};

// n copies of `base`, each value scaled by up to +-0.4 % (deterministic), a host link of
// 54 GB/s added to each that has none, then the faults applied.
std::vector<FleetMember> fleet_from(const FleetMember& base, int n, const std::vector<Fault>& faults) {
  std::vector<FleetMember> out;
  for (int k = 0; k < n; ++k) {
    FleetMember m = base;
    m.label = "node" + std::to_string(k);
    if (std::none_of(m.params.begin(), m.params.end(),
                     [](const Parameter& p) { return p.name == param::h2d_bandwidth_pinned; }))
      m.params.push_back(
          {param::h2d_bandwidth_pinned, 54, "GB/s", 53, 55, 0.9, "copy_engine", "host_link.csv"});
    // A run's value moves with its interval (parameters.csv is read back row by row).
    auto scale = [](Parameter& p, double f) {
      p.value *= f;
      p.low *= f;
      p.high *= f;
    };
    for (size_t i = 0; i < m.params.size(); ++i)
      scale(m.params[i], 1 + 0.004 * std::sin(7.0 * k + double(i)));
    for (const auto& f : faults)
      if (f.member == k)
        for (auto& p : m.params)
          if (p.name == f.parameter) scale(p, f.factor);
    out.push_back(m);
  }
  return out;
}

const std::vector<Fault> kFaults = {{2, param::dram_read_bandwidth, 0.8},
                                    {5, param::sm_clock_measured, 0.75},
                                    {6, param::h2d_bandwidth_pinned, 0.5}};

TEST(Fleet, FlagsTheSlowTheThrottledAndTheDegradedLinkOnly) {
  const std::string run = committed_run(kH100Run);
  const auto members = fleet_from(load_fleet_member(run), 8, kFaults);
  const auto cells = fleet_deviations(members);
  std::set<std::pair<size_t, std::string>> flagged;
  for (const auto& c : cells)
    if (c.outlier) flagged.insert({c.member, c.parameter});
  std::set<std::pair<size_t, std::string>> want;
  for (const auto& f : kFaults) want.insert({size_t(f.member), f.parameter});
  EXPECT_EQ(flagged, want);
  for (const auto& c : cells)
    if (c.member == 6 && c.parameter == param::h2d_bandwidth_pinned) {
      EXPECT_NEAR(c.deviation, -0.5, 0.01);
      EXPECT_LT(c.robust_z, -kOutlierRobustZ);
    }
}

TEST(Fleet, IdenticalFleetFlagsNothingAndTinyDifferencesStayUnflagged) {
  FleetMember a;
  a.params = {{"x", 100, "GB/s", 0, 0, 1, "m", "e"}};
  std::vector<FleetMember> same(5, a);
  for (const auto& c : fleet_deviations(same)) EXPECT_FALSE(c.outlier);
  // MAD 0 and one member 1 % off: infinite z, but below the smallest deviation that counts.
  same[3].params[0].value = 101;
  for (const auto& c : fleet_deviations(same)) EXPECT_FALSE(c.outlier);
  same[3].params[0].value = 150;
  auto cells = fleet_deviations(same);
  EXPECT_TRUE(cells[3].outlier);
  EXPECT_TRUE(std::isinf(cells[3].robust_z));
  // Two runs are no fleet.
  EXPECT_TRUE(fleet_deviations({a, a}).empty());
}

TEST(Fleet, CommandWritesCsvAndReport) {
  const std::string run = committed_run(kH100Run);
  const fs::path dir = fs::temp_directory_path() / "gpuprobe_fleet_test";
  fs::remove_all(dir);
  std::vector<std::string> args;
  Metadata meta;
  read_parameters(run + "/parameters.csv", &meta);
  for (const auto& m : fleet_from(load_fleet_member(run), 8, kFaults)) {
    const fs::path d = dir / m.label;
    fs::create_directories(d);
    write_file_atomic((d / "parameters.csv").string(), format_parameters(meta, m.params));
    args.push_back(d.string());
  }
  args.push_back("--csv");
  args.push_back((dir / "fleet.csv").string());
  testing::internal::CaptureStdout();
  EXPECT_EQ(fleet_main(args), 0);
  const std::string md = testing::internal::GetCapturedStdout();
  EXPECT_NE(md.find(param::dram_read_bandwidth), std::string::npos);
  EXPECT_NE(md.find("3 of 8 runs have outliers"), std::string::npos) << md;
  CsvTable t = read_csv((dir / "fleet.csv").string());
  ASSERT_EQ(t.header.back(), "outlier");
  size_t outliers = 0;
  for (const auto& r : t.rows) outliers += r.back() == "1";
  EXPECT_EQ(outliers, 3u);
  fs::remove_all(dir);
}

// Each run is named by its card; runs of one card are said to weigh as several, and runs that
// record no card are said to be of no known card.
TEST(Fleet, NamesEachRunsCard) {
  std::vector<FleetMember> members(4);
  members[0].card = members[1].card = "GPU-11111111-0000-0000-0000-000000000000";
  members[2].card = "GPU-22222222-0000-0000-0000-000000000000";
  const std::string text = fleet_cards_text(members);
  EXPECT_NE(
      text.find("Cards: 2 named by their runs: GPU-11111111-0000-0000-0000-000000000000 (2 runs), "
                "GPU-22222222-0000-0000-0000-000000000000 (1 run); 1 run records no card"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("several runs of one card"), std::string::npos) << text;
  members[1].card = kUnrecordedCard;
  EXPECT_EQ(fleet_cards_text(members).find("several runs of one card"), std::string::npos);
  const std::string csv = format_fleet_csv(members, {}, kOutlierRobustZ, kMinOutlierDeviation);
  EXPECT_NE(csv.find("run,gpu,card,pci_bus_id,parameter"), std::string::npos) << csv;
}

TEST(Fleet, BadInput) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(fleet_main({"a", "b"}), 2);                               // fewer than three runs
  EXPECT_EQ(fleet_main({"a", "b", "c", "--z", "-1"}), 2);             // z must be positive
  EXPECT_EQ(fleet_main({"a", "b", "c", "--min-deviation"}), 2);       // missing value
  EXPECT_EQ(fleet_main({"a", "b", "c", "--bogus"}), 2);
  EXPECT_EQ(fleet_main({"/nonexistent/1", "/nonexistent/2", "/nonexistent/3"}), 1);
  testing::internal::GetCapturedStderr();
}

}  // namespace
}  // namespace gpuprobe
