// The catalog (harness/base/parameters/): every name defined once, well formed and labelled;
// the names built from a part the families hold as data are the catalog's; docs/parameters.md's
// tables are what the catalog gives; every name an analyzer emits is listed; old names read as
// new ones; and no parameter name is written as a string literal in the code.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "analysis/analyzer.hpp"
#include "analysis/collectives.hpp"
#include "analysis/dual_issue.hpp"
#include "analysis/energy.hpp"
#include "analysis/p2p.hpp"
#include "analysis/pipes.hpp"
#include "analysis/shared_banks.hpp"
#include "app/catalog_doc.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/observation.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// snake_case; a numbered name's pattern has one <x> placeholder in it.
bool well_formed_name(const std::string& name) {
  static const std::regex plain("[a-z][a-z0-9_]*[a-z0-9]");
  static const std::regex pattern("[a-z][a-z0-9_]*<[a-z]+>[a-z0-9_]*");
  return std::regex_match(name, plain) || std::regex_match(name, pattern);
}

// Characters a text cell of a markdown table cannot hold as written: a cell's end, a line's,
// and the angle brackets of an HTML tag (`<p>` would vanish from the page).
constexpr const char* kBreaksATable = "|\n<>";

// The longest meaning: one line of a table a reader takes in at a glance.
constexpr size_t kMaxMeaning = 160;

TEST(Catalog, EveryEntryIsWellFormed) {
  const Catalog& c = catalog();
  EXPECT_GT(c.entries.size(), 150u);
  EXPECT_EQ(c.params.size(), c.entries.size()) << "a name defined twice";
  for (const auto& e : c.entries) {
    SCOPED_TRACE(e.name);
    EXPECT_TRUE(well_formed_name(e.name));
    EXPECT_FALSE(e.unit.empty());
    EXPECT_FALSE(e.family.empty());
    double fraction = 0;
    EXPECT_TRUE(tolerance_fraction(e.tolerance, &fraction) ||
                e.tolerance.rfind("not compared", 0) == 0)
        << e.tolerance;
    EXPECT_GT(e.meaning.size(), 10u);
    EXPECT_LE(e.meaning.size(), kMaxMeaning);
    for (const std::string* s : {&e.unit, &e.tolerance, &e.meaning})
      EXPECT_EQ(s->find_first_of(kBreaksATable), std::string::npos) << *s << ": breaks the table";
  }
}

TEST(Catalog, EveryParameterHasALabelOfTheVocabulary) {
  for (const auto& [name, e] : catalog().params) {
    EXPECT_TRUE(catalog().methods.count(e.method)) << name << ": method '" << e.method << "'";
    EXPECT_LE(e.method.size(), kMaxMethodLabel) << name;
  }
  for (const auto& m : catalog().method_list) {
    EXPECT_LE(m.label.size(), kMaxMethodLabel) << m.label;
    EXPECT_EQ(m.meaning.find_first_of(kBreaksATable), std::string::npos) << m.label;
  }
}

TEST(Catalog, TheOtherTablesNameCatalogParameters) {
  for (const auto& [name, why] : catalog().not_in_quick) {
    EXPECT_NE(find_parameter(name), nullptr) << name;
    EXPECT_EQ(why.find_first_of(kBreaksATable), std::string::npos) << name;
  }
  for (const auto& [name, what] : catalog().includes) {
    EXPECT_NE(find_parameter(name), nullptr) << name;
    EXPECT_EQ(what.find_first_of(kBreaksATable), std::string::npos) << name;
  }
  for (const auto& [old, a] : catalog().aliases) {
    EXPECT_EQ(old, a.old_name);
    EXPECT_EQ(find_parameter(old), nullptr) << old << ": an old name that is a name again";
    EXPECT_NE(find_parameter(a.name), nullptr) << old << " -> " << a.name;
    EXPECT_GT(a.why.size(), 20u) << old << ": say why";
    EXPECT_EQ(a.why.find_first_of(kBreaksATable), std::string::npos) << old;
  }
}

TEST(Catalog, AttachesTheLabelOnce) {
  Parameter p{param::l1_hit_latency, 33,           "cycles", 32, 34, 0.9,
              "ld.ca, 8 B pointers", "latency.csv"};
  attach_method_label(p);
  EXPECT_EQ(p.method, "pointer_chase: ld.ca, 8 B pointers");
  attach_method_label(p);
  EXPECT_EQ(p.method, "pointer_chase: ld.ca, 8 B pointers");
  Parameter q{"not_in_catalog", 1, "x", 1, 1, 1, "text", ""};
  attach_method_label(q);
  EXPECT_EQ(q.method, "text");
}

