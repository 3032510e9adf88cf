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

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// C++ source with its comments, string and character literals and preprocessor lines blanked
// out, so that only code is left to read.
std::string code_only(const std::string& text) {
  std::string out = text;
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  bool line_start = true;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    size_t end = i + 1;
    if (line_start && c == '#') {  // a directive, with its continuation lines
      while (end < text.size() && !(text[end] == '\n' && text[end - 1] != '\\')) ++end;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      end = text.find('\n', i);
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      end = text.find("*/", i + 2);
      end = end == std::string::npos ? end : end + 2;
    } else if (c == '"' && i > 0 && text[i - 1] == 'R') {  // R"delim( ... )delim"
      const size_t open = text.find('(', i);
      const std::string close = ")" + text.substr(i + 1, open - i - 1) + "\"";
      end = text.find(close, open);
      end = end == std::string::npos ? end : end + close.size();
    } else if (c == '"' ||
               (c == '\'' && !(i > 0 && std::isdigit(static_cast<unsigned char>(text[i - 1]))))) {
      while (end < text.size() && text[end] != c) end += text[end] == '\\' ? 2 : 1;
      ++end;
    } else {
      if (c == '\n') line_start = true;
      else if (!std::isspace(static_cast<unsigned char>(c))) line_start = false;
      ++i;
      continue;
    }
    end = std::min(end, text.size());
    blank(i, end);
    i = end;
  }
  return out;
}

// The first code of `text` (a C++ file) that is not inside namespace gpuprobe::<family>
// (written `namespace gpuprobe::<family> {` or nested), the line it starts; "" when there is
// none. Only namespace openings and closings may stand outside.
std::string code_outside_namespace(const std::string& text, const std::string& family) {
  const std::string code = code_only(text);
  struct Block {
    std::vector<std::string> names;  // a namespace's path parts; empty for any other block
    bool is_namespace;
  };
  std::vector<Block> stack;
  auto inside = [&] {
    std::vector<std::string> path;
    for (const auto& b : stack) {
      if (!b.is_namespace) return true;  // its opening was checked
      path.insert(path.end(), b.names.begin(), b.names.end());
    }
    return path.size() >= 2 && path[0] == "gpuprobe" && path[1] == family;
  };
  static const std::regex kOpen(R"(^namespace\s*([A-Za-z0-9_:\s]*?)\s*\{)");
  for (size_t i = 0; i < code.size();) {
    const char c = code[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    std::smatch m;
    const std::string rest = code.substr(i, 200);
    if (code.compare(i, 9, "namespace") == 0 && std::regex_search(rest, m, kOpen)) {
      Block b{{}, true};
      std::string names = m[1];
      names.erase(
          std::remove_if(names.begin(), names.end(),
                         [](char x) { return std::isspace(static_cast<unsigned char>(x)); }),
          names.end());
      for (size_t at = 0; !names.empty();) {
        const size_t sep = names.find("::", at);
        b.names.push_back(names.substr(at, sep - at));
        if (sep == std::string::npos) break;
        at = sep + 2;
      }
      if (b.names.empty()) b.names.push_back("");  // anonymous
      stack.push_back(b);
      i += m.length(0);
      continue;
    }
    if (c == '}' && !stack.empty() && stack.back().is_namespace) {
      stack.pop_back();
      ++i;
      continue;
    }
    if (!inside()) {
      const size_t line_start = code.rfind('\n', i) + 1;
      return text.substr(line_start, text.find('\n', i) - line_start);
    }
    if (c == '{') stack.push_back({{}, false});
    if (c == '}' && !stack.empty()) stack.pop_back();
    ++i;
  }
  return "";
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

// How a family's analysis file registers it: GPUPROBE_REGISTER_ANALYZER(<family>::kFamily, ...).
constexpr const char* kRegisterPattern =
    R"re(GPUPROBE_(REGISTER_ANALYZER|DESCRIBE_FAMILY)\(([a-z0-9_]+)::kFamily\b)re";

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

// Where a newcomer looks for a family's tests: tests/test_<family>.cpp, which includes the
// family's header. Tests that hold several families are named for what they
// hold.
TEST(Families, EachFamilyHasATestFileNamedAfterIt) {
  for (const auto& [family, d] : described()) {
    const fs::path file = kSource / "tests" / ("test_" + family + ".cpp");
    ASSERT_TRUE(fs::exists(file)) << family << ": no tests/" << file.filename().string();
    EXPECT_NE(read_text(file).find("#include \"analysis/" + family + ".hpp\""), std::string::npos)
        << "tests/" << file.filename().string() << " does not include analysis/" << family
        << ".hpp";
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
  static const std::regex kRegister(kRegisterPattern);
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
    std::string outside;
    for (const char* ext : {".cpp", ".hpp"}) {
      const fs::path p = kSource / "harness" / "analysis" / (family + ext);
      if (const std::string o = fs::exists(p) ? code_outside_namespace(read_text(p), family) : "";
          outside.empty() && !o.empty())
        outside = family + ext + ": " + o;
    }
    EXPECT_TRUE(outside.empty()) << "code outside namespace gpuprobe::" << family << ", in "
                                 << outside;
  }
}

// The namespace check reads code, not comments or strings, and finds a function left at
// gpuprobe:: scope after the family's namespace closed.
TEST(Families, TheNamespaceCheckFindsCodeOutside) {
  const std::string good =
      "#include \"x.hpp\"\nnamespace gpuprobe {\nnamespace fam {\nnamespace {\nint f() { return 1'000; }\n}"
      "  // namespace\n}  // namespace fam\n}  // namespace gpuprobe\n";
  EXPECT_EQ(code_outside_namespace(good, "fam"), "");
  EXPECT_EQ(code_outside_namespace("namespace gpuprobe::fam {\nconst char* s = \"}\"; // }\n"
                                   "auto r = R\"x(})x\"; /* } */ char c = '}';\n}\n",
                                   "fam"),
            "");
  EXPECT_EQ(code_outside_namespace(
                "namespace gpuprobe {\nnamespace fam {\n}\nint analyze_fam();\n}\n", "fam"),
            "int analyze_fam();");
  EXPECT_EQ(code_outside_namespace("namespace gpuprobe::other {\nint g();\n}\n", "fam"),
            "int g();");
  EXPECT_EQ(code_outside_namespace("namespace gpuprobe {\nnamespace {\nint h();\n}\n}\n", "fam"),
            "int h();");
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

// scripts/new-family.sh makes a family these checks pass as made (CONTRIBUTING's walk-through
// ends in it): registered by its descriptor, all of its code in its namespace, its test file
// including its header.
TEST(Families, AGeneratedFamilyPassesTheseChecksAsMade) {
  const fs::path dir = fs::temp_directory_path() / "gpuprobe-new-family-check";
  fs::remove_all(dir);
  const std::string cmd = "sh '" + (kSource / "scripts/new-family.sh").string() +
                          "' example_copy '" + dir.string() + "' > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string cpp = read_text(dir / "harness/analysis/example_copy.cpp");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(cpp, m, std::regex(kRegisterPattern)));
  EXPECT_EQ(m[2].str(), "example_copy");
  for (const char* ext : {".cpp", ".hpp"})
    EXPECT_EQ(code_outside_namespace(
                  read_text(dir / "harness/analysis" / ("example_copy" + std::string(ext))),
                  "example_copy"),
              "")
        << ext;
  EXPECT_NE(
      read_text(dir / "tests/test_example_copy.cpp").find("#include \"analysis/example_copy.hpp\""),
      std::string::npos);
  fs::remove_all(dir);
}
