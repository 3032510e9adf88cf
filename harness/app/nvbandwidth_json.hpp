#pragma once
// gpuprobe's host-link and P2P results in the JSON that NVIDIA's nvbandwidth writes with
// --json (json_output.cpp of github.com/NVIDIA/nvbandwidth, v0.8), under its test-case names,
// so that the two can be set side by side or diffed with the same tools:
//
//   {"nvbandwidth": {"CUDA Runtime Version": <int>, "Driver Version": "...",
//     "GPU Device list": ["0: <name> (<domain 8 hex>:<bus>:<device>): (<host>)", ...],
//     "git_version": ..., "testcases": [{"bandwidth_description": "memcpy CE CPU(row) -> ...",
//       "bandwidth_matrix": [["54.3", ...]], "name": "host_to_device_memcpy_ce",
//       "status": "Passed", "sum": 54.3}, {"name": ..., "status": "Waived"}, ...],
//     "version": ...}}
//
// Keys sorted (jsoncpp's objects are maps). Matrix cells are strings ("N/A" where not
// measured): host cases one row (the CPU) of one column per GPU; device-to-device cases a
// row per initiating GPU and a column per peer; one-to-all and all-to-one cases one row, the
// column the GPU taken as the one. Only measurements that mean the same as nvbandwidth's are
// written: its bidirectional device-to-device cases hold each direction and their sum in one
// matrix, gpuprobe measures the sum (compared by `gpuprobe compare RUN --nvbandwidth FILE`).
// Where the p2p family could not run (one GPU), its cases are "Waived", as nvbandwidth's are.
#include <map>
#include <string>
#include <vector>

#include "base/observation.hpp"

namespace gpuprobe {

struct NvbandwidthCase {
  std::string name, description;
  std::vector<std::vector<double>> matrix;  // NaN: "N/A"
  std::string status = "Passed";           // "Waived": no matrix
};

// nvbandwidth's default buffer size (common.h, defaultBufferSize): host cases are taken at the
// transfer size closest to it (on a log scale; the larger on a tie).
constexpr long long kNvbandwidthBufferBytes = 512ll << 20;

// The GPUs of the node as nvbandwidth lists them (getDeviceDisplayInfo of output.cpp): from the
// node_* metadata, else the run's one GPU.
std::vector<std::string> nvbandwidth_devices(const Metadata& meta);

// Test cases from a run's observations, by family (host_link, p2p), on a node of `gpus` GPUs
// (0: as many as the matrices show) whose measured device is `device` (the host cases' column);
// families not present give none. `bidir_sums`: also the pair_bidir modes under the name of
// nvbandwidth's bidirectional case (a matrix of the sums only: for comparing, not for the JSON).
std::vector<NvbandwidthCase> nvbandwidth_cases(
    const std::map<std::string, std::vector<Observation>>& families, int gpus = 0, int device = 0,
    bool bidir_sums = false);

// The JSON text; `meta` is an observations file's header (gpu, pci_bus_id, driver_version,
// cuda_driver_api, gpuprobe_version, node_*; hostname when present).
std::string format_nvbandwidth_json(const Metadata& meta, const std::vector<NvbandwidthCase>& cases);

// What of a run the nvbandwidth forms read: its host_link and p2p observations, the metadata of
// its first file, the node's GPU count (0 where the run predates node_*), the measured device's
// ordinal, and whether families.csv says the p2p family could not run. Throws
// std::runtime_error when RUN_DIR is not a run folder.
struct NvbandwidthRun {
  std::map<std::string, std::vector<Observation>> families;
  Metadata meta;
  int gpus = 0, device = 0;
  bool p2p_unsupported = false;
};
NvbandwidthRun read_nvbandwidth_run(const std::string& run_dir);

// Reads RUN_DIR's host_link.csv and p2p.csv (and families.csv, for a p2p family that could
// not run) and writes `path` (temporary name, then renamed). Throws std::runtime_error when
// RUN_DIR is not a run folder.
void write_nvbandwidth_json(const std::string& run_dir, const std::string& path);

// `gpuprobe compare RUN --nvbandwidth FILE`: per nvbandwidth test case of FILE that a gpuprobe
// mode of RUN measures alike, the median and range over the cells both have, each side's, and
// gpuprobe's over nvbandwidth's; markdown. Throws std::runtime_error on a FILE that is not
// nvbandwidth's JSON.
std::string nvbandwidth_side_by_side(const std::string& run_dir, const std::string& nvbandwidth_json);

}  // namespace gpuprobe