TEST(Catalog, ANumberedNameStandsForItsPattern) {
  EXPECT_EQ(param::l2_near_sm_count(0), "l2_near_sm_count_0");
  EXPECT_EQ(param::divergence_slowdown_paths(32), "divergence_slowdown_32_paths");
  EXPECT_EQ(param::divergence_slowdown_paths_one_warp(32), "divergence_slowdown_32_paths_one_warp");
  const CatalogEntry* e = find_parameter(param::l2_near_sm_count(17));
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->name, "l2_near_sm_count_<g>");
  EXPECT_EQ(find_parameter(param::divergence_slowdown_paths(32))->name,
            "divergence_slowdown_<p>_paths");
  EXPECT_EQ(find_parameter(param::divergence_slowdown_paths_one_warp(8))->name,
            "divergence_slowdown_<p>_paths_one_warp");
  EXPECT_EQ(find_parameter("l2_near_sm_count_"), nullptr);
  EXPECT_EQ(find_parameter("l2_near_sm_count_x"), nullptr);
  EXPECT_EQ(find_parameter("divergence_slowdown__paths"), nullptr);
  EXPECT_EQ(find_parameter(std::string(param::l1_hit_latency) + "_2"), nullptr);
  EXPECT_THROW(param::l2_near_sm_count(-1), std::logic_error);
}

// A part held as data (an op of pipes::ops(), a pair, a mode) and the catalog's names agree:
// a part renamed on one side only fails here, not on a GPU.
TEST(Catalog, NamesBuiltFromPartsAreTheCatalogs) {
  int built = 0;
  for (const auto& op : pipes::ops()) {
    EXPECT_NO_THROW(param::pipe_throughput_per_sm(op.probe)) << op.probe;
    EXPECT_NO_THROW(param::pipe_latency(op.probe)) << op.probe;
    ++built;
  }
  for (const auto& op : pipes::wgmma_ops()) {
    EXPECT_NO_THROW(param::pipe_throughput_per_sm(op.probe)) << op.probe;
    EXPECT_NO_THROW(param::pipe_latency(op.probe)) << op.probe;
    ++built;
  }
  for (const auto& pair : dual_issue::pairs()) {
    EXPECT_NO_THROW(param::dual_issue_pair(pair.name)) << pair.name;
    ++built;
  }
  for (const auto& m : p2p::modes()) {
    EXPECT_NO_THROW(param::p2p_bandwidth(m.probe)) << m.probe;
    ++built;
  }
  for (const auto c : collectives::all()) {
    EXPECT_NO_THROW(param::collective_busbw(collectives::name(c))) << collectives::name(c);
    EXPECT_NO_THROW(param::collective_latency(collectives::name(c))) << collectives::name(c);
    ++built;
  }
  for (const auto& op : energy::alu_ops()) {
    EXPECT_NO_THROW(energy::parameter_name(op, false)) << op;
    EXPECT_NO_THROW(energy::parameter_name(op, true)) << op;
    ++built;
  }
  for (const auto& level : energy::levels()) {
    EXPECT_NO_THROW(energy::parameter_name(level, false)) << level;
    ++built;
  }
  EXPECT_GT(built, 60);
  EXPECT_EQ(param::pipe_latency("fp32_fma"), param::fp32_fma_latency);
  EXPECT_EQ(param::collective_busbw("all_to_all"), param::all_to_all_busbw);
  EXPECT_EQ(param::level_energy_per_byte("dram_read", true), param::dram_read_energy_per_byte_zero);
  EXPECT_EQ(param::op_energy("tensor_wgmma_bf16", false), param::tensor_wgmma_bf16_energy);
  EXPECT_THROW(param::collective_latency("all_reduce_perf"), std::logic_error);
  EXPECT_THROW(param::op_energy("dram_read", false), std::logic_error);  // a level's
  EXPECT_THROW(param::level_energy_per_byte("nvlink_write", true), std::logic_error);
  EXPECT_EQ(param::p2p_bandwidth("sm_read_bidir"), param::p2p_sm_read_bidir_bandwidth);
  EXPECT_THROW(param::pipe_latency("fp33_fma"), std::logic_error);
  EXPECT_THROW(param::pipe_throughput_per_sm("atomic_shared"), std::logic_error);  // atomics'
  EXPECT_THROW(param::dual_issue_pair("fp32_fp16"), std::logic_error);
  EXPECT_THROW(param::p2p_bandwidth("sm_bidir"), std::logic_error);
}

// An old name of a committed run reads as today's, in every reader of a parameters.csv.
TEST(Catalog, OldNamesReadAsTheirNewNames) {
  EXPECT_EQ(canonical_name("p2p_bidir_bandwidth_sm"), param::p2p_sm_read_bidir_bandwidth);
  // Older runs wrote the bank count under its family's name.
  EXPECT_EQ(canonical_name(std::string(shared_banks::kFamily.name)), param::shared_bank_count);
  EXPECT_EQ(canonical_name(param::l1_size), param::l1_size);
  const auto params = parameters_from_table(
      parse_csv("parameter,value,unit,low,high,confidence,method,evidence\n"
                "p2p_write_bandwidth_ce,370,GB/s,360,380,0.9,copy_engine: x,p2p.csv\n",
                "parameters.csv"));
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].name, param::p2p_ce_write_bandwidth);
}

