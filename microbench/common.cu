#include <algorithm>
#include <map>
#include <random>
#include <utility>

#include "common.cuh"
#include "core/stats.hpp"

namespace gpuprobe {

void throw_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  throw CudaError(e, std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ") in " +
                         expr + " at " + file + ":" + std::to_string(line));
}

std::vector<uint32_t> sattolo_cycle(uint32_t n, uint64_t seed) {
  std::vector<uint32_t> perm(n);
  for (uint32_t i = 0; i < n; ++i) perm[i] = i;
  std::mt19937_64 rng(seed);
  for (uint32_t i = n - 1; i > 0; --i) {
    std::uniform_int_distribution<uint32_t> pick(0, i - 1);
    std::swap(perm[i], perm[pick(rng)]);
  }
  // perm is one cycle when read as i -> perm[i]
  return perm;
}

double median_rate_per_sm(const std::vector<SmWindow>& blocks, double work_per_block) {
  std::map<unsigned, std::pair<long long, long long>> window;  // sm -> earliest start, latest end
  std::map<unsigned, int> count;
  for (const auto& b : blocks) {
    auto it = window.find(b.sm);
    if (it == window.end())
      window[b.sm] = {b.start, b.end};
    else
      it->second = {std::min(it->second.first, b.start), std::max(it->second.second, b.end)};
    ++count[b.sm];
  }
  std::vector<double> rates;
  for (const auto& [sm, w] : window) {
    if (w.second <= w.first) throw std::runtime_error("empty clock64 window on SM " + std::to_string(sm));
    rates.push_back(count[sm] * work_per_block / static_cast<double>(w.second - w.first));
  }
  if (rates.empty()) throw std::runtime_error("no block recorded its clock64 window");
  return median(std::move(rates));
}

}  // namespace gpuprobe
