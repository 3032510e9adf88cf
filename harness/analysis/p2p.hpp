#pragma once
// Several GPUs in one machine: peer-to-peer bandwidth (copy engine and SM kernels, one way and
// both ways at once) and latency between every pair, with the link NVML reports. Matrices are
// indexed [device][peer] as nvbandwidth's are: the row is the GPU that initiates (its copy
// engine writes, its kernel reads, its thread chases), the column the GPU whose memory it uses.
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe {

namespace p2p {

// value[device][peer]; NaN where not measured (the diagonal, pairs without peer access).
struct Matrix {
  std::string probe, unit;
  std::vector<std::vector<double>> value;
  int gpus() const { return int(value.size()); }
};

// The matrix of one probe's rows (params device, peer), sized to the largest index seen;
// false when the probe has no rows.
bool matrix(const std::vector<Observation>& obs, const std::string& probe, const std::string& unit,
            Matrix* out);

// The probes and what nvbandwidth calls the same measurement (its test-case name and the
// description its JSON carries; empty where its measurement means something else).
struct Measure {
  const char* probe;
  const char* unit;
  const char* nvbandwidth_name;
  const char* nvbandwidth_description;
  const char* parameter;
};
const std::vector<Measure>& measures();

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{
    "p2p", "", "",
    "analysis-only: a handful of link figures per GPU pair, read from the table; no committed "
    "multi-GPU run to draw yet"};

}  // namespace p2p

// p2p_write_bandwidth_ce, p2p_bidir_bandwidth_ce, p2p_read_bandwidth_sm,
// p2p_bidir_bandwidth_sm (GB/s) and p2p_latency (ns): median over pairs, low/high the
// slowest and fastest pair.
std::vector<Parameter> analyze_p2p(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace gpuprobe
