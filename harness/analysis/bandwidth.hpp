#pragma once
// Bandwidth: the peak bandwidth of each memory level (the bandwidth family).
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::bandwidth {

// The names of bandwidth.csv, written by the driver and read by the analyzer, the tests and
// the model GPUs; the footprint column is memory_chase::kFootprintColumn (analysis/common/),
// the theoretical row dram_read_order::theoretical_row's.
constexpr const char* kReadProbe = "read";                   // GB/s of streaming reads
constexpr const char* kReadSlicesProbe = "read_slices";      // GB/s, each warp its own slice
constexpr const char* kReadBulkProbe = "read_bulk";          // GB/s of cp.async.bulk reads
constexpr const char* kWriteProbe = "write";                 // GB/s of streaming stores
constexpr const char* kWriteBulkProbe = "write_bulk";        // GB/s of cp.async.bulk writes
constexpr const char* kCopyProbe = "copy";                   // GB/s, bytes read and written
constexpr const char* kL1ReadProbe = "l1_read";              // B/clk/SM (and GB/s over the chip)
constexpr const char* kWidthColumn = "width_bytes";          // bytes per access (bulk: per chunk)
constexpr const char* kIlpColumn = "ilp";                    // accesses in flight (bulk: stages)
constexpr const char* kOpColumn = "op";                      // the access's instruction
constexpr const char* kL2FractionColumn = "l2_fraction";     // footprint over the L2 size
constexpr const char* kRoundColumn = "round_bytes";          // what one round of the grid reads
constexpr const char* kPassesColumn = "passes";              // a store's passes per repetition
constexpr const char* kBlocksPerSmColumn = "blocks_per_sm";  // a bulk copy's blocks per SM
constexpr const char* kFootprintPerSmColumn = "footprint_per_sm_bytes";  // L1 reads: per SM
constexpr const char* kThreadsPerSmColumn = "threads_per_sm";            // L1 reads: per SM

// dram_read_bandwidth, dram_write_bandwidth, dram_copy_bandwidth, l2_read_bandwidth (GB/s),
// l1_bandwidth_per_sm (B/clk/SM), each the best configuration measured; the DRAM ones quote
// their fraction of the theoretical peak (row dram_theoretical) in the method.
std::vector<Parameter> analyze_bandwidth(const std::vector<Observation>& obs, const Metadata& meta);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"bandwidth", "bandwidth.gp"};

}  // namespace gpuprobe::bandwidth
