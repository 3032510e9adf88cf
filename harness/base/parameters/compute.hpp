// The SM's execution: pipe rates and latencies, dual issue, occupancy, divergence, atomics,
// kernel concurrency. Entries: see base/parameter_list.hpp.

// pipes: <op>_throughput_per_sm and <op>_latency of each op (analysis/pipes.cpp).
GPUPROBE_PIPE_OP(fp32_fma, "FP32 fused multiply-adds (FFMA)", "FFMA")
GPUPROBE_PIPE_OP(fp32_add, "FP32 adds (FADD)", "FADD")
GPUPROBE_PIPE_OP(fp32_mul, "FP32 multiplies (FMUL)", "FMUL")
GPUPROBE_PIPE_OP(fp64_fma, "FP64 fused multiply-adds (DFMA)", "DFMA")
GPUPROBE_PIPE_OP(fp16x2_fma, "FP16 fused multiply-adds, two per instruction (HFMA2)", "HFMA2")
GPUPROBE_PIPE_OP(bf16x2_fma, "BF16 fused multiply-adds, two per instruction (HFMA2.BF16)",
                 "HFMA2.BF16")
GPUPROBE_PIPE_OP(int32_add, "32-bit integer adds (IADD3)", "IADD3")
GPUPROBE_PIPE_OP(int32_mad, "32-bit integer multiply-adds (IMAD)", "IMAD")
GPUPROBE_PIPE_OP(int32_logic, "32-bit three-input logic operations (LOP3)", "LOP3")
GPUPROBE_PIPE_OP(sfu_sin, "approximate sines of the special-function unit (MUFU.SIN)", "MUFU.SIN")
GPUPROBE_PIPE_OP(sfu_ex2, "approximate powers of 2 of the special-function unit (MUFU.EX2)",
                 "MUFU.EX2")
GPUPROBE_PIPE_OP(sfu_rsqrt,
                 "approximate reciprocal square roots of the special-function unit (MUFU.RSQ)",
                 "MUFU.RSQ")
GPUPROBE_PIPE_OP(sfu_rcp, "approximate reciprocals of the special-function unit (MUFU.RCP)",
                 "MUFU.RCP")
GPUPROBE_PIPE_OP(conversion, "float-to-integer conversions (F2I)", "F2I")
GPUPROBE_PIPE_OP(shuffle, "warp shuffles (SHFL.BFLY)", "SHFL.BFLY")
GPUPROBE_PIPE_OP(ldst, "conflict-free 4 B shared-memory loads (LDS)", "LDS")
GPUPROBE_PIPE_OP(ld_global, "8 B global loads hitting L1 (LDG)", "LDG hitting L1")
GPUPROBE_PIPE_OP(tensor_mma_f16,
                 "FP16 multiply-adds of the tensor cores (mma.sync m16n8k16, FP32 sums)",
                 "mma.sync m16n8k16 FP16 (HMMA)")
GPUPROBE_PIPE_OP(tensor_mma_bf16,
                 "BF16 multiply-adds of the tensor cores (mma.sync m16n8k16, FP32 sums)",
                 "mma.sync m16n8k16 BF16 (HMMA)")
GPUPROBE_PIPE_OP(tensor_mma_tf32,
                 "TF32 multiply-adds of the tensor cores (mma.sync m16n8k8, FP32 sums)",
                 "mma.sync m16n8k8 TF32 (HMMA)")
GPUPROBE_PIPE_OP(tensor_mma_int8,
                 "INT8 multiply-adds of the tensor cores (mma.sync m16n8k32, INT32 sums)",
                 "mma.sync m16n8k32 INT8 (IMMA)")
GPUPROBE_PIPE_OP(tensor_mma_fp64, "FP64 multiply-adds of the tensor cores (mma.sync m8n8k4)",
                 "mma.sync m8n8k4 FP64 (DMMA)")
