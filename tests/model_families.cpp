// The families bench beside the ladder's: fetch granularity (128 B L1 lines against 32 B
// sectors), fp64 rates from 1:2 to 1:64, GPUs without a tensor pipe the probe can use, and
// Kepler-era dual issue. Each model's documented figures (g.fam), and the granularity.csv,
// pipes.csv and dual_issue.csv rows a run on it writes, shaped as microbench/granularity.cu,
// pipes.cu and dual_issue.cu record them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "analysis/dual_issue.hpp"
#include "analysis/granularity.hpp"
#include "analysis/common/memory_chase.hpp"
#include "analysis/pipes.hpp"
#include "base/csv.hpp"
#include "base/parameter_names.hpp"
#include "model_gpu.hpp"
#include "observation_rows.hpp"

namespace gpuprobe {
namespace model {

namespace {

// Where the figures come from (rows of results/reference/documented_figures.csv, or
// scripts/reference_additions.csv where the curated file lacks them).
const std::string kGuide =
    "CUDA C++ Programming Guide, Throughput of Native Arithmetic Instructions (results/reference; "
    "cc 6.x, 7.5, 8.x, 10.0 columns in reference_additions.csv)";
const std::string kJia18 = "Jia et al. 2018, arXiv:1804.06826, Table 3.1 (results/reference)";
const std::string kKeplerWp = "NVIDIA Kepler GK110/210 whitepaper: 4 warp schedulers, 8 dispatch units per SMX (reference_additions.csv)";
const std::string kMaxwellWp = "NVIDIA GeForce GTX 980 (GM204) whitepaper: 4 processing blocks, each a scheduler with 2 dispatch units (reference_additions.csv)";
const std::string kPascalWp = "NVIDIA Tesla P100 whitepaper: 2 processing blocks per SM, each a scheduler with 2 dispatch units (reference_additions.csv)";
const std::string kVoltaWp = "NVIDIA Tesla V100 whitepaper: 4 processing blocks, 1 scheduler and 1 dispatch unit each (results/reference)";
const std::string kSingleIssue = "4 processing blocks of one scheduler and one dispatch unit each, as Volta's (whitepaper)";
const std::string kH100Run = "measured: gpuprobe run results/nvidia-h100-80gb-hbm3/20261122T082310Z";
const std::string kA100Wp = "NVIDIA A100 Tensor Core GPU Architecture whitepaper (reference_additions.csv)";
const std::string kMicikevicius13 =
    "Micikevicius, 'Performance Optimization', GTC 2013: the read-only cache caches at 32 B granularity "
    "(reference_additions.csv)";

Figure doc(double v, const std::string& src) { return {v, src}; }
Figure assumed(double v, const std::string& why) { return {v, "assumed: " + why}; }

// The load paths' rates: not in the guide's table; as the H100 run measured them (32 lanes of
// LDS and 16 of L1-hit LDG per clock), a generation's order.
void loads(FamilyFigures& f) {
  f.ldst = assumed(32, "as the H100 run's ldst (one conflict-free LDS per clock)");
  f.ld_global = assumed(16, "as the H100 run's ld_global (half an LDG per clock)");
}

// The guide's columns, results per clock per SM: fp32, fp64, 32-bit logic, SFU, fp16x2 (0 where
// the column says N/A).
void guide(FamilyFigures& f, double fp32, double fp64, double logic, double sfu, double fp16) {
  f.fp32 = doc(fp32, kGuide);
  f.fp64 = doc(fp64, kGuide);
  f.int32_logic = doc(logic, kGuide);
  f.sfu = doc(sfu, kGuide);
  f.fp16x2 = fp16 > 0 ? doc(fp16, kGuide) : Figure{};
  loads(f);
}

void issue(FamilyFigures& f, Figure schedulers, Figure width) {
  f.schedulers = std::move(schedulers);
  f.issue_width = std::move(width);
}

// Fetch granularity: Jia et al. 2018 for Kepler to Volta (L1 128 B on Kepler, 32 B sectors
// after; L2 sectors 32 B); Volta+ L2 fetches 64 B at the driver's default limit, as the H100
// run shows (64 at the default, 32 at the smallest limit).
void fetch(FamilyFigures& f, Figure l1, Figure l2_default) {
  f.l1_fetch = std::move(l1);
  f.l2_fetch = std::move(l2_default);
  f.l2_sector = doc(32, kJia18 + " (L2 sector 32 B)");
  // The L2's allocation unit: Jia et al.'s L2 line (32 B Kepler to Pascal, 64 B Volta) and the
  // H100 run's 128 B (l2_capacity); Turing to Blackwell as the H100.
  f.l2_line = f.l2_fetch.value > 32 ? assumed(128, "128 B L2 lines of four 32 B sectors, as the H100 run")
                                    : doc(32, kJia18 + " (L2 line 32 B)");
}
Figure sector32(const std::string& why) { return assumed(32, why); }

// The read-only path (ld.global.nc): Kepler's separate 48 KB read-only cache fetches 32 B
// (Micikevicius 2013); from Maxwell on it is the unified L1/texture cache, with its sectors.
void readonly(FamilyFigures& f, Figure fetch) { f.readonly_fetch = std::move(fetch); }

// The constant cache: Jia et al. 2018 for Kepler to Volta (64 B lines; hit and L1.5 latencies
// per GPU); later GPUs as the H100 run (64 B; about 28 cycles a hit, 95 an L1.5 hit).
void constant(FamilyFigures& f, double hit, double miss) {
  const std::string doc_src = kJia18 + " (constant cache: 64 B line, hit and L1.5 latencies)";
  f.constant_fetch = hit > 0 ? doc(64, doc_src) : assumed(64, "64 B constant-cache lines, as Volta's and the H100 run's");
  f.constant_hit = hit > 0 ? doc(hit, doc_src) : assumed(28, "as the H100 run's constant walk at small strides");
  f.constant_miss = miss > 0 ? doc(miss, doc_src) : assumed(95, "as the H100 run's constant walk at 64 B and over");
}

}  // namespace

void declare_family_figures(Gpu& g) {
  FamilyFigures& f = g.fam;
  const std::string later = "32 B sectors, as every NVIDIA L1 since Maxwell (Jia et al. 2018)";
  const std::string l2_64 = "64 B at the default limit, as the H100 run";
  const std::string unified = "ld.global.nc through the unified L1/texture cache since Maxwell: its 32 B sectors";
  if (g.key == "kepler") {  // GK210, cc 3.7
    guide(f, 192, 64, 160, 32, 0);
    issue(f, doc(4, kKeplerWp), doc(2, kKeplerWp));
    f.dual_issue_same_pipe = true;  // 192 FP32 lanes on 4 schedulers need two FFMAs a clock
    f.fp32_int32_shared = true;
    fetch(f, doc(128, kJia18 + " (L1 load granularity 128 B)"), doc(32, kJia18 + " (L2 line 32 B)"));
    readonly(f, doc(32, kMicikevicius13));
    constant(f, 30, 92);
  } else if (g.key == "maxwell") {  // GM204, cc 5.2
    guide(f, 128, 4, 128, 32, 0);
    issue(f, doc(4, kMaxwellWp), doc(2, kMaxwellWp));
    f.fp32_int32_shared = true;
    fetch(f, doc(32, kJia18 + " (L1 load granularity 32 B)"), doc(32, kJia18 + " (L2 line 32 B)"));
    readonly(f, sector32(unified));
    constant(f, 25, 81);
  } else if (g.key == "pascal") {  // GP100, cc 6.0
    guide(f, 64, 32, 64, 16, 128);
    issue(f, doc(2, kPascalWp), doc(2, kPascalWp));
    f.fp32_int32_shared = true;
    fetch(f, doc(32, kJia18 + " (L1 load granularity 32 B)"), doc(32, kJia18 + " (L2 line 32 B)"));
    readonly(f, sector32(unified));
    constant(f, 24, 96);
  } else if (g.key == "volta") {
    guide(f, 64, 32, 64, 16, 128);
    issue(f, doc(4, kVoltaWp), doc(1, kVoltaWp));
    fetch(f, doc(32, kJia18 + " (L1 load granularity 32 B)"), assumed(64, l2_64));
    f.l2_line = doc(64, kJia18 + " (L2 line 64 B)");
    readonly(f, sector32(unified));
    constant(f, 27, 89);
  } else if (g.key == "turing") {
    guide(f, 64, 2, 64, 16, 128);
    issue(f, assumed(4, kSingleIssue), assumed(1, kSingleIssue));
    fetch(f, sector32(later), assumed(64, l2_64));
    readonly(f, sector32(unified));
    constant(f, 0, 0);
  } else if (g.key == "ga100") {
    guide(f, 64, 32, 64, 16, 256);
    f.tensor_f16 = doc(1024, kA100Wp + " (312 TFLOPS dense fp16 on 108 SMs at 1410 MHz)");
    issue(f, assumed(4, kSingleIssue), assumed(1, kSingleIssue));
    fetch(f, sector32(later), assumed(64, l2_64));
    readonly(f, sector32(unified));
    constant(f, 0, 0);
  } else if (g.key == "ga102" || g.key == "ada") {
    guide(f, 128, 2, 64, 16, g.key == "ga102" ? 256 : 128);
    f.tensor_f16 = assumed(256, "GeForce tensor cores at half rate with fp32 accumulation");
    issue(f, assumed(4, kSingleIssue), assumed(1, kSingleIssue));
    fetch(f, sector32(later), assumed(64, l2_64));
    readonly(f, sector32(unified));
    constant(f, 0, 0);
  } else if (g.key == "h100" || g.key == "gh200" || g.key == "b200") {
    const bool run = g.key == "h100";
    guide(f, 128, 64, 64, 16, 256);
    if (g.key == "b200") {
      f.fp64 = assumed(64, "B200 datasheet: 40 TFLOPS fp64 against 80 TFLOPS fp32 (1:2)");
      f.fp32 = assumed(128, "as Hopper: 128 FP32 lanes per SM");
    }
    f.tensor_f16 = run ? doc(1364, kH100Run + " (mma.sync)") : assumed(1364, "as the H100 run's mma.sync");
    issue(f, assumed(4, kSingleIssue), assumed(1, kSingleIssue));
    fetch(f, run ? doc(32, kH100Run) : sector32(later), run ? doc(64, kH100Run) : assumed(64, l2_64));
    if (run) f.l2_line = doc(128, kH100Run + " (l2_line_size)");
    readonly(f, run ? doc(32, kH100Run + " (readonly_line_size)") : sector32(unified));
    constant(f, 0, 0);
  }
  // AMD models: no CUDA run writes these families (no pipes, dual_issue or granularity rows).
}

const std::vector<Gpu>& pipe_only_models() {
  // Two more fp64 rates on the pipes bench only: GK104's 1:24 and the consumer Pascal's 1:32
  // (with fp16x2 at 1:64 of fp32). Their hierarchies are not modelled.
  static const std::vector<Gpu> v = [] {
    std::vector<Gpu> out;
    Gpu k;
    k.key = "gk104", k.name = "GeForce GTX 680 (GK104)", k.arch = "kepler", k.cc = "3.0";
    guide(k.fam, 192, 8, 160, 32, 0);
    issue(k.fam, doc(4, kKeplerWp), doc(2, kKeplerWp));
    k.fam.dual_issue_same_pipe = k.fam.fp32_int32_shared = true;
    k.sm_clock_mhz = assumed(1058, "GTX 680 boost clock");
    out.push_back(k);
    Gpu p;
    p.key = "gp104", p.name = "Tesla P4 (GP104)", p.arch = "pascal", p.cc = "6.1";
    guide(p.fam, 128, 4, 128, 32, 2);
    issue(p.fam, assumed(4, "GP104 keeps Maxwell's 4 processing blocks of 2 dispatch units"),
          assumed(2, "GP104 keeps Maxwell's 4 processing blocks of 2 dispatch units"));
    p.fam.fp32_int32_shared = true;
    p.sm_clock_mhz = assumed(1063, "P4 boost clock");
    out.push_back(p);
    return out;
  }();
  return v;
}

namespace {

int cc_number(const std::string& cc) {
  const double v = std::strtod(cc.c_str(), nullptr);
  return static_cast<int>(std::lround(v * 10));
}

// An op of the pipes probe as the model runs it: its rate figure, the pipe it occupies, the
// results one warp instruction gives, and the chain steps of one apply() (pipe_ops.cuh).
struct OpModel {
  std::string probe;
  double rate = 0;  // results/clk/SM
  std::string pipe;
  double per_inst = 32;
  int steps = 1;
  double latency = 0;  // cycles
};

// Dependent-issue latencies are not what the bench checks; a generation's order.
constexpr double kFmaLatency = 4, kLongLatency = 20;

std::vector<OpModel> op_models(const Gpu& g) {
  const FamilyFigures& f = g.fam;
  const std::string logic_pipe = f.fp32_int32_shared ? "fma" : "alu";
  std::vector<OpModel> v = {
      {pipes::kFp32FmaProbe, f.fp32.value, "fma", 32, 1, kFmaLatency},
      {pipes::kFp32AddProbe, f.fp32.value, "fma", 32, 1, kFmaLatency},
      {pipes::kFp32MulProbe, f.fp32.value, "fma", 32, 1, kFmaLatency},
      {pipes::kFp64FmaProbe, f.fp64.value, "fp64", 32, 1, 2 * kFmaLatency},
      {pipes::kFp16x2FmaProbe, f.fp16x2.value, "fma", 64, 1, 2 * kFmaLatency},
      {pipes::kInt32LogicProbe, f.int32_logic.value, logic_pipe, 32, 2, kFmaLatency},
      {pipes::kSfuEx2Probe, f.sfu.value, "xu", 32, 1, kLongLatency},
      {pipes::kLdstProbe, f.ldst.value, "lsu", 32, 1, kLongLatency},
      {pipes::kLdGlobalProbe, f.ld_global.value, "lsu", 32, 1, 1.5 * kLongLatency},
      {pipes::kTensorMmaF16Probe, f.tensor_f16.value, "tensor", 16 * 8 * 16, 1, kLongLatency},
  };
  return v;
}

const OpModel* op_model(const std::vector<OpModel>& ops, const std::string& probe) {
  for (const auto& o : ops)
    if (o.probe == probe) return &o;
  return nullptr;
}

// The skip reason microbench/pipes.cu and dual_issue.cu write below an op's compute capability.
std::string needs_cc(int min_cc) {
  return "needs compute capability " + std::to_string(min_cc / 10) + "." + std::to_string(min_cc % 10);
}

Metadata family_meta(const Gpu& g, const std::string& family, double clock_mhz) {
  return {{"gpu", g.name},
          {"compute_capability", g.cc},
          {"sm_clock_mhz", format_printf("%.1f", g.sm_clock_mhz.value)},
          {"family", family},
          {"family_sm_clock_mhz", format_printf("%.1f", clock_mhz)}};
}

std::mt19937_64 family_rng(const Gpu& g, unsigned seed, unsigned long long salt) {
  return std::mt19937_64(salt + seed * 2654435761ULL + std::hash<std::string>{}(g.key));
}

// Per-seed measurement noise of the rate families: each op reaches a share of its pipe's peak
// (the H100 run: 99.1 % for FFMA, 99.99 % for DFMA), the repetitions spread, the clock moves
// between the family's clock measurement and the probe (events/cycles: the H100's tensor boost
// 8 % below), and a rare repetition set is disturbed (a wide spread, a lower median).
struct RateNoise {
  std::mt19937_64 rng;
  double clock_ratio = 1;
  double next_efficiency() { return 1 - kMaxShortfall * u(rng); }
  double next_spread() { return kMinSpread + (kMaxSpread - kMinSpread) * u(rng); }
  bool disturbed() { return u(rng) < kDisturbedRate; }
  static constexpr double kMaxShortfall = 0.015, kMinSpread = 0.0005, kMaxSpread = 0.01;
  static constexpr double kDisturbedRate = 0.03, kDisturbedSpread = 0.12, kDisturbedLoss = 0.1;
  std::uniform_real_distribution<double> u{0, 1};
};

}  // namespace

double issue_rate(const Gpu& g, const std::string& op_a, double a, const std::string& op_b, double b) {
  const auto ops = op_models(g);
  const OpModel* oa = op_model(ops, op_a);
  const OpModel* ob = op_model(ops, op_b);
  if (!oa || !ob || !(oa->rate > 0) || !(ob->rate > 0)) return 0;
  // Clocks per round: each pipe's instructions at its own rate (two ops of one pipe in turn),
  // the schedulers' issue slots, and, where dual issue needs two pipes, one issue per
  // scheduler per clock into each pipe.
  std::map<std::string, double> pipe_clocks, pipe_insts;
  for (const auto& [o, n] : {std::pair{oa, a}, std::pair{ob, b}}) {
    pipe_clocks[o->pipe] += n / (o->rate / o->per_inst);
    pipe_insts[o->pipe] += n;
  }
  const double s = g.fam.schedulers.value, w = g.fam.issue_width.value;
  double t = (a + b) / (s * w);
  for (const auto& [pipe, c] : pipe_clocks) {
    t = std::max(t, c);
    if (!g.fam.dual_issue_same_pipe) t = std::max(t, pipe_insts[pipe] / s);
  }
  return t > 0 ? (a + b) / t : 0;
}

namespace {

// The l2_capacity probe (microbench/granularity.cu): many chains at strides of odd multiples of
// 32 B; at each stride the footprint is bisected (granularity::search_capacity, the probe's own
// search) to where cycles per access pass half-way from the L2 hit to DRAM, both read off the
// smallest stride.
// A chase `stride` bytes apart over F bytes holds F * line / max(stride, line) bytes of L2
// lines: the capacity grows as stride / line above the line.
constexpr double kCapacityChains = granularity::kCapacityChainsPerSm * 100;  // about 100 SMs

template <class Noisy>
void l2_capacity_rows(const Gpu& g, Noisy& noisy, std::vector<Observation>& out) {
  const Level* l2 = nullptr;
  for (const auto& l : g.levels)
    if (l.name == "l2") l2 = &l;
  if (!l2) return;
  const double c = l2->size.value, line = g.fam.l2_line.value;
  // all SMs' chains: near and far partitions alike
  const double hit_cycles = l2->split() ? 0.5 * (l2->latency.value + l2->far_latency.value) : l2->latency.value;
  const double l2_bytes = g.l2_bytes_meta > 0 ? g.l2_bytes_meta : c;
  double limit = 0;
  const std::vector<double> strides = granularity::capacity_strides(false);
  for (double stride : strides) {
    const double quantum = stride * kCapacityChains;
    auto cycles_at = [&](double f) {
      const double held = f * line / std::max(stride, line);
      const double h = 1.0 / (1.0 + std::pow(held / c, l2->sharpness));
      const double v = noisy(h * hit_cycles + (1 - h) * g.dram_latency.value);
      out.push_back(make_row(std::string(granularity::kFamily.name), granularity::kL2CapacityProbe,
                             {{granularity::kStrideColumn, format_number(stride)},
                              {memory_chase::kFootprintColumn, format_number(f)}},
                             v, "cycles", 0.001));
      return v;
    };
    granularity::search_capacity(l2_bytes, std::numeric_limits<double>::infinity(), stride, strides.front(),
                                 quantum, limit, cycles_at);
  }
}

}  // namespace

std::vector<Observation> generate_granularity(const Gpu& g, unsigned seed, Metadata* meta) {
  std::vector<Observation> out;
  if (meta) *meta = family_meta(g, std::string(granularity::kFamily.name), g.sm_clock_mhz.value);
  if (!(g.fam.l1_fetch.value > 0)) return out;
  const Noise n = noise_for(g, seed);
  auto rng = family_rng(g, seed, 0x67a4ULL);
  std::normal_distribution<double> gauss(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  double l1 = g.levels.front().latency.value, l2 = 0;
  for (const auto& l : g.levels)
    if (l.name == "l2") l2 = l.latency.value;
  const double dram = g.dram_latency.value;
  auto noisy = [&](double v) {
    v *= (1 + n.clock_offset) * (1 + n.jitter * gauss(rng));
    return u(rng) < n.outlier_rate ? v * (1.1 + 0.2 * u(rng)) : v;
  };
  // The walk: accesses that start a new fetch unit miss to the next level (a share
  // min(1, stride / fetch) of them), the rest hit; the resident walk only hits.
  auto walk = [&](const char* path, double hit, double miss, double fetch, double limit) {
    const bool constant = std::string(path) == "constant";  // the probe walks it 4 B wide only
    for (int w : granularity::kWalkWidths)
      for (double s = w; s <= granularity::kMaxWalkStride && (!constant || w == 4); s *= 2) {
        Params p = {{granularity::kPathColumn, path},
                    {granularity::kWidthColumn, std::to_string(w)},
                    {granularity::kStrideColumn, format_number(s)}};
        if (limit > 0) p.emplace_back(granularity::kFetchLimitColumn, format_number(limit));
        for (const char* residency : {"cold", "resident"}) {
          Params q = p;
          q.emplace_back(granularity::kResidencyColumn, residency);
          const double cold = hit + (miss - hit) * std::min(1.0, s / fetch);
          const double v = noisy(std::string(residency) == "cold" ? cold : hit);
          out.push_back(make_row(std::string(granularity::kFamily.name), granularity::kStrideProbe,
                                 q, v, "cycles", n.jitter));
          out.push_back(make_row(std::string(granularity::kFamily.name), granularity::kStrideProbe,
                                 q, v / g.sm_clock_mhz.value * 1e3, "ns", n.jitter));
        }
      }
  };
  walk("l1", l1, l2, g.fam.l1_fetch.value, 0);
  // Kepler's read-only cache is not its L1, but the fetch granularity does not depend on the
  // hit latency: the L1's stands in.
  if (g.fam.readonly_fetch.value > 0) walk("readonly", l1, l2, g.fam.readonly_fetch.value, 0);
  if (g.fam.constant_fetch.value > 0)
    walk("constant", g.fam.constant_hit.value, g.fam.constant_miss.value, g.fam.constant_fetch.value, 0);
  const double dflt = g.fam.l2_fetch.value;
  walk("l2", l2, dram, dflt, dflt);
  if (dflt > g.fam.l2_sector.value) walk("l2", l2, dram, g.fam.l2_sector.value, g.fam.l2_sector.value);
  if (g.fam.l2_line.value > 0) l2_capacity_rows(g, noisy, out);
  return out;
}

std::vector<Observation> generate_pipes(const Gpu& g, unsigned seed, Metadata* meta,
                                        std::vector<Skip>* skipped) {
  RateNoise rn{family_rng(g, seed, 0x919e5ULL)};
  rn.clock_ratio = 0.97 + 0.04 * rn.u(rn.rng);
  if (meta) *meta = family_meta(g, std::string(pipes::kFamily.name), g.sm_clock_mhz.value);
  std::vector<Observation> out;
  if (!g.fam.declared()) return out;
  const int cc = cc_number(g.cc);
  const auto ops = op_models(g);
  for (const auto& info : pipes::ops()) {
    if (cc < info.min_cc) {
      if (skipped)
        skipped->push_back({std::string(pipes::kFamily.name), info.probe, needs_cc(info.min_cc)});
      continue;
    }
    const OpModel* m = op_model(ops, info.probe);
    if (!m || !(m->rate > 0)) continue;  // not declared: not generated (as a --filter leaves it out)
    const OpModel& op = *m;
    double rate = op.rate * rn.next_efficiency(), spread = rn.next_spread();
    if (rn.disturbed()) {
      rate *= 1 - RateNoise::kDisturbedLoss * rn.u(rn.rng);
      spread = RateNoise::kDisturbedSpread;
    }
    const std::string family(pipes::kFamily.name);
    const Params thr = {{pipes::kModeColumn, "throughput"}, {pipes::kTimingColumn, "cycles"}};
    const Params lat = {{pipes::kModeColumn, pipes::kLatencyMode}, {pipes::kTimingColumn, ""}};
    out.push_back(make_row(family, op.probe, thr, rate, "results/clk/SM", spread));
    out.push_back(make_row(family, op.probe,
                           {{pipes::kModeColumn, "throughput"}, {pipes::kTimingColumn, "events"}},
                           rate * rn.clock_ratio, "results/clk/SM", spread));
    out.push_back(make_row(family, op.probe, lat, op.latency, "cycles", 0));
    out.push_back(
        make_row(family, op.probe, lat, op.latency / g.sm_clock_mhz.value * 1e3, "ns", 0));
  }
  // Warpgroup MMA (microbench/tensor_wgmma.cu): sm_90a code, compute capability 9.0 only; its
  // rates are not modelled on 9.0 (left out as a --filter would).
  if (cc != 90 && skipped)
    for (const auto& w : pipes::wgmma_ops())
      skipped->push_back(
          {std::string(pipes::kFamily.name), w.probe, "needs sm_90a (compute capability 9.0)"});
  return out;
}

std::vector<Observation> generate_dual_issue(const Gpu& g, unsigned seed, Metadata* meta,
                                             std::vector<Skip>* skipped) {
  RateNoise rn{family_rng(g, seed, 0xd0a1ULL)};
  if (meta) *meta = family_meta(g, std::string(dual_issue::kFamily.name), g.sm_clock_mhz.value);
  std::vector<Observation> out;
  if (!g.fam.declared()) return out;
  const int cc = cc_number(g.cc);
  const auto ops = op_models(g);
  for (const auto& pair : dual_issue::pairs()) {
    const pipes::OpInfo* ia = pipes::find_op(pair.a);
    const pipes::OpInfo* ib = pipes::find_op(pair.b);
    const int min_cc = std::max(ia->min_cc, ib->min_cc);
    if (cc < min_cc) {
      if (skipped)
        skipped->push_back({std::string(dual_issue::kFamily.name), pair.name, needs_cc(min_cc)});
      continue;
    }
    const OpModel* a = op_model(ops, pair.a);
    const OpModel* b = op_model(ops, pair.b);
    // The tensor pair is not modelled (mma.sync's issue cost against FFMA, 0.65 on the H100,
    // has no documented figure): left out as a --filter would.
    if (!a || !b || !(a->rate > 0) || !(b->rate > 0) || b->pipe == "tensor") continue;
    auto measure = [&](const std::string& stream, int na, int nb, double rate) {
      double spread = rn.next_spread();
      rate *= rn.next_efficiency();
      if (rn.disturbed()) {
        rate *= 1 - RateNoise::kDisturbedLoss * rn.u(rn.rng);
        spread = RateNoise::kDisturbedSpread;
      }
      out.push_back(make_row(std::string(dual_issue::kFamily.name), pair.name,
                             {{dual_issue::kStreamColumn, stream},
                              {dual_issue::kAPerRoundColumn, std::to_string(na)},
                              {dual_issue::kBPerRoundColumn, std::to_string(nb)}},
                             rate, "inst/clk/SM", spread));
      return rate;
    };
    const int sa = 8 * a->steps, sb = 8 * b->steps;
    const double ra = measure("a", sa, 0, issue_rate(g, pair.a, sa, pair.a, 0));
    const double rb = measure("b", 0, sb, issue_rate(g, pair.b, 0, pair.b, sb));
    // The probe picks the mix from its own measured solo rates.
    const auto& m = dual_issue::kMixes[dual_issue::balanced_mix(ra, rb, a->steps, b->steps)];
    const int na = m.a * a->steps, nb = m.b * b->steps;
    measure("pair", na, nb, issue_rate(g, pair.a, na, pair.b, nb));
  }
  return out;
}

namespace {

// Tolerances as docs/parameters.md states them.
constexpr double kRateTolerance = 0.03, kRatioTolerance = 0.10, kFp64RatioTolerance = 0.05;

}  // namespace

std::vector<Truth> family_truths(const Gpu& g, const std::string& family) {
  std::vector<Truth> t;
  const FamilyFigures& f = g.fam;
  if (family == granularity::kFamily.name && f.l1_fetch.value > 0) {
    t.push_back({param::l1_sector_size, f.l1_fetch.value, "bytes", 0, false, f.l1_fetch.source});
    t.push_back({param::l2_sector_size, f.l2_sector.value, "bytes", 0, false, f.l2_sector.source});
    if (f.l2_line.value > 0)
      t.push_back({param::l2_line_size, f.l2_line.value, "bytes", 0, false, f.l2_line.source});
    if (f.readonly_fetch.value > 0)
      t.push_back({param::readonly_line_size, f.readonly_fetch.value, "bytes", 0, false,
                   f.readonly_fetch.source});
    if (f.constant_fetch.value > 0)
      t.push_back({param::constant_line_size, f.constant_fetch.value, "bytes", 0, false,
                   f.constant_fetch.source});
  }
  if (!f.declared()) return t;
  const int cc = cc_number(g.cc);
  if (family == pipes::kFamily.name) {
    t.push_back({param::fp32_fma_throughput_per_sm, f.fp32.value, "results/clk/SM", kRateTolerance,
                 false, f.fp32.source});
    t.push_back({param::fp64_fma_throughput_per_sm, f.fp64.value, "results/clk/SM", kRateTolerance,
                 false, f.fp64.source});
    t.push_back({param::fp64_fp32_throughput_ratio, f.fp64.value / f.fp32.value, "ratio",
                 kFp64RatioTolerance, false, f.fp64.source});
    if (f.tensor_f16.value > 0 && cc >= 80)
      t.push_back({param::tensor_mma_f16_throughput_per_sm, f.tensor_f16.value, "results/clk/SM",
                   kRateTolerance, false, f.tensor_f16.source});
  }
  if (family == dual_issue::kFamily.name) {
    const auto ops = op_models(g);
    double issue = 0, best_pair = 0;
    std::vector<std::pair<std::string, std::pair<double, double>>> pairs;
    for (const auto& pair : dual_issue::pairs()) {
      const OpModel* a = op_model(ops, pair.a);
      const OpModel* b = op_model(ops, pair.b);
      const int min_cc = std::max(pipes::find_op(pair.a)->min_cc, pipes::find_op(pair.b)->min_cc);
      if (cc < min_cc || !a || !b || !(a->rate > 0) || !(b->rate > 0) || b->pipe == "tensor") continue;
      const double ra = issue_rate(g, pair.a, 8 * a->steps, pair.a, 0);
      const double rb = issue_rate(g, pair.b, 0, pair.b, 8 * b->steps);
      const auto& m = dual_issue::kMixes[dual_issue::balanced_mix(ra, rb, a->steps, b->steps)];
      const double rp = issue_rate(g, pair.a, m.a * a->steps, pair.b, m.b * b->steps);
      issue = std::max({issue, ra, rb});
      best_pair = std::max(best_pair, rp);
      pairs.push_back({pair.name, {rp, std::max(ra, rb)}});
    }
    const std::string src = "the model's pipes (" + f.fp32.source + ") and issue (" + f.issue_width.source + ")";
    for (const auto& [name, r] : pairs)
      t.push_back(
          {param::dual_issue_pair(name), r.first / r.second, "ratio", kRatioTolerance, false, src});
    if (issue > 0)
      t.push_back(
          {param::dual_issue_gain, best_pair / issue, "ratio", kRatioTolerance, false, src});
  }
  return t;
}

std::vector<std::string> family_absent(const Gpu& g, const std::string& family) {
  std::vector<std::string> out;
  const int cc = cc_number(g.cc);
  if (family == pipes::kFamily.name)
    for (const auto& op : pipes::ops())
      if (cc < op.min_cc || std::string(op.probe).rfind("tensor_", 0) == 0) {
        if (std::string(op.probe) == pipes::kTensorMmaF16Probe && g.fam.tensor_f16.value > 0 &&
            cc >= op.min_cc)
          continue;
        out.push_back(std::string(op.probe) + "_throughput_per_sm");
        out.push_back(std::string(op.probe) + "_latency");
      }
  if (family == dual_issue::kFamily.name)
    for (const auto& pair : dual_issue::pairs())
      if (cc < std::max(pipes::find_op(pair.a)->min_cc, pipes::find_op(pair.b)->min_cc))
        out.push_back(param::dual_issue_pair(pair.name));
  return out;
}

}  // namespace model
}  // namespace gpuprobe
