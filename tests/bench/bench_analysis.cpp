// Analysis time on large family files (Google Benchmark, not a unit test: timings belong
// here). The targets: <= 2 s for a 1 M-row tlb.csv; a latency.csv ten times larger analysed in
// less than ten times the time (it once grew as n^2.7, 32 s at 244k rows). Run:
//   build/bench_analysis --benchmark_filter=Tlb
//   build/bench_analysis --benchmark_filter=Latency
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "analysis/latency.hpp"
#include "analysis/tlb.hpp"

using namespace gpuprobe;

namespace {

// A TLB sweep of `rows` rows: ten strides (and three aliased ones) over log-spaced
// footprints, 280 cycles up to 32 MiB, 300 to 4 GiB, a 600-cycle page walk beyond: the
// shape of an H100 run, with as many points as asked for.
std::vector<Observation> tlb_rows(size_t rows) {
  std::vector<Observation> obs;
  obs.reserve(rows);
  const std::vector<std::pair<std::string, double>> curves = {
      {tlb::kChaseProbe, 262144},          {tlb::kChaseProbe, 524288},
      {tlb::kChaseProbe, 1 << 20},         {tlb::kChaseProbe, 2 << 20},
      {tlb::kChaseProbe, 4 << 20},         {tlb::kChaseProbe, 8 << 20},
      {tlb::kChaseProbe, 16 << 20},        {tlb::kChaseProbe, 32 << 20},
      {tlb::kChaseProbe, 64 << 20},        {tlb::kChaseProbe, 128 << 20},
      {tlb::kChaseAliasedProbe, 16 << 20}, {tlb::kChaseAliasedProbe, 32 << 20},
      {tlb::kChaseAliasedProbe, 64 << 20}};
  const size_t per = rows / curves.size();
  for (const auto& [probe, stride] : curves)
    for (size_t i = 0; i < per; ++i) {
      const double fp = stride * std::exp2(14.0 * static_cast<double>(i) / static_cast<double>(per));
      const double reach = 32.0 * (1 << 20) * std::fmax(1.0, stride / (2 << 20));
      const double cyc = fp <= reach ? 280 : fp <= 4.0 * (1u << 30) ? 300 : 600;
      obs.push_back({std::string(tlb::kFamily.name),
                     probe,
                     {{tlb::kStrideColumn, std::to_string(static_cast<long long>(stride))},
                      {memory_chase::kFootprintColumn, std::to_string(static_cast<long long>(fp))}},
                     cyc,
                     "cycles",
                     cyc,
                     cyc,
                     cyc,
                     3});
    }
  return obs;
}

void BM_AnalyzeTlb(benchmark::State& state) {
  const auto obs = tlb_rows(static_cast<size_t>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(analyze_checked(std::string(tlb::kFamily.name), obs));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_AnalyzeTlb)->Arg(250000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(1);

// A latency sweep of `rows` rows over ld.global, ld.cg and ld.nc: footprints log-spaced from
// 1 KiB to 1 GiB, the H100's ladder (L1 32 cycles to 240 KiB; L2 285, its far half 532, to
// 25 and 50 MiB; DRAM 690) with gradual steps and 0.5 % noise. Ten times the rows is the same
// ladder ten times as densely measured.
std::vector<Observation> latency_rows(size_t rows) {
  constexpr double KiB = 1024, MiB = 1024 * KiB;
  auto hit = [](double f, double size, double sharpness) {
    return 1 / (1 + std::pow(f / size, sharpness));
  };
  auto cycles = [&](double f, bool l1) {
    const double near = hit(f, 25 * MiB, 30), all = hit(f, 50 * MiB, 30);
    double y = near * 285 + (all - std::min(all, near)) * 532 + (1 - std::max(all, near)) * 690;
    if (l1) y = hit(f, 240 * KiB, 40) * 32 + (1 - hit(f, 240 * KiB, 40)) * y;
    return y;
  };
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0, 0.005);
  std::vector<Observation> obs;
  obs.reserve(rows);
  const size_t per = rows / 3;
  for (const std::string probe :
       {latency::kLdGlobalProbe, latency::kLdCgProbe, latency::kLdNcProbe})
    for (size_t i = 0; i < per; ++i) {
      const double octaves = 20.0 * (static_cast<double>(i) + 0.5) / static_cast<double>(per);
      const double f = std::round(KiB * std::exp2(octaves) / 128) * 128;
      const double y = cycles(f, probe != latency::kLdCgProbe) * (1 + noise(rng));
      const Params p = {{memory_chase::kFootprintColumn, std::to_string(static_cast<long long>(f))},
                        {latency::kStrideColumn, "128"}};
      obs.push_back({std::string(latency::kFamily.name), probe, p, y, "cycles", y, y, y, 9});
    }
  return obs;
}

void BM_AnalyzeLatency(benchmark::State& state) {
  const auto obs = latency_rows(static_cast<size_t>(state.range(0)));
  const Metadata meta = {{"l2_bytes", "52428800"}, {"shared_per_sm_bytes", "233472"}};
  for (auto _ : state)
    benchmark::DoNotOptimize(analyze_checked(std::string(latency::kFamily.name), obs, meta));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_AnalyzeLatency)->Arg(24400)->Arg(244000)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
