// The table of committed runs the tests read (tests/committed_runs.hpp): each row is there and
// is the kind it says, and every run git tracks under results/ is a row.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

#include "base/csv.hpp"
#include "committed_runs.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

TEST(CommittedRuns, EveryRowIsThereAndIsTheKindItSays) {
  std::set<std::string> seen;
  for (const auto& r : kCommittedRuns) {
    SCOPED_TRACE(r.dir);
    EXPECT_TRUE(seen.insert(r.dir).second) << "listed twice";
    EXPECT_GT(std::string(r.why).size(), 10u) << "say why the tests keep it";
    const fs::path dir = committed_run(r.dir);
    if (!fs::exists(dir / "parameters.csv")) continue;  // committed_run() failed the test
    const bool quick = fs::exists(dir / "not_measured.csv");
    const bool filtered = !read_csv((dir / "parameters.csv").string()).meta_value("filter").empty();
    const bool repeat = std::string(r.dir).rfind("repeatability/", 0) == 0;
    EXPECT_EQ(quick, r.kind == RunKind::quick) << "not_measured.csv marks a quick run";
    EXPECT_EQ(filtered, r.kind == RunKind::filtered) << "# filter= marks a filtered run";
    EXPECT_EQ(repeat, r.kind == RunKind::repeat) << "repeat runs lie under results/repeatability/";
  }
}

// The roles name rows of the table, of the kind the tests that read them need.
TEST(CommittedRuns, EveryRoleIsARowOfItsKind) {
  auto is_row = [](const std::string& dir, RunKind kind) {
    for (const auto& r : kCommittedRuns)
      if (r.dir == dir && r.kind == kind) return true;
    return false;
  };
  for (const char* role : {kH100Run, kH200Run, kH200TwoGpuRun})
    EXPECT_TRUE(is_row(role, RunKind::full)) << role << " is no full run of the table";
  EXPECT_TRUE(is_row(kH100FilteredRun, RunKind::filtered)) << kH100FilteredRun;
  EXPECT_TRUE(fs::exists(fs::path(committed_run(kH200TwoGpuRun)) / "p2p.csv")) << "two GPUs";
  for (const auto& pair : kQuickFullPairs) {
    EXPECT_TRUE(is_row(pair.quick, RunKind::quick))
        << pair.quick << " is no quick run of the table";
    EXPECT_TRUE(is_row(pair.full, RunKind::full)) << pair.full << " is no full run of the table";
  }
}

// A run committed without a row would be read by no test: git's list of results/ holds no run
// the table lacks. (A run of one's own, untracked, is no business of the tests.)
TEST(CommittedRuns, TheTableListsEveryTrackedRun) {
  const std::string cmd = "git -C '" + std::string(GPUPROBE_SOURCE_DIR) +
                          "' ls-files -- 'results/*parameters.csv' 2> /dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string listing;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) listing.append(buf, n);
  if (pclose(pipe) != 0 || listing.empty())
    GTEST_SKIP() << "not a git checkout: which runs are committed is git's to say";
  std::set<std::string> rows;
  for (const auto& r : kCommittedRuns) rows.insert(r.dir);
  for (size_t at = 0, end; (end = listing.find('\n', at)) != std::string::npos; at = end + 1) {
    const fs::path dir =
        fs::path(listing.substr(at, end - at)).parent_path().lexically_relative("results");
    if (*dir.begin() == "compare") continue;  // a comparison's table, not a run
    EXPECT_TRUE(rows.count(dir.generic_string()))
        << "results/" << dir.generic_string()
        << " is committed but not in tests/committed_runs.hpp";
  }
}

}  // namespace
}  // namespace gpuprobe
