// The TLB family on a model GPU: tlb.csv rows shaped as microbench/tlb.cu records them.
#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <tuple>

#include "analysis/latency.hpp"
#include "analysis/tlb.hpp"
#include "base/csv.hpp"
#include "base/parameter_names.hpp"
#include "model_gpu.hpp"
#include "observation_rows.hpp"

namespace gpuprobe {
namespace model {

namespace {

constexpr double MiB = 1024.0 * 1024, GiB = 1024 * MiB;
// microbench/tlb.cu's sweep: the first step looked for up to tlb::kFirstStepSlots pages or
// tlb::kFirstStepBytes, whichever is more; the aliased space (tlb::kAliasChunk over
// tlb::kAliasSpace), a line of the chunk per access.
using tlb::kAliasChunk, tlb::kAliasSpace;
constexpr double kLine = tlb::kChaseLine;
constexpr int kRefineRounds = 6;
constexpr int kRepeats = 3;  // a full run's repeats per point; the median is recorded
// A chase cycling over more entries than an LRU-like TLB holds misses on every access: a cliff
// at the reach (the H100's steps rise within a few % of footprint).
constexpr double kTlbSharpness = 100;

// The bytes of distinct lines a chase of `count` accesses `stride` apart touches
// (microbench/tlb.cu: the plain chase's rounds through further lines of each page; the aliased
// chase's one line of the chunk per access).
double data_bytes(const std::string& probe, double stride, double count) {
  if (probe == tlb::kChaseAliasedProbe) return count * kLine;
  const double rounds = std::max(1.0, std::min(std::ceil(tlb::kMinAccesses / count), std::floor(stride / kLine)));
  return count * rounds * kLine;
}

// The device memory the plain chase allocates (microbench/tlb.cu: free memory less headroom,
// in 32 MiB pieces).
double chase_bytes(const Gpu& g) {
  const double m = g.memory_bytes.value;
  return std::floor((m - std::max(1 * GiB, m / 64)) / (32 * MiB)) * 32 * MiB;
}

// The L2 size a run reports: the model's metadata figure, else its L2 level's size.
double l2_reported(const Gpu& g) {
  if (g.l2_bytes_meta > 0) return g.l2_bytes_meta;
  for (const auto& l : g.levels)
    if (l.name == "l2") return l.size.value;
  return 0;
}

// How far the aliased sweep reaches at `stride`, as the analysis reads it (its data in L2).
double aliased_reach(const Gpu& g, double stride) {
  const double accesses = std::min(std::floor(kAliasChunk / kLine), tlb::max_accesses_in_l2(l2_reported(g)));
  return std::min(std::floor(kAliasSpace / stride), accesses) * stride;
}

struct Sweeper {
  const Gpu& g;
  const Noise& n;
  std::mt19937_64 rng;
  std::vector<Observation> rows;
  std::set<std::tuple<std::string, double, double>> measured;

  void measure(const std::string& probe, double stride, double count) {
    std::normal_distribution<double> gauss(0, 1);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<double> r;
    for (int i = 0; i < kRepeats; ++i) {
      // clock64 cycles as the chase records them: no clock conversion, so no clock error
      double y = tlb_latency(g, count * stride, stride, data_bytes(probe, stride, count)) * (1 + n.jitter * gauss(rng));
      if (u(rng) < n.outlier_rate) y *= 1.2 + 0.6 * u(rng);
      r.push_back(y);
    }
    std::sort(r.begin(), r.end());
    rows.push_back(
        make_row(std::string(tlb::kFamily.name), probe,
                 {{tlb::kStrideColumn, format_printf("%.0f", stride)},
                  {memory_chase::kFootprintColumn, format_printf("%.0f", count * stride)}},
                 r[kRepeats / 2], "cycles", n.jitter));
    measured.insert({probe, stride, count});
  }

