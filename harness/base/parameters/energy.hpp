// The GPU's energy: the power it draws at rest and what one operation or one byte moved costs
// on top, from NVML's energy counter (analysis/energy.cpp). Entries: see base/parameter_list.hpp.

// energy: windows of a fixed load read on the counter's steps (power_window), and lines of
// power against rate (energy_fit), random operands, and all-zero ones for the names ending in
// _zero.
GPUPROBE_PARAMETER(idle_power, "W", "energy", power_window, "5 %",
                   "watts the GPU draws with nothing launched")
GPUPROBE_PARAMETER(static_power, "W", "energy", power_window, "5 %",
                   "watts the GPU draws with every SM holding a block of sleeping warps: clocks "
                   "up, nothing issued")
GPUPROBE_PARAMETER(fp32_fma_energy, "pJ/op", "energy", energy_fit, "10 %",
                   "picojoules of one FFMA result (one lane's) on top of static_power, random "
                   "operands")
GPUPROBE_PARAMETER(fp32_fma_energy_zero, "pJ/op", "energy", energy_fit, "10 %",
                   "fp32_fma_energy with all-zero operands")
GPUPROBE_PARAMETER(fp64_fma_energy, "pJ/op", "energy", energy_fit, "10 %",
                   "picojoules of one DFMA result (one lane's) on top of static_power, random "
                   "operands")
GPUPROBE_PARAMETER(fp64_fma_energy_zero, "pJ/op", "energy", energy_fit, "10 %",
                   "fp64_fma_energy with all-zero operands")
GPUPROBE_PARAMETER(int32_mad_energy, "pJ/op", "energy", energy_fit, "10 %",
                   "picojoules of one IMAD result (one lane's) on top of static_power, random "
                   "operands")
GPUPROBE_PARAMETER(int32_mad_energy_zero, "pJ/op", "energy", energy_fit, "10 %",
                   "int32_mad_energy with all-zero operands")
GPUPROBE_PARAMETER(sfu_sin_energy, "pJ/op", "energy", energy_fit, "10 %",
                   "picojoules of one MUFU.SIN result (one lane's) on top of static_power, random "
                   "operands")
GPUPROBE_PARAMETER(sfu_sin_energy_zero, "pJ/op", "energy", energy_fit, "10 %",
                   "sfu_sin_energy with all-zero operands")
GPUPROBE_PARAMETER(tensor_mma_f16_energy, "pJ/op", "energy", energy_fit, "10 %",
                   "picojoules of one FP16 multiply-add of mma.sync m16n8k16 (HMMA) on top of "
                   "static_power, random operands")
GPUPROBE_PARAMETER(tensor_mma_f16_energy_zero, "pJ/op", "energy", energy_fit, "10 %",
                   "tensor_mma_f16_energy with all-zero operands")
GPUPROBE_PARAMETER(tensor_mma_bf16_energy, "pJ/op", "energy", energy_fit, "10 %",
                   "picojoules of one BF16 multiply-add of mma.sync m16n8k16 (HMMA) on top of "
                   "static_power, random operands")
GPUPROBE_PARAMETER(tensor_mma_bf16_energy_zero, "pJ/op", "energy", energy_fit, "10 %",
                   "tensor_mma_bf16_energy with all-zero operands")
GPUPROBE_PARAMETER(tensor_mma_tf32_energy, "pJ/op", "energy", energy_fit, "10 %",
                   "picojoules of one TF32 multiply-add of mma.sync m16n8k8 (HMMA) on top of "
                   "static_power, random operands")
GPUPROBE_PARAMETER(tensor_mma_tf32_energy_zero, "pJ/op", "energy", energy_fit, "10 %",
                   "tensor_mma_tf32_energy with all-zero operands")
GPUPROBE_PARAMETER(tensor_mma_int8_energy, "pJ/op", "energy", energy_fit, "10 %",
                   "picojoules of one INT8 multiply-add of mma.sync m16n8k32 (IMMA) on top of "
                   "static_power, random operands")
GPUPROBE_PARAMETER(tensor_mma_int8_energy_zero, "pJ/op", "energy", energy_fit, "10 %",
                   "tensor_mma_int8_energy with all-zero operands")
GPUPROBE_PARAMETER(tensor_wgmma_f16_energy, "pJ/op", "energy", energy_fit, "10 %",
                   "picojoules of one FP16 multiply-add of wgmma m64n256k16 (HGMMA) on top of "
                   "static_power, random operands")
GPUPROBE_PARAMETER(tensor_wgmma_f16_energy_zero, "pJ/op", "energy", energy_fit, "10 %",
                   "tensor_wgmma_f16_energy with all-zero operands")
GPUPROBE_PARAMETER(tensor_wgmma_bf16_energy, "pJ/op", "energy", energy_fit, "10 %",
                   "picojoules of one BF16 multiply-add of wgmma m64n256k16 (HGMMA) on top of "
                   "static_power, random operands")
GPUPROBE_PARAMETER(tensor_wgmma_bf16_energy_zero, "pJ/op", "energy", energy_fit, "10 %",
                   "tensor_wgmma_bf16_energy with all-zero operands")
