#pragma once
// DRAM read order: how close a read kernel comes to the theoretical DRAM bandwidth, over the
// choices a read kernel makes: the order in which warps and blocks walk the buffer, the bytes
// each thread loads at once, the cache hints of the load, the blocks per SM, how many SMs
// read, and the bulk-copy engine in place of loads. The best kernel's figure against the
// theoretical peak (memory clock x bus width) says where reads stop.
#include <string>
#include <vector>

#include "base/csv.hpp"
#include "base/family.hpp"
#include "base/observation.hpp"
#include "base/probe.hpp"

namespace gpuprobe::dram_read_order {

// The names of dram_read_order.csv, written by the driver and read by the analyzer and the
// tests; the footprint column is memory_chase::kFootprintColumn (analysis/common/).
constexpr const char* kReadProbe = "read";                     // GB/s of a read kernel of loads
constexpr const char* kReadBulkProbe = "read_bulk";            // GB/s of cp.async.bulk reads
constexpr const char* kTheoreticalProbe = "dram_theoretical";  // 2 x memory clock x bus width
constexpr const char* kOrderColumn = "order";                  // order_name(): grid, block, warp
constexpr const char* kWidthColumn = "width_bytes";            // bytes per access (bulk: per chunk)
constexpr const char* kOpColumn = "op";            // the load's instruction, or cp.async.bulk
constexpr const char* kIlpColumn = "ilp";          // accesses in flight (bulk: stages)
constexpr const char* kThreadsColumn = "threads";  // threads per block
constexpr const char* kBlocksPerSmColumn = "blocks_per_sm";
constexpr const char* kSmsColumn = "sms";                       // the SMs that read
constexpr const char* kMemoryClockColumn = "memory_clock_mhz";  // the theoretical row's inputs
constexpr const char* kBusWidthColumn = "bus_width_bits";

// The theoretical peak as the row `family` records beside its reads (this family and
// bandwidth, whose analyzers both read it).
inline Observation theoretical_row(const std::string& family, const DeviceInfo& d) {
  const double peak = d.theoretical_dram_gbs();
  return {family,
          kTheoreticalProbe,
          {{kMemoryClockColumn, format_number(d.mem_clock_khz / 1e3)},
           {kBusWidthColumn, std::to_string(d.bus_width_bits)}},
          peak,
          "GB/s",
          peak,
          peak,
          peak,
          1};
}

// How the grid walks a buffer of N accesses, each pass front to back:
//   grid:  the whole grid together (thread t reads t, t + T, ...; T threads in the grid);
//   block: each block its own contiguous chunk of N / blocks accesses, its threads together;
//   warp:  each warp its own contiguous slice of N / warps accesses.
enum class Order { grid, block, warp };
const char* order_name(Order o);

// The load variants (the cache operator and hints of every load), by index: the kernels are
// templated on it. ptx is the instruction prefix the PTX must hold; the streaming hints need
// sm_80 (below it the kernel is a trap and the variant is skipped).
struct Hint {
  const char* ptx;
  bool l2_256b;  // carries .L2::256B: the SASS must keep it (LTC256B)
  int min_arch;
};
constexpr Hint kHints[] = {{"ld.global.cg", false, 0},
                           {"ld.global.nc", false, 0},
                           {"ld.global.L1::no_allocate", false, 80},
                           {"ld.global.cg.L2::256B", true, 80},
                           {"ld.global.nc.L1::no_allocate.L2::256B", true, 80}};
constexpr int kHintCount = sizeof(kHints) / sizeof(kHints[0]);

// A thread's accesses are `width` bytes: one 16-byte load, or two adjacent ones (32 B).
constexpr int kLoadBytes = 16;

std::string read_kernel_name(int width, int hint, int ilp);
std::string bulk_kernel_name();

// Where thread t (block b, warp w, lane l) starts and how far it moves per access, in
// accesses, for a buffer of `n` accesses read by `blocks` x `threads` threads with `ilp`
// accesses per round; false when n is not a whole number of rounds.
struct Walk {
  unsigned long long block_step = 0, warp_step = 0, stride = 0, rounds = 0;
};
bool walk_of(Order o, unsigned long long n, int blocks, int threads, int ilp, Walk* out);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"dram_read_order", "dram_read_order.gp"};

// dram_read_bandwidth_best (the best read kernel's GB/s) and dram_read_peak_fraction (it over
// the theoretical peak the family recorded).
std::vector<Parameter> analyze_dram_read_order(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace gpuprobe::dram_read_order
