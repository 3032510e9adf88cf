// Which SMs are near which L2 lines, and which SMs share a GPC.
// - first_read: a set of lines is written from one pinned SM (so that each lies in L2 at its
//   home, the point of coherence), then one thread on one chosen SM times its first read of
//   each line (ld.global.cg, one load at a time) and a second read (which a near copy may
//   answer); for every SM in turn. The writer's partition keeps copies of what it wrote, so
//   its SMs read every line near: the whole sweep runs twice, written from the lowest SM and
//   then from the lowest SM that saw two levels (the other partition), and each SM keeps the
//   pass written from across. Lines then group by the SMs they are near for: the partitions.
// - cluster_placement: the occupancy calculator's count of clusters of each size (one block
//   per SM) and the SMs one launch of that many clusters runs on: a cluster's blocks share a
//   GPC (analysis/gpcs.hpp).
// - gpc_contention: one thread on the lowest SM of each co-scheduled group chases through L2
//   while the SMs of one other group (or of its own, less its TPC) stream reads from L2.
#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "analysis/clusters.hpp"
#include "analysis/l2_topology.hpp"
#include "base/stats.hpp"
#include "cluster_launch.cuh"
#include "gpu/sass_check.hpp"
#include "memory_chase.cuh"
#include "memory_streams.cuh"

namespace gpuprobe::l2_topology {

// Only the block on SM `writer` writes; the rest leave at once.
__global__ void touch_lines(char* buf, const uint32_t* offsets, int n, uint32_t writer, int* found) {
  if (sm_id() != writer) return;
  if (threadIdx.x == 0) *found = 1;
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    asm volatile("st.global.cg.u32 [%0], %1;" ::"l"(buf + offsets[i]), "r"(0u) : "memory");
}

// Only thread 0 of the block that runs on SM `target` works; the rest leave at once.
__global__ void line_latency(const char* buf, const uint32_t* offsets, int n, uint32_t target,
                             uint32_t* first, uint32_t* again, int* found) {
  if (threadIdx.x != 0 || sm_id() != target) return;
  *found = 1;
#pragma unroll 1
  for (int i = 0; i < n; ++i) {
    const uint64_t off = offsets[i];
    wait_for(off);
    uint32_t v;
    uint64_t t0 = clock_now();
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(buf + off) : "memory");
    wait_for(v);
    uint64_t t1 = clock_now();
    first[i] = uint32_t(t1 - t0);
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(buf + off + (v & 0u)) : "memory");
    wait_for(v);
    again[i] = uint32_t(clock_now() - t1);
  }
}

__global__ void placement(uint32_t* smids, int* ran) {
  if (threadIdx.x == 0) {
    smids[blockIdx.x] = sm_id();
    if (blockIdx.x == 0) *ran = GPUPROBE_HAS_CLUSTERS;
  }
  cluster_barrier();  // every block of a cluster resident at once
}

struct ChaseTally {
  long long cycles;
  uint32_t steps, stopped_at;
};

constexpr uint8_t kIdle = 0, kHog = 1, kProbe = 2;  // roles by SM in gpc_contention
constexpr uint32_t kChaseRound = 64;                // chase steps between looks at the clock
constexpr int kStreamLoadsPerRound = 4;             // 16-byte loads per streaming round and thread

