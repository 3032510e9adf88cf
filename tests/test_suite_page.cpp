// docs/suite.md is what the program gives: `gpuprobe catalog --suite` from the families it
// registers, the catalog and the committed full H100 run's wall times. An edit of a family, a
// parameter or a figure without the page fails here, and says how to write it anew.
#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/p2p.hpp"
#include "app/suite_doc.hpp"
#include "cli_run.hpp"

namespace {

namespace fs = std::filesystem;

TEST(Suite, ThePageIsGenerated) {
  const fs::path committed = fs::path(GPUPROBE_SOURCE_DIR) / "docs/suite.md";
  const fs::path made = fs::temp_directory_path() / "gpuprobe-suite.md";
  fs::remove(made);
  // The test runs in the source tree (ctest's working directory): the run's path is relative.
  const auto r = cli::run("catalog --suite " + made.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = cli::slurp(made);
  EXPECT_NE(text.find("## latency\n"), std::string::npos)
      << "the program registers no latency family";
  EXPECT_NE(text.find(" s in all."), std::string::npos);
  EXPECT_TRUE(text == cli::slurp(committed))
      << "docs/suite.md is not what the program gives: run\n"
         "  ./build/gpuprobe catalog --suite docs/suite.md\nand commit the page";
  fs::remove(made);
}

TEST(Suite, WallTimesAreReadFromTheCommittedRun) {
  const auto times = gpuprobe::read_family_times(std::string(GPUPROBE_SOURCE_DIR) + "/" +
                                                 gpuprobe::kSuiteTimesRun);
  ASSERT_GT(times.size(), 20u);
  for (const auto& [family, t] : times)
    EXPECT_TRUE(t.not_run.empty() ? t.wall_s > 0 : t.wall_s == 0) << family << ": " << t.not_run;
  // A family the run could not measure says why, not a time.
  const std::string p2p(gpuprobe::p2p::kFamily.name);
  ASSERT_TRUE(times.count(p2p));
  EXPECT_NE(times.at(p2p).not_run.find("two or more GPUs"), std::string::npos);
}

}  // namespace
