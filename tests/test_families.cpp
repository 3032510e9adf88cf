// A family is declared once, by its descriptor (`<family>::kFamily`, base/family.hpp, in
// harness/analysis/<family>.hpp), which its parts name: the probe (`name()` in
// microbench/<family>.cu), the analyzer registry (GPUPROBE_REGISTER_ANALYZER(<family>::kFamily,
// fn)), the figure scripts it lists (`# family:` in plots/*.gp) and the rows of
// docs/parameters.md. This test reads the parts (the probes from their sources, since the tests
// link no CUDA) and fails where they disagree: a family without an analyzer or a figure that
// does not say why, a figure or a table row of no described family, an analyzer outside its
// family's file, and a name an analyzer writes on a committed run that docs/parameters.md does
// not list. CONTRIBUTING.md ("Add a family") says what each part holds.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "analysis/analyzer.hpp"
#include "committed_runs.hpp"
#include "base/catalog.hpp"
#include "base/code_check.hpp"
#include "base/csv.hpp"
#include "base/family.hpp"

using namespace gpuprobe;
namespace fs = std::filesystem;

namespace {

const fs::path kSource = GPUPROBE_SOURCE_DIR;

// Families of docs/parameters.md that no probe writes, with the reason.
const std::map<std::string, std::string> kHarnessFamilies = {
    {"run", "written by the runner itself (the measured SM clock, the suite's wall time)"},
};

// Sources of code expectations that are no family's own file, with the reason.
const std::map<std::string, std::string> kOtherSources = {
    {"tensor_wgmma_sm90a", "the pipes family's wgmma kernels, compiled for sm_90a alone "
                           "(microbench/tensor_wgmma.cu; their PTX is ptx/sm_90a/)"},
};

// Analysis files whose namespace is not yet the family's name, with the reason.
const std::map<std::string, std::string> kOtherNamespace = {
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The described families, without the tests' own stand-ins (test_*).
std::map<std::string, const FamilyDescriptor*> described() {
  std::map<std::string, const FamilyDescriptor*> out;
  for (const auto& [name, d] : family_descriptors())
    if (name.rfind("test_", 0) != 0) out[name] = d;
  return out;
}

// Probe family -> its source file, from `name() const override { return
// std::string(<family>::kFamily.name); }` in microbench/*.cu. Every file that registers a family
// must name it so, through the descriptor of the family the file is named after.
std::map<std::string, std::string> probe_families_in_sources() {
  static const std::regex kName(
      R"re(name\(\)\s*const\s*override\s*\{\s*return\s*std::string\(([a-z0-9_]+)::kFamily\.name\);)re");
  static const std::regex kRegister(R"(GPUPROBE_REGISTER_FAMILY\()");
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(kSource / "microbench")) {
    if (e.path().extension() != ".cu") continue;
    const std::string text = read_text(e.path());
    const auto registered = std::distance(std::sregex_iterator(text.begin(), text.end(), kRegister),
                                          std::sregex_iterator());
    long named = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kName); it != std::sregex_iterator();
         ++it, ++named) {
      out[(*it)[1]] = e.path().filename().string();
      EXPECT_EQ((*it)[1].str(), e.path().stem().string())
          << e.path().filename() << " registers another file's family";
    }
    EXPECT_EQ(named, registered) << e.path().filename()
                                 << ": each GPUPROBE_REGISTER_FAMILY needs a family whose name() "
                                    "returns its descriptor's: std::string(<family>::kFamily.name)";
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

// The descriptor's plots, split at spaces.
std::set<std::string> plots_of(const FamilyDescriptor& d) {
  std::set<std::string> out;
  std::istringstream in{std::string(d.plots)};
  for (std::string s; in >> s;) out.insert(s);
  return out;
}

}  // namespace

TEST(Families, SourcesAreFound) {
  // A wrong source directory would make every check below pass on nothing.
  EXPECT_GE(probe_families_in_sources().size(), 10u) << kSource;
  EXPECT_GE(figure_families().size(), 10u) << kSource;
  EXPECT_GE(described().size(), 10u);
}

TEST(Families, EveryProbeFamilyIsDescribedAndEveryDescriptionHasAProbe) {
  const auto probes = probe_families_in_sources();
  const auto families = described();
  for (const auto& [family, file] : probes)
    EXPECT_TRUE(families.count(family))
        << family << " (microbench/" << file << ") has no descriptor registered: "
        << "GPUPROBE_REGISTER_ANALYZER(" << family << "::kFamily, ...) or GPUPROBE_DESCRIBE_FAMILY("
        << family << "::kFamily) in harness/analysis/" << family << ".cpp";
  for (const auto& [family, d] : families)
    EXPECT_TRUE(probes.count(family)) << family << " is described, but no microbench/" << family
                                      << ".cu registers it";
}

