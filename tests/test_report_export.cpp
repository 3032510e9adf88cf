// `gpuprobe export`: the JSON schema, the Accel-Sim fragment (every value traced back to
// parameters.csv) and MT4G's topology JSON, on the committed H100 run.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "base/csv.hpp"
#include "app/export.hpp"
#include "base/json.hpp"
#include "base/parameter_names.hpp"
#include "committed_runs.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

class ExportH100 : public ::testing::Test {
 protected:
  RunData run;
  std::map<std::string, const Parameter*> by_name;
  void SetUp() override {
    const fs::path dir = committed_run(kH100Run);
    Diagnostics quiet;
    quiet.prefix = "test";
    run = load_run(dir.string(), known_families({}), quiet);
    ASSERT_FALSE(run.params.empty());
    for (const auto& p : run.params) by_name[p.name] = &p;
  }
};

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Json, StringsAreQuotedAndEscaped) {
  EXPECT_EQ(json_text("a\"b\\c"), "\"a\\\"b\\\\c\"\n");
  EXPECT_EQ(json_text("x\ny\tz"), "\"x\\ny\\tz\"\n");
  EXPECT_EQ(json_text(std::string("\x01", 1)), "\"\\u0001\"\n");
  EXPECT_EQ(json_text(std::string("\x1f", 1)), "\"\\u001f\"\n");
}

TEST(Json, NumbersKeepFifteenDigitsAndWholeNumbersNoFraction) {
  EXPECT_EQ(json_text(json_number(1.0)), "1\n");
  EXPECT_EQ(json_text(json_number(0.1 + 0.2)), "0.3\n");
  EXPECT_EQ(json_text(json_number(2.5e-7)), "2.5e-07\n");
  EXPECT_EQ(json_text(json_number(NAN)), "null\n");
  EXPECT_EQ(json_text(json_number(123456.789, 6)), "123457\n");
}

TEST_F(ExportH100, JsonHoldsSchemaMetadataAndEveryParameter) {
  std::string json = export_json(run);
  EXPECT_EQ(json.rfind("{\n  \"schema\": \"gpuprobe-run\",\n  \"schema_version\": 1,", 0), 0u) << json.substr(0, 200);
  EXPECT_NE(json.find("\"metadata\": {"), std::string::npos);
  EXPECT_NE(json.find("\"compute_capability\": \"9.0\""), std::string::npos);
  EXPECT_EQ(count(json, "\"name\": \""), run.params.size());
  for (const auto& p : run.params) EXPECT_NE(json.find("\"name\": \"" + p.name + "\""), std::string::npos) << p.name;
  EXPECT_NE(json.find("\"name\": \"l2_size\",\n      \"family\": \"latency\",\n      \"value\": "), std::string::npos);
  EXPECT_EQ(count(json, "{"), count(json, "}"));
  EXPECT_EQ(count(json, "["), count(json, "]"));
  EXPECT_EQ(json.find("nan"), std::string::npos);
  // Metadata as report.md shows it: no place on the machine that made the run.
  EXPECT_EQ(json.find("/root/"), std::string::npos);
  EXPECT_EQ(json.find("/work/"), std::string::npos);
  // Quotes and control characters inside a method are escaped.
  RunData odd = run;
  odd.params.resize(1);
  odd.params[0].method = "a \"quoted\"\tword\\";
  odd.params[0].value = NAN;
  std::string o = export_json(odd);
  EXPECT_NE(o.find("\"method\": \"a \\\"quoted\\\"\\tword\\\\\""), std::string::npos) << o;
  EXPECT_NE(o.find("\"value\": null"), std::string::npos);
}

