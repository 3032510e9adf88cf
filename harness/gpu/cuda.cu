#include <algorithm>
#include <random>
#include <utility>

#include "gpu/cuda.cuh"

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

}  // namespace gpuprobe
