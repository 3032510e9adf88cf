#pragma once
#include <vector>

namespace gpuprobe {

struct Summary {
  double p05 = 0, p50 = 0, p95 = 0, mean = 0, min = 0, max = 0;
  int n = 0;
};

// Percentile by linear interpolation between order statistics; q in [0, 1].
double percentile(std::vector<double> v, double q);
double median(std::vector<double> v);
Summary summarize(const std::vector<double>& v);

}  // namespace gpuprobe