// docs/parameters.md's tables are the catalog's: an edit of the catalog without the document
// fails here, and says how to write the document anew.
TEST(Catalog, TheDocumentIsGenerated) {
  const fs::path doc = fs::path(GPUPROBE_SOURCE_DIR) / "docs/parameters.md";
  const std::string text = slurp(doc);
  ASSERT_FALSE(text.empty()) << doc;
  std::string generated;
  ASSERT_NO_THROW(generated = regenerate_catalog_doc(text));
  EXPECT_TRUE(generated == text)
      << "docs/parameters.md's tables are not the catalog's (harness/base/parameters/): run\n"
         "  ./build/gpuprobe catalog --markdown docs/parameters.md\nand commit the document";
  for (const auto& e : catalog().entries)
    EXPECT_NE(text.find("| `" + e.name + "` |"), std::string::npos) << e.name;
}

TEST(Catalog, TheDocumentsMarkersArePaired) {
  std::string all;
  for (const auto& name : catalog_table_names())
    all += "<!-- catalog:" + name + ": x -->\nSTALE\n<!-- /catalog:" + name + " -->\n";
  const std::string done = regenerate_catalog_doc("intro\n" + all + "end\n");
  EXPECT_EQ(done.find("STALE"), std::string::npos);
  EXPECT_NE(done.find("| `l1_hit_latency` |"), std::string::npos);
  EXPECT_EQ(done.substr(done.size() - 4), "end\n");
  EXPECT_EQ(regenerate_catalog_doc(done), done);
  EXPECT_THROW(regenerate_catalog_doc("<!-- catalog:methods: x -->\nno end\n"), std::runtime_error);
  EXPECT_THROW(regenerate_catalog_doc("nothing\n"), std::runtime_error);  // tables left out
  EXPECT_THROW(regenerate_catalog_doc(all + "<!-- catalog:nope: x -->\n<!-- /catalog:nope -->\n"),
               std::runtime_error);
}

// `gpuprobe catalog --markdown DOC` writes DOC's tables anew, and a document it cannot read or
// rewrite is one line and exit status 1.
TEST(Catalog, TheCommandWritesTheTablesAnew) {
  const fs::path doc = fs::temp_directory_path() / "gpuprobe-catalog-doc.md";
  std::ofstream(doc)
      << "# t\n<!-- catalog:methods: x -->\n| `stale` | row |\n<!-- /catalog:methods -->\n";
  EXPECT_EQ(catalog_main({"--markdown", doc.string()}), 1);  // the other tables are missing
  std::string all;
  for (const auto& name : catalog_table_names())
    all += "<!-- catalog:" + name + ": x -->\n| `stale` | row |\n<!-- /catalog:" + name + " -->\n";
  std::ofstream(doc) << "# t\n" << all;
  EXPECT_EQ(catalog_main({"--markdown", doc.string()}), 0);
  const std::string text = slurp(doc);
  EXPECT_EQ(text.find("stale"), std::string::npos);
  EXPECT_EQ(regenerate_catalog_doc(text), text);
  EXPECT_EQ(catalog_main({"--markdown", (fs::temp_directory_path() / "no-such-dir/x.md").string()}),
            1);
  EXPECT_EQ(catalog_main({"--no-such-flag"}), 2);
  fs::remove(doc);
}

// Every name the analyzers emit on the recorded H100 observations is in the catalog and comes
// out of analyze() with the catalog's label.
TEST(Catalog, RecordedRunsEmitOnlyCatalogNames) {
  const std::string data = GPUPROBE_TEST_DATA;
  int checked = 0;
  for (const auto& [family, fn] : analyzers()) {
    std::string path = data + "/h100_" + family + ".csv";
    if (!std::ifstream(path)) continue;
    std::vector<Observation> obs;
    Metadata meta;
    try {
      obs = read_observations(path, &meta);
    } catch (const std::exception& e) {
      ADD_FAILURE() << path << ": " << e.what();
      continue;
    }
    for (const auto& p : analyze(family, obs, meta)) {
      ++checked;
      const CatalogEntry* entry = find_parameter(p.name);
      if (!entry) {
        ADD_FAILURE() << family << " emits " << p.name << ", not in the catalog";
        continue;
      }
      EXPECT_EQ(p.method.substr(0, entry->method.size() + 1), entry->method + ":")
          << p.name << ": " << p.method;
    }
  }
  EXPECT_GT(checked, 50);
}

}  // namespace
}  // namespace gpuprobe
