// The memory system's parameters: the latency ladder, cache geometry, the TLB, shared memory,
// bandwidths and the bytes in flight they need. Entries: see base/parameter_list.hpp.

// latency: pointer chases over footprints (analysis/latency.cpp).
GPUPROBE_PARAMETER(l1_hit_latency, "cycles", "latency", pointer_chase, "3 %",
                   "cycles from issuing a global load to using its value when the data is in the "
                   "L1 cache")
GPUPROBE_PARAMETER(l2_near_hit_latency, "cycles", "latency", pointer_chase, "3 %",
                   "cycles a load takes when it hits the near part of a split L2 (the first L2 "
                   "plateau)")
GPUPROBE_PARAMETER(l2_segment_size, "bytes", "latency", pointer_chase, "10 %",
                   "bytes a chase can cover from the near part of a split L2 before its loads "
                   "reach the far part")
GPUPROBE_NOT_IN_QUICK(l2_segment_size,
                      "the quick footprint sweep is too coarse (22.5 against 26 MiB)")
GPUPROBE_PARAMETER(l2_far_hit_latency, "cycles", "latency", pointer_chase, "3 %",
                   "cycles a load takes when it hits the far part of a split L2 (the other "
                   "partition, or the other die's half)")
GPUPROBE_PARAMETER(l2_size, "bytes", "latency", pointer_chase, "10 %",
                   "bytes the whole L2 cache holds: the footprint past which a chase misses to "
                   "the next level")
GPUPROBE_PARAMETER(dram_latency, "cycles", "latency", pointer_chase, "3 %",
                   "cycles a load takes when it misses every cache and reads DRAM (its page "
                   "still in the TLB)")
GPUPROBE_PARAMETER(readonly_hit_latency, "cycles", "latency", pointer_chase, "3 %",
                   "cycles a load through the read-only path (ld.global.nc) takes when it hits "
                   "that path's cache")
GPUPROBE_PARAMETER(shared_latency, "cycles", "latency", pointer_chase, "3 %",
                   "cycles from issuing a shared-memory load (ld.shared) to using its value, with "
                   "no bank conflict")
GPUPROBE_PARAMETER(constant_hit_latency, "cycles", "latency", pointer_chase, "3 %",
                   "cycles a constant-memory load (ld.const) takes when it hits the constant cache")
GPUPROBE_PARAMETER(l1_size, "bytes", "latency", pointer_chase, "10 %",
                   "bytes the L1 data cache holds when it is given the most of the unified "
                   "L1/shared array")
GPUPROBE_PARAMETER(l2_hit_latency, "cycles", "latency", pointer_chase, "3 %",
                   "cycles a load takes when it hits an L2 that shows one level (not split into "
                   "near and far parts)")
GPUPROBE_PARAMETER(mid_cache_hit_latency, "cycles", "latency", pointer_chase, "3 %",
                   "cycles a load takes when it hits a cache level between L1 and L2, where the "
                   "ladder shows one")
GPUPROBE_PARAMETER(mid_cache_size, "bytes", "latency", pointer_chase, "10 %",
                   "bytes that level between L1 and L2 holds")
GPUPROBE_PARAMETER(llc_hit_latency, "cycles", "latency", pointer_chase, "3 %",
                   "cycles a load takes when it hits a last-level cache between L2 and DRAM, "
                   "where the ladder shows one")
GPUPROBE_PARAMETER(llc_size, "bytes", "latency", pointer_chase, "10 %",
                   "bytes that last-level cache holds")
GPUPROBE_PARAMETER(cache_levels, "levels", "latency", pointer_chase, "exact",
                   "how many cache levels a global load meets before DRAM (a split L2 counts "
                   "once)")

// carveout: the L1 at every shared-memory carve-out (analysis/carveout.cpp).
GPUPROBE_PARAMETER(l1_size_no_miss, "bytes", "carveout", pointer_chase, "10 %",
                   "the largest footprint a chase reads without an L1 miss, over the carve-outs: "
                   "where misses start, below l1_size when replacement is not LRU")

// associativity: eviction of random line sets (analysis/associativity.cpp).
GPUPROBE_PARAMETER(l1_ways, "ways", "associativity", eviction_fit, "exact",
                   "how many lines of one set the L1 data cache holds at once (its "
                   "associativity)")
GPUPROBE_NOT_IN_QUICK(l1_ways,
                      "the quick run's 4488 eviction trials (the full run's 54912) cannot tell 5 "
                      "ways from 6 (H200: 5 against 6; H100: interval 4-7 against 6)")
GPUPROBE_PARAMETER(l1_sets, "sets", "associativity", eviction_fit, "exact",
                   "how many sets the L1 data cache's lines are divided into")
GPUPROBE_NOT_IN_QUICK(l1_sets,
                      "the quick eviction sets are too few for an exact count (309 against 313)")

// granularity: cold chases over strides (analysis/granularity.cpp).
GPUPROBE_PARAMETER(constant_line_size, "bytes", "granularity", stride_sweep, "10 %",
                   "bytes the constant cache fetches on a miss (its line)")
