// Every family is tied together by its name in four places that nothing links at build time:
// the probe (`name()` in microbench/<family>.cu), the analyzer registry
// (GPUPROBE_REGISTER_ANALYZER), the figure scripts (`# family:` in plots/*.gp) and the
// Parameters table of docs/parameters.md. This test reads all four (the probes from their
// sources, since the tests link no CUDA) and fails on a gap: a family without an analyzer or
// without a figure, unless kGaps below says why, and a name in one place that no probe family
// has. CONTRIBUTING.md ("Add a family") says what each place holds.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "analysis/analyzer.hpp"
#include "core/catalog.hpp"

using namespace gpuprobe;
namespace fs = std::filesystem;

namespace {

const fs::path kSource = GPUPROBE_SOURCE_DIR;

// The families that lack a part on purpose, each with the reason. A family listed here that
// has gained the part fails the test too: take it off the list.
struct Gap {
  const char* family;
  bool analyzer;  // has an analyzer
  bool figure;    // has a figure script
  const char* why;
};
const Gap kGaps[] = {
    {"loaded_latency", false, true,
     "figure-only: the curve of latency against background load is the result; no single "
     "parameter names it"},
    {"coalescing", false, false,
     "observations-only: the GTC case study's speedups per layout are read from coalescing.csv "
     "as they are; no parameter or figure yet"},
    {"transpose", true, false,
     "analysis-only: two padding speedups (float, double), read from the table; a figure of two "
     "bars would add nothing"},
    {"p2p", true, false,
     "analysis-only: a handful of link figures per GPU pair, read from the table; no committed "
     "multi-GPU run to draw yet"},
};

// Families of docs/parameters.md that no probe writes, with the reason.
const std::map<std::string, std::string> kHarnessFamilies = {
    {"run", "written by the runner itself (the measured SM clock, the suite's wall time)"},
};

// Analyzers registered outside harness/analysis/<family>.cpp, each with the reason. The rule
// is one family per file, named after the family; this list is what is left to split.
const std::map<std::string, std::string> kSharedFiles = {
    {"granularity", "memory_structure.cpp: four families in one file, not yet split (issue 13)"},
    {"fine_grained", "memory_structure.cpp: four families in one file, not yet split (issue 13)"},
    {"carveout", "memory_structure.cpp: four families in one file, not yet split (issue 13)"},
    {"tlb", "memory_structure.cpp: four families in one file, not yet split (issue 13)"},
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Probe family -> its source file, from `name() const override { return "x"; }` in
// microbench/*.cu. Every file that registers a family must give its name this way.
std::map<std::string, std::string> probe_families_in_sources() {
  static const std::regex kName(R"re(name\(\)\s*const\s*override\s*\{\s*return\s*"([a-z0-9_]+)";)re");
  static const std::regex kRegister(R"(GPUPROBE_REGISTER_FAMILY\()");
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(kSource / "microbench")) {
    if (e.path().extension() != ".cu") continue;
    const std::string text = read_text(e.path());
    const auto registered = std::distance(std::sregex_iterator(text.begin(), text.end(), kRegister),
                                          std::sregex_iterator());
    long named = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kName); it != std::sregex_iterator();
         ++it, ++named)
      out[(*it)[1]] = e.path().filename().string();
    EXPECT_EQ(named, registered) << e.path().filename()
                                 << ": each GPUPROBE_REGISTER_FAMILY needs a family whose name() "
                                    "returns its name as a literal";
  }
  return out;
}

// Family -> figure scripts, from each plots/*.gp's first line "# family: <family>". Scripts
// without it (style.gp, mark_knee.gp) are helpers.
std::map<std::string, std::set<std::string>> figure_families() {
  std::map<std::string, std::set<std::string>> out;
  for (const auto& e : fs::directory_iterator(kSource / "plots")) {
    if (e.path().extension() != ".gp") continue;
    std::ifstream in(e.path());
    std::string first;
    std::getline(in, first);
    const std::string tag = "# family:";
    if (first.rfind(tag, 0) != 0) continue;
    std::string family = first.substr(tag.size());
    family.erase(0, family.find_first_not_of(' '));
    family.erase(family.find_last_not_of(" \r") + 1);
    out[family].insert(e.path().filename().string());
  }
  return out;
}

std::set<std::string> analyzer_families() {
  std::set<std::string> out;
  for (const auto& [family, fn] : analyzers())
    if (family.rfind("test_", 0) != 0) out.insert(family);  // the tests' own stand-ins
  return out;
}

const Gap* gap_of(const std::string& family) {
  for (const auto& g : kGaps)
    if (family == g.family) return &g;
  return nullptr;
}

}  // namespace

