#pragma once
// Execution pipes: the names of the pipe kernels (shared by the probes and their code
// expectations), and the inference of <op>_throughput_per_sm and <op>_latency. Pure C++: the
// probes (microbench/pipes.cu) include it too. The per-SM rates are in analysis/common/sm_timing.hpp.
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::pipes {

// The names of pipes.csv, written by the probes (microbench/pipe_ops.cuh, pipes.cu,
// tensor_wgmma.cu) and read by the analyzer, dual_issue's pairs and the tests. A throughput row's
// mode is "throughput" and its timing "cycles" (clock64 per SM) or "events"; a latency row's
// mode is "latency".
constexpr const char* kModeColumn = "mode";      // throughput or kLatencyMode
constexpr const char* kLatencyMode = "latency";  // a dependent chain's mode: cycles per result
constexpr const char* kTimingColumn = "timing";  // a throughput row's timer
// Each op's probe, the prefix of its two parameters (results per clock per SM and cycles per
// dependent step) in the catalog:
constexpr const char* kFp32FmaProbe = "fp32_fma";                          // FFMA
constexpr const char* kFp32AddProbe = "fp32_add";                          // FADD
constexpr const char* kFp32MulProbe = "fp32_mul";                          // FMUL
constexpr const char* kFp64FmaProbe = "fp64_fma";                          // DFMA
constexpr const char* kFp16x2FmaProbe = "fp16x2_fma";                      // HFMA2
constexpr const char* kBf16x2FmaProbe = "bf16x2_fma";                      // HFMA2.BF16_V2
constexpr const char* kInt32AddProbe = "int32_add";                        // IADD3 pairs
constexpr const char* kInt32MadProbe = "int32_mad";                        // IMAD
constexpr const char* kInt32LogicProbe = "int32_logic";                    // LOP3.LUT pairs
constexpr const char* kSfuSinProbe = "sfu_sin";                            // MUFU.SIN
constexpr const char* kSfuEx2Probe = "sfu_ex2";                            // MUFU.EX2
constexpr const char* kSfuRsqrtProbe = "sfu_rsqrt";                        // MUFU.RSQ
constexpr const char* kSfuRcpProbe = "sfu_rcp";                            // MUFU.RCP
constexpr const char* kConversionProbe = "conversion";                     // F2I
constexpr const char* kShuffleProbe = "shuffle";                           // SHFL.BFLY
constexpr const char* kLdstProbe = "ldst";                                 // LDS, conflict-free
constexpr const char* kLdGlobalProbe = "ld_global";                        // LDG hitting L1
constexpr const char* kTensorMmaF16Probe = "tensor_mma_f16";               // HMMA f16
constexpr const char* kTensorMmaBf16Probe = "tensor_mma_bf16";             // HMMA bf16
constexpr const char* kTensorMmaTf32Probe = "tensor_mma_tf32";             // HMMA tf32
constexpr const char* kTensorMmaInt8Probe = "tensor_mma_int8";             // IMMA s8
constexpr const char* kTensorMmaFp64Probe = "tensor_mma_fp64";             // DMMA
constexpr const char* kTensorWgmmaF16Probe = "tensor_wgmma_f16";           // HGMMA f16
constexpr const char* kTensorWgmmaBf16Probe = "tensor_wgmma_bf16";         // HGMMA bf16
constexpr const char* kTensorWgmmaTf32Probe = "tensor_wgmma_tf32";         // HGMMA tf32
constexpr const char* kTensorWgmmaFp8E4m3Probe = "tensor_wgmma_fp8_e4m3";  // QGMMA e4m3
constexpr const char* kTensorWgmmaInt8Probe = "tensor_wgmma_int8";         // IGMMA s8

// Throughput: 8 independent chains, each step unrolled 64 times per loop trip, so that the
// loop's own 3 instructions cost < 1 % of the issue slots. Latency: one chain, 128 steps.
constexpr int kThroughputIlp = 8;
constexpr int kThroughputUnroll = 64;
constexpr int kLatencyUnroll = 128;

// kernel_name() of pipes::throughput<Op, ilp, unroll> (microbench/pipes.cu).
std::string kernel_name(const std::string& op_type, int ilp, int unroll);

struct OpInfo {
  const char* probe;   // "fp32_fma": the probe and the parameter prefix
  const char* type;    // the op's struct in microbench/pipe_ops.cuh
  const char* ptx;     // regex for the PTX instruction(s) an apply() issues
  int ptx_per_apply;
  const char* sass;    // regex for the SASS they must become
  int sass_per_apply;
  const char* what;    // for the parameter's method text
  int min_cc = 0;      // lowest compute capability with the instruction (53 = 5.3), as the
                       // op's kMinCC in pipe_ops.cuh (pipes.cu checks that they agree)
};
const std::vector<OpInfo>& ops();
const OpInfo* find_op(const std::string& probe);

// Hopper's warpgroup MMA (wgmma.mma_async, sm_90a; microbench/tensor_wgmma.cu): the m64n256kK
// shape of each input type, A and B from shared memory, the accumulator in registers. Each
// warpgroup runs one accumulator chain of kWgmmaUnroll wgmmas per commit group; throughput with
// kWgmmaWarpgroups warpgroups on every SM, latency with one warpgroup waiting for every wgmma.
constexpr int kWgmmaN = 256;
constexpr int kWgmmaUnroll = 16;
constexpr int kWgmmaWarpgroups = 2;

// kernel_name() of pipes::wgmma_throughput<Op> or pipes::wgmma_latency<Op>.
std::string wgmma_kernel_name(const std::string& op_type, bool latency);

struct WgmmaInfo {
  const char* probe;  // "tensor_wgmma_f16": the probe and the parameter prefix
  const char* type;   // the op's struct in microbench/tensor_wgmma.cu
  const char* ptx;    // regex for its wgmma.mma_async
  const char* sass;   // regex for the SASS instruction it must become
  const char* what;   // for the parameter's method text
};
const std::vector<WgmmaInfo>& wgmma_ops();
const WgmmaInfo* find_wgmma_op(const std::string& probe);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"pipes", "pipes.gp"};

// <op>_throughput_per_sm (results/clk/SM, from the per-SM cycle counts) and <op>_latency
// (cycles per dependent step) for every op in `obs`, wgmma ops included.
std::vector<Parameter> analyze_pipes(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace gpuprobe::pipes
