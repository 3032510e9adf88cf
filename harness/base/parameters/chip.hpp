// The chip's layout and the run itself: L2 partitions and where SMs sit, thread block clusters,
// the measured clock. Entries: see base/parameter_list.hpp.

// l2_topology: every SM's first reads of L2-resident lines, and cluster placements
// (analysis/l2_topology.cpp).
GPUPROBE_PARAMETER(l2_partitions, "partitions", "l2_topology", stride_sweep, "exact",
                   "how many parts the L2 is split into, as the SMs see them (near lines for some "
                   "SMs are far for others)")
GPUPROBE_NUMBERED(l2_near_sm_count, "l2_near_sm_count_<g>", "SMs", "l2_topology", stride_sweep,
                  "5 %",
                  "how many SMs have L2 part g near them (parts numbered by the lowest SM near "
                  "each)")
GPUPROBE_PARAMETER(l2_near_hit_latency_sm_spread, "cycles", "l2_topology", stride_sweep, "30 %",
                   "how far apart the SMs' near L2 hit latencies lie: the slowest SM's median "
                   "minus the fastest's")
GPUPROBE_PARAMETER(l2_far_hit_latency_sm_spread, "cycles", "l2_topology", stride_sweep, "30 %",
                   "how far apart the SMs' far L2 hit latencies lie: the slowest SM's median "
                   "minus the fastest's")
GPUPROBE_PARAMETER(gpc_count, "GPCs", "l2_topology", cluster_launch, "exact",
                   "how many graphics processing clusters (GPCs) the chip's SMs are grouped in")
GPUPROBE_PARAMETER(tpc_count, "TPCs", "l2_topology", cluster_launch, "exact",
                   "how many texture processing clusters (pairs of SMs that launch together) the "
                   "chip has")

// clusters: thread block clusters and distributed shared memory (analysis/clusters.cpp).
GPUPROBE_PARAMETER(dsm_latency, "cycles", "clusters", pointer_chase, "5 %",
                   "cycles one load from another SM's shared memory in the same cluster takes "
                   "(the smallest cluster)")
GPUPROBE_PARAMETER(dsm_latency_own_sm, "cycles", "clusters", pointer_chase, "5 %",
                   "cycles one load from the block's own shared memory takes through its "
                   "cluster-wide address")
GPUPROBE_PARAMETER(dsm_latency_largest_cluster, "cycles", "clusters", pointer_chase, "5 %",
                   "dsm_latency in the largest cluster that launched")
GPUPROBE_PARAMETER(dsm_bandwidth_per_sm, "B/clk/SM", "clusters", throughput_loop, "10 %",
                   "bytes per clock each SM reads from another SM's shared memory in its cluster, "
                   "every SM busy")
GPUPROBE_PARAMETER(cluster_sync_latency, "cycles", "clusters", dependent_chain, "10 %",
                   "cycles of one cluster-wide barrier (cluster.sync()) in the smallest cluster")
GPUPROBE_PARAMETER(cluster_sync_latency_largest_cluster, "cycles", "clusters", dependent_chain,
                   "10 %", "cluster_sync_latency in the largest cluster that launched")
GPUPROBE_PARAMETER(cluster_sync_relaxed_latency, "cycles", "clusters", dependent_chain, "10 %",
                   "cycles of one cluster-wide barrier that does not publish earlier writes "
                   "(arrive.relaxed + wait)")
GPUPROBE_PARAMETER(cluster_size_max, "blocks", "clusters", cluster_launch, "exact",
                   "the most blocks, one per SM, that one thread block cluster can hold and still "
                   "launch")

// run: written by the runner for the whole run (program/runner.cpp).
GPUPROBE_PARAMETER(sm_clock_measured, "MHz", "run", clock_vs_globaltimer, "2 %",
                   "the SM clock during the run, clock64 against the global timer on every SM, "
                   "the median over the families")
GPUPROBE_PARAMETER(suite_wall_time, "s", "run", host_clock, "not compared (the run's own time)",
                   "seconds the whole run took")