GPUPROBE_PIPE_OP(tensor_wgmma_f16,
                 "FP16 multiply-adds of warpgroup MMAs (wgmma m64n256k16, FP32 sums)",
                 "wgmma m64n256k16 FP16 (HGMMA)")
GPUPROBE_PIPE_OP(tensor_wgmma_bf16,
                 "BF16 multiply-adds of warpgroup MMAs (wgmma m64n256k16, FP32 sums)",
                 "wgmma m64n256k16 BF16 (HGMMA)")
GPUPROBE_PIPE_OP(tensor_wgmma_tf32,
                 "TF32 multiply-adds of warpgroup MMAs (wgmma m64n256k8, FP32 sums)",
                 "wgmma m64n256k8 TF32 (HGMMA)")
GPUPROBE_PIPE_OP(tensor_wgmma_fp8_e4m3,
                 "FP8 (E4M3) multiply-adds of warpgroup MMAs (wgmma m64n256k32, FP32 sums)",
                 "wgmma m64n256k32 E4M3 (QGMMA)")
GPUPROBE_PIPE_OP(tensor_wgmma_int8,
                 "INT8 multiply-adds of warpgroup MMAs (wgmma m64n256k32, INT32 sums)",
                 "wgmma m64n256k32 INT8 (IGMMA)")
GPUPROBE_PARAMETER(fp64_fp32_throughput_ratio, "ratio", "pipes", throughput_loop, "5 %",
                   "FP64 fused multiply-adds per clock over FP32 ones (1/2, 1/64, ...)")

// dual_issue: two instruction streams in one warp against each alone (analysis/dual_issue.cpp).
// Each pair: instructions per clock of the two mixed, over the faster of the two alone.
GPUPROBE_PARAMETER(dual_issue_fp32_int32, "ratio", "dual_issue", dual_issue_pair, "10 %",
                   "FFMA and LOP3 mixed in one warp: instructions per clock over the faster one "
                   "alone (above 1: both issue)")
GPUPROBE_PARAMETER(dual_issue_fp32_fp64, "ratio", "dual_issue", dual_issue_pair, "10 %",
                   "FFMA and DFMA mixed in one warp: instructions per clock over the faster one "
                   "alone")
GPUPROBE_PARAMETER(dual_issue_fp32_sfu, "ratio", "dual_issue", dual_issue_pair, "10 %",
                   "FFMA and MUFU.EX2 mixed in one warp: instructions per clock over the faster "
                   "one alone")
GPUPROBE_PARAMETER(dual_issue_fp32_ldst, "ratio", "dual_issue", dual_issue_pair, "10 %",
                   "FFMA and L1-hitting global loads mixed in one warp: instructions per clock "
                   "over the faster one alone")
GPUPROBE_PARAMETER(dual_issue_fp32_shared, "ratio", "dual_issue", dual_issue_pair, "10 %",
                   "FFMA and shared-memory loads mixed in one warp: instructions per clock over "
                   "the faster one alone")
GPUPROBE_PARAMETER(dual_issue_fp16_fp32, "ratio", "dual_issue", dual_issue_pair, "10 %",
                   "HFMA2 and FFMA mixed in one warp: instructions per clock over the faster one "
                   "alone")
GPUPROBE_PARAMETER(dual_issue_fp32_tensor, "ratio", "dual_issue", dual_issue_pair, "10 %",
                   "FFMA and tensor-core mma.sync mixed in one warp: instructions per clock over "
                   "the faster one alone")
GPUPROBE_PARAMETER(dual_issue_gain, "ratio", "dual_issue", dual_issue_pair, "10 %",
                   "the fastest pair's instructions per clock over the fastest stream alone: "
                   "what a second stream adds")

// ilp_occupancy: warps per SM x independent operations per thread (analysis/ilp_occupancy.cpp).
GPUPROBE_NUMBERED(fp32_fma_ceiling_ilp, "fp32_fma_ceiling_ilp<n>", "ratio", "ilp_occupancy",
                  occupancy_sweep, "10 %",
                  "the best FFMA rate with n independent FMAs per thread, as a fraction of the "
                  "peak, where no warp count reaches 90 %")
