// Method labels: how a figure was obtained, the vocabulary that every parameter and every
// reference figure (results/reference/) carries. A ratio to a documented figure is shown only
// where the labels match. GPUPROBE_METHOD(label, meaning): see base/parameter_list.hpp.

GPUPROBE_METHOD(pointer_chase,
                "one thread follows pointers stored in the memory under test (`p = *p`): "
                "load-to-use latency with no address arithmetic")
GPUPROBE_METHOD(index_chase,
                "one thread follows indices (`j = a[j]`), the address computed in the loop: the "
                "method of Mei & Chu 2016 and Jia et al. 2018")
GPUPROBE_METHOD(dependent_chain,
                "one dependent chain of the operation under test, one warp, clock64")
GPUPROBE_METHOD(dependent_pair,
                "a dependent pair of operations timed together, as Jia et al. time atomics "
                "(reference rows only: see `result_pair`)")
GPUPROBE_METHOD(result_pair,
                "an atomic whose returned value indexes a load, timed together, minus that load's "
                "own index chase: Jia et al.'s pair as they describe it; not claimed as their "
                "method, whose V100 figures (6 and 36 cycles) are shorter than any L2 round trip")
GPUPROBE_METHOD(throughput_loop, "many independent chains on every SM, results per clock per SM")
GPUPROBE_METHOD(streaming, "whole-chip streaming reads or writes timed with events")
GPUPROBE_METHOD(stride_sweep, "a cold chase or request pattern swept over strides or footprints")
GPUPROBE_METHOD(fine_grained_chase, "per-access latencies of one chase recorded in shared memory")
GPUPROBE_METHOD(eviction_fit,
                "eviction probability of random line sets fitted to replacement models")
GPUPROBE_METHOD(tlb_chase,
                "a chase with one access per page-sized stride over a large virtual range")
GPUPROBE_METHOD(littles_law_sweep,
                "warps x ILP x width swept to the least bytes in flight for 90 % of peak")
GPUPROBE_METHOD(occupancy_sweep, "warps per SM x ILP swept against the peak rate")
GPUPROBE_METHOD(dual_issue_pair,
                "two instruction streams for different pipes in one warp against their solo rates")
GPUPROBE_METHOD(divergence_sweep, "1..32 distinct paths per warp against one")
GPUPROBE_METHOD(event_timing, "host-side CUDA events around launches")
GPUPROBE_METHOD(kernel_timing, "a whole kernel timed with events against a variant")
GPUPROBE_METHOD(clock_vs_globaltimer, "clock64 against %globaltimer on every SM under load")
GPUPROBE_METHOD(host_clock, "the host's steady clock")
GPUPROBE_METHOD(vendor_spec,
                "a documented figure from a vendor's datasheet or whitepaper (reference rows only)")
GPUPROBE_METHOD(stall_count,
                "the stall count in a SASS control word lowered until a dependent consumer reads a "
                "wrong result (Jia et al.; reference rows only)")
GPUPROBE_METHOD(instruction_sequence,
                "inverse throughput of long generated instruction sequences (instruction caches, "
                "register banks; reference rows only)")
GPUPROBE_METHOD(
    sass_inspection,
    "read from the generated SASS or its control words, not timed (reference rows only)")
GPUPROBE_METHOD(library_benchmark,
                "a library routine (cuBLAS GEMM) timed as a whole (reference rows only)")
GPUPROBE_METHOD(
    theoretical_bound,
    "arithmetic on documented unit counts and clocks, not a measurement (reference rows "
    "only)")
GPUPROBE_METHOD(unknown,
                "the source does not say how the figure was obtained: never compared with a ratio")
GPUPROBE_METHOD(copy_engine,
                "copies by the copy engines (`cudaMemcpyAsync`, `cudaMemcpyPeerAsync`) timed with "
                "events, over transfer sizes")
GPUPROBE_METHOD(sm_copy,
                "a grid-stride kernel of 16 B loads and stores on memory another processor owns "
                "(mapped host, a peer GPU)")
GPUPROBE_METHOD(cluster_launch,
                "what thread block cluster launches with one block per SM reveal: the largest "
                "cluster, how many of each size fit (the occupancy calculator), the SMs placed "
                "together, and an L2 chase slowed by one group of SMs streaming")
GPUPROBE_METHOD(nvml_query,
                "read from the driver through NVML (link state, version, rate), not timed: the "
                "physical description a measured figure is checked against")
GPUPROBE_METHOD(nccl_collective,
                "an NCCL collective timed as nccl-tests times it (a host clock around 20 "
                "out-of-place float32 calls, a wait for every stream); algbw = S / t, busbw = "
                "algbw x the collective's factor (nccl-tests' doc/PERFORMANCE.md)")
GPUPROBE_METHOD(energy_fit,
                "NVML's energy counter over whole counter steps while a kernel runs back to back "
                "on a fraction of the SMs, at two or more rates, with windows of every SM resting "
                "(rate 0): power against operations (or bytes) per second, slope = energy per "
                "unit, intercept = static power")
GPUPROBE_METHOD(power_window,
                "NVML's energy counter over whole counter steps with a fixed load: nothing "
                "launched (idle), or every SM holding sleeping warps (static)")
