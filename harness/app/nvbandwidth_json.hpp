#pragma once
// gpuprobe's host-link and P2P results in the JSON that NVIDIA's nvbandwidth writes with
// --json (json_output.cpp of github.com/NVIDIA/nvbandwidth, v0.8), under its test-case names,
// so that the two can be set side by side or diffed with the same tools:
//
//   {"nvbandwidth": {"version": ..., "git_version": ..., "CUDA Runtime Version": <int>,
//     "Driver Version": "...", "GPU Device list": ["0: <name> (<pci>): (<host>)"],
//     "testcases": [{"name": "host_to_device_memcpy_ce", "status": "Passed",
//                    "bandwidth_description": "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)",
//                    "bandwidth_matrix": [["54.3"]], "sum": 54.3}, ...]}}
//
// Matrix cells are strings ("N/A" where not measured), rows the initiating side (the CPU for
// host cases), as nvbandwidth writes them. Only measurements that mean the same as
// nvbandwidth's are written: its bidirectional cases report one direction under load, while
// gpuprobe's report both directions together, so those are left out.
#include <map>
#include <string>
#include <vector>

#include "base/observation.hpp"

namespace gpuprobe {

struct NvbandwidthCase {
  std::string name, description;
  std::vector<std::vector<double>> matrix;  // NaN: "N/A"
};

// nvbandwidth's default buffer size (common.h, defaultBufferSize): host cases are taken at the
// transfer size closest to it (on a log scale; the larger on a tie).
constexpr long long kNvbandwidthBufferBytes = 512ll << 20;

// Test cases from a run's observations, by family (host_link, p2p); families not present give
// none.
std::vector<NvbandwidthCase> nvbandwidth_cases(
    const std::map<std::string, std::vector<Observation>>& families);

// The JSON text; `meta` is an observations file's header (gpu, pci_bus_id, driver_version,
// cuda_driver_api, gpuprobe_version, hostname when present).
std::string format_nvbandwidth_json(const Metadata& meta, const std::vector<NvbandwidthCase>& cases);

// Reads RUN_DIR's host_link.csv and p2p.csv and writes `path` (temporary name, then renamed).
// Throws std::runtime_error when the run has neither.
void write_nvbandwidth_json(const std::string& run_dir, const std::string& path);

}  // namespace gpuprobe