GPUPROBE_PARAMETER(l1_sector_size, "bytes", "granularity", stride_sweep, "10 %",
                   "bytes an L1 miss fetches from L2 (the sector, the smallest unit of a line)")
GPUPROBE_PARAMETER(readonly_line_size, "bytes", "granularity", stride_sweep, "10 %",
                   "bytes a miss of the read-only path (ld.global.nc) fetches from L2")
GPUPROBE_PARAMETER(l2_sector_size, "bytes", "granularity", stride_sweep, "10 %",
                   "bytes an L2 miss fetches from DRAM (the L2's sector)")
GPUPROBE_NOT_IN_QUICK(l2_sector_size,
                      "the quick stride sweep is too coarse to separate 32 B from 64 B (64 against "
                      "32)")
GPUPROBE_PARAMETER(l2_line_size, "bytes", "granularity", stride_sweep, "10 %",
                   "bytes of one L2 line, the unit the L2 allocates: how its capacity shrinks as "
                   "the stride grows past it")

// fine_grained: every access of one chase timed (analysis/fine_grained.cpp).
GPUPROBE_PARAMETER(l1_line_size, "bytes", "fine_grained", fine_grained_chase, "10 %",
                   "bytes of one L1 line, the unit the L1 allocates and evicts")
GPUPROBE_PARAMETER(constant_l15_line_size, "bytes", "fine_grained", fine_grained_chase, "10 %",
                   "bytes the constant cache's second level (L1.5) fetches on a miss")

// tlb: chases at page-sized strides over a large virtual range (analysis/tlb.cpp).
GPUPROBE_PARAMETER(tlb_page_entry_size, "bytes", "tlb", tlb_chase, "10 %",
                   "bytes of memory one TLB entry maps: past this stride the TLB's reach grows "
                   "with the stride")
GPUPROBE_PARAMETER(tlb_l1_coverage, "bytes", "tlb", tlb_chase, "10 %",
                   "bytes of memory the first TLB level maps: the footprint past which loads "
                   "miss it")
GPUPROBE_NOT_IN_QUICK(tlb_l1_coverage,
                      "the quick TLB sweep is too coarse to place the L1 TLB step (H200: 470 "
                      "against 268 MiB)")
GPUPROBE_PARAMETER(tlb_l2_coverage, "bytes", "tlb", tlb_chase, "10 %",
                   "bytes of memory the second TLB level maps")
GPUPROBE_PARAMETER(tlb_miss_latency, "cycles", "tlb", tlb_chase, "3 %",
                   "cycles a load pays on top of an L1 TLB hit when its page is beyond the last "
                   "TLB level's reach")
GPUPROBE_NOT_IN_QUICK(tlb_miss_latency,
                      "the quick sweep never leaves the L1 TLB's reach (7 against 909 cycles)")

// index_chase: the papers' j = a[j] chase, beside the pointer chases (analysis/index_chase.cpp).
GPUPROBE_PARAMETER(shared_latency_index_chase, "cycles", "index_chase", index_chase, "3 %",
                   "shared_latency measured as the papers measure it: one step of j = s[j], the "
                   "index arithmetic included")
GPUPROBE_VARIANT(shared_latency_index_chase,
                 "one ld.shared of j = s[j] and the arithmetic from index to address")
GPUPROBE_PARAMETER(l1_hit_latency_index_chase, "cycles", "index_chase", index_chase, "3 %",
                   "l1_hit_latency measured as the papers measure it: one step of j = a[j] "
                   "hitting L1")
GPUPROBE_VARIANT(l1_hit_latency_index_chase,
                 "one L1-hitting ld.global of j = a[j] (16 KiB, 128 B stride) and its 64-bit "
                 "address arithmetic")
GPUPROBE_PARAMETER(l2_hit_latency_index_chase, "cycles", "index_chase", index_chase, "3 %",
                   "the L2 hit latency measured as the papers measure it: one step of j = a[j] "
                   "hitting L2")
GPUPROBE_VARIANT(l2_hit_latency_index_chase,
                 "one ld.global.cg of j = a[j] hitting L2 (1 MiB, 128 B stride) and its address "
                 "arithmetic")
GPUPROBE_PARAMETER(dram_latency_index_chase, "cycles", "index_chase", index_chase, "3 %",
                   "dram_latency measured as the papers measure it: one step of j = a[j] reading "
                   "DRAM")
GPUPROBE_VARIANT(dram_latency_index_chase,
                 "one ld.global of j = a[j] missing L1 and L2 (flushed; 4224 B stride, "
                 "TLB-resident pages) and its address arithmetic")
GPUPROBE_PARAMETER(atomic_shared_latency_result_pair, "cycles", "index_chase", result_pair, "5 %",
                   "cycles of one shared-memory atomicAdd whose result the next load depends on, "
                   "that load's own time taken off")
GPUPROBE_VARIANT(atomic_shared_latency_result_pair,
                 "atomicAdd on shared whose result indexes a shared load, minus the shared index "
                 "chase")