// Every option line cites "name = value unit" for each parameter behind it; each cited value
// is the run's, and the option's value follows from them.
TEST_F(ExportH100, AccelSimValuesTraceBackToParameters) {
  std::string cfg = export_accel_sim(run);
  std::istringstream in(cfg);
  std::regex option(R"(^(-\S+) (\S+)  # (.*)$)"), cited(R"(([a-z0-9_]+) = ([-0-9.e+]+))");
  std::map<std::string, std::string> values;
  size_t options = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, option)) << "not 'key value  # why': " << line;
    values[m[1]] = m[2];
    ++options;
    std::string why = m[3];
    for (std::sregex_iterator it(why.begin(), why.end(), cited), end; it != end; ++it) {
      std::string name = (*it)[1];
      double v = std::stod((*it)[2]);
      if (name == "sm_count") {
        EXPECT_EQ(v, std::stod(run.meta_value("sm_count")));
        continue;
      }
      ASSERT_TRUE(by_name.count(name)) << line;
      EXPECT_EQ(format_number(by_name[name]->value), (*it)[2].str()) << line;
      EXPECT_GE(by_name[name]->confidence, kSimulatorMinConfidence) << line;
    }
  }
  EXPECT_GE(options, 8u);
  auto param = [&](const char* n) { return by_name.at(n)->value; };
  auto rounded = [](double v) { return std::to_string(static_cast<long>(std::lround(v))); };
  // An option follows from its parameters where all are trusted; otherwise it is left out and
  // listed with the reason (a run's kernel_launch_overhead may come out at confidence < 0.5).
  auto expect_option = [&](const std::string& key, std::initializer_list<const char*> names, const std::string& want) {
    bool trusted = true;
    for (const char* n : names) trusted = trusted && by_name.at(n)->confidence >= kSimulatorMinConfidence;
    if (trusted) {
      EXPECT_EQ(values[key], want) << key;
    } else {
      EXPECT_FALSE(values.count(key)) << key << " set from an untrusted parameter";
      EXPECT_NE(cfg.find("#   " + key + ": "), std::string::npos) << key << " not listed as left out";
    }
  };
  expect_option("-gpgpu_l1_latency", {param::l1_hit_latency},
                rounded(param(param::l1_hit_latency)));
  expect_option("-gpgpu_smem_latency", {param::shared_latency},
                rounded(param(param::shared_latency)));
  expect_option("-gpgpu_l2_rop_latency", {param::l2_near_hit_latency, param::l1_hit_latency},
                rounded(param(param::l2_near_hit_latency) - param(param::l1_hit_latency)));
  expect_option("-dram_latency", {param::dram_latency, param::l2_near_hit_latency},
                rounded(param(param::dram_latency) - param(param::l2_near_hit_latency)));
  EXPECT_EQ(values["-gpgpu_n_clusters"], run.meta_value("sm_count"));
  expect_option("-gpgpu_kernel_launch_latency",
                {param::kernel_launch_overhead, param::sm_clock_measured},
                rounded(param(param::kernel_launch_overhead) * param(param::sm_clock_measured)));
  EXPECT_EQ(values["-trace_opcode_latency_initiation_sp"].substr(0, 2),
            rounded(param(param::fp32_fma_latency)) + ",");
  // What was not measured, or not trusted, is listed instead.
  EXPECT_NE(cfg.find("# Left out"), std::string::npos);
  EXPECT_NE(cfg.find("#   -gpgpu_cache:dl2:"), std::string::npos);
  std::regex untrusted(R"(#   ([a-z0-9_]+): confidence )");
  for (std::sregex_iterator it(cfg.begin(), cfg.end(), untrusted), end; it != end; ++it)
    EXPECT_LT(by_name.at((*it)[1])->confidence, kSimulatorMinConfidence) << (*it)[1];
  // The L1 geometry needs policy fields gpuprobe does not measure: a commented line at most.
  EXPECT_EQ(values.count("-gpgpu_cache:dl1"), 0u);
}

TEST_F(ExportH100, Mt4gTopologyUsesItsKeys) {
  std::string j = export_mt4g(run);
  EXPECT_EQ(j.rfind("{\n  \"general\": {\n    \"name\": \"NVIDIA H100 80GB HBM3\",\n    \"vendor\": \"NVIDIA\",", 0), 0u) << j.substr(0, 200);
  EXPECT_NE(j.find("\"computeCapability\": {\n      \"major\": 9,\n      \"minor\": 0"), std::string::npos);
  EXPECT_NE(j.find("\"multiProcessorCount\": 132"), std::string::npos);
  EXPECT_NE(j.find("\"l1\": {\n      \"latency\": {\n        \"mean\": " +
                   format_printf("%.15g", by_name[param::l1_hit_latency]->value)),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"segmentSize\": {"), std::string::npos);
  EXPECT_NE(j.find("\"main\": {\n      \"latency\": {"), std::string::npos);
  EXPECT_NE(j.find("\"unit\": \"GiB/s\""), std::string::npos);
  EXPECT_EQ(count(j, "{"), count(j, "}"));
}

TEST(Export, BadCommandLines) {
  EXPECT_EQ(export_main({}), 2);
  EXPECT_EQ(export_main({"x"}), 2);
  EXPECT_EQ(export_main({"x", "--json", "--mt4g"}), 2);
  EXPECT_EQ(export_main({"x", "--bogus"}), 2);
  EXPECT_EQ(export_main({"/nonexistent-run", "--json"}), 1);
}

}  // namespace
}  // namespace gpuprobe
