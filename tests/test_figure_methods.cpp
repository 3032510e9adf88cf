// Figures say where a documented figure was found another way: every figure script that draws
// a documented Kepler, Maxwell or Volta figure (plots/ref_value.gp) of a quantity that some
// reference row documents by another method than gpuprobe's (docs/parameters.md), and not as
// a specification (is_specification), passes the measured method as ref_value.gp's third
// argument, so that the figure can say "other method" (ref_other_method) as the report and
// compare do. Quantities the script computes at run time, (q), are not resolved here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>

#include "base/catalog.hpp"
#include "app/reference.hpp"

namespace fs = std::filesystem;

namespace gpuprobe {
namespace {

struct RefCall {
  std::string script;
  int line = 0;
  std::vector<std::string> quantities;  // resolved: a literal, or the words of `quantities`
  bool has_method = false;
};

// The calls of plots/ref_value.gp in one script's text.
std::vector<RefCall> ref_calls(const std::string& script, const std::string& text) {
  static const std::regex call(R"re(call 'plots/ref_value\.gp' \([^)]*\) (.*)$)re");
  static const std::regex literal(R"re(^"([a-z0-9_]+)"\s*(.*)$)re");
  static const std::regex words(R"re(^\(word\(quantities, [a-z]+\)\)\s*(.*)$)re");
  static const std::regex list(R"re(^quantities = "([^"]*)")re");
  std::vector<std::string> list_words;
  std::vector<RefCall> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::smatch m;
    if (std::regex_search(line, m, list)) {
      std::istringstream w(m[1].str());
      list_words.assign(std::istream_iterator<std::string>(w), std::istream_iterator<std::string>());
    }
    if (!std::regex_search(line, m, call)) continue;
    RefCall c{script, n, {}, false};
    const std::string rest = m[1].str();
    if (std::regex_match(rest, m, literal)) {
      c.quantities = {m[1].str()};
      c.has_method = !m[2].str().empty();
    } else if (std::regex_match(rest, m, words)) {
      c.quantities = list_words;
      c.has_method = !m[1].str().empty();
    } else {
      continue;  // computed at run time
    }
    out.push_back(c);
  }
  return out;
}

// A documented row of an older architecture that the measured method cannot be set beside
// one to one: neither a specification nor found by the catalog's method; "" when none.
std::string other_method_row(const Reference& ref, const std::string& quantity) {
  const CatalogEntry* entry = find_parameter(quantity);
  if (!entry) return "";
  for (const auto& d : ref.figures) {
    if (d.quantity != quantity || (d.arch != "kepler" && d.arch != "maxwell" && d.arch != "volta")) continue;
    if (is_specification(d) || d.method == entry->method) continue;
    return d.gpu + " by " + d.method + " (line " + std::to_string(d.line) + "), gpuprobe by " + entry->method;
  }
  return "";
}

TEST(FigureMethods, ScriptCallsAreFound) {
  const auto calls = ref_calls("x.gp",
                               "quantities = \"a_b c_d\"\n"
                               "  call 'plots/ref_value.gp' (arch_gpu[g]) \"l1_size\"\n"
                               "  call 'plots/ref_value.gp' (arch_gpu[g]) (word(quantities, k)) \"stride_sweep\"\n"
                               "  call 'plots/ref_value.gp' (arch_gpu[g]) (q)\n");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].quantities, std::vector<std::string>{param::l1_size});
  EXPECT_FALSE(calls[0].has_method);
  EXPECT_EQ(calls[1].quantities, (std::vector<std::string>{"a_b", "c_d"}));
  EXPECT_TRUE(calls[1].has_method);
}

TEST(FigureMethods, DocumentedFiguresOfAnotherMethodAreNamedAsSuch) {
  const fs::path root = GPUPROBE_SOURCE_DIR;
  const Reference ref = load_reference((root / "results/reference/documented_figures.csv").string());
  ASSERT_FALSE(ref.figures.empty());
  int checked = 0;
  for (const auto& e : fs::directory_iterator(root / "plots")) {
    if (e.path().extension() != ".gp" || e.path().filename() == "ref_value.gp") continue;
    std::ifstream f(e.path());
    std::stringstream text;
    text << f.rdbuf();
    for (const RefCall& c : ref_calls(e.path().filename().string(), text.str())) {
      ++checked;
      if (c.has_method) continue;
      for (const auto& q : c.quantities) {
        const std::string other = other_method_row(ref, q);
        EXPECT_EQ(other, "") << c.script << ":" << c.line << " draws documented " << q
                             << " without the measured method (ref_value.gp's third argument): " << other;
      }
    }
  }
  EXPECT_GT(checked, 10);  // the scripts were read
}

}  // namespace
}  // namespace gpuprobe
