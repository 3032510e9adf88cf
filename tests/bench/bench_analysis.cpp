// Analysis time on large family files (Google Benchmark, not a unit test: timings belong
// here). The target is <= 2 s for a 1 M-row file. Run:
//   build/bench_analysis --benchmark_filter=Tlb
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"

using namespace gpuprobe;

namespace {

// A TLB sweep of `rows` rows: ten strides (and three aliased ones) over log-spaced
// footprints, 280 cycles up to 32 MiB, 300 to 4 GiB, a 600-cycle page walk beyond: the
// shape of an H100 run, with as many points as asked for.
std::vector<Observation> tlb_rows(size_t rows) {
  std::vector<Observation> obs;
  obs.reserve(rows);
  const std::vector<std::pair<std::string, double>> curves = {
      {"chase", 262144},   {"chase", 524288},   {"chase", 1 << 20}, {"chase", 2 << 20},
      {"chase", 4 << 20},  {"chase", 8 << 20},  {"chase", 16 << 20}, {"chase", 32 << 20},
      {"chase", 64 << 20}, {"chase", 128 << 20}, {"chase_aliased", 16 << 20},
      {"chase_aliased", 32 << 20}, {"chase_aliased", 64 << 20}};
  const size_t per = rows / curves.size();
  for (const auto& [probe, stride] : curves)
    for (size_t i = 0; i < per; ++i) {
      const double fp = stride * std::exp2(14.0 * static_cast<double>(i) / static_cast<double>(per));
      const double reach = 32.0 * (1 << 20) * std::fmax(1.0, stride / (2 << 20));
      const double cyc = fp <= reach ? 280 : fp <= 4.0 * (1u << 30) ? 300 : 600;
      obs.push_back({"tlb", probe, {{"stride_bytes", std::to_string(static_cast<long long>(stride))},
                                    {"footprint_bytes", std::to_string(static_cast<long long>(fp))}},
                     cyc, "cycles", cyc, cyc, cyc, 3});
    }
  return obs;
}

void BM_AnalyzeTlb(benchmark::State& state) {
  const auto obs = tlb_rows(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(analyze_checked("tlb", obs));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_AnalyzeTlb)->Arg(250000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
