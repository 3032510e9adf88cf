// The node: links to the host and between GPUs. Entries: see base/parameter_list.hpp.

// host_link: copies between host and device, and loads from host memory
// (analysis/host_link.cpp).
GPUPROBE_PARAMETER(h2d_bandwidth_pinned, "GB/s", "host_link", copy_engine, "10 %",
                   "GB/s a copy engine moves from pinned host memory to the device, large copies")
GPUPROBE_PARAMETER(d2h_bandwidth_pinned, "GB/s", "host_link", copy_engine, "10 %",
                   "GB/s a copy engine moves from the device to pinned host memory, large copies")
GPUPROBE_PARAMETER(bidir_bandwidth_pinned, "GB/s", "host_link", copy_engine, "10 %",
                   "GB/s of both directions together when pinned copies run each way at once")
GPUPROBE_PARAMETER(h2d_bandwidth_pageable, "GB/s", "host_link", copy_engine, "25 %",
                   "GB/s of copies from pageable host memory to the device, 256 MiB and larger "
                   "(the rate that lasts)")
GPUPROBE_NOT_IN_QUICK(h2d_bandwidth_pageable,
                      "the quick sizes stop at 64 MiB, below the 256 MiB from which the sustained "
                      "rate is read (H100: 16.7 GB/s at 64 MiB against 10.7 at 1 GiB)")
GPUPROBE_PARAMETER(d2h_bandwidth_pageable, "GB/s", "host_link", copy_engine, "25 %",
                   "GB/s of copies from the device to pageable host memory, 256 MiB and larger "
                   "(the rate that lasts)")
GPUPROBE_NOT_IN_QUICK(d2h_bandwidth_pageable, "as h2d_bandwidth_pageable")
GPUPROBE_PARAMETER(h2d_bandwidth_pageable_peak, "GB/s", "host_link", copy_engine, "25 %",
                   "the best GB/s of copies from pageable host memory to the device, at any size "
                   "(the host's caches may hold the source)")
GPUPROBE_PARAMETER(d2h_bandwidth_pageable_peak, "GB/s", "host_link", copy_engine, "25 %",
                   "the best GB/s of copies from the device to pageable host memory, at any size")
GPUPROBE_NOT_IN_QUICK(d2h_bandwidth_pageable_peak,
                      "the quick sizes stop at 64 MiB, where pageable D2H copies still rise "
                      "(H200: 13.7 GB/s at 64 MiB against 17.4 at 256 MiB)")
GPUPROBE_PARAMETER(h2d_bandwidth_sm, "GB/s", "host_link", sm_copy, "10 %",
                   "GB/s the SMs' own loads read from mapped pinned host memory")
GPUPROBE_PARAMETER(d2h_bandwidth_sm, "GB/s", "host_link", sm_copy, "10 %",
                   "GB/s the SMs' own stores write to mapped pinned host memory")
GPUPROBE_PARAMETER(host_mapped_latency, "ns", "host_link", pointer_chase, "10 %",
                   "nanoseconds one load from mapped host memory takes, one thread following "
                   "pointers there")

// p2p: copies and loads between the GPUs of a node, every ordered pair (analysis/p2p.cpp). A
// pair mode's value is the median over the ordered pairs; a one-to-all or all-to-one mode's the
// median over the GPUs taken as the one.
GPUPROBE_PARAMETER(p2p_ce_write_bandwidth, "GB/s", "p2p", copy_engine, "10 %",
                   "GB/s a GPU's copy engine writes into a peer GPU's memory")
GPUPROBE_ALIAS("p2p_write_bandwidth_ce", p2p_ce_write_bandwidth,
               "the runs of 2026-11-25 wrote it; each mode of p2p is named after its engine, "
               "access and load since the family measures them all")
GPUPROBE_PARAMETER(p2p_ce_read_bandwidth, "GB/s", "p2p", copy_engine, "10 %",
                   "GB/s a GPU's copy engine reads from a peer GPU's memory into its own")
GPUPROBE_PARAMETER(p2p_sm_write_bandwidth, "GB/s", "p2p", sm_copy, "10 %",
                   "GB/s a GPU's kernel stores into a peer GPU's memory")
GPUPROBE_PARAMETER(p2p_sm_read_bandwidth, "GB/s", "p2p", sm_copy, "10 %",
                   "GB/s a GPU's kernel loads from a peer GPU's memory")
GPUPROBE_ALIAS("p2p_read_bandwidth_sm", p2p_sm_read_bandwidth,
               "the same renaming: engine (sm) first, then the access (read)")
GPUPROBE_PARAMETER(p2p_ce_write_bidir_bandwidth, "GB/s", "p2p", copy_engine, "10 %",
                   "GB/s of both directions together when two GPUs' copy engines write into each "
                   "other at once")
GPUPROBE_ALIAS("p2p_bidir_bandwidth_ce", p2p_ce_write_bidir_bandwidth,
               "the same renaming; the old name did not say that the copy engines write")
GPUPROBE_PARAMETER(p2p_ce_read_bidir_bandwidth, "GB/s", "p2p", copy_engine, "10 %",
                   "GB/s of both directions together when two GPUs' copy engines read from each "
                   "other at once")
GPUPROBE_PARAMETER(p2p_sm_write_bidir_bandwidth, "GB/s", "p2p", sm_copy, "10 %",
                   "GB/s of both directions together when two GPUs' kernels store into each other "
                   "at once")
GPUPROBE_PARAMETER(p2p_sm_read_bidir_bandwidth, "GB/s", "p2p", sm_copy, "10 %",
                   "GB/s of both directions together when two GPUs' kernels load from each other "
                   "at once")
