// L1 sets, ways and replacement where the set index is hashed, so that no stride conflicts
// on purpose: how often N lines drawn at random evict a target line. Under LRU with S sets
// of W ways on any balanced index, the target goes iff W of the N lines fall in its set
// (Binomial(N, 1/S) >= W); random replacement gives a smoother curve whose outcomes change
// from run to run on the same lines. One thread per SM (each SM its own L1) runs one trial per
// launch: load the target, walk the N lines (a pointer chain, so the walk is the only traffic),
// reload the target with clock64 around it, and walk and reload twice more in place. Some
// trials are replayed on the same lines in a fresh launch, to tell random replacement from
// one that depends on the target's own hits.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <tuple>

#include "analysis/associativity.hpp"
#include "base/csv.hpp"
#include "base/stats.hpp"
#include "gpu/sass_check.hpp"
#include "memory_chase.cuh"

namespace gpuprobe {
namespace associativity {

constexpr uint32_t kRepeats = 3;      // reloads of the target, each after a walk
static_assert(kRepeats <= 3, "the first load and the reloads share one register, 16 bits each");
constexpr uint64_t kLineBytes = 128;  // line spacing: the L1 line documented for Kepler to
                                      // Volta and measured on the H100
constexpr unsigned kMaxSm = 1024;     // %smid bound for the claim flags
constexpr uint32_t kHeldShared = 4096;  // dynamic shared memory of the second sweep

struct TrialArgs {
  const char* base;
  const uint32_t* lines;  // line indices; trial t's chain is lines[t (n + 1) ... (t + 1)(n + 1))
  uint32_t n = 0;         // lines walked between the target's loads
  uint32_t max_trials = 0;
  unsigned* claimed = nullptr;  // [kMaxSm]: an SM's first block runs the trial, others leave
  unsigned* started = nullptr;  // trials begun, in claim order
  uint64_t* latency = nullptr;  // [max_trials]: 16 bits per load, the first, then each reload
  uint64_t* sink = nullptr;
  int flag = 0;
};

// Each line of a trial holds the byte offset of the next; the last leads back to the target
// (the first), so a walk from the target ends at the target.
__global__ void link_chains(char* base, const uint32_t* lines, uint32_t n, uint32_t trials) {
  const uint64_t len = n + 1ull, total = len * trials;
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < total;
       k += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t next = k - k % len + (k % len + 1) % len;
    *reinterpret_cast<uint64_t*>(base + lines[k] * kLineBytes) = lines[next] * kLineBytes;
  }
}

__global__ void eviction_trials(TrialArgs a) {
  // Nothing but the chain goes through this SM's L1 while the trial runs: blocks that find
  // their SM claimed leave at once, and the claim and the chain's head go to L2 only.
  const unsigned sm = sm_id();
  if (sm >= kMaxSm || atomicCAS(&a.claimed[sm], 0u, 1u) != 0u) return;
  const unsigned t = atomicAdd(a.started, 1u);
  if (t >= a.max_trials) return;
  const GlobalLoader<Path::l1, 8> ld{a.base};
  uint64_t cur =
      load_next<Path::l2, 4>(reinterpret_cast<const char*>(a.lines + uint64_t(t) * (a.n + 1))) *
      kLineBytes;
  // Round 0 loads the target; each later round walks the lines and reloads it. One loop, so
  // that every timed load runs the same, already fetched instructions; the latencies go into
  // one register, 16 bits each.
  uint64_t packed = 0;
#pragma unroll 1
  for (uint32_t r = 0; r <= kRepeats; ++r) {
    pass(ld, cur, r ? a.n : 0u);
    wait_for(cur);
    const uint64_t t0 = clock_now();
    cur = ld(cur);
    wait_for(cur);
    packed |= min(clock_now() - t0, uint64_t(0xffff)) << (16 * r);
  }
  a.latency[t] = packed;
  keep(cur, a.sink, a.flag);
}

}  // namespace associativity

namespace {

using namespace associativity;
using Clock = std::chrono::steady_clock;

// Distinct line indices drawn uniformly from 2^k lines (splitmix64, fixed seed: a rerun draws
// the same sets). A bitmap marks the lines of the current draw.
class LineSampler {
 public:
  LineSampler(int log2_lines, uint64_t seed)
      : shift_(64 - log2_lines), used_((size_t(1) << log2_lines) / 64 + 1), state_(seed) {}

