#pragma once
// NCCL collectives across GPUs (all-reduce, all-gather, reduce-scatter, broadcast, all-to-all),
// measured and read as nccl-tests measures and reads them (NVIDIA/nccl-tests, src/*.cu and
// doc/PERFORMANCE.md): float32 data, sum, out of place, root 0; a host clock around kIters
// back-to-back calls; algbw = S / t, busbw = algbw x the collective's factor. The counts, the
// sizes and the factors are here, pure C++, so that the probe (microbench/collectives.cu), the
// analysis, `gpuprobe anchor` and the tests read the same ones.
#include <cstddef>
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/observation.hpp"

namespace gpuprobe::collectives {

enum class Collective { all_reduce, all_gather, reduce_scatter, broadcast, all_to_all };
// Every collective, in the order the probe measures them.
const std::vector<Collective>& all();
// The name NCCL gives it, snake_case (kAllReduceProbe): the probe's name.
const char* name(Collective c);
// The collective of a probe name or of an nccl-tests binary ("all_reduce_perf",
// "alltoall_perf"); false when neither.
bool parse(const std::string& text, Collective* out);

// nccl-tests' busbw factor for `ranks` ranks (doc/PERFORMANCE.md, "Summary"): all-reduce
// 2 (n - 1) / n; all-gather, reduce-scatter and all-to-all (n - 1) / n; broadcast 1.
double bus_factor(Collective c, int ranks);

// Element counts of one call at a nominal size of `bytes`, as nccl-tests' *GetCollByteCount
// sets them for 4-byte elements: all-gather, reduce-scatter and all-to-all round each rank's
// share down to a multiple of 16 B. `bytes` is S, the size nccl-tests prints and divides by
// the time (its "size" column: the larger of the send and receive buffers); 0 where the share
// rounds to nothing (nccl-tests prints such rows with 0 B; the probe skips them).
struct Counts {
  size_t send = 0, recv = 0;  // elements in each rank's send and receive buffer
  size_t count = 0;           // the count argument of the NCCL call
  size_t bytes = 0;           // S
};
constexpr size_t kElementBytes = 4;  // float32, nccl-tests' default type
Counts counts(Collective c, size_t nominal_bytes, int ranks);

// algbw and busbw in GB/s (1e9 B/s) of S bytes in `seconds`.
double algbw(double bytes, double seconds);
double busbw(Collective c, int ranks, double bytes, double seconds);
// The algbw or busbw row (unit GB/s, swept `bw` "alg" or "bus") of collective c's time row
// (unit us, swept `bytes` = S): the bandwidth of the time's p95 is the row's p05.
Observation bandwidth_row(const Observation& time_us, Collective c, int ranks, bool bus);

// The nominal sizes swept: 8 B to 1 GiB in x2 steps (nccl-tests -b 8 -e 1G -f 2); --quick
// takes every third (x8 steps), which still ends at 1 GiB.
constexpr size_t kMinBytes = 8;
constexpr size_t kMaxBytes = size_t(1) << 30;
std::vector<size_t> sizes(bool quick);
// Calls per timed batch: nccl-tests' default -n 20.
constexpr int kIters = 20;
// Batches per size (the repetitions p05/p50/p95 are taken over).
int reps(bool quick);
// Communicator sizes one process measures on `gpus` GPUs: 2, 4, 8, ... below `gpus`, and
// `gpus` itself (so that a run with two processes per host has its one-process twin).
std::vector<int> rank_counts(int gpus);

// The names of collectives.csv, written by the probe and read by the analysis, `gpuprobe
// anchor` and the tests. A collective's probe is its name(): the time of one call (us), its
// algbw and busbw (GB/s).
constexpr const char* kAllReduceProbe = "all_reduce";
constexpr const char* kAllGatherProbe = "all_gather";
constexpr const char* kReduceScatterProbe = "reduce_scatter";
constexpr const char* kBroadcastProbe = "broadcast";
constexpr const char* kAllToAllProbe = "all_to_all";
constexpr const char* kBytesColumn = "bytes";  // S, nccl-tests' size of the call
constexpr const char* kRanksColumn = "ranks";  // the communicator's size
constexpr const char* kModeColumn = "mode";    // kOneProcess or kProcessPerGpu
constexpr const char* kBwColumn = "bw";        // a bandwidth row's: "alg" or "bus"

// The row of probe kNcclProbe (unit kVersionUnit) holds the library's NCCL_VERSION_CODE, its
// version text and the NCCL_NVLS_ENABLE in effect; the methods name both.
constexpr const char* kNcclProbe = "nccl";
constexpr const char* kVersionColumn = "version";  // "2.28.3"
constexpr const char* kNvlsColumn = "nvls";        // NCCL_NVLS_ENABLE: 0 or 1
constexpr const char* kVersionUnit = "version";    // the value is NCCL_VERSION_CODE
// The unit of parameter collective_ranks (the catalog's).
constexpr const char* kRanksUnit = "ranks";

// The modes of the `mode` column.
constexpr const char* kOneProcess = "one_process";         // one process drives every GPU
constexpr const char* kProcessPerGpu = "process_per_gpu";  // one process per GPU (a job's ranks)

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"collectives", "collectives.gp"};

// <collective>_busbw (GB/s) at the largest size measured, the interval over the repetitions
// and over the sizes of the plateau it ends; <collective>_latency (us), the time of one call
// at the smallest sizes; collective_ranks, the communicator's size they are read at (the
// largest in the file).
std::vector<Parameter> analyze_collectives(const std::vector<Observation>& obs,
                                           const Metadata& meta);

}  // namespace gpuprobe::collectives
