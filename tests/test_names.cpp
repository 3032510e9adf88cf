// One name across the CSV seam. A family's name, its probes and the columns it sweeps are
// declared once, in its header (harness/analysis/<family>.hpp: kFamily, and
// `constexpr const char* kName = "...";`), or, for a column several families sweep, in the
// shared header of analysis/common/ both sides include. The driver that writes the rows
// (microbench/<family>.cu), the analyzer that reads them (harness/analysis/<family>.cpp) and
// the family's tests use the symbols, so a rename on one side cannot fail at run time on a GPU:
// a quoted name in one of those files fails here, and so does the family's name typed anywhere
// in harness/, microbench/ or tests/ (the catalog's family column, harness/base/parameters/,
// is where a parameter says its family). The family's figures (plots/) read only the names its
// header declares and the columns every run's files have.
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

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A header's kFamily: its name (the first string) and figure scripts (the second).
const std::regex& descriptor_pattern() {
  static const std::regex kDescriptor(
      R"re(FamilyDescriptor\s+kFamily\s*\{\s*"([a-z0-9_]+)"\s*,\s*"([^"]*)")re");
  return kDescriptor;
}

// The family a header declares, or "".
std::string family_of_header(const std::string& text) {
  std::smatch m;
  return std::regex_search(text, m, descriptor_pattern()) ? m[1].str() : "";
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

// A name's one definition: `constexpr const char* kName = "...";`.
const std::regex& definition_pattern() {
  static const std::regex kDefinition(
      R"re(constexpr\s+const\s+char\s*\*\s*k\w+\s*=\s*"([^"]+)")re");
  return kDefinition;
}

// The names a header defines.
std::set<std::string> declared_names(const std::string& text) {
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), definition_pattern()), end; it != end;
       ++it)
    out.insert((*it)[1].str());
  return out;
}

// A quoted string of a line's code (before a // comment).
struct Literal {
  int line = 0;
  std::string text;
  bool defines = false;  // the line is a name's definition, and this its value
};
std::vector<Literal> literals(const fs::path& p) {
  static const std::regex kLiteral(R"re("((?:[^"\\]|\\.)*)")re");
  std::vector<Literal> out;
  std::ifstream in(p);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const size_t comment = line.find("//");
    const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
    // A definition of its own line, at namespace scope (nothing but `inline` before it).
    std::smatch definition;
    static const std::regex kLead(R"re(\s*(?:inline\s+)?)re");
    const bool defines = std::regex_search(code, definition, definition_pattern()) &&
                         std::regex_match(definition.prefix().str(), kLead);
    for (std::sregex_iterator it(code.begin(), code.end(), kLiteral), end; it != end; ++it)
      out.push_back({n, (*it)[1].str(), defines && (*it)[1].str() == definition[1].str()});
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

// The names several families share, declared in harness/analysis/common/.
std::set<std::string> common_names() {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(kSource / "harness/analysis/common"))
    if (e.path().extension() == ".hpp") {
      const auto names = declared_names(slurp(e.path()));
      out.insert(names.begin(), names.end());
    }
  return out;
}

// The names declared by the analysis headers (harness/analysis/<x>.hpp) that `text` includes:
// names a family takes from another (energy measures the pipes' ops under their probe names).
std::set<std::string> included_names(const std::string& text) {
  static const std::regex kInclude(R"re(#include "analysis/([a-z0-9_]+)\.hpp")re");
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), kInclude), end; it != end; ++it) {
    const fs::path other = kSource / "harness/analysis" / ((*it)[1].str() + ".hpp");
    if (!fs::exists(other)) continue;
    const auto names = declared_names(slurp(other));
    out.insert(names.begin(), names.end());
  }
  return out;
}

// The family's figure scripts, under plots/.
std::vector<fs::path> figures_of_header(const std::string& text) {
  std::smatch m;
  std::vector<fs::path> out;
  if (!std::regex_search(text, m, descriptor_pattern())) return out;
  std::istringstream names(m[2].str());
  for (std::string g; names >> g;) out.push_back(kSource / "plots" / g);
  return out;
}

// The header of a CSV file: its first line that is not a # comment, split at commas.
std::set<std::string> csv_header(const fs::path& p) {
  std::ifstream in(p);
  std::set<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream cells(line);
    for (std::string c; std::getline(cells, c, ',');) out.insert(c);
    break;
  }
  return out;
}

// A gnuplot line without its comment: from the first # outside quotes ("#aabbcc" is a colour).
std::string gnuplot_code(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (quote && line[i] == quote) quote = 0;
    else if (!quote && (line[i] == '"' || line[i] == '\'')) quote = line[i];
    else if (!quote && line[i] == '#') return line.substr(0, i);
  }
  return line;
}