GPUPROBE_NUMBERED(fp32_fma_warps_90pct_ilp, "fp32_fma_warps_90pct_ilp<n>", "warps/SM",
                  "ilp_occupancy", occupancy_sweep, "10 %",
                  "the fewest warps per SM at which FFMAs, n independent ones per thread, reach "
                  "90 % of the peak rate")
GPUPROBE_PARAMETER(fp32_fma_in_flight_90pct, "warp-ops/SM", "ilp_occupancy", occupancy_sweep,
                   "10 %",
                   "warps x FFMAs per thread in flight at those 90 % points, the median over the "
                   "ILPs that reach it")
GPUPROBE_NUMBERED(dram_load_ceiling_ilp, "dram_load_ceiling_ilp<n>", "ratio", "ilp_occupancy",
                  occupancy_sweep, "10 %",
                  "the best DRAM load rate with n independent loads per thread, as a fraction "
                  "of the peak, where no warp count reaches 90 %")
GPUPROBE_NUMBERED(dram_load_warps_90pct_ilp, "dram_load_warps_90pct_ilp<n>", "warps/SM",
                  "ilp_occupancy", occupancy_sweep, "10 %",
                  "the fewest warps per SM at which DRAM loads, n independent ones per thread, "
                  "reach 90 % of the peak rate")
GPUPROBE_NOT_IN_QUICK(dram_load_warps_90pct_ilp(2),
                      "on the H100 ILP 2 reaches 89.5 % of the peak at 48 warps and crosses 90 % "
                      "before 56: a knee at the threshold's edge that the quick run's shorter "
                      "windows may place on either point (on the coarse grid quick used before: "
                      "64 against 48-56)")
GPUPROBE_PARAMETER(dram_load_in_flight_90pct, "warp-ops/SM", "ilp_occupancy", occupancy_sweep,
                   "10 %",
                   "warps x loads per thread in flight at those 90 % points, the median over the "
                   "ILPs that reach it")
GPUPROBE_NOT_IN_QUICK(dram_load_in_flight_90pct,
                      "warps x ILP at the knees, ILP 2's edge knee among them (on the coarse grid "
                      "quick used before, H200: 256 against 160 warp-ops/SM)")

// divergence: 1..32 distinct paths per warp (analysis/divergence.cpp).
GPUPROBE_PARAMETER(divergence_cost_per_path, "ratio", "divergence", divergence_sweep, "10 %",
                   "the time each more distinct path in a warp adds, in paths' worth (1: paths "
                   "run one after another), every SM full")
GPUPROBE_NUMBERED(divergence_slowdown_paths, "divergence_slowdown_<p>_paths", "ratio", "divergence",
                  divergence_sweep, "10 %",
                  "how many times longer warps take when their lanes follow p distinct paths "
                  "than one (p: the most swept, 32), every SM full")
GPUPROBE_PARAMETER(divergence_cost_per_path_one_warp, "ratio", "divergence", divergence_sweep,
                   "10 %", "divergence_cost_per_path for one warp alone on one SM")
GPUPROBE_NUMBERED(divergence_slowdown_paths_one_warp, "divergence_slowdown_<p>_paths_one_warp",
                  "ratio", "divergence", divergence_sweep, "10 %",
                  "how many times longer one warp alone on one SM takes when its lanes follow p "
                  "distinct paths than one")

// atomics: atomic chains and streams on shared and global memory (analysis/atomics.cpp).
GPUPROBE_PARAMETER(atomic_shared_latency_nocontention, "cycles", "atomics", dependent_chain, "3 %",
                   "cycles of one shared-memory atomicAdd by one lane, each add taking the last "
                   "one's result")
GPUPROBE_NOT_IN_QUICK(atomic_shared_latency_nocontention,
                      "fewer loop trips leave loop overhead in the figure (28.2 against 26.6 "
                      "cycles)")
