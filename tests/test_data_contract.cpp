// The data contract: CSV reading and writing, observations and parameters files, run
// directories, the command line, and the summary table.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "analysis/analyzer.hpp"
#include "analysis/latency.hpp"
#include "app/cli.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/observation.hpp"
#include "base/parameter_names.hpp"
#include "base/run_dir.hpp"
#include "base/stats.hpp"
#include "app/summary.hpp"

namespace fs = std::filesystem;
using namespace gpuprobe;

namespace {

fs::path temp_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() /
               ("gpuprobe_test_" + name + "_" +
                std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

}  // namespace

TEST(Csv, QuotedFieldsRoundTrip) {
  std::vector<std::string> fields = {"plain", "with, comma", "with \"quote\"", ""};
  EXPECT_EQ(split_csv_line(join_csv(fields)), fields);
}

TEST(Csv, UnterminatedQuoteNamesFileAndLine) {
  try {
    parse_csv("a,b\n1,\"oops\n", "x.csv");
    FAIL() << "expected CsvError";
  } catch (const CsvError& e) {
    EXPECT_NE(std::string(e.what()).find("x.csv:2"), std::string::npos) << e.what();
  }
}

TEST(Csv, WrongFieldCountNamesLine) {
  try {
    parse_csv("# k=v\na,b\n1,2\n3\n", "f.csv");
    FAIL();
  } catch (const CsvError& e) {
    EXPECT_NE(std::string(e.what()).find("f.csv:4"), std::string::npos) << e.what();
  }
}

TEST(Csv, EmptyFileHasNoHeader) { EXPECT_THROW(parse_csv("# only=meta\n", "e.csv"), CsvError); }

TEST(Csv, MissingFileIsOneClearError) {
  try {
    read_csv("/nonexistent/file.csv");
    FAIL();
  } catch (const CsvError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/file.csv"), std::string::npos);
  }
}

TEST(Csv, NumbersRoundTripExactly) {
  for (double v : {0.1, 33.125, 1e-9, 123456789.0, -2.5}) {
    double back = 0;
    ASSERT_TRUE(parse_number(format_number(v), &back));
    EXPECT_EQ(back, v);
  }
  double x;
  EXPECT_FALSE(parse_number("12abc", &x));
  EXPECT_FALSE(parse_number("", &x));
}

TEST(Observations, TidyColumnsAndRoundTrip) {
  std::vector<Observation> obs = {
      {std::string(latency::kFamily.name),
       latency::kLdGlobalProbe,
       {{memory_chase::kFootprintColumn, "1024"}, {latency::kStrideColumn, "128"}},
       33,
       "cycles",
       32.5,
       33,
       34,
       11},
      {std::string(latency::kFamily.name),
       latency::kSharedProbe,
       {{memory_chase::kFootprintColumn, "2048"}},
       29,
       "cycles",
       29,
       29,
       29.5,
       11},
  };
  Metadata meta = {{"gpu", "Test GPU"}, {"run_id", "20260101T000000Z"}};
  std::string text = format_observations(meta, obs);
  EXPECT_EQ(text.substr(0, 12), "# gpu=Test G");
  EXPECT_NE(text.find("family,probe,footprint_bytes,stride_bytes,value,unit,p05,p50,p95,reps"),
            std::string::npos);
  CsvTable t = parse_csv(text, "mem.csv");
  EXPECT_EQ(t.meta_value("gpu"), "Test GPU");
  auto back = observations_from_table(t);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].param(memory_chase::kFootprintColumn), 2048);
  EXPECT_TRUE(std::isnan(back[1].param(latency::kStrideColumn)));
  EXPECT_EQ(back[0].p95, 34);
  EXPECT_EQ(back[0].reps, 11);
  EXPECT_EQ(select(back, "shared").size(), 1u);
}

TEST(Observations, RejectsFilesThatAreNotObservations) {
  EXPECT_THROW(observations_from_table(parse_csv("a,b,c\n1,2,3\n", "p.csv")), CsvError);
  EXPECT_THROW(observations_from_table(parse_csv(
                   "family,probe,value,unit,p05,p50,p95,reps\nf,p,abc,cycles,1,1,1,3\n", "q.csv")),
               CsvError);
}

