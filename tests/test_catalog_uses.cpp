// Where parameter names are written outside the catalog: the code names a parameter by its
// symbol (param::l1_hit_latency), never by a string literal, and the figure scripts, which
// cannot include the catalog, ask only for names the catalog has (never an old one).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "app/reference.hpp"
#include "app/report_detail.hpp"
#include "base/catalog.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = GPUPROBE_SOURCE_DIR;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A literal and the line it starts on.
struct Literal {
  std::string text;
  int line = 0;
};

// Skips a C++ comment starting at i ("//" or "/*"); returns the index after it, or i.
size_t past_comment(const std::string& src, size_t i) {
  if (src.compare(i, 2, "//") == 0)
    return src.find('\n', i) == std::string::npos ? src.size() : src.find('\n', i);
  if (src.compare(i, 2, "/*") == 0) {
    const size_t end = src.find("*/", i + 2);
    return end == std::string::npos ? src.size() : end + 2;
  }
  return i;
}

// The string literals of C++ or CUDA source, comments skipped (a raw string read to its
// delimiter; a character literal skipped, so that '"' starts nothing).
std::vector<Literal> cpp_string_literals(const std::string& src) {
  std::vector<Literal> out;
  int line = 1;
  for (size_t i = 0; i < src.size();) {
    if (const size_t after = past_comment(src, i); after != i) {
      for (size_t k = i; k < after; ++k) line += src[k] == '\n';
      i = after;
    } else if (src[i] == 'R' && i + 1 < src.size() && src[i + 1] == '"') {
      const size_t open = src.find('(', i);
      const std::string close = ")" + src.substr(i + 2, open - i - 2) + "\"";
      const size_t end = src.find(close, open);
      out.push_back({src.substr(open + 1, end - open - 1), line});
      for (size_t k = i; k < end; ++k) line += src[k] == '\n';
      i = end + close.size();
    } else if (src[i] == '"' || src[i] == '\'') {
      const char quote = src[i];
      std::string text;
      size_t k = i + 1;
      for (; k < src.size() && src[k] != quote; ++k) {
        if (src[k] == '\\') ++k;
        if (k < src.size()) text += src[k];
      }
      if (quote == '"') out.push_back({text, line});
      i = k + 1;
    } else {
      line += src[i] == '\n';
      ++i;
    }
  }
  return out;
}

// Whether a literal is a parameter's name (an old name may be a family's: shared_banks).
bool names_a_parameter(const std::string& text) { return find_parameter(text) != nullptr; }

// Probes named as the parameter they give: the observations' probe column is the data
// contract, declared once as the family's constant (analysis/<family>.hpp).
const std::set<std::pair<std::string, std::string>> kProbesNamedAsTheirParameter = {
    {"harness/analysis/carveout.hpp", "l1_size"},
    {"harness/analysis/clusters.hpp", "dsm_latency"},
    {"harness/analysis/clusters.hpp", "cluster_size_max"},
};

bool in_the_catalog_headers(const fs::path& rel) {
  const std::string s = rel.generic_string();
  return s.rfind("harness/base/parameters/", 0) == 0 || s == "harness/base/parameter_list.hpp" ||
         s == "harness/base/parameter_names.hpp";
}

TEST(CatalogUses, TheLiteralScanFindsANameAndSkipsComments) {
  const std::string src =
      "// \"l1_hit_latency\" in a comment\n/* \"l2_size\" */ char q = '\"';\n"
      "auto a = \"dram_latency\"; auto b = R\"x(shared_latency)x\";\nauto c = \"l1\\\"x\";\n";
  std::vector<std::string> found;
  for (const auto& l : cpp_string_literals(src))
    if (names_a_parameter(l.text)) found.push_back(l.text + ":" + std::to_string(l.line));
  EXPECT_EQ(found, (std::vector<std::string>{"dram_latency:3", "shared_latency:3"}));
}

