// One name across the CSV seam. A family's name, its probes and the columns it sweeps are
// declared once, in its header (harness/analysis/<family>.hpp: kFamily, and
// `constexpr const char* kName = "...";`), or, for a column several families sweep, in the
// shared header of analysis/common/ both sides include. The driver that writes the rows
// (microbench/<family>.cu), the analyzer that reads them (harness/analysis/<family>.cpp) and
// the family's tests use the symbols, so a rename on one side cannot fail at run time on a GPU:
// a quoted name in one of those files fails here, and so does the family's name typed anywhere
// in harness/, microbench/ or tests/ (the catalog's family column, harness/base/parameters/,
// is where a parameter says its family).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kSource = GPUPROBE_SOURCE_DIR;

// Families whose names are still typed as literals on both sides of the seam, not yet given
// one definition each: every other family (a new one included) is checked here. The list
// only shrinks.
const std::set<std::string> kNotYetConverted = {
    "atomics", "bandwidth", "bytes_in_flight", "collectives", "dual_issue",
    "energy",  "p2p",       "pipes",           "roofline",    "shared_banks",
};

// The families checked: every described one not listed above.
std::set<std::string> converted(const std::map<std::string, fs::path>& headers) {
  std::set<std::string> out;
  for (const auto& [family, path] : headers)
    if (!kNotYetConverted.count(family)) out.insert(family);
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The family a header declares (the first string of its kFamily), or "".
std::string family_of_header(const std::string& text) {
  static const std::regex kDescriptor(R"re(FamilyDescriptor\s+kFamily\s*\{\s*"([a-z0-9_]+)")re");
  std::smatch m;
  return std::regex_search(text, m, kDescriptor) ? m[1].str() : "";
}

std::map<std::string, fs::path> family_headers() {
  std::map<std::string, fs::path> out;
  for (const auto& e : fs::directory_iterator(kSource / "harness/analysis"))
    if (e.path().extension() == ".hpp") {
      const std::string f = family_of_header(slurp(e.path()));
      if (!f.empty()) out[f] = e.path();
    }
  return out;
}

// The strings `constexpr const char* kName = "...";` of a header.
std::set<std::string> declared_names(const std::string& text) {
  static const std::regex kName(R"re(constexpr\s+const\s+char\s*\*\s*k\w+\s*=\s*"([^"]+)")re");
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), kName), end; it != end; ++it)
    out.insert((*it)[1].str());
  return out;
}

// Each quoted string of a line's code (before a // comment), with the line's number.
std::vector<std::pair<int, std::string>> literals(const fs::path& p) {
  static const std::regex kLiteral(R"re("((?:[^"\\]|\\.)*)")re");
  std::vector<std::pair<int, std::string>> out;
  std::ifstream in(p);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const size_t comment = line.find("//");
    const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
    for (std::sregex_iterator it(code.begin(), code.end(), kLiteral), end; it != end; ++it)
      out.emplace_back(n, (*it)[1].str());
  }
  return out;
}

std::vector<fs::path> sources() {
  static const std::set<std::string> kExt = {".cpp", ".hpp", ".cu", ".cuh"};
  std::vector<fs::path> out;
  for (const char* top : {"harness", "microbench", "tests"})
    for (const auto& e : fs::recursive_directory_iterator(kSource / top))
      if (e.is_regular_file() && kExt.count(e.path().extension().string())) out.push_back(e.path());
  return out;
}

std::string where(const fs::path& p, int line) {
  return fs::relative(p, kSource).string() + ":" + std::to_string(line);
}

}  // namespace

TEST(Names, TheListOfFamiliesNotYetConvertedNamesFamilies) {
  const auto headers = family_headers();
  EXPECT_GE(headers.size(), 20u);
  EXPECT_GE(converted(headers).size(), 2u);
  for (const auto& f : kNotYetConverted) EXPECT_TRUE(headers.count(f)) << f << ": no such family";
}

TEST(Names, AConvertedFamilysProbesAndColumnsAreNeverTyped) {
  const auto headers = family_headers();
  std::set<std::string> shared;
  for (const auto& e : fs::directory_iterator(kSource / "harness/analysis/common"))
    if (e.path().extension() == ".hpp") {
      const auto names = declared_names(slurp(e.path()));
      shared.insert(names.begin(), names.end());
    }
  for (const auto& family : converted(headers)) {
    auto names = declared_names(slurp(headers.at(family)));
    EXPECT_FALSE(names.empty()) << family << ": its header declares no name";
    names.insert(shared.begin(), shared.end());
    for (const fs::path p : {kSource / "microbench" / (family + ".cu"),
                             kSource / "harness/analysis" / (family + ".cpp"),
                             kSource / "tests" / ("test_" + family + ".cpp")}) {
      if (!fs::exists(p)) continue;
      for (const auto& [line, text] : literals(p))
        EXPECT_FALSE(names.count(text))
            << where(p, line) << ": \"" << text << "\" is declared in the family's header (or "
            << "analysis/common/): use its symbol";
    }
  }
}

TEST(Names, AConvertedFamilysNameIsNeverTyped) {
  const auto headers = family_headers();
  const auto checked = converted(headers);
  for (const auto& p : sources()) {
    const std::string rel = fs::relative(p, kSource).string();
    if (rel.rfind("harness/base/parameters/", 0) == 0 || rel == "tests/test_names.cpp") continue;
    for (const auto& [line, text] : literals(p))
      if (checked.count(text) && headers.at(text) != p)
        ADD_FAILURE() << where(p, line) << ": \"" << text << "\" typed: use " << text
                      << "::kFamily.name";
  }
}
