// Documented figures: the curated file loads, and the lookups pick the right part.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "base/csv.hpp"
#include "base/catalog.hpp"
#include "app/reference.hpp"
#include "app/report_detail.hpp"

namespace fs = std::filesystem;

namespace gpuprobe {
namespace {

// The method label of the index chase's parameters, as the catalog gives it.
std::string index_chase_label() {
  return catalog().params.at(param::shared_latency_index_chase).method;
}

const Reference& curated() {
  static const Reference ref =
      load_reference(std::string(GPUPROBE_SOURCE_DIR) + "/results/reference/documented_figures.csv");
  return ref;
}

TEST(Reference, CuratedFileLoadsWithCitationsAndCanonicalNames) {
  const Reference& ref = curated();
  ASSERT_GT(ref.figures.size(), 600u);
  std::set<std::string> quantities;
  for (const auto& f : ref.figures) {
    EXPECT_FALSE(f.source.empty()) << "line " << f.line;
    quantities.insert(f.quantity);
  }
  for (const char* q :
       {param::l1_hit_latency, param::l2_near_hit_latency, param::dram_latency, param::l2_size,
        param::shared_bank_count, param::fp32_fma_throughput_per_sm, param::l1_bandwidth_per_sm,
        param::dram_copy_bandwidth, param::constant_hit_latency, param::tlb_page_entry_size})
    EXPECT_TRUE(quantities.count(q)) << q;
  // Renamed away: these would compare unlike things under a canonical name.
  for (const char* q : {param::l2_hit_latency, param::l2_segment_size, "fp32_throughput_per_sm"})
    EXPECT_FALSE(quantities.count(q)) << q;
}

TEST(Reference, CanonicalSizesAreInBytes) {
  for (const auto& f : curated().figures) {
    if (f.quantity == param::l2_size || f.quantity == param::l1_size ||
        f.quantity == param::tlb_l1_coverage) {
      EXPECT_EQ(f.unit, "bytes") << "line " << f.line;
    }
  }
}

TEST(Reference, GpuMatchesNameTokensAndQualifiers) {
  auto sxm = documented_for_gpu(curated(), "sm_count", "NVIDIA H100 80GB HBM3", 9, 0);
  ASSERT_TRUE(sxm);
  EXPECT_EQ(sxm->gpu, "H100 SXM5 80GB HBM3");
  EXPECT_DOUBLE_EQ(sxm->value, 132);

  auto l2 = documented_for_gpu(curated(), param::l2_size, "NVIDIA H100 80GB HBM3", 9, 0);
  ASSERT_TRUE(l2);
  EXPECT_DOUBLE_EQ(l2->value, 52428800);
  EXPECT_EQ(l2->unit, "bytes");

  auto pcie = documented_for_gpu(curated(), "sm_count", "NVIDIA H100 PCIe", 9, 0);
  ASSERT_TRUE(pcie);
  EXPECT_DOUBLE_EQ(pcie->value, 114);

  auto v100 = documented_for_gpu(curated(), param::l1_hit_latency, "Tesla V100-PCIE-16GB", 7, 0);
  ASSERT_TRUE(v100);
  EXPECT_EQ(v100->gpu, "Tesla V100 PCIe (GV100)");
  EXPECT_DOUBLE_EQ(v100->value, 28);
}

TEST(Reference, GpuFallsBackToItsComputeCapability) {
  auto banks =
      documented_for_gpu(curated(), param::shared_bank_count, "NVIDIA H100 80GB HBM3", 9, 0);
  ASSERT_TRUE(banks);
  EXPECT_EQ(banks->gpu, "Hopper GH100 (all cc9.0 parts)");
  EXPECT_DOUBLE_EQ(banks->value, 32);

  // Nothing is documented for the H200 itself; the H100's own rows must not stand in.
  EXPECT_FALSE(documented_for_gpu(curated(), param::l2_size, "NVIDIA H200", 9, 0));
  auto fp32 = documented_for_gpu(curated(), param::fp32_fma_throughput_per_sm, "NVIDIA H200", 9, 0);
  ASSERT_TRUE(fp32);
  EXPECT_DOUBLE_EQ(fp32->value, 128);
  EXPECT_EQ(fp32->unit, "results/clk/SM");

  EXPECT_FALSE(documented_for_gpu(curated(), param::l1_hit_latency, "Some Future GPU", 12, 0));
  EXPECT_FALSE(documented_for_gpu(curated(), "no_such_quantity", "NVIDIA H100 80GB HBM3", 9, 0));
}

TEST(Reference, RepresentativeArchitectures) {
  auto volta = documented_for_arch(curated(), param::l1_hit_latency, "volta");
  auto kepler = documented_for_arch(curated(), param::l1_hit_latency, "kepler");
  auto maxwell = documented_for_arch(curated(), param::l1_hit_latency, "Maxwell");
  ASSERT_TRUE(volta && kepler && maxwell);
  EXPECT_DOUBLE_EQ(volta->value, 28);
  EXPECT_DOUBLE_EQ(kepler->value, 35);  // Table 3.1 precedes the text's 32
  EXPECT_DOUBLE_EQ(maxwell->value, 82);

  auto l2 = documented_for_arch(curated(), param::l2_near_hit_latency, "volta");
  ASSERT_TRUE(l2);
  EXPECT_DOUBLE_EQ(l2->value, 193);

  // Not documented for the part itself: the chip's row, then the compute capability's.
  auto v_fp32 = documented_for_arch(curated(), param::fp32_fma_throughput_per_sm, "volta");
  auto k_fp32 = documented_for_arch(curated(), param::fp32_fma_throughput_per_sm, "kepler");
  auto m_fp32 = documented_for_arch(curated(), param::fp32_fma_throughput_per_sm, "maxwell");
  ASSERT_TRUE(v_fp32 && k_fp32 && m_fp32);
  EXPECT_DOUBLE_EQ(v_fp32->value, 64);
  EXPECT_DOUBLE_EQ(k_fp32->value, 192);
  EXPECT_DOUBLE_EQ(m_fp32->value, 128);
  EXPECT_EQ(m_fp32->gpu, "cc 5.0/5.2 (GM10x/GM20x)");

  // Another Maxwell product's figure (a GTX TITAN X) does not stand in for the M60.
  EXPECT_FALSE(documented_for_arch(curated(), param::dram_latency, "maxwell"));
  EXPECT_FALSE(documented_for_arch(curated(), param::l1_hit_latency, "fermi"));
  EXPECT_EQ(representative_gpus().size(), 3u);
}

TEST(Reference, RangesAndText) {
  auto l1 = documented_for_arch(curated(), param::l1_size, "volta");
  ASSERT_TRUE(l1);
  EXPECT_TRUE(std::isnan(l1->value));
  EXPECT_TRUE(l1->numeric());
  EXPECT_DOUBLE_EQ(l1->low, 32768);
  EXPECT_DOUBLE_EQ(l1->high, 131072);
  EXPECT_EQ(describe(*l1), "32 KiB to 128 KiB");

  auto sets = documented_for_arch(curated(), param::l1_sets, "kepler");
  ASSERT_TRUE(sets);
  EXPECT_FALSE(sets->numeric());
  EXPECT_EQ(describe(*sets), "32 or 64 sets");

  auto l2 = documented_for_arch(curated(), param::l2_size, "kepler");
  ASSERT_TRUE(l2);
  EXPECT_EQ(describe(*l2), "1.5 MiB");
}

TEST(Reference, ComputeCapabilityFields) {
  EXPECT_TRUE(cc_covers("7.0", 7, 0));
  EXPECT_FALSE(cc_covers("7.0", 7, 5));
  EXPECT_TRUE(cc_covers("7.x", 7, 5));
  EXPECT_TRUE(cc_covers("3.5/3.7", 3, 7));
  EXPECT_FALSE(cc_covers("3.0/3.2", 3, 7));
  EXPECT_TRUE(cc_covers("3.x-7.x", 5, 2));
  EXPECT_FALSE(cc_covers("3.x-7.x", 8, 0));
  EXPECT_FALSE(cc_covers("", 9, 0));
  EXPECT_FALSE(cc_covers("all", 9, 0));
  EXPECT_FALSE(cc_covers("9.", 9, 0));
}

TEST(Reference, UnitsAliases) {
  EXPECT_TRUE(same_unit("B", "bytes"));
  EXPECT_TRUE(same_unit("cycles", "cycles"));
  EXPECT_FALSE(same_unit("cycles", "ns"));
}

// plots/ref_value.gp draws the figures' reference marks: it must pick what the report shows.
TEST(Reference, GnuplotLookupAgreesWithReport) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not on PATH";
  std::set<std::string> quantities;
  for (const auto& f : curated().figures) quantities.insert(f.quantity);
  std::string words;
  for (const auto& q : quantities) words += q + " ";
  // As the report stages it: the reference's old names read as today's.
  const fs::path ref = fs::temp_directory_path() / "gpuprobe_gnuplot_lookup_ref.csv";
  std::ofstream(ref) << with_todays_names(
      read_input_file(std::string(GPUPROBE_SOURCE_DIR) +
                      "/results/reference/documented_figures.csv"),
      "quantity");
  std::string script =
      "files='x'; ref='" + ref.string() +
      "'; load 'plots/style.gp'; "
      "do for [a in 'kepler maxwell volta'] { do for [q in '" +
      words +
      "'] { "
      "call 'plots/ref_value.gp' value('ref_gpu_'.a) q; print sprintf('%s %s %.17g', a, q, ref_value) } }";
  std::string cmd = "cd '" + std::string(GPUPROBE_SOURCE_DIR) + "' && gnuplot -e \"" + script + "\" 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << out;
  std::istringstream in(out);
  int checked = 0;
  for (std::string arch, q, v; in >> arch >> q >> v; ++checked) {
    auto doc = documented_for_arch(curated(), q, arch);
    double want = doc ? doc->value : NAN;
    double got = v == "nan" || v == "NaN" ? NAN : std::stod(v);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << arch << " " << q << ": gnuplot " << v;
    } else {
      EXPECT_DOUBLE_EQ(got, want) << arch << " " << q;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(3 * quantities.size())) << out;
}

std::string error_of(const std::string& text) {
  try {
    parse_reference(text, "ref.csv");
  } catch (const CsvError& e) {
    return e.what();
  }
  return "";
}

TEST(Reference, MalformedFilesNameFileAndLine) {
  const std::string header = "arch,gpu,cc,quantity,value,unit,method_note,source\n";
  EXPECT_NE(error_of("arch,gpu,cc,quantity,value,unit,method_note\nvolta,V,7.0,q,1,B,n\n")
                .find("ref.csv: missing column 'source'"),
            std::string::npos);
  EXPECT_NE(error_of(header + "volta,V,7.0,q,1,B,n,src\nvolta,V,7.0,q,1,B,n,\n")
                .find("ref.csv:3: row without a source"),
            std::string::npos);
  EXPECT_NE(error_of(header + "volta,V,7.0,q,1,B,n,src\nvolta,V,7.0,q,1\n").find("ref.csv:3:"),
            std::string::npos);
  EXPECT_NE(error_of(header + "volta,V,7.0,q,1,B,\"unterminated,src\n").find("ref.csv:2:"),
            std::string::npos);
  EXPECT_NE(error_of("").find("ref.csv"), std::string::npos);
  EXPECT_EQ(error_of(header), "");
  try {
    load_reference("/nonexistent/documented_figures.csv");
    FAIL() << "no error for a missing file";
  } catch (const CsvError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/documented_figures.csv"), std::string::npos);
  }
}

// The method column: parsed where present; older files without it still load, every figure
// "unknown" and so never set beside a measurement with a ratio.
TEST(Reference, MethodColumnOptional) {
  Reference with = parse_reference(
      "arch,gpu,cc,quantity,value,unit,method,method_note,source\n"
      "volta,V,7.0,shared_latency,19,cycles,index_chase,chase,Jia\n"
      "volta,V,7.0,l2_size,6,bytes,,n,src\n",
      "ref.csv");
  ASSERT_EQ(with.figures.size(), 2u);
  EXPECT_EQ(with.figures[0].method, index_chase_label());
  EXPECT_EQ(with.figures[0].method_note, "chase");
  EXPECT_EQ(with.figures[1].method, "unknown");
  Reference without = parse_reference(
      "arch,gpu,cc,quantity,value,unit,method_note,source\nvolta,V,7.0,q,1,B,n,src\n", "ref.csv");
  EXPECT_EQ(without.figures.at(0).method, "unknown");
}

// A ratio only where the measured label equals the figure's; otherwise "other method".
TEST(Reference, RatioOnlyWhereMethodsMatch) {
  Reference ref = parse_reference(
      "arch,gpu,cc,quantity,value,unit,method,method_note,source\n"
      "volta,V,7.0,shared_latency,20,cycles,index_chase,,Jia\n"
      "volta,V,7.0,shared_latency,20-40,cycles,index_chase,,Jia\n"
      "volta,V,7.0,shared_latency,20,cycles,unknown,,Arafa\n",
      "ref.csv");
  Parameter chase{
      param::shared_latency, 23, "cycles", 22, 24, 0.9, "pointer_chase: ld.shared [reg]", "x.csv"};
  Parameter index{param::shared_latency,   30,     "cycles", 29, 31, 0.9,
                  "index_chase: j = s[j]", "x.csv"};
  // An older run's text without a label: the canonical name's label (catalog), else none.
  Parameter unlabelled{param::shared_latency, 30,     "cycles", 29, 31, 0.9,
                       "chase, ld.shared",    "x.csv"};
  Parameter unnamed{"not_a_parameter", 30, "cycles", 29, 31, 0.9, "index_chase: j = s[j]", "x.csv"};
  EXPECT_EQ(method_label(index), index_chase_label());
  EXPECT_EQ(method_label(unlabelled), "pointer_chase");
  EXPECT_EQ(method_label(unnamed), index_chase_label());
  unnamed.method = "whatever: text";
  EXPECT_EQ(method_label(unnamed), "");
  EXPECT_EQ(versus_documented(chase, ref.figures[0]), "other method: index_chase");
  EXPECT_FALSE(methods_comparable(chase, ref.figures[0]));
  EXPECT_EQ(versus_documented(index, ref.figures[0]), "x1.50");
  EXPECT_EQ(versus_documented(index, ref.figures[1]), "in range");
  EXPECT_EQ(versus_documented(unlabelled, ref.figures[0]), "other method: index_chase");
  EXPECT_EQ(versus_documented(unnamed, ref.figures[0]), "other method: index_chase");
  Parameter unknown_method = index;
  unknown_method.method = "unknown: not said";
  EXPECT_EQ(versus_documented(unknown_method, ref.figures[2]), "other method: unknown");
}

TEST(Reference, ASpecificationOfASizeOrRateTakesARatioWhateverTheMethod) {
  Reference ref = parse_reference(
      "arch,gpu,cc,quantity,value,unit,method,method_note,source\n"
      "hopper,H,9.0,l2_size,52428800,bytes,vendor_spec,,whitepaper\n"
      "hopper,H,9.0,dram_read_bandwidth,3352,GB/s,theoretical_bound,,datasheet\n"
      "hopper,H,9.0,l1_hit_latency,33,cycles,vendor_spec,,a slide\n",
      "ref.csv");
  Parameter size{param::l2_size,       52428800 * 1.02, "bytes", 0, 1e9, 0.9,
                 "pointer_chase: ...", "x.csv"};
  Parameter rate{param::dram_read_bandwidth, 3150,   "GB/s", 3100, 3200, 0.9,
                 "streaming: ...",           "x.csv"};
  Parameter lat{param::l1_hit_latency, 32, "cycles", 31, 33, 0.9, "pointer_chase: ...", "x.csv"};
  EXPECT_EQ(versus_documented(size, ref.figures[0]), "x1.02");
  EXPECT_EQ(versus_documented(rate, ref.figures[1]), "x0.94");
  EXPECT_EQ(versus_documented(lat, ref.figures[2]), "other method: vendor_spec");  // no spec of a latency
}

// Every curated row carries a label of the catalog's vocabulary.
TEST(Reference, CuratedMethodsInVocabulary) {
  const std::set<std::string>& vocabulary = catalog().methods;
  EXPECT_GT(vocabulary.size(), 10u);
  for (const auto& f : curated().figures)
    EXPECT_TRUE(vocabulary.count(f.method)) << "line " << f.line << ": method '" << f.method << "'";
  // Every curated row states its label, `unknown` included: an empty column would load as
  // `unknown` silently (scripts/curate_reference.py once dropped the additions' labels so).
  // The first seven fields hold no comma or quote (the script checks), so a split finds the 7th.
  std::ifstream csv(std::string(GPUPROBE_SOURCE_DIR) + "/results/reference/documented_figures.csv");
  int line_no = 0;
  for (std::string line; std::getline(csv, line);) {
    ++line_no;
    size_t at = 0;
    for (int i = 0; i < 6 && at != std::string::npos; ++i) at = line.find(',', at + 1);
    ASSERT_NE(at, std::string::npos) << "line " << line_no;
    EXPECT_NE(line.compare(at + 1, 1, ","), 0) << "line " << line_no << ": empty method";
  }
  EXPECT_GT(line_no, 700);
}

}  // namespace
}  // namespace gpuprobe
