// The canonical table (docs/parameters.md, built in): every name an analyzer emits is listed
// with a label of the vocabulary, and every parameter of a run carries that label.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "analysis/analyzer.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/observation.hpp"

namespace gpuprobe {
namespace {

TEST(Catalog, ParsesTheTables) {
  Catalog c = parse_catalog(
      "# t\n\n## Method labels\n\n| label | what |\n| --- | --- |\n| `pointer_chase` | p = *p |\n"
      "\n## Parameters\n\n| name | unit | family | method | tolerance |\n| --- | --- | --- | --- | --- |\n"
      "| `l1_hit_latency` | cycles | latency | `pointer_chase` | 3 % |\n\n## Other\n\n| `x` | y |\n");
  EXPECT_EQ(c.methods, std::set<std::string>{"pointer_chase"});
  ASSERT_EQ(c.params.size(), 1u);
  const CatalogEntry& e = c.params.at("l1_hit_latency");
  EXPECT_EQ(e.unit, "cycles");
  EXPECT_EQ(e.family, "latency");
  EXPECT_EQ(e.method, "pointer_chase");
  EXPECT_EQ(e.tolerance, "3 %");
}

// The built-in copy is the file in the tree (a stale build would label runs wrongly).
TEST(Catalog, BuiltInIsTheDocument) {
  std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/docs/parameters.md");
  std::stringstream s;
  s << in.rdbuf();
  Catalog file = parse_catalog(s.str());
  EXPECT_EQ(file.methods, catalog().methods);
  EXPECT_EQ(file.params.size(), catalog().params.size());
  EXPECT_GT(catalog().params.size(), 100u);
}

TEST(Catalog, EveryParameterHasALabelOfTheVocabulary) {
  for (const auto& [name, e] : catalog().params) {
    EXPECT_TRUE(catalog().methods.count(e.method)) << name << ": method '" << e.method << "'";
    EXPECT_LE(e.method.size(), kMaxMethodLabel) << name;
  }
  for (const auto& m : catalog().methods) EXPECT_LE(m.size(), kMaxMethodLabel) << m;
}

TEST(Catalog, AttachesTheLabelOnce) {
  Parameter p{"l1_hit_latency", 33, "cycles", 32, 34, 0.9, "ld.ca, 8 B pointers", "latency.csv"};
  attach_method_label(p);
  EXPECT_EQ(p.method, "pointer_chase: ld.ca, 8 B pointers");
  attach_method_label(p);
  EXPECT_EQ(p.method, "pointer_chase: ld.ca, 8 B pointers");
  Parameter q{"not_in_catalog", 1, "x", 1, 1, 1, "text", ""};
  attach_method_label(q);
  EXPECT_EQ(q.method, "text");
}

// Every name the analyzers emit on the recorded H100 observations is in the catalog, in its
// unit, and comes out of analyze() with the catalog's label.
TEST(Catalog, APlaceholderRowStandsForNumberedNames) {
  const CatalogEntry* e = find_parameter("l2_near_sm_count_0");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->name, "l2_near_sm_count_<g>");
  EXPECT_NE(find_parameter("l2_near_sm_count_17"), nullptr);
  EXPECT_EQ(find_parameter("l2_near_sm_count_"), nullptr);
  EXPECT_EQ(find_parameter("l2_near_sm_count_x"), nullptr);
  EXPECT_EQ(find_parameter("l1_hit_latency_2"), nullptr);
}

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
        ADD_FAILURE() << family << " emits " << p.name << ", not in docs/parameters.md";
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
