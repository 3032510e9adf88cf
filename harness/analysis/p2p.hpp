#pragma once
// Several GPUs in one machine: peer-to-peer bandwidth between every ordered pair (copy engine
// and SM kernels, writing into the peer's memory and reading from it, one way and both ways at
// once) and latency; then the fabric under load (one GPU to all others, all others to one, all
// pairs at once); with the link NVML reports (base/node.hpp, in every file's metadata). Pair
// matrices are indexed [device][peer] as nvbandwidth's are: the row is the GPU that initiates
// (its copy engine or its kernel moves the data, its thread chases), the column the GPU whose
// memory it writes or reads.
#include <functional>
#include <string>
#include <vector>

#include "base/family.hpp"
#include "base/node.hpp"
#include "base/observation.hpp"

namespace gpuprobe {

namespace p2p {

// The names of p2p.csv, written by the probe and read by the analysis, the nvbandwidth
// comparison, the exports and the tests. The bandwidth modes' probes (modes(), GB/s):
constexpr const char* kCeWrite = "ce_write";                     // pairs: copy engine writes
constexpr const char* kCeRead = "ce_read";                       // pairs: copy engine reads
constexpr const char* kSmWrite = "sm_write";                     // pairs: kernel stores
constexpr const char* kSmRead = "sm_read";                       // pairs: kernel loads
constexpr const char* kCeWriteBidir = "ce_write_bidir";          // pairs, both ways at once
constexpr const char* kCeReadBidir = "ce_read_bidir";            // the same
constexpr const char* kSmWriteBidir = "sm_write_bidir";          // the same
constexpr const char* kSmReadBidir = "sm_read_bidir";            // the same
constexpr const char* kOneToAllWriteCe = "one_to_all_write_ce";  // one GPU to every other
constexpr const char* kOneToAllReadCe = "one_to_all_read_ce";    // the same
constexpr const char* kAllToOneWriteCe = "all_to_one_write_ce";  // every other GPU to one
constexpr const char* kAllToOneReadCe = "all_to_one_read_ce";    // the same
constexpr const char* kOneToAllWriteSm = "one_to_all_write_sm";  // one GPU to every other
constexpr const char* kOneToAllReadSm = "one_to_all_read_sm";    // the same
constexpr const char* kAllToOneWriteSm = "all_to_one_write_sm";  // every other GPU to one
constexpr const char* kAllToOneReadSm = "all_to_one_read_sm";    // the same
constexpr const char* kAllPairsWriteCe = "all_pairs_write_ce";   // every GPU with every other
constexpr const char* kAllPairsWriteSm = "all_pairs_write_sm";   // the same
// The other probes (the latency's name is also the latency family's: its rows are this one's).
constexpr const char* kLatencyProbe = "latency";  // a thread chasing the peer's memory: ns, cycles
constexpr const char* kLinkProbe = "link";        // the link NVML reports: peer access 1 or 0
// Columns.
constexpr const char* kDeviceColumn = "device";    // the initiating GPU (the matrix's row)
constexpr const char* kPeerColumn = "peer";        // the GPU whose memory it moves (column)
constexpr const char* kPeersColumn = "peers";      // one to all, all to one: the others
constexpr const char* kGpusColumn = "gpus";        // all pairs' total: the GPUs
constexpr const char* kCopiesColumn = "copies";    // all pairs' total: the copies at once
constexpr const char* kClockColumn = "clock_mhz";  // the latency's SM clock
constexpr const char* kLinkColumn = "link";        // the link rows': nvlink, pcie, ...

// nvbandwidth's (v0.8) names of the test cases that some probes share a name with: its words,
// which a rename of the probe must leave as they are.
constexpr const char* kNvbOneToAllWriteCe = "one_to_all_write_ce";  // measured as kOneToAllWriteCe
constexpr const char* kNvbOneToAllReadCe = "one_to_all_read_ce";    // measured as kOneToAllReadCe
constexpr const char* kNvbAllToOneWriteCe = "all_to_one_write_ce";  // measured as kAllToOneWriteCe
constexpr const char* kNvbAllToOneReadCe = "all_to_one_read_ce";    // measured as kAllToOneReadCe
constexpr const char* kNvbOneToAllWriteSm = "one_to_all_write_sm";  // measured as kOneToAllWriteSm
constexpr const char* kNvbAllToOneWriteSm = "all_to_one_write_sm";  // measured as kAllToOneWriteSm

// The key of gpuprobe's export schema (gpuprobe-run, `export --json`) under "node" that holds
// this family's figures: the schema's word, which a rename of the family must leave.
constexpr const char* kExportKey = "p2p";

// Who moves the data: copies issued to a copy engine (cudaMemcpyPeerAsync), or a grid-stride
// kernel of 16 B loads and stores.
enum class Engine { copy_engine, sm };
// The initiating GPU writes its memory into the other's, or reads the other's into its own.
enum class Access { write, read };
enum class Pattern {
  pair,        // device and peer: one copy
  pair_bidir,  // device and peer, each initiating one copy toward the other at once
  one_to_all,  // device (the one) initiates a copy with every other GPU at once
  all_to_one,  // every other GPU initiates a copy with device at once
  all_pairs,   // every GPU initiates a copy with every other at once
};

struct Mode {
  const char* probe;
  Pattern pattern;
  Engine engine;
  Access access;
  const char* what;  // one line, for `gpuprobe list`
  // nvbandwidth's test case that moves the same data the same way ("" none) and the
  // bandwidth_description its JSON carries (testcases_ce.cpp, testcases_sm.cpp of v0.8).
  const char* nvbandwidth_name;
  const char* nvbandwidth_description;
};
// Every bandwidth mode, pairs first; each is a probe of the family and a parameter
// p2p_<probe>_bandwidth.
const std::vector<Mode>& modes();
const Mode* find_mode(const std::string& probe);
std::string parameter_name(const Mode& m);
// Pair modes give a [device][peer] matrix; the others one figure per device, or per node.
bool is_pair(const Mode& m);
// nvbandwidth's bidirectional device-to-device cases report each direction and their sum (three
// matrices in one bandwidth_matrix); gpuprobe's pair_bidir modes measure the sum: compared with
// the sum's rows (the last third), not written under nvbandwidth's name.
bool compares_with_total_rows(const Mode& m);

// One copy of a measurement: bytes flow from `src`'s memory to `dst`'s, moved by `by` (one of
// the two: the GPU whose copy engine or kernel does it).
struct Transfer {
  int src, dst, by;
  bool operator==(const Transfer& o) const { return src == o.src && dst == o.dst && by == o.by; }
};
// The copies one measurement of `m` runs at once on `gpus` GPUs: for a pair mode between
// `device` and `peer`; for one_to_all and all_to_one between `device` and every other GPU; for
// all_pairs every ordered pair (`device`, `peer` unused). Only copies whose initiator may access
// the other's memory (`accessible(by, other)`) are kept.
std::vector<Transfer> transfers(const Mode& m, int device, int peer, int gpus,
                                const std::function<bool(int, int)>& accessible);

// The physical rate, GB/s, that the copies of one measurement of `m` can reach together as the
// node's links are described (base/node.hpp): the pair's (twice, both ways at once), one GPU's
// to every other (`device` the one), or every GPU's own summed (all pairs: `device` -1); a
// pair's alone where all pairs' rows give one (`device` and `peer`). Negative where unknown.
double physical_gbs(const Mode& m, const node::Node& n, int device, int peer);

// value[device][peer]; NaN where not measured (the diagonal, pairs without peer access).
struct Matrix {
  std::string probe, unit;
  std::vector<std::vector<double>> value;
  int gpus() const { return int(value.size()); }
};

// The matrix of one probe's rows (params device, peer), sized to the largest index seen;
// false when the probe has no rows.
bool matrix(const std::vector<Observation>& obs, const std::string& probe, const std::string& unit,
            Matrix* out);
// One figure per device (rows with a device and no peer: one_to_all, all_to_one), NaN where
// not measured, sized to the largest device seen; empty when the probe has no such rows.
std::vector<double> per_device(const std::vector<Observation>& obs, const std::string& probe,
                               const std::string& unit);

// The family, declared once (base/family.hpp).
inline constexpr FamilyDescriptor kFamily{"p2p", "p2p.gp"};

// p2p_<mode>_bandwidth (GB/s): the median over pairs (pair modes) or over devices (one to all,
// all to one), low/high the slowest and fastest, or the node's total (all pairs at once);
// p2p_latency (ns); nvlink_links, nvlink_link_bandwidth, nvlink_bandwidth from the node's
// metadata. A value above the physical rate of the links it crossed is impossible: confidence
// near 0, and the method says so.
std::vector<Parameter> analyze_p2p(const std::vector<Observation>& obs, const Metadata& meta);

}  // namespace p2p
}  // namespace gpuprobe
