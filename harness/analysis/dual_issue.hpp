#pragma once
// Dual issue: two independent instruction streams for different pipes interleaved in one
// warp, timed alone and together. If the SM runs them side by side, the pair takes as long as
// the slower stream alone; if they share a pipe, as long as both in turn. The issue slot bounds
// the first case: a scheduler that issues one instruction per clock can overlap two pipes only
// up to that rate, so the pair can at best take (a + b) / issue rate. The issue rate is the
// fastest solo stream of the family: fp32 FMA fills it where an SM's FP32 lanes match its
// schedulers' slots (Maxwell, GP100, GA102 on), not where a 16-lane FP32 pipe takes a slot every
// other clock (Volta, Turing, GA100). Verdicts:
//   beyond the fastest stream  the pair beats that rate: dual issue (Kepler to Pascal), or an
//                   issue slot wider than the fastest pipe; the rates alone cannot tell which
//   separate pipes  overlap >= 0.8 of what single issue allows
//   partial         in between
//   shared pipe     overlap <= 0.2: the streams take turns
//   issue-bound     each stream alone nearly fills the issue slot (the best overlap would save
//                   < 10 % of the time in turn), so pairing cannot tell the pipes apart
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::dual_issue {

// The names of dual_issue.csv, written by the driver and read by the analyzer, the tests and the
// model GPUs. Each pair's probe, dual_issue_<pair> its parameter (the ops are pipes' probes):
constexpr const char* kFp32Int32Pair = "fp32_int32";    // fp32 FMA with int32 logic
constexpr const char* kFp32Fp64Pair = "fp32_fp64";      // fp32 FMA with fp64 FMA
constexpr const char* kFp32SfuPair = "fp32_sfu";        // fp32 FMA with ex2 (SFU)
constexpr const char* kFp32LdstPair = "fp32_ldst";      // fp32 FMA with global loads (L1 hits)
constexpr const char* kFp32SharedPair = "fp32_shared";  // fp32 FMA with shared loads
constexpr const char* kFp16Fp32Pair = "fp16_fp32";      // fp16x2 FMA with fp32 FMA
constexpr const char* kFp32TensorPair = "fp32_tensor";  // fp32 FMA with mma.sync f16
// A row's stream: "a" or "b" alone, or "pair", both interleaved at a_per_round:b_per_round.
constexpr const char* kStreamColumn = "stream";
constexpr const char* kAPerRoundColumn = "a_per_round";  // instructions of A per round
constexpr const char* kBPerRoundColumn = "b_per_round";  // instructions of B per round

// Rounds per loop trip; each round issues `a` steps of stream A and `b` of stream B, one
// step per independent chain.
constexpr int kRounds = 32;

struct Mix {
  int a, b;
};
// The mixes compiled: the two solo streams first, then pairs from which the probe picks the
// one whose streams take equally long alone (balanced), so the overlap is easiest to see.
constexpr Mix kMixes[] = {{8, 0}, {0, 8}, {8, 8}, {8, 4}, {4, 8}, {8, 2}, {2, 8}, {8, 1}, {1, 8}};
constexpr int kMixCount = sizeof(kMixes) / sizeof(kMixes[0]);

struct PairInfo {
  const char* name;  // "fp32_int32": the probe, and dual_issue_<name> the parameter
  const char* a;     // the ops' probe names in pipes::ops()
  const char* b;
};
const std::vector<PairInfo>& pairs();

std::string kernel_name(const std::string& a_type, const std::string& b_type, int a, int b);

// Index in kMixes of the paired mix (both a, b > 0) whose instruction ratio
// a*steps_a : b*steps_b is closest to rate_a : rate_b, so that each stream alone takes about as
// long as the other.
int balanced_mix(double rate_a, double rate_b, int steps_a, int steps_b);

struct Verdict {
  double ratio = 0;    // paired rate / larger solo rate (instructions of both streams per clock)
  double overlap = 0;  // 1: as fast as separate pipes and single issue allow; 0: as both in turn
  std::string verdict; // see above
};

// From the solo rates, the pair's rate and the issue rate (instructions/clk/SM), and the pair's
// instructions of A and B per round. overlap is NaN when the inputs are not all positive.
Verdict judge(double rate_a, double rate_b, double a_per_round, double b_per_round, double rate_pair,
              double issue_rate);
std::string verdict_for(double overlap);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"dual_issue", "dual_issue.gp"};

std::vector<Parameter> analyze_dual_issue(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace gpuprobe::dual_issue