// The code names every parameter by its symbol: a quoted name outside the catalog headers is a
// second definition that a rename in the catalog would leave behind.
TEST(CatalogUses, NoParameterNameIsAStringLiteralInTheCode) {
  int files = 0;
  for (const char* top : {"harness", "microbench"}) {
    for (const auto& e : fs::recursive_directory_iterator(kSource / top)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".cu" && ext != ".cuh" && ext != ".h") continue;
      const fs::path rel = fs::relative(e.path(), kSource);
      if (in_the_catalog_headers(rel)) continue;
      ++files;
      for (const auto& l : cpp_string_literals(slurp(e.path())))
        if (names_a_parameter(l.text) &&
            !kProbesNamedAsTheirParameter.count({rel.generic_string(), l.text}))
          ADD_FAILURE() << rel.generic_string() << ":" << l.line << ": \"" << l.text
                        << "\": name it param::" << l.text;
    }
  }
  EXPECT_GT(files, 100);
}

// --- The figure scripts ----------------------------------------------------------------------

// A gnuplot script's lines, each without its comment, and the string literals of a line
// ("..." and '...').
std::string without_gnuplot_comment(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (quote) {
      if (line[i] == '\\' && quote == '"') ++i;
      else if (line[i] == quote) quote = 0;
    } else if (line[i] == '"' || line[i] == '\'') {
      quote = line[i];
    } else if (line[i] == '#') {
      return line.substr(0, i);
    }
  }
  return line;
}

std::vector<std::string> gnuplot_literals(const std::string& code) {
  std::vector<std::string> out;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code[i] != '"' && code[i] != '\'') continue;
    const size_t end = code.find(code[i], i + 1);
    if (end == std::string::npos) break;
    out.push_back(code.substr(i + 1, end - i - 1));
    i = end;
  }
  return out;
}

// The arguments after `call 'plots/<script>'` on a line: words at the top level, a
// parenthesised expression or a literal being one.
std::vector<std::string> call_arguments(const std::string& code, const std::string& script) {
  const std::string head = "call 'plots/" + script + "'";
  const size_t at = code.find(head);
  if (at == std::string::npos) return {};
  std::vector<std::string> args;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (size_t i = at + head.size(); i < code.size(); ++i) {
    const char c = code[i];
    if (quote) {
      quote = c == quote ? 0 : quote;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if ((c == ' ' || c == '}' || c == ';') && depth == 0) {
      if (!cur.empty()) args.push_back(cur);
      cur.clear();
      if (c != ' ') break;
      continue;
    }
    cur += c;
  }
  if (!cur.empty()) args.push_back(cur);
  return args;
}

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Whether `piece` is part of some name of the catalog (a fragment a script builds names from).
bool part_of_a_name(const std::string& piece) {
  for (const auto& [name, entry] : catalog().params)
    if (name.find(piece) != std::string::npos) return true;
  return false;
}

// The scripts that take a parameter's name as their second argument, and the one that takes a
// reference quantity (the reference also documents what no analyzer measures).
const char* const kNameTakers[] = {"param_value.gp", "mark_knee.gp", "mark_level.gp"};

// What is wrong with the names a script asks for, one line each: a literal name the catalog
// lacks (or an old one), a fragment of a built name that no name holds, a list of names with
// one the catalog lacks, an old name anywhere.
std::vector<std::string> plot_name_faults(const std::string& text,
                                          const std::set<std::string>& quantities) {
  std::vector<std::string> faults;
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    const std::string code = without_gnuplot_comment(line);
    const std::string at = "line " + std::to_string(n) + ": ";
    for (const char* taker : kNameTakers) {
      const auto args = call_arguments(code, taker);
      if (args.size() < 2) continue;
      const std::string& name = args[1];
      if (name.size() > 1 && name.front() == '"') {
        const std::string plain = name.substr(1, name.size() - 2);
        if (!find_parameter(plain) || canonical_name(plain) != plain)
          faults.push_back(at + plain + ": no parameter of the catalog by that name");
        continue;
      }
      for (const auto& lit : gnuplot_literals(name)) {
        std::istringstream parts(lit);
        for (std::string piece; std::getline(parts, piece, '%');) {
          if (piece.rfind('d', 0) == 0 && piece.size() < lit.size()) piece = piece.substr(1);
          if (!piece.empty() && !part_of_a_name(piece) && !find_parameter(piece))
            faults.push_back(at + "\"" + lit + "\": part of no name of the catalog");
        }
      }
    }
    const auto ref = call_arguments(code, "ref_value.gp");
    if (ref.size() >= 2 && ref[1].size() > 1 && ref[1].front() == '"') {
      const std::string q = ref[1].substr(1, ref[1].size() - 2);
      if (canonical_name(q) != q || (!find_parameter(q) && !quantities.count(q)))
        faults.push_back(at + q + ": neither a parameter of the catalog nor a documented quantity");
    }
    for (const auto& lit : gnuplot_literals(code)) {
      const auto words = words_of(lit);
      bool listed = false;
      for (const auto& w : words) listed = listed || find_parameter(w);
      for (const auto& w : words) {
        if (catalog().aliases.count(w))
          faults.push_back(at + w + ": an old name, read as " + canonical_name(w) + " now");
        else if (listed && words.size() > 1 && !find_parameter(w) && !quantities.count(w))
          faults.push_back(at + w + ": in a list of parameters, not one of the catalog");
      }
    }
  }
  return faults;
}