// One block per SM, each doing what role[its SM] says. The probe waits `settle_ns` for the
// streams to get going, then chases in rounds while the streams still run; the streams stop
// at `window_ns`. Nothing waits on another block, so the kernel ends whatever the scheduler
// does.
__global__ void gpc_contention(const uint8_t* role, uint32_t roles, const uint32_t* chain,
                               uint32_t line_words, uint32_t start, uint32_t max_steps,
                               const uint4* stream, uint64_t n, uint64_t window_ns, uint64_t settle_ns,
                               ChaseTally* out, uint32_t* sink, int flag) {
  const uint64_t t_begin = global_timer_ns();
  const uint32_t sm = sm_id();
  const uint8_t r = sm < roles ? role[sm] : kIdle;
  if (r == kProbe) {
    if (threadIdx.x != 0) return;
    while (global_timer_ns() - t_begin < settle_ns) {
    }
    uint32_t p = start, steps = 0;
    long long cycles = 0;
    while (steps < max_steps && global_timer_ns() - t_begin < window_ns - 2 * settle_ns) {
      long long c;
      p = chase(chain, line_words, p, kChaseRound, &c);
      cycles += c;
      steps += kChaseRound;
    }
    *out = {cycles, steps, p};
    return;
  }
  if (r != kHog) return;
  // Warp-contiguous 16-byte loads; `step` (roles x threads) stays under n (checked by the host).
  uint64_t i = (uint64_t(sm) * blockDim.x + threadIdx.x) % n;
  const uint64_t step = uint64_t(roles) * blockDim.x;
  uint32_t acc = 0;
  while (global_timer_ns() - t_begin < window_ns) {
    uint4 v[kStreamLoadsPerRound];
#pragma unroll
    for (int u = 0; u < kStreamLoadsPerRound; ++u) {
      v[u] = load<Load::cg, 16>(stream + i);
      i += step;
      if (i >= n) i -= n;
    }
#pragma unroll
    for (int u = 0; u < kStreamLoadsPerRound; ++u) acc ^= fold(v[u]);
  }
  keep(acc, sink, flag);
}

