// The energy family's parameters in `gpuprobe export --json` and in AccelWattch's per-component
// keys (export --accelwattch), on parameters of a synthetic run.
#include <gtest/gtest.h>

#include <string>

#include "app/export.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe {
namespace {

// The energies in `export --json`, and in AccelWattch's keys where one exists.
TEST(EnergyExport, JsonAndAccelWattchCarryTheEnergies) {
  RunData run;
  run.gpu = "synthetic";
  run.params = {
      {param::fp32_fma_energy, 1.1, "pJ/op", 1.0, 1.2, 0.8, "energy_fit: ...", "energy.csv"},
      {param::dram_read_energy_per_byte, 18, "pJ/B", 17, 19, 0.7, "energy_fit: ...", "energy.csv"},
      {param::static_power, 160, "W", 158, 162, 0.9, "power_window: ...", "energy.csv"},
      {param::shared_write_energy_per_byte, 0.6, "pJ/B", 0.5, 0.7, 0.8, "energy_fit: ...",
       "energy.csv"},
      {param::fp64_fma_energy, 6.5, "pJ/op", 2, 11, 0.2, "energy_fit: ...", "energy.csv"},
      {param::l1_hit_latency, 33, "cycles", 32, 34, 0.9, "pointer_chase", "latency.csv"}};
  const std::string json = export_json(run);
  EXPECT_NE(json.find("\"energy\": {"), std::string::npos);
  EXPECT_NE(json.find("\"per_operation\": {"), std::string::npos);
  EXPECT_NE(json.find("\"fp32_fma_energy\": {"), std::string::npos);
  EXPECT_NE(json.find("\"dram_read_energy_per_byte\": {"), std::string::npos);
  EXPECT_NE(json.find("\"static_power\": {"), std::string::npos);

  const std::string xml = export_accelwattch(run);
  EXPECT_NE(xml.find("<param name=\"FP_MUL_ACC\" value=\"1.1\"/> <!-- fp32_fma_energy"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<param name=\"MEM_RD\" value=\"18\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<param name=\"constant_power\" value=\"160\"/>"), std::string::npos);
  // Below the simulator's confidence, or not measured: left out, and said so.
  EXPECT_EQ(xml.find("name=\"DP_MUL_ACC\""), std::string::npos);
  EXPECT_NE(xml.find("DP_MUL_ACC (fp64 FMA (DFMA)): fp64_fma_energy at confidence 0.20"),
            std::string::npos);
  EXPECT_NE(xml.find("MEM_WR (DRAM writes): not measured"), std::string::npos);
  EXPECT_NE(xml.find("Measured, no AccelWattch key: shared_write_energy_per_byte"),
            std::string::npos);
  EXPECT_NE(xml.find("not measured by gpuprobe: TOT_INST"), std::string::npos);
  EXPECT_EQ(xml.find(param::l1_hit_latency), std::string::npos);
}

}  // namespace
}  // namespace gpuprobe
