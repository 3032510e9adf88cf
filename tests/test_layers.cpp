// The house's floors: every include in harness/ and microbench/ runs down (or across one
// floor), never back up. base is the ground (CSV, observations, run folders, the catalog);
// analysis and gpu stand on it; app (report, compare, export) stands on analysis, microbench
// (the kernels) on analysis and gpu; program (main, the runner) on everything. This test
// reads every source's quoted includes and fails on one that reaches a floor its file may
// not see, and on a file longer than a newcomer can hold in mind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kSource = GPUPROBE_SOURCE_DIR;

// What each floor may include (itself included).
const std::map<std::string, std::set<std::string>> kMayInclude = {
    {"base", {"base"}},
    {"analysis", {"base", "analysis"}},
    {"gpu", {"base", "gpu"}},
    {"app", {"base", "analysis", "app"}},
    {"microbench", {"base", "analysis", "gpu", "microbench"}},
    {"program", {"base", "analysis", "gpu", "app", "microbench", "program"}},
};

// A file longer than this is split: no harness file over 1,000 lines.
constexpr int kMaxHarnessLines = 1000;

bool is_source(const fs::path& p) {
  static const std::set<std::string> kExt = {".cpp", ".hpp", ".cu", ".cuh"};
  return kExt.count(p.extension().string()) > 0;
}

// The floor of a path relative to the source tree ("harness/app/report.cpp" -> "app"), or of
// an include as written ("app/report.hpp" -> "app"; a bare "pipe_ops.cuh" is its includer's).
std::string floor_of(const fs::path& rel) {
  auto it = rel.begin();
  if (it == rel.end()) return "";
  if (*it == "microbench") return "microbench";
  if (*it == "harness") ++it;
  return it == rel.end() ? "" : it->string();
}

std::vector<fs::path> sources() {
  std::vector<fs::path> out;
  for (const char* top : {"harness", "microbench"})
    for (const auto& e : fs::recursive_directory_iterator(kSource / top))
      if (e.is_regular_file() && is_source(e.path())) out.push_back(e.path());
  return out;
}

}  // namespace

TEST(Layers, EveryFileIsOnAKnownFloor) {
  for (const auto& p : sources()) {
    const std::string f = floor_of(fs::relative(p, kSource));
    EXPECT_TRUE(kMayInclude.count(f)) << p << " is on no floor (" << f << ")";
  }
}

TEST(Layers, NoIncludeRunsBackUp) {
  static const std::regex kInclude(R"re(^\s*#\s*include\s+"([^"]+)")re");
  int checked = 0;
  for (const auto& p : sources()) {
    const std::string from = floor_of(fs::relative(p, kSource));
    if (!kMayInclude.count(from)) continue;
    std::ifstream in(p);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      std::smatch m;
      if (!std::regex_search(line, m, kInclude)) continue;
      const fs::path inc = m[1].str();
      // A bare name is a file beside its includer, or a generated one (parameters_md.inc).
      if (!inc.has_parent_path()) continue;
      const std::string to = floor_of(inc);
      ++checked;
      EXPECT_TRUE(kMayInclude.at(from).count(to))
          << fs::relative(p, kSource).string() << ":" << n << " (" << from << ") includes "
          << inc << " (" << to << "), a floor it may not see";
    }
  }
  EXPECT_GT(checked, 100) << "the include scan found too few includes to mean anything";
}

TEST(Layers, NoHarnessFileOverTheLimit) {
  for (const auto& p : sources()) {
    if (floor_of(fs::relative(p, kSource)) == "microbench") continue;
    std::ifstream in(p);
    int lines = 0;
    std::string line;
    while (std::getline(in, line)) ++lines;
    EXPECT_LE(lines, kMaxHarnessLines) << fs::relative(p, kSource) << " has " << lines << " lines";
  }
}

// The checker itself: a floor is read from the path, and an upward include is caught.
TEST(Layers, FloorsAreReadFromPaths) {
  EXPECT_EQ(floor_of("harness/app/report.cpp"), "app");
  EXPECT_EQ(floor_of("harness/analysis/common/util.hpp"), "analysis");
  EXPECT_EQ(floor_of("microbench/pipes.cu"), "microbench");
  EXPECT_EQ(floor_of("base/csv.hpp"), "base");
  EXPECT_FALSE(kMayInclude.at("base").count(floor_of("app/report.hpp")));
  EXPECT_FALSE(kMayInclude.at("gpu").count(floor_of("microbench/x.cuh")));
}
