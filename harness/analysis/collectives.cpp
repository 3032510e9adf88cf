#include "analysis/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/parameter_names.hpp"
#include "base/stats.hpp"

namespace gpuprobe::collectives {

const std::vector<Collective>& all() {
  static const std::vector<Collective> c = {Collective::all_reduce, Collective::all_gather,
                                            Collective::reduce_scatter, Collective::broadcast,
                                            Collective::all_to_all};
  return c;
}

const char* name(Collective c) {
  switch (c) {
    case Collective::all_reduce: return kAllReduceProbe;
    case Collective::all_gather: return kAllGatherProbe;
    case Collective::reduce_scatter: return kReduceScatterProbe;
    case Collective::broadcast: return kBroadcastProbe;
    case Collective::all_to_all: return kAllToAllProbe;
  }
  return "";
}

bool parse(const std::string& text, Collective* out) {
  // nccl-tests names its binaries <name>_perf, all-to-all without the underscores.
  std::string t = text;
  const std::string perf = "_perf";
  if (t.size() > perf.size() && t.compare(t.size() - perf.size(), perf.size(), perf) == 0)
    t.resize(t.size() - perf.size());
  if (t == "alltoall") t = kAllToAllProbe;
  for (Collective c : all())
    if (t == name(c)) {
      *out = c;
      return true;
    }
  return false;
}

double bus_factor(Collective c, int ranks) {
  const double n = ranks;
  switch (c) {
    case Collective::all_reduce: return 2 * (n - 1) / n;
    case Collective::broadcast: return 1;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all: return (n - 1) / n;
  }
  return NAN;
}

Counts counts(Collective c, size_t nominal_bytes, int ranks) {
  Counts k;
  if (ranks < 1) return k;
  const size_t n = size_t(ranks);
  const size_t count = nominal_bytes / kElementBytes;
  // nccl-tests: (count / nranks) & ~(16 / eltSize - 1), a rank's share in whole 16 B.
  const size_t share = (count / n) & ~(16 / kElementBytes - 1);
  switch (c) {
    case Collective::all_reduce:
    case Collective::broadcast: k = {count, count, count, count * kElementBytes}; break;
    case Collective::all_gather: k = {share, share * n, share, share * n * kElementBytes}; break;
    case Collective::reduce_scatter:
      k = {share * n, share, share, share * n * kElementBytes};
      break;
    case Collective::all_to_all:
      k = {share * n, share * n, share, share * n * kElementBytes};
      break;
  }
  return k;
}

double algbw(double bytes, double seconds) { return bytes / 1e9 / seconds; }

double busbw(Collective c, int ranks, double bytes, double seconds) {
  return algbw(bytes, seconds) * bus_factor(c, ranks);
}

Observation bandwidth_row(const Observation& time_us, Collective c, int ranks, bool bus) {
  const double bytes = time_us.param(kBytesColumn);
  auto bw = [&](double us) { return algbw(bytes, us * 1e-6) * (bus ? bus_factor(c, ranks) : 1.0); };
  Observation r = time_us;
  r.params.emplace_back(kBwColumn, bus ? "bus" : "alg");
  r.unit = "GB/s";
  r.value = bw(time_us.value);
  r.p50 = bw(time_us.p50);
  r.p05 = bw(time_us.p95);
  r.p95 = bw(time_us.p05);
  return r;
}

std::vector<size_t> sizes(bool quick) {
  std::vector<size_t> out;
  const int step = quick ? 3 : 1;  // x8 or x2
  for (size_t b = kMinBytes; b <= kMaxBytes; b <<= step) out.push_back(b);
  return out;
}

int reps(bool quick) { return quick ? 3 : 5; }

std::vector<int> rank_counts(int gpus) {
  std::vector<int> out;
  for (int n = 2; n < gpus; n *= 2) out.push_back(n);
  if (gpus >= 2) out.push_back(gpus);
  return out;
}

namespace {

// Sizes whose busbw lies within this fraction of the largest size's share its plateau: the
// tolerance the parameter is held to (docs/parameters.md).
constexpr double kPlateauBand = 0.05;
// The busbw still rose by more than the band over the last step: the value is what the largest
// size gives, but the link may carry more at larger sizes, so it is not its plateau.
constexpr double kRisingConfidence = 0.6;
// Three full runs in a row on one 2 x H200 host moved all_to_all's busbw at 1 GiB by 0.26 %,
// past its batches' 0.16 % (docs/repeatability.md); nccl-tests on the same hosts agrees to 1 %.
constexpr double kBusbwRunToRun = 0.005;
// The latency is the time of the smallest sizes: up to this many of them, none above
// kLatencyMaxBytes (where bytes / bandwidth would start to count).
constexpr size_t kLatencySizes = 3;
constexpr double kLatencyMaxBytes = 4096;
// The smallest sizes' times within this fraction of each other are one latency; more apart,
// the time already depends on the size, and the confidence is halved.
constexpr double kLatencyFlatBand = 0.25;
constexpr double kLatencyNotFlatFactor = 0.5;
// A small call's time is the host's launch path more than the fabric: three full runs in a row
// on one 2 x H200 host gave all_reduce 11.8, 13.0 and 18.7 us at 8 B, each run steady in one
// of two modes (docs/repeatability.md). The interval reaches +-30 %, and the figure stays a
// rough one.
constexpr double kLatencyRunToRun = 0.3;
constexpr double kLatencyConfidence = 0.5;

// The file every parameter comes from.
std::string evidence() { return std::string(kFamily.name) + ".csv"; }

struct Sweep {
  Collective c;
  int ranks;
  std::string mode;
  std::vector<Observation> rows;  // time rows (us), by size
};

// busbw (GB/s) of a time row's p50, p05 and p95 (the fastest time is the highest bandwidth).
struct Bw {
  double value = 0, low = 0, high = 0;
};
Bw bus_of(const Sweep& s, const Observation& o) {
  const double bytes = o.param(kBytesColumn);
  auto bw = [&](double us) { return collectives::busbw(s.c, s.ranks, bytes, us * 1e-6); };
  return {bw(o.value), bw(o.p95), bw(o.p05)};
}

// The sizes at the top whose busbw lies within kPlateauBand of the largest size's, and the
// highest busbw anywhere in the sweep.
struct Plateau {
  size_t sizes = 1;
  Bw span;
  double peak = 0, peak_bytes = 0;
};
Plateau plateau_of(const Sweep& s) {
  const Bw top = bus_of(s, s.rows.back());
  Plateau p{1, top, top.value, s.rows.back().param(kBytesColumn)};
  bool on_plateau = true;
  for (size_t i = s.rows.size() - 1; i-- > 0;) {
    const Bw b = bus_of(s, s.rows[i]);
    if (b.value > p.peak) {
      p.peak = b.value;
      p.peak_bytes = s.rows[i].param(kBytesColumn);
    }
    on_plateau = on_plateau && std::fabs(b.value / top.value - 1) <= kPlateauBand;
    if (!on_plateau) continue;
    ++p.sizes;
    p.span.low = std::min(p.span.low, b.low);
    p.span.high = std::max(p.span.high, b.high);
  }
  return p;
}

Parameter busbw_parameter(const Sweep& s) {
  const Observation& last = s.rows.back();
  const Bw top = bus_of(s, last);
  const Plateau plateau = plateau_of(s);
  const bool rising = plateau.sizes < 2;
  Parameter p;
  p.name = param::collective_busbw(collectives::name(s.c));
  p.value = top.value;
  p.unit = "GB/s";
  p.low = std::min(plateau.span.low, top.value);
  p.high = std::max(plateau.span.high, top.value);
  p.confidence = analysis::spread_confidence(last) * (rising ? kRisingConfidence : 1.0);
  p.method = "nccl_collective: busbw at the largest size, " +
             analysis::bytes_text(last.param(kBytesColumn)) + " (algbw x " +
             analysis::num(collectives::bus_factor(s.c, s.ranks)) + " for " +
             std::to_string(s.ranks) + " ranks, " + s.mode +
             "); nccl-tests' timing (host clock around " + std::to_string(collectives::kIters) +
             " out-of-place float sums), median of " + std::to_string(last.reps) +
             " batches; interval: ";
  if (rising) {
    const std::string before =
        s.rows.size() > 1 ? " (" + analysis::num(bus_of(s, s.rows[s.rows.size() - 2]).value) +
                                " GB/s a step before)"
                          : "";
    p.method += "its batches' p05..p95; no plateau: still rising at the largest size" + before;
  } else {
    p.method += "the batches' p05..p95 over the " + std::to_string(plateau.sizes) +
                " sizes within " + analysis::num(kPlateauBand * 100) + " % of it (its plateau)";
  }
  if (plateau.peak > top.value * (1 + kPlateauBand))
    p.method += "; higher at " + analysis::bytes_text(plateau.peak_bytes) + ": " +
                analysis::num(plateau.peak) + " GB/s";
  analysis::widen_to_repeat(p, kBusbwRunToRun, "what runs in a row moved it");
  p.evidence = evidence();
  return p;
}

// The time of the smallest sizes; false when no size is small enough.
bool latency_parameter(const Sweep& s, Parameter* out) {
  std::vector<double> p50;
  double low = INFINITY, high = 0, conf = 1;
  for (const auto& o : s.rows) {
    if (p50.size() == kLatencySizes || o.param(kBytesColumn) > kLatencyMaxBytes) break;
    p50.push_back(o.value);
    low = std::min(low, o.p05);
    high = std::max(high, o.p95);
    conf = std::min(conf, analysis::spread_confidence(o));
  }
  if (p50.empty()) return false;
  const auto [lo, hi] = std::minmax_element(p50.begin(), p50.end());
  const bool flat = *hi <= *lo * (1 + kLatencyFlatBand);
  Parameter p;
  p.name = param::collective_latency(collectives::name(s.c));
  p.value = median(p50);
  p.unit = "us";
  p.low = std::min(low, p.value);
  p.high = std::max(high, p.value);
  p.confidence = std::min(conf * (flat ? 1.0 : kLatencyNotFlatFactor), kLatencyConfidence);
  p.method = "nccl_collective: time of one call at the smallest sizes, median of " +
             std::to_string(p50.size()) + " sizes from " +
             analysis::bytes_text(s.rows.front().param(kBytesColumn)) + " (" +
             std::to_string(s.ranks) + " ranks, " + s.mode + "; host clock around " +
             std::to_string(collectives::kIters) + " calls); interval: their batches' p05..p95" +
             (flat ? ""
                   : "; the times differ by more than " + analysis::num(kLatencyFlatBand * 100) +
                         " %: not yet size-independent");
  analysis::widen_to_repeat(p, kLatencyRunToRun,
                            "runs in a row on one host took 12 or 19 us at 8 B (two modes of the "
                            "host's launch path; nccl-tests 19 us)");
  p.evidence = evidence();
  *out = p;
  return true;
}

// The time rows of each collective at the largest communicator in the file (the first mode
// seen at that size), by size.
std::vector<Sweep> sweeps(const std::vector<Observation>& obs) {
  int ranks = 0;
  std::string mode;
  for (const auto& o : obs) {
    const double r = o.param(kRanksColumn);
    if (o.unit != "us" || !(r >= 2 && r <= 1e6) || int(r) <= ranks) continue;
    ranks = int(r);
    mode = o.param_text(kModeColumn);
  }
  std::vector<Sweep> out;
  if (ranks == 0) return out;
  for (Collective c : collectives::all()) {
    std::map<double, Observation> by_size;
    for (const auto& o : analysis::finite_rows(obs, collectives::name(c), "us")) {
      const double bytes = o.param(kBytesColumn);
      if (o.param(kRanksColumn) != ranks || o.param_text(kModeColumn) != mode || !(bytes > 0) ||
          !(o.value > 0))
        continue;
      by_size[bytes] = o;
    }
    Sweep s{c, ranks, mode, {}};
    for (auto& [b, o] : by_size) s.rows.push_back(o);
    if (!s.rows.empty()) out.push_back(s);
  }
  return out;
}

// "; NCCL 2.28.3, NCCL_NVLS_ENABLE=0" from the library's row; "" where the file has none.
std::string library_note(const std::vector<Observation>& obs) {
  for (const auto& o : select(obs, kNcclProbe, kVersionUnit))
    return "; NCCL " + o.param_text(kVersionColumn) +
           ", NCCL_NVLS_ENABLE=" + o.param_text(kNvlsColumn);
  return "";
}

}  // namespace

std::vector<Parameter> analyze_collectives(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  const std::vector<Sweep> all = sweeps(obs);
  const std::string library = library_note(obs);
  for (const Sweep& s : all) {
    out.push_back(busbw_parameter(s));
    out.back().method += library;
    Parameter lat;
    if (!latency_parameter(s, &lat)) continue;
    lat.method += library;
    out.push_back(lat);
  }
  if (!all.empty()) {
    const double n = all.front().ranks;
    out.push_back(
        {param::collective_ranks, n, kRanksUnit, n, n, 1.0,
         "nccl_collective: ranks of the communicator the collective figures are read at (" +
             all.front().mode + ")",
         evidence()});
  }
  return out;
}

GPUPROBE_REGISTER_ANALYZER(collectives::kFamily, analyze_collectives);

}  // namespace gpuprobe::collectives