GPUPROBE_ALIAS("p2p_bidir_bandwidth_sm", p2p_sm_read_bidir_bandwidth,
               "the same renaming; the old name did not say that the SMs load")
GPUPROBE_PARAMETER(p2p_one_to_all_write_ce_bandwidth, "GB/s", "p2p", copy_engine, "10 %",
                   "GB/s one GPU's copy engines write into all the other GPUs at once, in all")
GPUPROBE_PARAMETER(p2p_one_to_all_read_ce_bandwidth, "GB/s", "p2p", copy_engine, "10 %",
                   "GB/s one GPU's copy engines read from all the other GPUs at once, in all")
GPUPROBE_PARAMETER(p2p_all_to_one_write_ce_bandwidth, "GB/s", "p2p", copy_engine, "10 %",
                   "GB/s all the other GPUs' copy engines write into one GPU at once, in all")
GPUPROBE_PARAMETER(p2p_all_to_one_read_ce_bandwidth, "GB/s", "p2p", copy_engine, "10 %",
                   "GB/s all the other GPUs' copy engines read from one GPU at once, in all")
GPUPROBE_PARAMETER(p2p_one_to_all_write_sm_bandwidth, "GB/s", "p2p", sm_copy, "10 %",
                   "GB/s one GPU's kernels store into all the other GPUs at once, in all")
GPUPROBE_PARAMETER(p2p_one_to_all_read_sm_bandwidth, "GB/s", "p2p", sm_copy, "10 %",
                   "GB/s one GPU's kernels load from all the other GPUs at once, in all")
GPUPROBE_PARAMETER(p2p_all_to_one_write_sm_bandwidth, "GB/s", "p2p", sm_copy, "10 %",
                   "GB/s all the other GPUs' kernels store into one GPU at once, in all")
GPUPROBE_PARAMETER(p2p_all_to_one_read_sm_bandwidth, "GB/s", "p2p", sm_copy, "10 %",
                   "GB/s all the other GPUs' kernels load from one GPU at once, in all")
GPUPROBE_PARAMETER(p2p_all_pairs_write_ce_bandwidth, "GB/s", "p2p", copy_engine, "10 %",
                   "GB/s the whole node moves when every GPU's copy engines write into every "
                   "other GPU at once")
GPUPROBE_PARAMETER(p2p_all_pairs_write_sm_bandwidth, "GB/s", "p2p", sm_copy, "10 %",
                   "GB/s the whole node moves when every GPU's kernels store into every other GPU "
                   "at once")
GPUPROBE_PARAMETER(p2p_latency, "ns", "p2p", pointer_chase, "10 %",
                   "nanoseconds one load from a peer GPU's memory takes, one thread following "
                   "pointers there")
GPUPROBE_PARAMETER(nvlink_links, "links", "p2p", nvml_query, "exact",
                   "active NVLink links per GPU, as the driver reports them")
GPUPROBE_PARAMETER(nvlink_link_bandwidth, "GB/s", "p2p", nvml_query, "1 %",
                   "one NVLink link's signalling rate per direction, as the driver reports it")
GPUPROBE_PARAMETER(nvlink_bandwidth, "GB/s", "p2p", nvml_query, "1 %",
                   "a GPU's NVLink links x the link rate, per direction: the physical rate the "
                   "p2p figures are held to")

// collectives: NCCL's collectives over every GPU of the run, as nccl-tests times them
// (analysis/collectives.cpp), read at the largest communicator.
GPUPROBE_PARAMETER(all_reduce_busbw, "GB/s", "collectives", nccl_collective, "5 %",
                   "nccl-tests' bus bandwidth of an all-reduce at the largest size measured")
GPUPROBE_PARAMETER(all_gather_busbw, "GB/s", "collectives", nccl_collective, "5 %",
                   "nccl-tests' bus bandwidth of an all-gather at the largest size measured")
GPUPROBE_PARAMETER(reduce_scatter_busbw, "GB/s", "collectives", nccl_collective, "5 %",
                   "nccl-tests' bus bandwidth of a reduce-scatter at the largest size measured")
GPUPROBE_PARAMETER(broadcast_busbw, "GB/s", "collectives", nccl_collective, "5 %",
                   "nccl-tests' bus bandwidth of a broadcast at the largest size measured")
GPUPROBE_PARAMETER(all_to_all_busbw, "GB/s", "collectives", nccl_collective, "5 %",
                   "nccl-tests' bus bandwidth of an all-to-all at the largest size measured")
GPUPROBE_PARAMETER(all_reduce_latency, "us", "collectives", nccl_collective, "15 %",
                   "microseconds of one all-reduce call at the smallest sizes (4 KiB and less)")
GPUPROBE_PARAMETER(all_gather_latency, "us", "collectives", nccl_collective, "15 %",
                   "microseconds of one all-gather call at the smallest sizes (4 KiB and less)")
GPUPROBE_PARAMETER(reduce_scatter_latency, "us", "collectives", nccl_collective, "15 %",
                   "microseconds of one reduce-scatter call at the smallest sizes (4 KiB and less)")
GPUPROBE_PARAMETER(broadcast_latency, "us", "collectives", nccl_collective, "15 %",
                   "microseconds of one broadcast call at the smallest sizes (4 KiB and less)")
GPUPROBE_PARAMETER(all_to_all_latency, "us", "collectives", nccl_collective, "15 %",
                   "microseconds of one all-to-all call at the smallest sizes (4 KiB and less)")
GPUPROBE_PARAMETER(collective_ranks, "ranks", "collectives", nccl_collective, "exact",
                   "how many ranks (one GPU each) the communicator had that the figures above "
                   "were read at: the run's largest")
