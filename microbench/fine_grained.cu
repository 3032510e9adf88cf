// The fine-grained chase of Mei & Chu (2016): one thread times every single access, so that
// sector fills, line fills, set conflicts and constant-cache levels show as individual
// events. Counting the misses exactly gives, per stride, the largest number of lines that
// stay resident; from that the L1 line (allocation) size, the number of sets and ways, and
// whether ways+1 lines of one set evict each other in LRU order.
#include <algorithm>
#include <cmath>
#include <memory>

#include "analysis/fine_grained.hpp"
#include "base/csv.hpp"
#include "base/stats.hpp"
#include "gpu/sass_check.hpp"
#include "memory_chase.cuh"

// 4 KiB of constant memory: sixteen 256 B lines of the level behind the L1 constant cache
// on Maxwell-Volta.
GPUPROBE_CONSTANT_CHAIN(gpuprobe_fine_grained_chain, FineGrainedConstLoader, 1024);

namespace gpuprobe {
namespace {

using namespace fine_grained;

constexpr uint32_t kConstWords = 1024;
using ConstLoader = FineGrainedConstLoader;

using L1Load = GlobalLoader<Path::l1, 8>;
using L1Load4 = GlobalLoader<Path::l1, 4>;

// Every launch holds this much dynamic shared memory, traced or not, so that all of the
// family's measurements see the same shared-memory carve-out (the smallest that fits it).
constexpr uint32_t kTraceLen = 2048;
constexpr uint32_t kSharedBytes = kTraceLen * sizeof(uint16_t);

// Strides for the line size: odd multiples of 32 B, which no power-of-two line divides
// evenly, so that a set-indexed cache spreads the lines over all of its sets (an even
// multiple of the line would use only some sets). Strides for the sets: powers of two.
const std::vector<double> kLineStrides = {32, 96, 160, 224, 288, 352, 480, 736};
const std::vector<double> kLineStridesQuick = {32, 96, 160, 352};
constexpr double kMaxSetStride = 128 * 1024;
constexpr double kMaxLines = 65536;

class FineGrainedFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(fine_grained::kFamily.name); }
  std::string description() const override {
    return "per-access latencies of one thread's chase: L1 line size, sets, ways, replacement, "
           "constant cache levels";
  }
  std::vector<ProbeInfo> probes() const override {
    return {
        {memory_chase::kCalibrationProbe,
         "hit and miss latency of a short chase, and the split between them"},
        {kCapacityProbe,
         "misses per pass of K lines at a stride (series line: odd strides; "
         "sets: powers of two)"},
        {kReplacementProbe, "fraction of accesses that miss over ways+1 lines of one set"},
        {kResidentLinesProbe, "lines that stay resident at each stride (derived)"},
        {kTraceProbe, "latency of every access: cold L1 sectors, a set conflict, constant levels"}};
  }