namespace {

constexpr size_t kSpanBytes = 64u << 20;  // lines drawn from a 64 MiB span
constexpr int kLineBytes = 128;
constexpr int kPasses = 3;                // each map cell: the median of three passes
constexpr int kWriterThreads = 256;
// gpc_contention: a chase over 2048 lines (256 KiB, L2-resident once walked), streams over
// 8 MiB (in L2 too: the streams load the GPC's link to the L2, not DRAM), 1024 threads per
// streaming SM; each launch 1 ms, the chase from 50 us to at most 900 us or one lap.
constexpr uint32_t kChaseLines = 2048;
constexpr size_t kStreamBytes = 8u << 20;
constexpr int kHogThreads = 1024;
constexpr uint64_t kWindowNs = 1000000, kSettleNs = 50000;
// The SMs that stream for one group: its lowest, at most kHogSms, so that groups of 8 and of
// 18 SMs load their GPC alike; a group of fewer than kMinHogSms does not stream.
constexpr int kHogSms = 8, kMinHogSms = 4;

// One pass of every SM: its first and second read of each line.
struct SmPass {
  std::vector<uint32_t> first, again;
};
using SideReads = std::vector<std::vector<SmPass>>;  // [SM index][pass]

std::vector<double> line_medians(const std::vector<SmPass>& passes) {
  std::vector<double> out(static_cast<size_t>(kLevelLines));
  for (size_t j = 0; j < out.size(); ++j) {
    std::vector<double> v;
    for (const auto& p : passes) v.push_back(p.first[j]);
    out[j] = median(v);
  }
  return out;
}

// The gap between an SM's two levels on one side (0: one level, or no reads).
double level_gap(const std::vector<SmPass>& passes) {
  if (passes.size() < size_t(kPasses)) return 0;
  double gap = 0;
  return std::isnan(split_threshold(line_medians(passes), &gap)) ? 0 : gap;
}

class L2TopologyFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(l2_topology::kFamily.name); }
  std::string description() const override {
    return "SM x L2 line latency map from both partitions, L2 partitions and each SM's near and "
           "far latency, GPCs from cluster placement and L2 contention";
  }
  std::vector<ProbeInfo> probes() const override {
    return {{kFirstReadProbe, "cycles of each SM's first read of each written line"},
            {kClusterPlacementProbe, "clusters of each size that fit, and the SM of each block"},
            {kGpcContentionProbe, "L2 chase on one SM while one group of SMs streams from L2"}};
  }

  void run(RunContext& ctx) override {
    const DeviceInfo& dev = ctx.device();
    smem_ = size_t(dev.shared_per_block_optin);
    // All the shared memory a block may have: one block per SM.
    for (const void* k : {(const void*)line_latency, (const void*)touch_lines, (const void*)placement,
                          (const void*)gpc_contention})
      CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_)));
    if (ctx.enabled(kFirstReadProbe) &&
        sass_allows(ctx, kFirstReadProbe,
                    {"l2_topology::line_latency", "l2_topology::touch_lines"}))
      latency_map(ctx, dev);
    if (dev.cc_major < 9 || !ctx.enabled(kClusterPlacementProbe) ||
        !sass_allows(ctx, kClusterPlacementProbe, {"l2_topology::placement"}))
      return;
    const auto clusters = placements(ctx, dev);
    if (ctx.enabled(kGpcContentionProbe) &&
        sass_allows(ctx, kGpcContentionProbe, {"l2_topology::gpc_contention"}))
      contention(ctx, dev, clusters);
  }

 private:
  // SM ids as the hardware numbers them: whichever the blocks of a full grid report.
  std::vector<int> resident_sms(const DeviceInfo& dev) {
    DeviceBuffer<uint32_t> ids(size_t(dev.sm_count));
    DeviceBuffer<int> ran(1);
    placement<<<dev.sm_count, 32, smem_>>>(ids.get(), ran.get());
    CUDA_CHECK_LAUNCH();
    std::vector<uint32_t> v(size_t(dev.sm_count));
    CUDA_CHECK(cudaMemcpy(v.data(), ids.get(), v.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    std::set<int> s(v.begin(), v.end());
    return {s.begin(), s.end()};
  }

  // Launches `k` on a full grid (one block per SM) until the block on the wanted SM reports
  // (it always should: one block fits an SM); false if it never does.
  template <class F>
  bool on_sm(const DeviceBuffer<int>& found, F&& k) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      CUDA_CHECK(cudaMemset(found.get(), 0, sizeof(int)));
      k();
      CUDA_CHECK_LAUNCH();
      int f = 0;
      CUDA_CHECK(cudaMemcpy(&f, found.get(), sizeof f, cudaMemcpyDeviceToHost));
      if (f == 1) return true;
    }
    return false;
  }

  // kPasses passes over every SM of lines written from `writer` before each SM's reads.
  SideReads read_side(RunContext& ctx, const DeviceInfo& dev, const std::vector<int>& sms, int writer) {
    SideReads reads(sms.size());
    for (int pass = 0; pass < kPasses; ++pass) {
      ctx.progress("SM x line map written from SM " + std::to_string(writer) + ", pass " + std::to_string(pass + 1));
      for (size_t i = 0; i < sms.size(); ++i) {
        const bool wrote = on_sm(found_, [&] {
          touch_lines<<<dev.sm_count, kWriterThreads, smem_>>>(buf_.get(), offsets_.get(), kLevelLines,
                                                               uint32_t(writer), found_.get());
        });
        if (!wrote) throw std::runtime_error("l2_topology: no block ran on the writer SM " + std::to_string(writer));
        if (!on_sm(found_, [&] {
              line_latency<<<dev.sm_count, 32, smem_>>>(buf_.get(), offsets_.get(), kLevelLines, uint32_t(sms[i]),
                                                        first_.get(), again_.get(), found_.get());
            }))
          continue;  // an SM no block reached: left out of the map
        SmPass p{std::vector<uint32_t>(kLevelLines), std::vector<uint32_t>(kLevelLines)};
        CUDA_CHECK(cudaMemcpy(p.first.data(), first_.get(), kLevelLines * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(p.again.data(), again_.get(), kLevelLines * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        reads[i].push_back(std::move(p));
      }
    }
    return reads;
  }

  void prepare_lines() {
    // kLevelLines distinct random lines of the span; the first kLines of them form the map.
    std::mt19937_64 rng(29);
    std::set<uint32_t> picked;
    std::uniform_int_distribution<uint32_t> pick(0, uint32_t(kSpanBytes / kLineBytes) - 1);
    while (picked.size() < size_t(kLevelLines)) picked.insert(pick(rng) * kLineBytes);
    std::vector<uint32_t> offsets(picked.begin(), picked.end());
    std::shuffle(offsets.begin(), offsets.end(), rng);
    buf_ = DeviceBuffer<char>(kSpanBytes);
    CUDA_CHECK(cudaMemset(buf_.get(), 0, kSpanBytes));
    offsets_ = DeviceBuffer<uint32_t>(kLevelLines);
    first_ = DeviceBuffer<uint32_t>(kLevelLines);
    again_ = DeviceBuffer<uint32_t>(kLevelLines);
    found_ = DeviceBuffer<int>(1);
    CUDA_CHECK(cudaMemcpy(offsets_.get(), offsets.data(), kLevelLines * sizeof(uint32_t), cudaMemcpyHostToDevice));
  }

  void latency_map(RunContext& ctx, const DeviceInfo& dev) {
    prepare_lines();
    const std::vector<int> sms = resident_sms(dev);
    // Written from the lowest SM, then from the lowest SM that saw two levels: where some saw
    // two and some one (the writer's side, answered by its copies), the other partition.
    std::vector<SideReads> sides{read_side(ctx, dev, sms, sms[0])};
    std::vector<int> writers{sms[0]};
    std::vector<size_t> split;
    for (size_t i = 0; i < sms.size(); ++i)
      if (level_gap(sides[0][i]) > 0) split.push_back(i);
    if (!split.empty() && split.size() < sms.size()) {
      writers.push_back(sms[split[0]]);
      sides.push_back(read_side(ctx, dev, sms, writers.back()));
    }
    // Each SM keeps the side it saw its widest split from (side 0 where it saw none).
    std::vector<const std::vector<SmPass>*> chosen(sms.size());
    std::vector<int> writer_of(sms.size());
    for (size_t i = 0; i < sms.size(); ++i) {
      size_t best = 0;
      for (size_t s = 1; s < sides.size(); ++s)
        if (level_gap(sides[s][i]) > level_gap(sides[best][i])) best = s;
      chosen[i] = &sides[best][i];
      writer_of[i] = writers[best];
    }
    record_map(ctx, sms, chosen);
    record_levels(ctx, sms, chosen, writer_of);
  }

  // The map (first kLines lines), in heat-map order: SM position, then line position.
  void record_map(RunContext& ctx, const std::vector<int>& sms, const std::vector<const std::vector<SmPass>*>& chosen) {
    LatencyMap m;
    std::vector<size_t> index;  // map row -> SM index
    for (size_t i = 0; i < sms.size(); ++i) {
      if (chosen[i]->size() < size_t(kPasses)) continue;  // an SM no block reached in every pass
      std::vector<double> row = line_medians(*chosen[i]);
      row.resize(size_t(kLines));
      m.sms.push_back(sms[i]);
      m.lat.push_back(row);
      index.push_back(i);
    }
    if (m.sms.empty()) return;
    Topology t;
    std::vector<int> lpos(kLines), spos(m.sms.size());
    for (int j = 0; j < kLines; ++j) lpos[size_t(j)] = j;
    for (size_t i = 0; i < spos.size(); ++i) spos[i] = int(i);
    if (infer(m, &t)) {
      lpos = line_order(m, t);
      spos = sm_order(m, t);
    }
    // Rows in heat-map order (SM position, then line position), for gnuplot's image style.
    std::vector<size_t> sm_at(m.sms.size()), line_at(static_cast<size_t>(kLines));
    for (size_t i = 0; i < sm_at.size(); ++i) sm_at[size_t(spos[i])] = i;
    for (size_t j = 0; j < line_at.size(); ++j) line_at[size_t(lpos[j])] = j;
    for (size_t a = 0; a < sm_at.size(); ++a) {
      const size_t r = sm_at[a];
      for (size_t b = 0; b < line_at.size(); ++b) {
        const size_t j = line_at[b];
        std::vector<double> cell;
        for (const auto& p : *chosen[index[r]]) cell.push_back(p.first[j]);
        ctx.record(summary_row(kFirstReadProbe,
                               {{kSmColumn, std::to_string(m.sms[r])},
                                {kLineColumn, std::to_string(j)},
                                {kSmOrderColumn, std::to_string(a)},
                                {kLineOrderColumn, std::to_string(b)}},
                               summarize(cell), "cycles"));
      }
    }
  }

  // Each SM's near and far median over all kLevelLines (split at its own threshold), and the
  // median of its second reads.
  void record_levels(RunContext& ctx, const std::vector<int>& sms,
                     const std::vector<const std::vector<SmPass>*>& chosen,
                     const std::vector<int>& writer_of) {
    for (size_t i = 0; i < sms.size(); ++i) {
      if (chosen[i]->size() < size_t(kPasses)) continue;
      const auto [near, far] = split_levels(line_medians(*chosen[i]));
      const std::string sm = std::to_string(sms[i]), writer = std::to_string(writer_of[i]);
      for (const auto* level : {&near, &far}) {
        if (level->empty()) continue;
        ctx.record(summary_row(kSmLevelProbe,
                               {{kSmColumn, sm},
                                {kLevelColumn, level == &near ? "near" : "far"},
                                {kWriterColumn, writer}},
                               summarize(*level), "cycles"));
      }
      std::vector<double> again;
      for (const auto& p : *chosen[i]) again.insert(again.end(), p.again.begin(), p.again.end());
      ctx.record(summary_row(kRereadProbe, {{kSmColumn, sm}}, summarize(again), "cycles"));
    }
  }

  // c(k) for k = 1 to the largest cluster, and one launch of c(k) clusters of each size
  // k >= 2 (placement is deterministic: one launch shows it). Returns (size, SMs by rank).
  std::vector<std::pair<int, std::vector<int>>> placements(RunContext& ctx, const DeviceInfo& dev) {
    prepare_cluster_kernel(placement, smem_);
    const int largest = max_cluster_size(placement, 32, smem_);
    DeviceBuffer<uint32_t> ids(size_t(dev.sm_count));
    DeviceBuffer<int> ran(1);
    std::vector<std::pair<int, std::vector<int>>> out;
    for (int size = 1; size <= largest; ++size) {
      const int clusters = max_active_clusters(placement, size, 32, smem_);
      ctx.record({"",
                  kClusterCapacityProbe,
                  {{kClusterSizeColumn, std::to_string(size)}},
                  double(clusters),
                  clusters::kClustersUnit,
                  double(clusters),
                  double(clusters),
                  double(clusters),
                  1});
      if (size < 2 || clusters < 1) continue;
      const int grid = std::min(clusters * size, dev.sm_count - dev.sm_count % size);
      CUDA_CHECK(cudaMemset(ran.get(), 0, sizeof(int)));
      launch_clusters(placement, grid, size, 32, smem_, ids.get(), ran.get());
      int r = 0;
      CUDA_CHECK(cudaMemcpy(&r, ran.get(), sizeof r, cudaMemcpyDeviceToHost));
      if (r != 1)
        throw std::runtime_error(name() + ": the placement kernel ran without its sm_90 code");
      std::vector<uint32_t> v(static_cast<size_t>(grid));
      CUDA_CHECK(cudaMemcpy(v.data(), ids.get(), v.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
      for (int b = 0; b < grid; ++b) {
        if (b % size == 0) out.emplace_back(size, std::vector<int>{});
        out.back().second.push_back(int(v[size_t(b)]));
        const double sm = double(v[size_t(b)]);
        ctx.record({"",
                    kClusterPlacementProbe,
                    {{kLaunchColumn, std::to_string(size)},
                     {kClusterSizeColumn, std::to_string(size)},
                     {kClusterColumn, std::to_string(b / size)},
                     {kRankColumn, std::to_string(b % size)}},
                    sm,
                    kSmUnit,
                    sm,
                    sm,
                    sm,
                    1});
      }
    }
    return out;
  }

  // The SMs that stream for group `h` when the chase runs on `probe`: its lowest kHogSms,
  // less the probe's TPC (the SM a cluster of 2 pairs it with).
  static std::vector<int> hog_sms(const std::vector<int>& h, int probe, const std::map<int, int>& partner) {
    std::vector<int> out;
    const auto mate = partner.find(probe);
    for (int sm : h) {
      if (sm == probe || (mate != partner.end() && sm == mate->second)) continue;
      if (int(out.size()) < kHogSms) out.push_back(sm);
    }
    return out;
  }

  void contention(RunContext& ctx, const DeviceInfo& dev,
                  const std::vector<std::pair<int, std::vector<int>>>& clusters) {
    std::vector<std::vector<int>> lists;
    std::map<int, int> partner;
    int roles = dev.sm_count;
    for (const auto& [size, sms] : clusters) {
      lists.push_back(sms);
      if (size == 2) {
        partner[sms[0]] = sms[1];
        partner[sms[1]] = sms[0];
      }
      for (int sm : sms) roles = std::max(roles, sm + 1);
    }
    const auto groups = co_scheduled_groups(lists);
    // A random single cycle over kChaseLines lines, each line's first word the next line.
    constexpr uint32_t kWords = kLineBytes / sizeof(uint32_t);
    const std::vector<uint32_t> next = sattolo_cycle(kChaseLines, 31);
    std::vector<uint32_t> lines(size_t(kChaseLines) * kWords, 0);
    for (uint32_t l = 0; l < kChaseLines; ++l) lines[size_t(l) * kWords] = next[l];
    DeviceBuffer<uint32_t> chain(lines.size());
    CUDA_CHECK(cudaMemcpy(chain.get(), lines.data(), chain.bytes(), cudaMemcpyHostToDevice));
    uint32_t cursor = 0;
    DeviceBuffer<uint4> stream(kStreamBytes / sizeof(uint4));
    if (size_t(roles) * kHogThreads >= stream.size()) throw std::runtime_error("l2_topology: stream buffer too small");
    CUDA_CHECK(cudaMemset(stream.get(), 0, stream.bytes()));
    DeviceBuffer<uint8_t> role{static_cast<size_t>(roles)};
    DeviceBuffer<ChaseTally> tally(1);
    DeviceBuffer<uint32_t> sink(1);
    for (const auto& p : groups) {
      const int probe = p.front();
      ctx.progress("L2 contention on SM " + std::to_string(probe));
      for (size_t h = 0; h <= groups.size(); ++h) {
        const std::vector<int> hogs = h == groups.size() ? std::vector<int>{} : hog_sms(groups[h], probe, partner);
        if (h < groups.size() && int(hogs.size()) < kMinHogSms) continue;
        std::vector<uint8_t> roles_of(size_t(roles), kIdle);
        roles_of[size_t(probe)] = kProbe;
        for (int sm : hogs) roles_of[size_t(sm)] = kHog;
        CUDA_CHECK(cudaMemcpy(role.get(), roles_of.data(), roles_of.size(), cudaMemcpyHostToDevice));
        const std::string hog = h == groups.size() ? "-1" : std::to_string(groups[h].front());
        ctx.measure({kGpcContentionProbe,
                     {{kProbeSmColumn, std::to_string(probe)},
                      {kHogSmColumn, hog},
                      {kHogSmsColumn, std::to_string(hogs.size())}},
                     "cycles",
                     ctx.quick() ? 2 : 3},
                    [&] {
                      const double s = time_seconds([&] {
                        gpc_contention<<<dev.sm_count, kHogThreads, smem_>>>(
                            role.get(), uint32_t(roles), chain.get(), kWords, cursor, kChaseLines, stream.get(),
                            stream.size(), kWindowNs, kSettleNs, tally.get(), sink.get(), 0);
                      });
                      ChaseTally t{};
                      CUDA_CHECK(cudaMemcpy(&t, tally.get(), sizeof t, cudaMemcpyDeviceToHost));
                      if (t.steps == 0)
                        throw std::runtime_error("l2_topology: no chase ran on SM " + std::to_string(probe));
                      cursor = t.stopped_at;
                      return Sample{double(t.cycles) / t.steps, s};
                    });
      }
    }
  }

  size_t smem_ = 0;
  DeviceBuffer<char> buf_;
  DeviceBuffer<uint32_t> offsets_, first_, again_;
  DeviceBuffer<int> found_;
};

GPUPROBE_REGISTER_FAMILY(L2TopologyFamily);

}  // namespace

}  // namespace gpuprobe::l2_topology