  // microbench/tlb.cu's sweep(): slots on a sqrt(2) grid, stopping past the first knee when
  // only it is sought, then refinement rounds around the knees.
  void sweep(const std::string& probe, double stride, double space, bool first_only, double max_slots,
             double min_n) {
    const double max_n = std::min(std::floor(space / stride), max_slots);
    auto curve = [&] { return tlb::tlb_curve(rows, stride, probe); };
    auto knees = [&] { return segmentation::segment_curve(curve(), tlb::tlb_segment_options()).knees; };
    for (double k = 0, last = 0; std::round(std::exp2(k / 2)) <= max_n; ++k) {
      const double c = std::round(std::exp2(k / 2));
      if (c == last || c < min_n) continue;
      last = c;
      if (!measured.count({probe, stride, c})) measure(probe, stride, c);
      if (!first_only) continue;
      auto kn = knees();
      if (!kn.empty() && c * stride >= 2 * kn.front().arrive) break;
    }
    if (!first_only && !measured.count({probe, stride, max_n})) measure(probe, stride, max_n);
    segmentation::RefineOptions opt;
    opt.segment = tlb::tlb_segment_options();
    for (int round = 0; round < kRefineRounds; ++round) {
      auto kn = knees();
      const double limit = first_only && !kn.empty() ? kn.front().arrive : max_n * stride;
      int added = 0;
      for (double x : segmentation::refinement_points(curve(), opt)) {
        const double c = std::round(x / stride);
        if (c < min_n || c * stride > limit || measured.count({probe, stride, c})) continue;
        measure(probe, stride, c);
        ++added;
      }
      if (!added) break;
    }
  }
};

}  // namespace

// The chase's base is the latency ladder's at the data it touches (a few lines per page: on a
// split L2 the near partition's, as the H100 and H200 runs show), its TLB levels' misses on top.
double tlb_latency(const Gpu& g, double footprint, double stride, double data) {
  double y = cache_latency(g, data, true);
  for (const auto& t : g.tlb_levels) {
    // entries the chase needs: one per access above the entry size, one per entry below it
    const double need = footprint / std::max(stride, t.entry.value);
    const double have = t.reach.value / t.entry.value;
    y += t.miss.value * (1 - 1 / (1 + std::pow(need / have, kTlbSharpness)));
  }
  return y;
}

std::vector<Observation> generate_tlb(const Gpu& g, unsigned seed, Metadata* meta) {
  const Noise n = noise_for(g, seed);
  Sweeper s{g, n, std::mt19937_64(0x71bULL + seed * 2654435761ULL + std::hash<std::string>{}(g.key)), {}, {}};
  if (meta) {
    *meta = {
        {"gpu", g.name}, {"compute_capability", g.cc}, {"family", std::string(tlb::kFamily.name)}};
    // every CSV of a run carries the L2 size the runtime reports; tlb.csv is only ever written
    // by a run (a model without l2_bytes_meta stands for a converted latency curve)
    meta->push_back({"l2_bytes", format_printf("%.0f", l2_reported(g))});
  }
  const double bytes = chase_bytes(g);
  const std::vector<double> strides = tlb::entry_strides(false);
  for (double st : strides)
    s.sweep(tlb::kChaseProbe, st, bytes, true,
            std::max(tlb::kFirstStepSlots, std::floor(tlb::kFirstStepBytes / st)), 1);
  const auto pe = tlb::fit_page_entry(tlb::first_tlb_steps(s.rows));
  s.sweep(tlb::kChaseProbe,
          pe ? std::max(pe->sweep_stride, tlb::kMinCoverageStride) : strides[strides.size() / 2],
          bytes, false, bytes, 1);
  const double entry = pe && pe->entry_size > 0 ? pe->entry_size : 2 * MiB;
  for (double st : {entry, 2 * entry, 4 * entry})
    s.sweep(tlb::kChaseAliasedProbe, st, kAliasSpace, false, std::floor(kAliasChunk / kLine),
            tlb::kAliasMinAccesses);
  return s.rows;
}

std::vector<Truth> tlb_truths(const Gpu& g) {
  std::vector<Truth> t;
  if (g.tlb_levels.empty()) return t;
  const auto& l1 = g.tlb_levels[0];
  t.push_back({param::tlb_l1_coverage, l1.reach.value, "bytes", 0.10, true, l1.reach.source});
  // the aliased sweeps reach at least this far (their smallest stride is the L1 TLB's entry)
  const double reach = aliased_reach(g, l1.entry.value);
  if (g.tlb_levels.size() > 1 && 2 * g.tlb_levels[1].reach.value <= reach)
    t.push_back({param::tlb_l2_coverage, g.tlb_levels[1].reach.value, "bytes", 0.10, true,
                 g.tlb_levels[1].reach.source});
  // the deepest miss a plateau forms past: every level the sweep goes twice beyond
  double miss = 0;
  std::string src;
  for (const auto& lv : g.tlb_levels)
    if (2 * lv.reach.value <= reach) miss += lv.miss.value, src += (src.empty() ? "" : " + ") + lv.miss.source;
  t.push_back({param::tlb_miss_latency, miss * 1.0, "cycles", 0.03, false, src});
  return t;
}

}  // namespace model
}  // namespace gpuprobe