TEST(Families, SourcesAreFound) {
  // A wrong source directory would make every check below pass on nothing.
  EXPECT_GE(probe_families_in_sources().size(), 10u) << kSource;
  EXPECT_GE(figure_families().size(), 10u) << kSource;
  EXPECT_GE(analyzer_families().size(), 10u);
}

TEST(Families, EveryProbeFamilyHasAnAnalyzerAndAFigureOrSaysWhyNot) {
  const auto analyzers_ = analyzer_families();
  const auto figures = figure_families();
  for (const auto& [family, file] : probe_families_in_sources()) {
    const Gap* g = gap_of(family);
    const bool analyzer = analyzers_.count(family) > 0, figure = figures.count(family) > 0;
    const bool want_analyzer = g ? g->analyzer : true, want_figure = g ? g->figure : true;
    if (!analyzer && want_analyzer)
      ADD_FAILURE() << family << " (microbench/" << file
                    << ") has no analyzer: GPUPROBE_REGISTER_ANALYZER(\"" << family
                    << "\", ...) in harness/analysis/" << family
                    << ".cpp, or a line in kGaps (tests/test_families.cpp) saying why not";
    if (!figure && want_figure)
      ADD_FAILURE() << family << " (microbench/" << file << ") has no figure: plots/" << family
                    << ".gp starting \"# family: " << family
                    << "\", or a line in kGaps (tests/test_families.cpp) saying why not";
    if (g && analyzer && !g->analyzer)
      ADD_FAILURE() << family << " has an analyzer now: set analyzer = true in kGaps (" << g->why << ")";
    if (g && figure && !g->figure)
      ADD_FAILURE() << family << " has a figure now: set figure = true in kGaps (" << g->why << ")";
  }
}

TEST(Families, EveryGapNamesAProbeFamilyWithAReason) {
  const auto probes = probe_families_in_sources();
  for (const auto& g : kGaps) {
    EXPECT_TRUE(probes.count(g.family)) << g.family << " in kGaps is no probe family";
    EXPECT_FALSE(g.analyzer && g.figure) << g.family << " in kGaps lacks nothing";
    EXPECT_GT(std::string(g.why).size(), 20u) << g.family << ": say why";
  }
}

TEST(Families, AnalyzersFiguresAndTheTableNameProbeFamilies) {
  const auto probes = probe_families_in_sources();
  for (const auto& family : analyzer_families())
    EXPECT_TRUE(probes.count(family)) << "analyzer '" << family
                                      << "' has no probe family in microbench/*.cu";
  for (const auto& [family, scripts] : figure_families())
    EXPECT_TRUE(probes.count(family)) << *scripts.begin() << ": '# family: " << family
                                      << "' is no probe family in microbench/*.cu";
  for (const auto& [name, entry] : catalog().params)
    EXPECT_TRUE(probes.count(entry.family) || kHarnessFamilies.count(entry.family))
        << "docs/parameters.md: " << name << " is of family '" << entry.family
        << "', no probe family in microbench/*.cu";
}

TEST(Families, EveryFamilyInTheParameterTableHasAnAnalyzer) {
  const auto analyzers_ = analyzer_families();
  for (const auto& [name, entry] : catalog().params)
    EXPECT_TRUE(analyzers_.count(entry.family) || kHarnessFamilies.count(entry.family))
        << "docs/parameters.md: " << name << " comes from family '" << entry.family
        << "', which has no analyzer";
}

TEST(Families, EachAnalyzerLivesInAFileNamedAfterItsFamily) {
  static const std::regex kRegister(R"re(GPUPROBE_REGISTER_ANALYZER\("([a-z0-9_]+)")re");
  std::map<std::string, std::string> file_of;  // family -> the file that registers it
  for (const auto& e : fs::directory_iterator(kSource / "harness" / "analysis")) {
    if (e.path().extension() != ".cpp") continue;
    const std::string text = read_text(e.path());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kRegister); it != std::sregex_iterator(); ++it)
      file_of[(*it)[1]] = e.path().filename().string();
  }
  EXPECT_EQ(file_of.size(), analyzer_families().size()) << "every registered analyzer found in the sources";
  for (const auto& [family, file] : file_of) {
    const bool own = file == family + ".cpp";
    const bool listed = kSharedFiles.count(family) > 0;
    EXPECT_TRUE(own || listed) << family << " is registered in harness/analysis/" << file
                               << ": move it to harness/analysis/" << family << ".cpp";
    EXPECT_FALSE(own && listed) << family << " has its own file now: take it off kSharedFiles";
  }
}