// Columns a figure may read that no family declares: those of every observations file (the
// data contract, DESIGN.md), and the headers of the other files figures read, as a committed
// run and the documented figures hold them (parameters.csv, families.csv, the power trace).
std::set<std::string> contract_columns() {
  std::set<std::string> out = {"family", "probe", "value", "unit", "p05", "p50", "p95", "reps"};
  for (const auto& e : fs::directory_iterator(kSource / "results/reference"))
    if (e.path().extension() == ".csv") {
      const auto h = csv_header(e.path());
      out.insert(h.begin(), h.end());
    }
  for (const auto& e : fs::recursive_directory_iterator(kSource / "results"))
    if (e.is_directory() && fs::exists(e.path() / "families.csv") &&
        fs::exists(e.path() / "parameters.csv") && fs::exists(e.path() / "power_trace.csv")) {
      for (const char* f : {"families.csv", "parameters.csv", "power_trace.csv"}) {
        const auto h = csv_header(e.path() / f);
        out.insert(h.begin(), h.end());
      }
      break;
    }
  return out;
}

std::string where(const fs::path& p, int line) {
  return fs::relative(p, kSource).string() + ":" + std::to_string(line);
}

}  // namespace

TEST(Names, EveryFamilyIsFound) {
  // A wrong source directory would make every check below pass on nothing.
  EXPECT_GE(family_headers().size(), 25u) << kSource;
}

TEST(Names, AFamilysProbesAndColumnsAreNeverTyped) {
  const auto headers = family_headers();
  const std::set<std::string> shared = common_names();
  for (const auto& [family, path] : headers) {
    const std::string header = slurp(path);
    auto names = declared_names(header);
    EXPECT_FALSE(names.empty()) << family << ": its header declares no name";
    names.insert(shared.begin(), shared.end());
    const auto taken = included_names(header);
    names.insert(taken.begin(), taken.end());
    for (const fs::path& p : {kSource / "microbench" / (family + ".cu"),
                              kSource / "harness/analysis" / (family + ".cpp"),
                              kSource / "tests" / ("test_" + family + ".cpp")}) {
      if (!fs::exists(p)) continue;
      for (const auto& [line, text, defines] : literals(p))
        EXPECT_FALSE(names.count(text))
            << where(p, line) << ": \"" << text << "\" is declared in the family's header (or "
            << "analysis/common/, or a header it includes): use its symbol";
    }
  }
}

// A word can be a family's name and another name too ("latency" is also a probe of atomics and
// a key of MT4G's JSON): that name's one definition (constexpr const char* k... = "latency") in
// harness/ or microbench/ is not the family's name typed, and every use of it goes through
// the symbol like any other name.
TEST(Names, AFamilysNameIsNeverTyped) {
  const auto headers = family_headers();
  for (const auto& p : sources()) {
    const std::string rel = fs::relative(p, kSource).string();
    if (rel.rfind("harness/base/parameters/", 0) == 0 || rel == "tests/test_names.cpp") continue;
    const bool defines_names = rel.rfind("harness/", 0) == 0 || rel.rfind("microbench/", 0) == 0;
    for (const auto& [line, text, defines] : literals(p)) {
      if (defines && defines_names) continue;
      if (headers.count(text) && headers.at(text) != p)
        ADD_FAILURE() << where(p, line) << ": \"" << text << "\" typed: use " << text
                      << "::kFamily.name";
    }
  }
}

// A figure reads rows by probe and column names (is_probe("x"), column("x"), strcol("x")):
// each must be one its family's header declares (or analysis/common/, or an analysis header its
// driver or analyzer includes), or a column of the files every run writes, so that a rename in the header that the figure missed fails here,
// not as an empty panel.
TEST(Names, AFamilysFigureReadsOnlyDeclaredNames) {
  const auto headers = family_headers();
  std::set<std::string> allowed = contract_columns();
  EXPECT_TRUE(allowed.count("parameter") && allowed.count("quantity") && allowed.count("status"))
      << "the committed run or the documented figures were not found";
  const std::set<std::string> shared = common_names();
  allowed.insert(shared.begin(), shared.end());
  static const std::regex kRead(R"re(\b(?:is_probe|column|strcol)\("([^"]+)"\))re");
  for (const auto& [family, path] : headers) {
    const std::string header = slurp(path);
    auto names = declared_names(header);
    names.insert(allowed.begin(), allowed.end());
    // Rows the family writes through another family's names (bandwidth's theoretical peak is
    // dram_read_order's row): the names of the analysis headers its driver and analyzer include.
    for (const fs::path& src : {path, kSource / "microbench" / (family + ".cu"),
                                kSource / "harness/analysis" / (family + ".cpp")}) {
      const auto taken = included_names(fs::exists(src) ? slurp(src) : "");
      names.insert(taken.begin(), taken.end());
    }
    for (const auto& figure : figures_of_header(header)) {
      ASSERT_TRUE(fs::exists(figure)) << family << ": " << figure << " missing";
      std::ifstream in(figure);
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        const std::string code = gnuplot_code(line);
        for (std::sregex_iterator it(code.begin(), code.end(), kRead), end; it != end; ++it)
          EXPECT_TRUE(names.count((*it)[1].str()))
              << where(figure, n) << ": reads \"" << (*it)[1].str() << "\", which "
              << path.filename().string() << " does not declare";
      }
    }
  }
}
