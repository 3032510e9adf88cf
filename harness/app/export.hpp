#pragma once
// `gpuprobe export RUN_DIR --json | --accel-sim | --mt4g | --accelwattch [--out FILE]`: a run's
// inferred parameters in forms that other tools read.
//   --json       gpuprobe's own schema ("gpuprobe-run", version kExportSchemaVersion; README)
//   --accel-sim  a gpgpusim.config fragment for Accel-Sim / GPGPU-Sim from measured values only
//   --mt4g       the topology JSON of MT4G (caps-tum/mt4g), read by sys-sage, where it maps
//   --accelwattch the energy family's energies as AccelWattch's per-component XML parameters
#include <string>
#include <vector>

#include "app/report.hpp"

namespace gpuprobe {

constexpr int kExportSchemaVersion = 1;
// The key of --json's node that lists its GPUs and their links.
constexpr const char* kNodeGpusKey = "gpus";
// Parameters below this confidence are not exported to a simulator: a wrong value there is
// silently believed.
constexpr double kSimulatorMinConfidence = 0.5;

std::string export_json(const RunData& run);
std::string export_accel_sim(const RunData& run);
std::string export_mt4g(const RunData& run);
std::string export_accelwattch(const RunData& run);

int export_main(const std::vector<std::string>& args);

}  // namespace gpuprobe