  void run(RunContext& ctx) override {
    ctx_ = &ctx;
    rows_.clear();
    const DeviceInfo& d = ctx.device();
    buffer_bytes_ = std::min<double>(1 << 30, static_cast<double>(d.free_mem_bytes) / 8);
    buf_ = DeviceBuffer<char>(static_cast<size_t>(buffer_bytes_));
    runner_ = std::make_unique<ChaseRunner>(1, kTraceLen);
    // Prefer L1: the driver then picks the smallest carve-out that holds kSharedBytes.
    CUDA_CHECK(cudaFuncSetAttribute(memory_chase::chase<true, L1Load>,
                                    cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    CUDA_CHECK(cudaFuncSetAttribute(memory_chase::chase<true, L1Load4>,
                                    cudaFuncAttributePreferredSharedMemoryCarveout, 0));

    auto allowed = [&](const std::string& probe) {
      return ctx.enabled(probe) && sass_allows(ctx, probe, fine_grained::kernels(probe));
    };
    if (allowed(kCapacityProbe)) {
      calibrate();  // the hit/miss split that classifies every later access
      const auto& strides = ctx.quick() ? kLineStridesQuick : kLineStrides;
      for (double s : strides) capacity_sweep("line", s);
      XY line_pts;
      for (const auto& c : fine_grained::capacity_by_stride(rows_, "line"))
        line_pts.emplace_back(c.stride, c.lines * c.stride);
      auto lb = fine_grained::fit_line_bound(line_pts);
      double first = lb ? lb->line : strides.front();
      for (double s = first; s <= kMaxSetStride; s *= 2) {
        capacity_sweep("sets", s);
        auto sf = fine_grained::fit_sets(fine_grained::capacity_by_stride(rows_, "sets"));
        if (sf && sf->plateau_points >= 3) break;
      }
      record_resident_lines();
      // Which line is evicted is only defined where lines map to sets.
      auto sf = fine_grained::fit_sets(fine_grained::capacity_by_stride(rows_, "sets"));
      if (sf && sf->halving_before && allowed(kReplacementProbe)) replacement(*sf);
    }
    if (allowed(kTraceProbe)) {
      trace_l1_cold();
      trace_constant_cold();
    }
    buf_ = DeviceBuffer<char>();
    runner_.reset();
  }

 private:
  using XY = std::vector<std::pair<double, double>>;

  ChaseArgs args(uint64_t n, uint32_t passes, uint32_t warm, uint32_t trace_len = 0) const {
    ChaseArgs a;
    a.n = static_cast<uint32_t>(n);
    a.passes = passes;
    a.warm = warm;
    a.threshold = threshold_;
    a.trace_len = trace_len;
    a.shared_bytes = kSharedBytes;
    return a;
  }

  static ChainLayout lines_at(double stride, double lines) {
    ChainLayout c;
    c.n = static_cast<uint64_t>(lines);
    c.step = coprime_step(c.n);
    c.stride = static_cast<uint64_t>(stride);
    return c;
  }

  void record_trace(const std::string& trace, const ChainLayout& c,
                    const std::vector<uint16_t>& lat) {
    for (size_t i = 0; i < lat.size(); ++i) {
      Observation o;
      o.family = name();
      o.probe = kTraceProbe;
      o.params = {{kTraceColumn, trace},
                  {kPassColumn, std::to_string(i / c.length())},
                  {kIndexColumn, std::to_string(i)},
                  {kOffsetColumn, std::to_string(c.offset(0, i % c.length()))}};
      o.value = o.p05 = o.p50 = o.p95 = lat[i];
      o.unit = "cycles";
      o.reps = 1;
      ctx_->record(o);
      rows_.push_back(o);
    }
  }

  // Per stride, the lines that stayed resident, for the figure (the analysis reads the
  // capacity rows themselves).
  void record_resident_lines() {
    for (const char* series : {"line", "sets"})
      for (const auto& c : fine_grained::capacity_by_stride(rows_, series)) {
        Observation o;
        o.family = name();
        o.probe = kResidentLinesProbe;
        o.params = {{kSeriesColumn, series}, {kStrideColumn, format_number(c.stride)}};
        o.value = o.p05 = o.p50 = c.lines;
        o.p95 = c.miss_lines;  // the capacity lies in [lines, miss_lines)
        o.unit = kLinesUnit;
        o.reps = 1;
        ctx_->record(o);
      }
  }

  // Hit and miss latency from a short chase whose first pass comes from L2 and whose later
  // passes hit L1; the split between them classifies every later access.
  void calibrate() {
    const ChainLayout c = lines_at(160, 64);
    build_chain<uint64_t>(buf_.get(), c);
    ChaseArgs a = args(c.n, 4, 0, static_cast<uint32_t>(4 * c.n));
    ChaseResult r = runner_->run<true>(L1Load{buf_.get()}, a);
    std::vector<double> lat(r.trace.begin(), r.trace.end());
    const double split = split_threshold(lat);
    if (!std::isfinite(split))
      throw std::runtime_error(name() + ": no hit/miss split in the calibration chase");
    threshold_ = static_cast<uint32_t>(split);
    std::vector<double> hits, misses;
    for (double l : lat) (l > split ? misses : hits).push_back(l);
    for (const auto& [level, v] : std::vector<std::pair<std::string, double>>{
             {"hit", median(hits)}, {"miss", median(misses)}, {"threshold", split}})
      ctx_->record(calibration_row(name(), level, v, 1));
  }

  double misses_per_pass(const std::string& series, double stride, double lines) {
    const ChainLayout c = lines_at(stride, lines);
    build_chain<uint64_t>(buf_.get(), c);
    // Pass 1 fills, pass 2 settles the replacement state, passes 3-4 are counted.
    const ChaseArgs a = args(c.n, 4, 2);
    Point pt{kCapacityProbe,
             {{kSeriesColumn, series},
              {kStrideColumn, format_number(stride)},
              {kLinesColumn, format_number(lines)}},
             "misses",
             ctx_->quick() ? 1 : 3};
    Observation o = ctx_->measure(pt, [&] {
      ChaseResult r = runner_->run<true>(L1Load{buf_.get()}, a);
      return Sample{r.misses_per_pass, r.seconds};
    });
    rows_.push_back(o);
    return o.value;
  }

  void capacity_sweep(const std::string& series, double stride) {
    ctx_->progress(series + " stride " + format_number(stride) + " B");
    const double max_lines = std::min(kMaxLines, std::floor(buffer_bytes_ / stride));
    BoundarySearch search(64, 1, max_lines, 2.0, 1, 0.01);
    while (auto k = search.next())
      search.add(*k, misses_per_pass(series, stride, *k) <= fine_grained::kMissesPerPassLimit);
  }

  // ways+1 lines that share one set: LRU evicts the line needed next every time.
  void replacement(const fine_grained::SetFit& sf) {
    double stride = 0;
    for (const auto& c : fine_grained::capacity_by_stride(rows_, "sets")) stride = std::max(stride, c.stride);
    const double lines = sf.ways + 1;
    if (stride <= 0 || lines * stride > buffer_bytes_) return;
    const ChainLayout c = lines_at(stride, lines);
    build_chain<uint64_t>(buf_.get(), c);
    const ChaseArgs a = args(c.n, 10, 2);
    Point pt{kReplacementProbe,
             {{kStrideColumn, format_number(stride)}, {kLinesColumn, format_number(lines)}},
             "fraction",
             ctx_->quick() ? 1 : 3};
    ctx_->measure(pt, [&] {
      ChaseResult r = runner_->run<true>(L1Load{buf_.get()}, a);
      return Sample{r.misses_per_pass / lines, r.seconds};
    });
    const uint32_t passes = std::max<uint32_t>(1, std::min<uint32_t>(4, kTraceLen / c.n));
    ChaseResult r = runner_->run<true>(
        L1Load{buf_.get()}, args(c.n, passes, 0, static_cast<uint32_t>(passes * c.n)));
    record_trace("set_conflict", c, r.trace);
  }

  // A sequential 4 B-stride pass over lines that are in L2 but not in L1: one miss per fetch
  // unit (sector), then a second pass that hits.
  void trace_l1_cold() {
    ChainLayout c;
    c.n = 512;
    c.stride = 4;
    // Away from everything the capacity sweeps touched: not in this SM's L1.
    char* region = buf_.get() + static_cast<size_t>(buffer_bytes_ / 2);
    build_chain<uint32_t>(region, c);
    ChaseResult r = runner_->run<true>(L1Load4{region}, args(c.n, 2, 0, 2 * 512));
    record_trace("l1_cold", c, r.trace);
  }

  // The same over constant memory just written: each slower level recurs at the line size of
  // the level in front of it (L1 constant cache, L1.5, L2).
  void trace_constant_cold() {
    ChainLayout c;
    c.n = kConstWords;
    c.stride = 4;
    std::vector<uint32_t> words(kConstWords);
    static_assert(sizeof(gpuprobe_fine_grained_chain) == kConstWords * sizeof(uint32_t));
    for (uint64_t v = 0; v < c.n; ++v)
      words[c.offset(0, v) / 4] = static_cast<uint32_t>(c.offset(0, (v + 1) % c.n));
    CUDA_CHECK(cudaMemcpyToSymbol(gpuprobe_fine_grained_chain, words.data(), words.size() * 4));
    ChaseResult r = runner_->run<true>(ConstLoader{}, args(c.n, 2, 0, 2 * kConstWords));
    record_trace("constant_cold", c, r.trace);
  }

  RunContext* ctx_ = nullptr;
  std::vector<Observation> rows_;
  DeviceBuffer<char> buf_;
  double buffer_bytes_ = 0;
  std::unique_ptr<ChaseRunner> runner_;
  uint32_t threshold_ = 0;
};

GPUPROBE_REGISTER_FAMILY(FineGrainedFamily);

}  // namespace
}  // namespace gpuprobe