  // Replaces `out` with `count` distinct lines in random order (none of them shared with
  // each other; the previous draw's lines may come again).
  void draw(size_t count, std::vector<uint32_t>& out) {
    for (uint32_t i : out) used_[i / 64] &= ~(1ull << (i % 64));
    out.clear();
    while (out.size() < count) {
      const auto i = static_cast<uint32_t>(next() >> shift_);
      const uint64_t bit = 1ull << (i % 64);
      if (used_[i / 64] & bit) continue;
      used_[i / 64] |= bit;
      out.push_back(i);
    }
  }

 private:
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int shift_;
  std::vector<uint64_t> used_;
  uint64_t state_;
};

// Latencies of one launch: per trial, the first load (r = 0) and each reload.
struct Launch {
  uint32_t trials = 0;
  std::vector<uint64_t> latency;
  uint32_t at(uint32_t t, uint32_t r) const {
    return static_cast<uint32_t>(latency[t] >> (16 * r) & 0xffff);
  }
};

class AssociativityFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(associativity::kFamily.name); }
  std::string description() const override {
    return "L1 sets, ways and replacement from how often N random lines evict a target line "
           "(works for a hashed set index)";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{kEvictionProbe,
             "fraction of trials whose r-th reload of the target missed after N "
             "random lines"},
            {kDisagreementProbe, "fraction of trials whose repeats in place ended differently"},
            {kReplayProbe, "fraction of trials ending otherwise when rerun on the same lines"},
            {memory_chase::kCalibrationProbe,
             "hit and miss latency of the target, and the split between them"},
            {kModelProbe, "eviction probability of the best-fit cache model (derived)"}};
  }

  void run(RunContext& ctx) override {
    if (!ctx.enabled(kEvictionProbe)) return;
    if (!sass_allows(ctx, kEvictionProbe, associativity::kernels())) return;
    ctx_ = &ctx;
    tallies_.clear();
    setup(ctx.device());
    try {
      measure();
    } catch (...) {
      release();
      throw;
    }
    release();
  }

 private:
  void measure() {
    shared_bytes_ = 0;
    calibrate();
    const bool quick = ctx_->quick();
    deadline_ = Clock::now() + std::chrono::milliseconds(quick ? 1200 : 7000);

    // Coarse: where does the target start to go, and where is it always gone?
    const int coarse = quick ? 10 : 16;
    for (int i = 0; i < coarse; ++i)
      point(static_cast<uint32_t>(std::lround(
                n_min_ * std::pow(double(n_max_) / n_min_, double(i) / (coarse - 1)))),
            quick ? 1 : 2, 0, "coarse");
    // Fine: evenly over that transition, with replays.
    uint32_t lo, hi;
    std::tie(lo, hi) = transition(0.02, 0.98);
    sweep(lo, hi, quick ? 12 : 32, quick ? 2 : 12, quick ? 1 : 4, "fine");
    // A steep step may fall between two fine points: fill in between.
    auto [a, b] = transition(0.1, 0.9);
    int between = 0;
    for (const auto& [n, t] : tallies_) between += n > a && n < b;
    if (between < 8 && b > a + 1)
      sweep(a + 1, b - 1, quick ? 8 : 16, quick ? 2 : 12, quick ? 1 : 4, "step");

    for (const auto& o : eviction_rows(tallies(), kLineBytes, 0)) ctx_->record(o);
    record_model();

    // The same over the transition, each block holding a little dynamic shared memory: the
    // driver may then pick another carve-out (on the H100 the carve-out family's chase, which
    // holds none, found 218 KiB of L1 where chases holding some found 238-240 KiB), and the
    // capacity shows for both.
    std::tie(lo, hi) = transition(0.02, 0.98);
    tallies_.clear();
    shared_bytes_ = kHeldShared;
    deadline_ = Clock::now() + std::chrono::milliseconds(quick ? 300 : 1500);
    sweep(lo, std::min(n_max_, static_cast<uint32_t>(1.25 * hi)), quick ? 6 : 16, quick ? 1 : 4,
          0, "4 KiB shared held");
    for (const auto& o : eviction_rows(tallies(), kLineBytes, kHeldShared)) ctx_->record(o);
  }

  void setup(const DeviceInfo& d) {
    // Lines to draw from: a power of two (the sampler's shift) of at most 512 MiB and a
    // quarter of the free memory, so that a launch's lines are a sparse random subset.
    const double budget =
        std::min<double>(512.0 * (1 << 20), static_cast<double>(d.free_mem_bytes) / 4);
    log2_lines_ = static_cast<int>(std::floor(std::log2(budget / kLineBytes)));
    if (log2_lines_ < 16) throw std::runtime_error("associativity: too little free memory");
    const uint64_t lines = uint64_t(1) << log2_lines_;
    sm_count_ = static_cast<uint32_t>(std::min(d.sm_count, static_cast<int>(kMaxSm)));
    // The L1 never exceeds the unified array: shared memory per SM plus what the smallest
    // carve-out keeps for L1 (< 64 KiB). The sweep runs well past that bound, in lines.
    const double unified = (static_cast<double>(d.shared_per_sm) + 64 * 1024) / kLineBytes;
    n_min_ = std::max<uint32_t>(16, static_cast<uint32_t>(unified / 16));
    n_max_ = static_cast<uint32_t>(1.6 * unified);
    buf_ = DeviceBuffer<char>(lines * kLineBytes);
    lines_ = DeviceBuffer<uint32_t>(size_t(sm_count_) * (n_max_ + 1));
    claimed_ = DeviceBuffer<unsigned>(kMaxSm);
    started_ = DeviceBuffer<unsigned>(1);
    latency_ = DeviceBuffer<uint64_t>(sm_count_);
    sink_ = DeviceBuffer<uint64_t>(1);
    sampler_ = std::make_unique<LineSampler>(log2_lines_, 0x5eed1e55a55e7ull);
    drawn_.clear();
    // The largest L1: the driver then picks the smallest shared-memory carve-out.
    CUDA_CHECK(cudaFuncSetAttribute(eviction_trials,
                                    cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  }

  void release() {
    buf_ = DeviceBuffer<char>();
    lines_ = DeviceBuffer<uint32_t>();
    latency_ = DeviceBuffer<uint64_t>();
    sampler_.reset();
    drawn_ = {};
  }

  // Trials per launch: every SM, while a launch's lines stay below a quarter of the buffer.
  uint32_t trials_for(uint32_t n) const {
    const uint64_t fit = (uint64_t(1) << log2_lines_) / (4 * (n + 1ull));
    return static_cast<uint32_t>(std::min<uint64_t>(sm_count_, fit));
  }

  // One launch on fresh random lines (relink) or on the previous launch's (a replay).
  Launch launch(uint32_t n, bool relink) {
    const uint32_t count = trials_for(n);
    if (count == 0)
      throw std::runtime_error("associativity: buffer too small for " + std::to_string(n) +
                               " lines");
    if (relink) {
      sampler_->draw(size_t(count) * (n + 1), drawn_);
      CUDA_CHECK(cudaMemcpy(lines_.get(), drawn_.data(), drawn_.size() * sizeof(uint32_t),
                            cudaMemcpyHostToDevice));
      const uint64_t total = drawn_.size();
      const unsigned blocks = static_cast<unsigned>(std::min<uint64_t>(4096, (total + 255) / 256));
      link_chains<<<blocks, 256>>>(buf_.get(), lines_.get(), n, count);
      CUDA_CHECK_LAUNCH();
    }
    CUDA_CHECK(cudaMemset(claimed_.get(), 0, kMaxSm * sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(started_.get(), 0, sizeof(unsigned)));
    TrialArgs a;
    a.base = buf_.get();
    a.lines = lines_.get();
    a.n = n;
    a.max_trials = count;
    a.claimed = claimed_.get();
    a.started = started_.get();
    a.latency = latency_.get();
    a.sink = sink_.get();
    // Several blocks per SM, so that every SM gets one to claim it.
    eviction_trials<<<4 * sm_count_, 1, shared_bytes_>>>(a);
    CUDA_CHECK_LAUNCH();
    Launch l;
    CUDA_CHECK(cudaMemcpy(&l.trials, started_.get(), sizeof(unsigned), cudaMemcpyDeviceToHost));
    l.trials = std::min(l.trials, count);
    l.latency.resize(l.trials);
    CUDA_CHECK(cudaMemcpy(l.latency.data(), latency_.get(), l.latency.size() * sizeof(uint64_t),
                          cudaMemcpyDeviceToHost));
    return l;
  }

  // Hit and miss latency of the target with nothing walked in between (N = 0: the chain is
  // the target alone): the first load misses, the reloads hit.
  void calibrate() {
    std::vector<double> hits, misses;
    for (int i = 0; i < 2; ++i) {
      Launch l = launch(0, true);
      for (uint32_t t = 0; t < l.trials; ++t) {
        misses.push_back(l.at(t, 0));
        for (uint32_t r = 1; r <= kRepeats; ++r) hits.push_back(l.at(t, r));
      }
    }
    if (hits.empty()) throw std::runtime_error(name() + ": no trial ran");
    const double hit = median(hits), miss_low = percentile(misses, 0.05);
    threshold_ = std::sqrt(hit * miss_low);
    using Level = std::tuple<std::string, double, size_t>;
    for (const auto& [level, v, n] : std::vector<Level>{{"hit", hit, hits.size()},
                                                         {"miss", median(misses), misses.size()},
                                                         {"threshold", threshold_, misses.size()}})
      ctx_->record(calibration_row(name(), level, v, static_cast<int>(n)));
    if (!(miss_low > 2 * hit))
      throw std::runtime_error(name() + ": a reload of the target (" + format_printf("%.0f", hit) +
                               " cycles) is not clearly faster than its first load (" +
                               format_printf("%.0f", miss_low) +
                               " cycles, 5th percentile): ld.global is not cached in L1 here");
  }

  void tally(EvictionTally& t, const Launch& l) const {
    for (uint32_t i = 0; i < l.trials; ++i) {
      bool any = false, all = true;
      for (uint32_t r = 0; r < kRepeats; ++r) {
        const bool gone = l.at(i, r + 1) > threshold_;
        t.evicted[r] += gone;
        any = any || gone;
        all = all && gone;
      }
      t.trials += 1;
      t.disagreed += any && !all;
    }
  }

  // `launches` launches on fresh lines at N = n, the first `replays` of them run twice.
  void point(uint32_t n, int launches, int replays, const char* phase) {
    EvictionTally& t = tallies_[n];
    t.lines = n;
    t.evicted.resize(kRepeats, 0.0);
    ctx_->progress(std::string(phase) + ": " + std::to_string(n) + " random lines");
    for (int i = 0; i < launches && Clock::now() < deadline_; ++i) {
      const Launch a = launch(n, true);
      tally(t, a);
      if (i >= replays) continue;
      const Launch b = launch(n, false);
      for (uint32_t k = 0; k < std::min(a.trials, b.trials); ++k) {
        t.replayed += 1;
        t.replay_differs += (a.at(k, 1) > threshold_) != (b.at(k, 1) > threshold_);
      }
    }
    if (t.trials == 0) tallies_.erase(n);
  }

  void sweep(uint32_t lo, uint32_t hi, int points, int launches, int replays, const char* phase) {
    const int steps = hi > lo ? std::min<int>(points - 1, static_cast<int>(hi - lo)) : 0;
    for (int i = 0; i <= steps; ++i)
      point(lo + static_cast<uint32_t>(std::lround(double(hi - lo) * i / std::max(1, steps))),
            launches, replays, phase);
  }

  std::vector<EvictionTally> tallies() const {
    std::vector<EvictionTally> out;
    for (const auto& [n, t] : tallies_) out.push_back(t);
    return out;
  }

  std::pair<uint32_t, uint32_t> transition(double low, double high) const {
    auto [lo, hi] = transition_bounds(tallies(), low, high, n_min_, n_max_);
    return {static_cast<uint32_t>(lo), static_cast<uint32_t>(hi)};
  }

  // The best fit's curve, for the figure.
  void record_model() {
    const auto fit = fit_associativity(tallies());
    if (!fit) return;
    const CacheModel& m = fit->best;
    constexpr int kPoints = 160;
    for (int i = 0; i <= kPoints; ++i) {
      const double n = std::round(double(n_max_) * i / kPoints);
      Observation o;
      o.family = name();
      o.probe = kModelProbe;
      o.params = {{kLinesColumn, format_number(n)},
                  {kModelColumn, replacement_name(m.model)},
                  {kSetsColumn, format_number(m.sets)},
                  {kWaysColumn, format_number(m.ways)}};
      o.value = o.p05 = o.p50 = o.p95 = eviction_probability(m.model, n, m.sets, m.ways);
      o.unit = "fraction";
      o.reps = 1;
      ctx_->record(o);
    }
  }

  RunContext* ctx_ = nullptr;
  std::map<uint32_t, EvictionTally> tallies_;
  DeviceBuffer<char> buf_;
  DeviceBuffer<uint32_t> lines_;
  DeviceBuffer<unsigned> claimed_, started_;
  DeviceBuffer<uint64_t> latency_;
  DeviceBuffer<uint64_t> sink_;
  std::unique_ptr<LineSampler> sampler_;
  std::vector<uint32_t> drawn_;
  int log2_lines_ = 0;
  uint32_t sm_count_ = 0;
  uint32_t n_min_ = 0, n_max_ = 0;  // line counts the sweep spans
  uint32_t shared_bytes_ = 0;       // dynamic shared memory each block holds
  double threshold_ = 0;
  Clock::time_point deadline_;
};

GPUPROBE_REGISTER_FAMILY(AssociativityFamily);

}  // namespace
}  // namespace gpuprobe
