// `gpuprobe compare --table`: the paper table of the committed H100 and H200 runs beside the
// documented Kepler, Maxwell and Volta figures, as markdown, CSV and LaTeX (compiled with
// pdflatex where one is installed).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "app/compare.hpp"
#include "app/paper_table.hpp"
#include "committed_runs.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

class PaperTable : public ::testing::Test {
 protected:
  std::vector<RunData> runs;
  std::vector<std::string> labels;
  Reference ref;
  std::string l2(size_t k) const {
    return human(first_present(runs[k], {"L2", {param::l2_size}})->value, "bytes");
  }
  void SetUp() override {
    fs::path src = GPUPROBE_SOURCE_DIR;
    Diagnostics quiet;
    quiet.prefix = "test";
    for (const char* run : {kH100Run, kH200Run}) {
      const std::string dir = committed_run(run);
      ASSERT_TRUE(fs::exists(fs::path(dir) / "parameters.csv")) << dir;
      runs.push_back(load_run(dir, known_families({}), quiet));
    }
    labels = run_labels(runs);
    ref = load_reference((src / "results/reference/documented_figures.csv").string());
  }
};

TEST_F(PaperTable, MarkdownHasGpusBesideDocumentedColumnsAndFootnotes) {
  std::string md = paper_table(runs, labels, ref, "markdown");
  EXPECT_EQ(md.rfind("| parameter | H100 | H200 | Kepler K80 | Maxwell M60 | Volta V100 |\n", 0), 0u) << md;
  // The row: both GPUs' values (each maybe marked \* for low confidence), then Kepler's.
  const size_t row = md.find("| L2 size | ");
  ASSERT_NE(row, std::string::npos) << md;
  const std::string line = md.substr(row, md.find('\n', row) - row);
  EXPECT_NE(line.find("| " + l2(0) + " "), std::string::npos) << line;
  EXPECT_NE(line.find("| " + l2(1) + " "), std::string::npos) << line;
  EXPECT_NE(line.find("| 1.5 MiB ["), std::string::npos) << line;
  EXPECT_NE(md.find("\n1. Jia et al. 2018"), std::string::npos);
  // Every footnote cited is listed, and every one listed is cited.
  for (int k = 1; k <= 9; ++k) {
    std::string mark = " [" + std::to_string(k) + "]";
    bool cited = md.find(mark + " |") != std::string::npos || md.find(mark + " †") != std::string::npos;
    bool listed = md.find("\n" + std::to_string(k) + ". ") != std::string::npos;
    EXPECT_EQ(cited, listed) << k;
  }
}

TEST_F(PaperTable, LowConfidenceIsMarked) {
  runs[0].params.push_back({param::l1_hit_latency, 30, "cycles", 20, 40, 0.2, "m", "latency.csv"});
  runs[0].params.erase(
      std::find_if(runs[0].params.begin(), runs[0].params.end(),
                   [](const Parameter& p) { return p.name == param::l1_hit_latency; }));
  std::string md = paper_table(runs, labels, ref, "markdown");
  EXPECT_NE(md.find("| L1 hit latency | 30 cycles \\* |"), std::string::npos) << md;
  EXPECT_NE(md.find("\\* measured with confidence below 0.5"), std::string::npos);
}

TEST_F(PaperTable, CsvHasOneRowPerParameterAndSourcesAsMetadata) {
  std::string csv = paper_table(runs, labels, ref, "csv");
  EXPECT_NE(csv.find("# source_1=Jia et al. 2018"), std::string::npos) << csv;
  EXPECT_NE(csv.find("parameter,name,H100,H100_confidence,H200,H200_confidence,kepler_documented,kepler_source,"
                     "kepler_other_method,"),
            std::string::npos);
  EXPECT_NE(csv.find("\nL2 size,l2_size,"), std::string::npos);
}

TEST_F(PaperTable, LatexUsesBooktabsAndCompiles) {
  std::string tex = paper_table(runs, labels, ref, "latex");
  for (const char* s : {"\\toprule", "\\midrule", "\\bottomrule", "\\cmidrule(lr){2-3}"})
    EXPECT_NE(tex.find(s), std::string::npos) << s;
  EXPECT_NE(tex.find("L2 size & " + l2(0)), std::string::npos) << tex;  // maybe $^{*}$ after it
  EXPECT_NE(tex.find(" & " + l2(1)), std::string::npos) << tex;
  EXPECT_EQ(tex.find("\\hline"), std::string::npos);
  if (std::system("command -v pdflatex > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "pdflatex not installed (texlive-latex-base, texlive-latex-recommended): the LaTeX is not compiled";
  std::string tmpl = (fs::temp_directory_path() / "gpuprobe-tex-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  fs::path dir = tmpl;
  std::ofstream(dir / "t.tex") << "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n"
                                  "\\usepackage[margin=1cm]{geometry}\n\\begin{document}\n" << tex << "\\end{document}\n";
  std::string cmd = "cd '" + dir.string() + "' && pdflatex -interaction=nonstopmode -halt-on-error t.tex > log.txt 2>&1";
  int rc = std::system(cmd.c_str());
  std::stringstream log;
  log << std::ifstream(dir / "log.txt").rdbuf();
  EXPECT_EQ(rc, 0) << log.str();
  EXPECT_TRUE(fs::exists(dir / "t.pdf"));
  fs::remove_all(dir);
}

TEST(PaperTableCli, BadFormatIsAUsageError) {
  EXPECT_EQ(compare_main({"--table", "html", "a"}), 2);
  EXPECT_EQ(compare_main({"--table"}), 2);
  EXPECT_EQ(compare_main({"--table", "csv"}), 2);
}

}  // namespace
}  // namespace gpuprobe
