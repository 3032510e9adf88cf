#include "analysis/atomics.hpp"

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/code_check.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe::atomics {

static std::string flags(bool shared, bool cas) {
  return std::string(shared ? "true" : "false") + ", " + (cas ? "true" : "false");
}
std::string chain_kernel_name(bool shared, bool cas) {
  return "atomics::chain_kernel<" + flags(shared, cas) + ">";
}
std::string stream_kernel_name(bool shared, bool cas) {
  return "atomics::stream_kernel<" + flags(shared, cas) + ">";
}

namespace {

// What the timed loops must hold: every atomic of a trip, none merged or dropped, in the space
// and operation meant; the latency loop as one dependent chain.
std::vector<CodeExpectation> atomics_expectations() {
  std::vector<CodeExpectation> out;
  for (bool shared : {true, false})
    for (bool cas : {false, true}) {
      const std::string op = cas ? R"(cas\.b32)" : R"(add\.u32)";
      // CUDA 13 spells the CAS for sm_100 and newer with its memory order: atom.relaxed.global.cas
      const std::string ptx = R"(^atom(\.relaxed)?(\.(cta|cluster|gpu|sys))?\.)" +
                              std::string(shared ? "shared" : "global") + R"(\.)" + op + " ";
      // ATOMS.ADD, ATOMS.CAS (or .CAST.SPIN), ATOMG.E.ADD.STRONG.GPU, ATOMG.E.CAS.STRONG.GPU
      const std::string sass =
          std::string(shared ? "^ATOMS" : "^ATOMG") + R"((\.[A-Z0-9]+)*\.)" + (cas ? "CAS" : "ADD");
      out.push_back({std::string(kFamily.name),
                     chain_kernel_name(shared, cas),
                     kAtomicLatency,
                     {{ptx, kAtomicsPerTrip, true}},
                     {{sass, kAtomicsPerTrip, false}}});
      out.push_back({std::string(kFamily.name),
                     stream_kernel_name(shared, cas),
                     kAtomicThroughput,
                     {{ptx, kAtomicsPerTrip, false}},
                     {{sass, kAtomicsPerTrip, false}}});
    }
  return out;
}

GPUPROBE_REGISTER_CODE_EXPECTATIONS(atomics_expectations);


// A global chain that stepped over lines (newer rows say how many, and how far apart)
// averages over near and far L2 slices; older rows were of one word, one slice.
std::string lines_text(const Observation& o) {
  const double lines = o.param(kLinesColumn), stride = o.param(kLineStrideColumn);
  if (!(lines > 1)) return "";
  return "; each step on the next of " + analysis::num(lines) + " lines " + analysis::num(stride, 4) +
         " B apart (every active lane on the same line): the mean over their L2 slices, near and far";
}

// Which L2 slices a run's lines fall in follows its physical pages: three full runs in a row on
// one H100 moved the global chains' means by up to 0.56 % (one H200: 0.06 %), and the global
// throughput (every warp on the same 32 words) by 1.2 % (one H200: 6.9 %), past each run's own
// interval (docs/repeatability.md, "Floors"). What two cards differ by is not covered.
constexpr double kGlobalLatencyRunToRun = 0.006;
constexpr double kGlobalThroughputRunToRun = 0.08;
const std::string kRunToRunWhy = "what runs in a row moved (the lines' L2 slices)";

}  // namespace

std::vector<Parameter> analyze_atomics(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  const std::string evidence = analysis::evidence_file(obs, std::string(kFamily.name));
  const auto lat = analysis::finite_rows(obs, kAtomicLatency, "cycles");
  const auto tput = analysis::finite_rows(obs, kAtomicThroughput, kPerClockPerSm);
  // Each memory space's parameters: the three chains, then the stream.
  struct Space {
    const char* space;
    const char *nocontention, *way32, *cas, *throughput;
  };
  for (const Space& sp :
       {Space{"shared", param::atomic_shared_latency_nocontention,
              param::atomic_shared_latency_32way, param::atomic_shared_cas_latency_nocontention,
              param::atomic_shared_throughput_per_sm},
        Space{"global", param::atomic_global_latency_nocontention,
              param::atomic_global_latency_32way, param::atomic_global_cas_latency_nocontention,
              param::atomic_global_throughput_per_sm}}) {
    const std::string space = sp.space;
    struct Want {
      std::string name, op, lanes, addresses, how;
    };
    const std::vector<Want> wants = {
        {sp.nocontention, "add", "1", "1",
         "one lane, dependent atomicAdd chain (each add's operand is the previous result)"},
        {sp.way32, "add", "32", "1",
         "32 lanes of one warp on one address, dependent atomicAdd chain"},
        {sp.cas, "cas", "1", "1",
         "one lane, dependent atomicCAS chain (compare = previous result)"},
    };
    for (const auto& wnt : wants)
      if (const Observation* o = analysis::find_row(lat, {{kSpaceColumn, space},
                                                          {kOpColumn, wnt.op},
                                                          {kLanesColumn, wnt.lanes},
                                                          {kAddressesColumn, wnt.addresses}})) {
        out.push_back(analysis::measured(wnt.name, *o, wnt.how + lines_text(*o), evidence));
        if (space == "global")
          analysis::widen_to_repeat(out.back(), kGlobalLatencyRunToRun, kRunToRunWhy);
      }
    if (const Observation* o = analysis::find_row(tput, {{kSpaceColumn, space},
                                                         {kOpColumn, "add"},
                                                         {kLanesColumn, "32"},
                                                         {kAddressesColumn, "32"}})) {
      out.push_back(analysis::measured(
          sp.throughput, *o,
          "atomicAdd, 32 lanes on 32 words per warp, all warps, " +
              std::string(space == "shared" ? "clock64 per SM" : "events, measured SM clock"),
          evidence));
      if (space == "global")
        analysis::widen_to_repeat(out.back(), kGlobalThroughputRunToRun, kRunToRunWhy);
    }
  }
  return out;
}

GPUPROBE_REGISTER_ANALYZER(atomics::kFamily, analyze_atomics);

}  // namespace gpuprobe::atomics
