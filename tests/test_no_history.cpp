// What a newcomer reads carries no history: no document under docs/, no README or
// CONTRIBUTING, and no source, script or comment names an issue by its number or a team's
// working folder. The changelog is git's: a commit body may say which issue it closes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kSource = GPUPROBE_SOURCE_DIR;

bool is_read(const fs::path& p) {
  static const std::set<std::string> kExt = {".cpp", ".hpp", ".cu", ".cuh", ".md",
                                             ".py",  ".sh",  ".gp", ".txt", ".cmake"};
  return kExt.count(p.extension().string()) > 0 || p.filename() == "run";
}

std::vector<fs::path> files_read() {
  std::vector<fs::path> out = {kSource / "README.md", kSource / "CONTRIBUTING.md",
                               kSource / "CMakeLists.txt"};
  for (const char* top : {"docs", "harness", "microbench", "tests", "plots", "scripts", ".ci"}) {
    if (!fs::exists(kSource / top)) continue;
    for (const auto& e : fs::recursive_directory_iterator(kSource / top)) {
      const fs::path rel = fs::relative(e.path(), kSource);
      // Recorded data and fuzz inputs are data, not prose.
      if (rel.string().rfind("tests/data", 0) == 0 ||
          rel.string().rfind("tests/fuzz/corpus", 0) == 0)
        continue;
      if (e.is_regular_file() && is_read(e.path())) out.push_back(e.path());
    }
  }
  return out;
}

// An issue or pull request named by number ("issue N", "Issue #N", "PR N"), a bare "#N" after
// a space or parenthesis (not a compiler's "#N-D" diagnostic), and a team's working folder.
const std::regex kHistory(
    R"re(\b(issues?|pr|pull request)\s+#?[0-9]+\b|(^|[\s(])#[0-9]+\b(?!-)|[.]team/)re",
    std::regex::icase);

}  // namespace

TEST(NoHistory, NoFileNamesAnIssueNumberOrATeamFolder) {
  int read = 0;
  for (const auto& p : files_read()) {
    std::ifstream in(p);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      std::smatch m;
      if (std::regex_search(line, m, kHistory))
        ADD_FAILURE() << fs::relative(p, kSource).string() << ":" << n << ": '" << m.str(0)
                      << "': say what holds now; git keeps the history";
    }
    ++read;
  }
  EXPECT_GT(read, 100) << "the tree's documents and sources were not found";
}