std::set<std::string> documented_quantities() {
  std::set<std::string> out;
  for (const auto& f :
       load_reference((kSource / "results/reference/documented_figures.csv").string()).figures)
    out.insert(f.quantity);
  return out;
}

TEST(PlotNames, TheCheckFindsWhatIsWrong) {
  const std::string script =
      "call 'plots/param_value.gp' param_file(i) \"l1_hit_latency\"  # \"no_such_name\"\n"
      "call 'plots/param_value.gp' param_file(i) \"l1_hit_latncy\"\n"
      "call 'plots/mark_knee.gp' (i) (kind . \"_bogus_suffix\") \"x\"\n"
      "call 'plots/param_value.gp' (param_file(1)) (sprintf(\"l2_near_sm_count_%d\", k))\n"
      "call 'plots/ref_value.gp' (g) \"shared_banks\" \"stride_sweep\"\n"
      "do for [q in \"l1_size l2_size l3_size\"] {\n";
  const auto faults = plot_name_faults(script, {});
  ASSERT_EQ(faults.size(), 5u) << testing::PrintToString(faults);
  EXPECT_NE(faults[0].find("line 2: l1_hit_latncy"), std::string::npos);
  EXPECT_NE(faults[1].find("_bogus_suffix"), std::string::npos);
  EXPECT_NE(faults[2].find("line 5: shared_banks"), std::string::npos);
  EXPECT_NE(faults[3].find("an old name"), std::string::npos);
  EXPECT_NE(faults[4].find("l3_size"), std::string::npos);
}

// Every name a figure script asks a run's parameters.csv for is the catalog's: a parameter
// renamed in the catalog and not in a script would leave its figure unmarked without a word.
TEST(PlotNames, EveryNameAPlotReadsIsTheCatalogs) {
  const std::set<std::string> quantities = documented_quantities();
  ASSERT_GT(quantities.size(), 50u);
  int scripts = 0;
  for (const auto& e : fs::directory_iterator(kSource / "plots")) {
    if (e.path().extension() != ".gp") continue;
    ++scripts;
    for (const auto& f : plot_name_faults(slurp(e.path()), quantities))
      ADD_FAILURE() << "plots/" << e.path().filename().string() << ", " << f;
  }
  EXPECT_GT(scripts, 20);
}

// The report hands gnuplot a run's parameters.csv and the reference with old names read as
// today's, in the names' column only; every other line as written.
TEST(PlotNames, TheFiguresReadOldNamesAsTodays) {
  const std::string run =
      "# gpu=H100\nparameter,value,unit,low,high,confidence,method,evidence\n"
      "shared_banks,32,banks,32,32,0.9,\"stride_sweep: a, b\",shared_banks.csv\n"
      "l1_hit_latency,32,cycles,31,33,0.9,pointer_chase: x,latency.csv\n";
  EXPECT_EQ(with_todays_names(run, "parameter"),
            "# gpu=H100\nparameter,value,unit,low,high,confidence,method,evidence\n"
            "shared_bank_count,32,banks,32,32,0.9,\"stride_sweep: a, b\",shared_banks.csv\n"
            "l1_hit_latency,32,cycles,31,33,0.9,pointer_chase: x,latency.csv\n");
  const std::string ref = "arch,gpu,quantity\nvolta,V100,shared_banks\nvolta,\"V1,00\",x\n";
  EXPECT_EQ(with_todays_names(ref, "quantity"),
            "arch,gpu,quantity\nvolta,V100,shared_bank_count\nvolta,\"V1,00\",x\n");
  EXPECT_EQ(with_todays_names(ref, "no_such_column"), ref);
}

}  // namespace
}  // namespace gpuprobe
