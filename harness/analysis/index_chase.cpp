#include "analysis/index_chase.hpp"

#include <algorithm>
#include <regex>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/catalog.hpp"

namespace gpuprobe::index_chase {

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {
      {kSharedProbe, "index_chase::shared_chase", R"(^LDS)", param::shared_latency_index_chase},
      {kL1Probe, "index_chase::global_chase<false>", R"(^LDG)", param::l1_hit_latency_index_chase},
      {kL2Probe, "index_chase::global_chase<true>", R"(^LDG)", param::l2_hit_latency_index_chase},
      {kDramProbe, "index_chase::global_chase<false>", R"(^LDG)", param::dram_latency_index_chase},
      {kAtomicSharedPairProbe, "index_chase::shared_pair", R"(^ATOMS)",
       param::atomic_shared_latency_result_pair},
      {kAtomicGlobalPairProbe, "index_chase::global_pair", R"(^ATOMG)",
       param::atomic_global_latency_result_pair},
  };
  return v;
}

std::string one_step(const std::vector<Instruction>& region, const std::string& load_pattern) {
  const std::regex re(load_pattern);
  std::string out;
  int seen = 0;
  for (const auto& ins : region) {
    bool load = std::regex_search(ins.text, re);
    if (seen == 1) out += (out.empty() ? "" : "; ") + ins.text;
    if (load && ++seen == 2) return out;
  }
  return "";
}

namespace {

// One thread on one SM times atomics at one L2 slice: the distance between them changes from
// run to run (H100: 281 and 438 cycles for the global pair in two runs of one build), which the
// spread of the repetitions cannot show.
constexpr double kOnePlacementConfidence = 0.5;

std::vector<CodeExpectation> index_chase_expectations() {
  std::vector<CodeExpectation> out;
  auto add = [&](const std::string& kernel, const std::string& probe, std::vector<InstructionRule> ptx,
                 std::vector<InstructionRule> sass) {
    CodeExpectation e;
    e.source = std::string(kFamily.name);
    e.kernel = kernel;
    e.probe = probe;
    e.ptx = std::move(ptx);
    e.sass = std::move(sass);
    out.push_back(e);
  };
  // The chains' layout: untimed stores.
  add("index_chase::fill_stride", kL1Probe, {{R"(^st\.global\.u32 )", -1, false}},
      {{R"(^STG\.E )", -1, false}});
  add("index_chase::fill_identity", kAtomicGlobalPairProbe, {{R"(^st\.global\.u32 )", -1, false}},
      {{R"(^STG\.E )", -1, false}});
  // kSteps dependent loads per trip, the index turned into an address in the loop.
  add("index_chase::shared_chase", kSharedProbe, {{R"(^ld\.shared\.u32 )", kSteps, true}},
      {{R"(^LDS)", kSteps, true}});
  add("index_chase::global_chase<false>", kL1Probe, {{R"(^ld\.global\.u32 )", kSteps, true}},
      {{R"(^LDG\.E )", kSteps, true}});
  add("index_chase::global_chase<true>", kL2Probe, {{R"(^ld\.global\.cg\.u32 )", kSteps, true}},
      {{R"(^LDG\.E)", kSteps, true}});
  // The pair: kSteps atomics, each result indexing the next load, each load's value the next
  // atomic's index.
  add("index_chase::shared_pair", kAtomicSharedPairProbe,
      {{R"(^atom\.shared\.add\.u32 )", kSteps, false}, {R"(^ld\.shared\.u32 )", kSteps, false}},
      {{R"(^ATOMS\.ADD )", kSteps, false}, {R"(^(ATOMS\.ADD|LDS) )", 2 * kSteps, true}});
  add("index_chase::global_pair", kAtomicGlobalPairProbe,
      {{R"(^atom\.global\.add\.u32 )", kSteps, false}, {R"(^ld\.global\.u32 )", kSteps, false}},
      {{R"(^ATOMG\.E\.ADD)", kSteps, false}, {R"(^(ATOMG\.E\.ADD|LDG\.E))", 2 * kSteps, true}});
  return out;
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(index_chase_expectations);

}  // namespace

std::vector<Parameter> analyze_index_chase(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  auto row = [&](const std::string& probe) -> const Observation* {
    for (const auto& o : obs)
      if (o.probe == probe && o.unit == "cycles" && o.value > 0) return &o;
    return nullptr;
  };
  auto sass_of = [&](const std::string& probe) -> std::string {
    for (const auto& o : obs)
      if (o.probe == kSassProbe && o.param_text(kOfColumn) == probe)
        return o.param_text(kStepColumn);
    return "";
  };
  for (const auto& v : index_chase::variants()) {
    const Observation* o = row(v.probe);
    if (!o) continue;
    Parameter p;
    p.name = v.parameter;
    p.unit = "cycles";
    p.value = o->p50;
    p.low = o->p05;
    p.high = o->p95;
    p.confidence = analysis::spread_confidence(*o);
    p.evidence = std::string(kFamily.name) + ".csv";
    // The pair's load B is timed alone by the chase of the same kind of load.
    const char* base = std::string(v.probe) == kAtomicSharedPairProbe   ? kSharedProbe
                       : std::string(v.probe) == kAtomicGlobalPairProbe ? kL1Probe
                                                                        : nullptr;
    if (base) {
      const Observation* b = row(base);
      if (!b) continue;
      p.value = o->p50 - b->p50;
      p.low = o->p05 - b->p95;
      p.high = o->p95 - b->p05;
      p.confidence = std::min(p.confidence, analysis::spread_confidence(*b));
      if (!(p.value > 0)) continue;  // B alone as slow as the pair: no atomic latency to report
    }
    // Newer rows say the lines the pair's atomics stepped over; older ones had one
    // placement of a few lines.
    const bool global_pair = std::string(v.probe) == kAtomicGlobalPairProbe;
    const bool one_placement = global_pair && !(o->param(kLinesColumn) > 1);
    if (one_placement) p.confidence = std::min(p.confidence, index_chase::kOnePlacementConfidence);
    const std::string over_lines = global_pair && !one_placement
                                       ? "; the atomics step over " +
                                             analysis::num(o->param(kLinesColumn)) + " lines " +
                                             analysis::num(o->param(kLineStrideColumn), 4) +
                                             " B apart: the mean over their L2 slices"
                                       : "";
    std::string step = sass_of(v.probe);
    auto includes = catalog().includes.find(v.parameter);
    p.method = std::string(base ? "result_pair: " : "index_chase: ") + "includes " +
               (includes == catalog().includes.end() ? std::string("(not documented)") : includes->second) +
               "; one thread, " + std::to_string(index_chase::kSteps) + " dependent steps per trip" +
               (one_placement ? "; one SM against one L2 slice, whose distance varies between runs" : "") + over_lines +
               (step.empty() ? "" : "; SASS of one step: " + step);
    out.push_back(p);
  }
  return out;
}

GPUPROBE_REGISTER_ANALYZER(index_chase::kFamily, analyze_index_chase);

}  // namespace gpuprobe::index_chase