GPUPROBE_PARAMETER(tensor_wgmma_tf32_energy, "pJ/op", "energy", energy_fit, "10 %",
                   "picojoules of one TF32 multiply-add of wgmma m64n256k8 (HGMMA) on top of "
                   "static_power, random operands")
GPUPROBE_PARAMETER(tensor_wgmma_tf32_energy_zero, "pJ/op", "energy", energy_fit, "10 %",
                   "tensor_wgmma_tf32_energy with all-zero operands")
GPUPROBE_PARAMETER(tensor_wgmma_fp8_e4m3_energy, "pJ/op", "energy", energy_fit, "10 %",
                   "picojoules of one FP8 (E4M3) multiply-add of wgmma m64n256k32 (QGMMA) on top "
                   "of static_power, random operands")
GPUPROBE_PARAMETER(tensor_wgmma_fp8_e4m3_energy_zero, "pJ/op", "energy", energy_fit, "10 %",
                   "tensor_wgmma_fp8_e4m3_energy with all-zero operands")
GPUPROBE_PARAMETER(tensor_wgmma_int8_energy, "pJ/op", "energy", energy_fit, "10 %",
                   "picojoules of one INT8 multiply-add of wgmma m64n256k32 (IGMMA) on top of "
                   "static_power, random operands")
GPUPROBE_PARAMETER(tensor_wgmma_int8_energy_zero, "pJ/op", "energy", energy_fit, "10 %",
                   "tensor_wgmma_int8_energy with all-zero operands")
GPUPROBE_PARAMETER(shared_read_energy_per_byte, "pJ/B", "energy", energy_fit, "10 %",
                   "picojoules per byte a streaming kernel reads from shared memory, random data")
GPUPROBE_PARAMETER(shared_read_energy_per_byte_zero, "pJ/B", "energy", energy_fit, "10 %",
                   "shared_read_energy_per_byte with all-zero data")
GPUPROBE_PARAMETER(shared_write_energy_per_byte, "pJ/B", "energy", energy_fit, "10 %",
                   "picojoules per byte a streaming kernel writes to shared memory, random data")
GPUPROBE_PARAMETER(shared_write_energy_per_byte_zero, "pJ/B", "energy", energy_fit, "10 %",
                   "shared_write_energy_per_byte with all-zero data")
GPUPROBE_PARAMETER(l1_read_energy_per_byte, "pJ/B", "energy", energy_fit, "10 %",
                   "picojoules per byte a streaming kernel reads from data resident in L1, random "
                   "data")
GPUPROBE_PARAMETER(l1_read_energy_per_byte_zero, "pJ/B", "energy", energy_fit, "10 %",
                   "l1_read_energy_per_byte with all-zero data")
GPUPROBE_PARAMETER(l2_near_read_energy_per_byte, "pJ/B", "energy", energy_fit, "10 %",
                   "picojoules per byte a streaming kernel reads from L2, a footprint of a quarter "
                   "of it (the near part where split), random data")
GPUPROBE_PARAMETER(l2_near_read_energy_per_byte_zero, "pJ/B", "energy", energy_fit, "10 %",
                   "l2_near_read_energy_per_byte with all-zero data")
GPUPROBE_PARAMETER(l2_far_read_energy_per_byte, "pJ/B", "energy", energy_fit, "10 %",
                   "picojoules per byte a streaming kernel reads from L2, a footprint of three "
                   "quarters of it (the far part too where split), random data")
GPUPROBE_PARAMETER(l2_far_read_energy_per_byte_zero, "pJ/B", "energy", energy_fit, "10 %",
                   "l2_far_read_energy_per_byte with all-zero data")
GPUPROBE_PARAMETER(dram_read_energy_per_byte, "pJ/B", "energy", energy_fit, "10 %",
                   "picojoules per byte a streaming kernel reads from DRAM, random data")
GPUPROBE_PARAMETER(dram_read_energy_per_byte_zero, "pJ/B", "energy", energy_fit, "10 %",
                   "dram_read_energy_per_byte with all-zero data")
GPUPROBE_PARAMETER(dram_write_energy_per_byte, "pJ/B", "energy", energy_fit, "10 %",
                   "picojoules per byte a streaming kernel writes to DRAM, random data")
GPUPROBE_PARAMETER(dram_write_energy_per_byte_zero, "pJ/B", "energy", energy_fit, "10 %",
                   "dram_write_energy_per_byte with all-zero data")
GPUPROBE_PARAMETER(host_link_read_energy_per_byte, "pJ/B", "energy", energy_fit, "15 %",
                   "picojoules per byte copy engines move from pinned host memory to the GPU")
GPUPROBE_PARAMETER(host_link_write_energy_per_byte, "pJ/B", "energy", energy_fit, "15 %",
                   "picojoules per byte copy engines move from the GPU to pinned host memory")
GPUPROBE_PARAMETER(nvlink_write_energy_per_byte, "pJ/B", "energy", energy_fit, "15 %",
                   "picojoules per byte copy engines write to a peer GPU over NVLink (both GPUs' "
                   "counters summed)")