GPUPROBE_PARAMETER(atomic_global_latency_result_pair, "cycles", "index_chase", result_pair, "5 %",
                   "cycles of one global atomicAdd whose result the next load depends on, that "
                   "load's own time taken off")
GPUPROBE_VARIANT(atomic_global_latency_result_pair,
                 "atomicAdd on global whose result indexes an L1-hitting load, minus the L1 index "
                 "chase")
GPUPROBE_NOT_IN_QUICK(atomic_global_latency_result_pair,
                      "as atomic_global_latency_nocontention (281 against 438 cycles; the pair "
                      "steps over 256 lines)")

// shared_banks: conflict curves over strides and widths (analysis/shared_banks.cpp).
GPUPROBE_PARAMETER(shared_bank_count, "banks", "shared_banks", stride_sweep, "exact",
                   "how many banks shared memory has: a warp's loads that fall in distinct banks "
                   "are served in one pass")
GPUPROBE_ALIAS("shared_banks", shared_bank_count,
               "older runs wrote it; the family's name alone did not say that the "
               "number is a count of banks")
GPUPROBE_PARAMETER(shared_bank_width, "bytes", "shared_banks", stride_sweep, "10 %",
                   "bytes one shared-memory bank serves per pass (its word)")
GPUPROBE_PARAMETER(shared_bandwidth_per_sm, "B/clk/SM", "shared_banks", throughput_loop, "5 %",
                   "bytes per clock one SM reads from its shared memory without bank conflicts, "
                   "every SM busy")
GPUPROBE_PARAMETER(shared_conflict_penalty_per_way, "cycles", "shared_banks", dependent_chain,
                   "3 %",
                   "cycles one more lane on another row of the same bank adds to a warp's "
                   "shared-memory load")

// bandwidth: whole-chip streaming (analysis/bandwidth.cpp).
GPUPROBE_PARAMETER(dram_read_bandwidth, "GB/s", "bandwidth", streaming, "5 %",
                   "GB/s the whole chip reads from DRAM at best")
GPUPROBE_PARAMETER(dram_write_bandwidth, "GB/s", "bandwidth", streaming, "5 %",
                   "GB/s the whole chip writes to DRAM at best")
GPUPROBE_PARAMETER(dram_copy_bandwidth, "GB/s", "bandwidth", streaming, "5 %",
                   "GB/s the whole chip copies one DRAM buffer to another, bytes read and "
                   "written both counted")
GPUPROBE_PARAMETER(l2_read_bandwidth, "GB/s", "bandwidth", streaming, "5 %",
                   "GB/s the whole chip reads from data resident in L2 (up to half of the L2, "
                   "one part of a split L2)")
GPUPROBE_NOT_IN_QUICK(l2_read_bandwidth,
                      "the quick L2-resident stream is too short to reach the peak (7.5 against "
                      "8.8 TB/s)")
GPUPROBE_PARAMETER(l1_bandwidth_per_sm, "B/clk/SM", "bandwidth", streaming, "5 %",
                   "bytes per clock one SM reads from its L1 cache, every SM busy")

// bytes_in_flight: Little's law (analysis/bytes_in_flight.cpp).
GPUPROBE_PARAMETER(dram_bytes_in_flight_90pct, "bytes", "bytes_in_flight", littles_law_sweep,
                   "10 %",
                   "bytes each SM must have requested and not yet received to read DRAM at 90 % "
                   "of its peak rate")
GPUPROBE_NOT_IN_QUICK(dram_bytes_in_flight_90pct,
                      "the quick warps x ILP grid is too coarse (24 against 15.6 KiB)")
GPUPROBE_PARAMETER(l2_bytes_in_flight_90pct, "bytes", "bytes_in_flight", littles_law_sweep, "10 %",
                   "bytes each SM must have requested and not yet received to read L2 at 90 % "
                   "of its peak rate")
GPUPROBE_NOT_IN_QUICK(l2_bytes_in_flight_90pct,
                      "the quick warps x ILP grid is too coarse (31 against 15.7 KiB)")

// dram_read_order: read kernels of every order, width and load (analysis/dram_read_order.cpp).
GPUPROBE_PARAMETER(dram_read_bandwidth_best, "GB/s", "dram_read_order", streaming, "5 %",
                   "GB/s the fastest of many DRAM read kernels (orders, widths, bulk copies) "
                   "reaches")
GPUPROBE_NOT_IN_QUICK(dram_read_bandwidth_best,
                      "the quick run reads with 3 of the full sweep's 27 kernels, so its best is "
                      "another quantity")
GPUPROBE_PARAMETER(dram_read_peak_fraction, "ratio", "dram_read_order", streaming, "5 %",
                   "dram_read_bandwidth_best over the theoretical DRAM rate (2 x memory clock x "
                   "bus width)")
GPUPROBE_NOT_IN_QUICK(dram_read_peak_fraction, "as dram_read_bandwidth_best")