GPUPROBE_PARAMETER(atomic_shared_latency_32way, "cycles", "atomics", dependent_chain, "3 %",
                   "cycles of one shared-memory atomicAdd when all 32 lanes of a warp add to "
                   "one address")
GPUPROBE_PARAMETER(atomic_shared_cas_latency_nocontention, "cycles", "atomics", dependent_chain,
                   "3 %",
                   "cycles of one shared-memory atomicCAS by one lane, each comparing with the "
                   "last one's result")
GPUPROBE_NOT_IN_QUICK(atomic_shared_cas_latency_nocontention,
                      "fewer loop trips leave loop overhead in the figure (37.2 against 35.6 "
                      "cycles)")
GPUPROBE_PARAMETER(atomic_shared_throughput_per_sm, "atomics/clk/SM", "atomics", throughput_loop,
                   "3 %",
                   "shared-memory atomicAdds per clock per SM, each lane on its own word, every "
                   "SM busy")
GPUPROBE_NOT_IN_QUICK(atomic_shared_throughput_per_sm,
                      "too short to reach the steady rate (29.8 against 31.4 per clk per SM)")
GPUPROBE_PARAMETER(atomic_global_latency_nocontention, "cycles", "atomics", dependent_chain, "3 %",
                   "cycles of one global atomicAdd by one lane, each add taking the last one's "
                   "result (done in the L2)")
GPUPROBE_NOT_IN_QUICK(atomic_global_latency_nocontention,
                      "one warp on one SM: its distance to the word's L2 slice varied between "
                      "runs (262 against 478 cycles); the chain steps over 64 lines, the mean "
                      "over their slices, and stays out until a quick/full pair of "
                      "that head shows it agrees")
GPUPROBE_PARAMETER(atomic_global_latency_32way, "cycles", "atomics", dependent_chain, "3 %",
                   "cycles of one global atomicAdd when all 32 lanes of a warp add to one "
                   "address")
GPUPROBE_NOT_IN_QUICK(atomic_global_latency_32way,
                      "as atomic_global_latency_nocontention (336 against 552 cycles)")
GPUPROBE_PARAMETER(atomic_global_cas_latency_nocontention, "cycles", "atomics", dependent_chain,
                   "3 %",
                   "cycles of one global atomicCAS by one lane, each comparing with the last "
                   "one's result")
GPUPROBE_NOT_IN_QUICK(atomic_global_cas_latency_nocontention,
                      "as atomic_global_latency_nocontention (269 against 485 cycles)")
GPUPROBE_PARAMETER(atomic_global_throughput_per_sm, "atomics/clk/SM", "atomics", throughput_loop,
                   "3 %",
                   "global atomicAdds per clock per SM, each lane on its own word, every SM busy")
GPUPROBE_NOT_IN_QUICK(atomic_global_throughput_per_sm,
                      "too short to reach the steady rate (1.48 against 1.41 per clk per SM)")

// concurrency: kernels in many streams, and launches (analysis/concurrency.cpp).
GPUPROBE_PARAMETER(max_concurrent_kernels, "kernels", "concurrency", event_timing, "exact",
                   "the most kernels, each in a stream of its own, that run on the GPU at once")
GPUPROBE_PARAMETER(kernel_launch_overhead, "us", "concurrency", event_timing, "10 %",
                   "microseconds each launch of an empty kernel takes, launched back to back into "
                   "one stream")
GPUPROBE_NOT_IN_QUICK(kernel_launch_overhead,
                      "too few launches for a stable median (4.5 against 3.5 us)")

// transpose: a matrix transpose through shared memory (analysis/transpose.cpp).
GPUPROBE_PARAMETER(transpose_padding_speedup_float, "x", "transpose", kernel_timing, "10 %",
                   "how many times faster 32x32 float tiles transpose through shared memory with "
                   "one column of padding (no bank conflicts)")
GPUPROBE_PARAMETER(transpose_padding_speedup_double, "x", "transpose", kernel_timing, "10 %",
                   "the same for 32x32 double tiles")