TEST(Parameters, RoundTripAndConfidenceChecked) {
  fs::path dir = temp_dir("params");
  std::vector<Parameter> ps = {{param::l1_hit_latency, 33.1, "cycles", 32.9, 33.4, 0.98,
                                "pointer chase, ld.ca, 8 B pointers", "latency.csv"}};
  std::string path = (dir / "parameters.csv").string();
  write_file_atomic(path, format_parameters({{"gpu", "X"}}, ps));
  auto back = read_parameters(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].method, "pointer chase, ld.ca, 8 B pointers");
  EXPECT_DOUBLE_EQ(back[0].value, 33.1);
  write_file_atomic(path,
                    "parameter,value,unit,low,high,confidence,method,evidence\n"
                    "x,1,B,1,1,1.5,m,e\n");
  EXPECT_THROW(read_parameters(path), CsvError);
}

TEST(RunDir, SlugAndRunId) {
  EXPECT_EQ(gpu_slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(gpu_slug("  Tesla  V100-SXM2-16GB "), "tesla-v100-sxm2-16gb");
  EXPECT_EQ(run_id(0), "19700101T000000Z");
}

TEST(RunDir, NeverOverwritesAnotherRun) {
  fs::path root = temp_dir("runs");
  std::string a, b;
  std::string da = create_run_dir(root.string(), "gpu", 1000, &a);
  std::string db = create_run_dir(root.string(), "gpu", 1000, &b);
  EXPECT_NE(da, db);
  EXPECT_NE(a, b);
  EXPECT_TRUE(fs::is_directory(da));
  EXPECT_TRUE(fs::is_directory(db));
}

TEST(RunDir, AtomicWriteLeavesNoTemporary) {
  fs::path dir = temp_dir("atomic");
  std::string path = (dir / "x.csv").string();
  write_file_atomic(path, "a\n");
  write_file_atomic(path, "b\n");
  EXPECT_EQ(read_file(path), "b\n");
  int files = 0;
  for (auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  EXPECT_THROW(write_file_atomic((dir / "missing" / "x").string(), "a"), std::runtime_error);
}

TEST(Stats, Percentiles) {
  Summary s = summarize({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(s.p50, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.p05, 1.2);
  EXPECT_DOUBLE_EQ(s.p95, 4.8);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_TRUE(std::isnan(summarize({}).p50));
}

TEST(Cli, RunOptions) {
  Options o = parse_command_line({"run", "--quick", "--filter", "latency/.*", "--out=/tmp/r",
                                  "--device", "1", "--benchmark_min_time=0"});
  EXPECT_EQ(o.command, "run");
  EXPECT_TRUE(o.quick);
  EXPECT_EQ(o.filter, "latency/.*");
  EXPECT_EQ(o.out, "/tmp/r");
  EXPECT_EQ(o.device, 1);
  ASSERT_EQ(o.benchmark_flags.size(), 1u);
}

TEST(Cli, BadInputIsAUsageError) {
  EXPECT_THROW(parse_command_line({}), UsageError);
  EXPECT_THROW(parse_command_line({"frobnicate"}), UsageError);
  EXPECT_THROW(parse_command_line({"run", "--bogus"}), UsageError);
  EXPECT_THROW(parse_command_line({"run", "--device", "x"}), UsageError);
  EXPECT_THROW(parse_command_line({"run", "--device", "-1"}), UsageError);
  EXPECT_THROW(parse_command_line({"run", "--filter"}), UsageError);
  EXPECT_THROW(parse_command_line({"run", "--filter", "(unclosed"}), UsageError);
  EXPECT_THROW(parse_command_line({"list", "--quick"}), UsageError);
  EXPECT_THROW(parse_command_line({"analyze"}), UsageError);
  EXPECT_EQ(parse_command_line({"--help"}).command, "help");
}

TEST(Cli, FilterMatchesFamilySlashProbe) {
  EXPECT_TRUE(filter_matches("", "latency/ld_global"));
  EXPECT_TRUE(filter_matches("^latency/", "latency/ld_cg"));
  EXPECT_FALSE(filter_matches("^latency/shared$", "latency/ld_cg"));
}

TEST(Cli, HostileFiltersAreRejectedOrMatchedSafely) {
  // std::regex recursed once per parenthesis and per character: these crashed with SIGSEGV.
  EXPECT_THROW(parse_command_line({"run", "--filter", std::string(100000, 'a')}), UsageError);
  EXPECT_THROW(
      parse_command_line({"run", "--filter", std::string(400, '(') + std::string(400, ')')}),
      UsageError);
  std::string nested = std::string(40, '(') + "a" + std::string(40, ')');
  EXPECT_NO_THROW(parse_command_line({"run", "--filter", nested}));
  EXPECT_TRUE(filter_matches(nested, "xa"));
  try {
    parse_command_line({"run", "--filter", std::string(20000, '(')});
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_LT(std::string(e.what()).size(), 200u) << "one short line";
  }
}

TEST(Summary, AlignsAndShowsDocumented) {
  std::vector<Parameter> ps = {{param::l2_size, 50331648, "bytes", 0, 0, 0.9, "", ""},
                               {param::l1_hit_latency, 33, "cycles", 0, 0, 0.98, "", ""}};
  std::string s = format_summary(ps, [](const Parameter& p) {
    return p.name == param::l2_size ? std::string("50 MiB") : std::string();
  });
  EXPECT_NE(s.find("48 MiB"), std::string::npos) << s;
  EXPECT_NE(s.find("50 MiB"), std::string::npos) << s;
  EXPECT_NE(s.find("0.98"), std::string::npos);
}

// The invariants every written parameter holds, checked centrally in analyze_checked().
namespace {

Parameter good(const std::string& name) { return {name, 10, "cycles", 9, 11, 0.9, "m", "f.csv"}; }

std::vector<Parameter> invariant_cases(const std::vector<Observation>&, const Metadata&) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Parameter> ps(9, good("ok"));
  ps[1].name = "nan_value", ps[1].value = nan;
  ps[2].name = "inf_high", ps[2].high = inf;
  ps[3].name = "zero", ps[3].value = 0, ps[3].low = 0;
  ps[4].name = "negative", ps[4].value = -1, ps[4].low = -2;
  ps[5].name = "inverted", ps[5].low = 12, ps[5].high = 8;
  ps[6].name = "outside", ps[6].value = 20;
  ps[7].name = "confident", ps[7].confidence = 1.5;
  ps[8].name = "absurd", ps[8].value = ps[8].high = 1e300;
  return ps;
}
constexpr FamilyDescriptor kTestInvariants{"test_invariants", ""};
GPUPROBE_REGISTER_ANALYZER(kTestInvariants, invariant_cases);

std::vector<Parameter> rounding(const std::vector<Observation>&, const Metadata&) {
  Parameter p = good("rounded");
  p.low = p.value * (1 + 1e-13);  // bounds computed apart from the value (found by fuzz_analyze)
  return {p};
}
constexpr FamilyDescriptor kTestRounding{"test_rounding", ""};
GPUPROBE_REGISTER_ANALYZER(kTestRounding, rounding);

std::vector<Parameter> throws(const std::vector<Observation>&, const Metadata&) {
  throw std::runtime_error("boom");
}
constexpr FamilyDescriptor kTestThrows{"test_throws", ""};
GPUPROBE_REGISTER_ANALYZER(kTestThrows, throws);

std::vector<Parameter> row_count(const std::vector<Observation>& obs, const Metadata&) {
  const double n = static_cast<double>(obs.size());
  return {{"rows", n, "rows", n, n, 1, "m", "f.csv"}};
}
constexpr FamilyDescriptor kTestRows{"test_rows", ""};
GPUPROBE_REGISTER_ANALYZER(kTestRows, row_count);

}  // namespace

TEST(Warnings, ImpossibleParametersAreDroppedWithOneWarningEach) {
  Analysis a = analyze_checked("test_invariants", {});
  ASSERT_EQ(a.params.size(), 1u);
  EXPECT_EQ(a.params[0].name, "ok");
  ASSERT_EQ(a.warnings.size(), 8u);
  for (const char* n : {"nan_value", "inf_high", "zero", "negative", "inverted", "outside",
                        "confident", "absurd"}) {
    bool named = false;
    for (const auto& w : a.warnings) named = named || w.find(n) != std::string::npos;
    EXPECT_TRUE(named) << n;
  }
  EXPECT_TRUE(a.error.empty());
}

TEST(Warnings, BoundsMissedByRoundingWidenToHoldTheValue) {
  Analysis a = analyze_checked("test_rounding", {});
  ASSERT_EQ(a.params.size(), 1u);
  EXPECT_LE(a.params[0].low, a.params[0].value);
  EXPECT_TRUE(a.warnings.empty());
}

TEST(Warnings, AnAnalyzerThatThrowsIsReportedNotSkipped) {
  Analysis a = analyze_checked("test_throws", {});
  EXPECT_NE(a.error.find("test_throws: analysis failed: boom"), std::string::npos) << a.error;
  EXPECT_THROW(analyze("test_throws", {}), std::runtime_error);
}

TEST(Warnings, NonFiniteObservationRowsAreDroppedAndCounted) {
  Observation o{"test_rows", "p", {}, 1, "cycles", 1, 1, 1, 3};
  Observation bad = o;
  bad.p95 = std::numeric_limits<double>::infinity();
  Observation nan = o;
  nan.value = std::nan("");
  Analysis a = analyze_checked("test_rows", {o, bad, nan, o});
  ASSERT_EQ(a.params.size(), 1u);
  EXPECT_EQ(a.params[0].value, 2);
  ASSERT_EQ(a.warnings.size(), 1u);
  EXPECT_NE(a.warnings[0].find("2 observation row(s)"), std::string::npos) << a.warnings[0];
}

TEST(Warnings, EveryRegisteredAnalyzerHoldsTheInvariantsOnHostileInput) {
  // -1, 0, NaN, inf and 1e300 in every numeric cell of a plausible sweep: no analyzer may
  // crash (under the sanitizer build: no undefined behaviour), and what comes out holds.
  const double hostile[] = {-1, 0, std::nan(""), std::numeric_limits<double>::infinity(), 1e300};
  for (const auto& [family, fn] : analyzers()) {
    if (family.rfind("test_", 0) == 0) continue;
    for (double h : hostile) {
      std::vector<Observation> obs;
      for (int i = 1; i <= 64; ++i) {
        Observation o{family,
                      "p",
                      {{"footprint_bytes", std::to_string(1024 * i)},
                       {"stride_bytes", std::to_string(4 * i)}},
                      h,
                      "cycles",
                      h,
                      h,
                      h,
                      5};
        obs.push_back(o);
      }
      Analysis a = analyze_checked(family, obs);
      for (const auto& p : a.params) {
        EXPECT_TRUE(std::isfinite(p.value) && std::isfinite(p.low) && std::isfinite(p.high))
            << family << " " << p.name;
        EXPECT_LE(p.low, p.high) << family << " " << p.name;
        EXPECT_TRUE(p.confidence >= 0 && p.confidence <= 1) << family << " " << p.name;
      }
    }
  }
}

#include "fuzz/analyze_input.hpp"

// The committed fuzz corpus (seeds and every finding kept as a regression input) through
// every analyzer, in every build: under the sanitizer build this is where a regression of an
// old finding shows, without clang.
TEST(FuzzCorpus, EveryInputHoldsTheInvariants) {
  const fs::path corpus = fs::path(GPUPROBE_SOURCE_DIR) / "tests" / "fuzz" / "corpus";
  int inputs = 0;
  for (const auto& e : fs::directory_iterator(corpus)) {
    std::ifstream f(e.path(), std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(analyze_input(text), "") << e.path();
    ++inputs;
  }
  EXPECT_GE(inputs, 80);
}

TEST(Observation, ScaledConvertsValueAndPercentilesKeepingTheRest) {
  gpuprobe::Observation o{std::string(gpuprobe::latency::kFamily.name),
                          "chase",
                          {{gpuprobe::memory_chase::kFootprintColumn, "4096"}},
                          30,
                          "cycles",
                          29,
                          30,
                          33,
                          11};
  gpuprobe::Observation ns = o.scaled(0.5, "ns");
  EXPECT_EQ(ns.unit, "ns");
  EXPECT_DOUBLE_EQ(ns.value, 15);
  EXPECT_DOUBLE_EQ(ns.p05, 14.5);
  EXPECT_DOUBLE_EQ(ns.p50, 15);
  EXPECT_DOUBLE_EQ(ns.p95, 16.5);
  EXPECT_EQ(ns.reps, 11);
  EXPECT_EQ(ns.params, o.params);
  EXPECT_EQ(o.unit, "cycles");
}