TEST(Families, EveryFamilyHasAnAnalyzerAndAFigureOrSaysWhyNot) {
  const auto figures = figure_families();
  for (const auto& [family, d] : described()) {
    SCOPED_TRACE(family);
    const bool analyzer = analyzers().count(family) > 0;
    if (d->no_analyzer.empty())
      EXPECT_TRUE(analyzer) << "no analyzer: register one in harness/analysis/" << family
                            << ".cpp, or say in its descriptor's no_analyzer why not";
    else
      EXPECT_FALSE(analyzer) << "has an analyzer now: clear no_analyzer (" << d->no_analyzer << ")";
    const std::set<std::string> listed = plots_of(*d);
    const auto it = figures.find(family);
    const std::set<std::string> drawn = it == figures.end() ? std::set<std::string>{} : it->second;
    EXPECT_EQ(listed, drawn) << "the descriptor's plots and the scripts starting \"# family: "
                             << family << "\" differ";
    if (d->no_figure.empty())
      EXPECT_FALSE(listed.empty()) << "no figure: plots/" << family
                                   << ".gp, or say in its descriptor's no_figure why not";
    else
      EXPECT_TRUE(listed.empty()) << "has a figure now: clear no_figure (" << d->no_figure << ")";
    for (const auto why : {d->no_analyzer, d->no_figure})
      EXPECT_TRUE(why.empty() || why.size() > 20u) << "say why: '" << why << "'";
  }
}

TEST(Families, TheTableNamesDescribedFamiliesWithAnalyzers) {
  const auto families = described();
  for (const auto& [name, entry] : catalog().params)
    EXPECT_TRUE(analyzers().count(entry.family) || kHarnessFamilies.count(entry.family))
        << "docs/parameters.md: " << name << " is of family '" << entry.family
        << "', which has no analyzer" << (families.count(entry.family) ? "" : " nor a descriptor");
}

TEST(Families, EachAnalyzerLivesInAFileNamedAfterItsFamilyAndItsNamespace) {
  static const std::regex kRegister(
      R"re(GPUPROBE_(REGISTER_ANALYZER|DESCRIBE_FAMILY)\(([a-z0-9_]+)::kFamily\b)re");
  std::map<std::string, std::string> file_of;  // family -> the file that registers it
  for (const auto& e : fs::directory_iterator(kSource / "harness" / "analysis")) {
    if (e.path().extension() != ".cpp") continue;
    const std::string text = read_text(e.path());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kRegister); it != std::sregex_iterator(); ++it)
      file_of[(*it)[2]] = e.path().filename().string();
  }
  EXPECT_EQ(file_of.size(), described().size()) << "every registered descriptor found in the sources";
  for (const auto& [family, file] : file_of) {
    EXPECT_EQ(file, family + ".cpp") << family << " is registered in harness/analysis/" << file;
    const std::string text = read_text(kSource / "harness" / "analysis" / file);
    const bool own = text.find("namespace " + family + " {") != std::string::npos ||
                     text.find("namespace gpuprobe::" + family + " {") != std::string::npos;
    const bool listed = kOtherNamespace.count(family) > 0;
    EXPECT_TRUE(own || listed) << file << ": its code belongs in namespace " << family;
    EXPECT_FALSE(own && listed) << family << " has its own namespace now: take it off kOtherNamespace";
  }
}

// What each family's analyzer writes from every committed run (its own output, before the run's
// merge keeps one value per name) is listed in docs/parameters.md.
TEST(Families, CommittedRunsEmitOnlyNamesOfTheTable) {
  const auto runs = committed_run_dirs();
  ASSERT_GE(runs.size(), 4u) << "committed runs under results/<gpu>/<run-id>/";  // fail, not skip
  size_t emitted = 0;
  for (const auto& dir : runs)
    for (const auto& [family, d] : described()) {
      const fs::path csv = fs::path(dir) / (family + ".csv");
      if (!d->no_analyzer.empty() || !fs::exists(csv)) continue;
      Metadata meta;
      const auto obs = read_observations(csv.string(), &meta);
      for (const auto& p : analyze(family, obs, meta)) {
        ++emitted;
        EXPECT_NE(find_parameter(p.name), nullptr)
            << dir << ": " << family << " writes " << p.name << ", which docs/parameters.md lacks";
      }
    }
  EXPECT_GE(emitted, 500u) << "the committed runs' families analysed";
}

// Every code expectation belongs to a described family (its source file is the family's), so
// that a renamed family cannot leave its kernels unchecked.
TEST(Families, EveryCodeExpectationIsOfADescribedFamily) {
  const auto families = described();
  ASSERT_FALSE(code_expectations().empty());
  for (const auto& e : code_expectations())
    EXPECT_TRUE(families.count(e.source) || kOtherSources.count(e.source))
        << e.kernel << ": source '" << e.source << "' is no described family";
}
