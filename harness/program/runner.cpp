#include "program/runner.hpp"

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "gpu/cuda.cuh"
#include "base/catalog.hpp"
#include "base/operating_point.hpp"
#include "base/csv.hpp"
#include "base/data_paths.hpp"
#include "app/nvbandwidth_json.hpp"
#include "base/observation.hpp"
#include "app/reference.hpp"
#include "app/report.hpp"
#include "app/run_analysis.hpp"
#include "base/run_dir.hpp"
#include "base/signals.hpp"
#include "base/stats.hpp"
#include "app/summary.hpp"
#include "base/version.hpp"
#include "gpu/device.hpp"
#include "gpu/node_probe.hpp"
#include "gpu/nvml.hpp"
#include "gpu/power_sampler.hpp"
#include "gpu/sass_check.hpp"
#include "program/ranks.hpp"

namespace gpuprobe {

namespace {

using Clock = std::chrono::steady_clock;

// The operating point is read from NVML this often through the whole run (power_trace.csv):
// 40 readings a second, a few thousand rows for a full run.
constexpr std::chrono::milliseconds kTracePeriod{25};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Keeps every Google Benchmark run so that one JSON document covers the whole suite, however
// many times RunSpecifiedBenchmarks was called.
class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    all_.insert(all_.end(), runs.begin(), runs.end());
  }
  std::string json() const {
    std::ostringstream out, err;
    benchmark::JSONReporter json;
    json.SetOutputStream(&out);
    json.SetErrorStream(&err);
    Context ctx;
    json.ReportContext(ctx);
    if (!all_.empty()) json.ReportRuns(all_);
    json.Finalize();
    return out.str();
  }

 private:
  std::vector<Run> all_;
};

// The status line on stderr: rewritten in place on a terminal, one line per family otherwise.
class Progress {
 public:
  Progress() : tty_(isatty(STDERR_FILENO) != 0) {}
  void family(size_t index, size_t total, const std::string& name) {
    prefix_ = "[" + std::to_string(index) + "/" + std::to_string(total) + "] " + name;
    t0_ = Clock::now();
    if (!tty_) std::fprintf(stderr, "%s\n", prefix_.c_str());
    show("");
  }
  void show(const std::string& what) {
    if (!tty_) return;
    std::string line = prefix_ + (what.empty() ? "" : " " + what) + "  (" +
                       fixed(seconds_since(t0_), 1) + " s)";
    if (line.size() > 110) line.resize(110);
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
  }
  void done(const std::string& text) {
    if (tty_) std::fprintf(stderr, "\r\033[K");
    std::fprintf(stderr, "%s %s\n", prefix_.c_str(), text.c_str());
  }

 private:
  bool tty_;
  std::string prefix_;
  Clock::time_point t0_ = Clock::now();
};

// A probe that was not measured: invalid (its code check failed) or skipped (this device
// cannot run it).
struct ProbeNote {
  std::string family, probe, why;
  bool operator==(const ProbeNote& o) const {
    return family == o.family && probe == o.probe && why == o.why;
  }
};

class FamilyContext : public RunContext {
 public:
  FamilyContext(const ProbeFamily& fam, const DeviceInfo& dev, const Options& opt, double mhz,
                CollectingReporter& reporter, Progress& progress,
                std::vector<ProbeNote>& invalid, std::vector<ProbeNote>& skipped)
      : fam_(fam), dev_(dev), opt_(opt), mhz_(mhz), reporter_(reporter), progress_(progress),
        invalid_(invalid), skipped_(skipped) {}

  const DeviceInfo& device() const override { return dev_; }
  bool quick() const override { return opt_.quick; }
  double sm_clock_mhz() const override { return mhz_; }
  bool enabled(const std::string& probe) const override {
    return filter_matches(opt_.filter, fam_.name() + "/" + probe);
  }
  void progress(const std::string& what) override { progress_.show(what); }
  void record(const Observation& obs) override {
    Observation o = obs;
    o.family = fam_.name();
    obs_.push_back(o);
  }
  void invalid(const std::string& probe, const std::string& why) override {
    invalid_.push_back({fam_.name(), probe, why});
    std::fprintf(stderr, "gpuprobe: %s/%s is invalid: %s\n", fam_.name().c_str(), probe.c_str(),
                 why.c_str());
  }
  void skip(const std::string& probe, const std::string& why) override {
    ProbeNote note{fam_.name(), probe, why};
    if (std::find(skipped_.begin(), skipped_.end(), note) != skipped_.end()) return;
    skipped_.push_back(note);
    progress_.show(probe + " skipped: " + why);
  }

  Observation measure(const Point& point, const std::function<Sample()>& rep) override {
    throw_if_stopped();  // a stop request ends the family here, between points
    std::string name = fam_.name() + "/" + point.probe;
    for (const auto& [k, v] : point.params) name += "/" + k + ":" + v;
    progress_.show(name.substr(fam_.name().size() + 1));
    rep();  // warm-up: module load, first-touch, caches as the point means them

    std::vector<double> values;
    std::string error;
    const int reps = std::max(1, point.reps);
    benchmark::ClearRegisteredBenchmarks();
    auto* b = benchmark::RegisterBenchmark(name.c_str(), [&](benchmark::State& st) {
      for (auto _ : st) {
        Sample s;
        try {
          s = rep();
        } catch (const std::exception& e) {
          error = e.what();
          st.SkipWithError(error.c_str());
          break;
        }
        st.SetIterationTime(std::max(s.seconds, 1e-12));
        values.push_back(s.value);
      }
      if (!values.empty()) st.counters[point.unit] = median(values);
      if (point.bytes_per_rep > 0)
        st.SetBytesProcessed(static_cast<int64_t>(point.bytes_per_rep * static_cast<double>(values.size())));
    });
    b->UseManualTime()->Iterations(reps)->Unit(benchmark::kMicrosecond);
    benchmark::RunSpecifiedBenchmarks(&reporter_, "all");
    benchmark::ClearRegisteredBenchmarks();
    if (!error.empty()) throw std::runtime_error(name + ": " + error);
    if (values.empty()) throw std::runtime_error(name + ": no repetitions ran");

    Summary s = summarize(values);
    Observation o{fam_.name(), point.probe, point.params, s.p50, point.unit,
                  s.p05,       s.p50,       s.p95,         s.n};
    obs_.push_back(o);
    if (point.unit == "cycles") obs_.push_back(o.scaled(1e3 / mhz_, "ns"));
    return o;
  }

  const std::vector<Observation>& observations() const { return obs_; }

 private:
  const ProbeFamily& fam_;
  const DeviceInfo& dev_;
  const Options& opt_;
  double mhz_;
  CollectingReporter& reporter_;
  Progress& progress_;
  std::vector<ProbeNote>& invalid_;
  std::vector<ProbeNote>& skipped_;
  std::vector<Observation> obs_;
};

std::vector<ProbeFamily*> sorted_families() {
  std::vector<ProbeFamily*> out;
  for (auto& f : probe_families()) out.push_back(f.get());
  std::sort(out.begin(), out.end(),
            [](const ProbeFamily* a, const ProbeFamily* b) { return a->name() < b->name(); });
  return out;
}

bool family_selected(const ProbeFamily& f, const std::string& filter) {
  for (const auto& p : f.probes())
    if (filter_matches(filter, f.name() + "/" + p.name)) return true;
  return false;
}

std::string default_reference() {
  std::string found = default_reference_path();
  return found.empty() ? "results/reference/documented_figures.csv" : found;
}

// The CUDA runtime's UUID of the device: NVML's read another way, a cross-check of gpu_uuid.
std::string cuda_uuid(int ordinal) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  return format_gpu_uuid(reinterpret_cast<const unsigned char*>(prop.uuid.bytes));
}

Metadata device_metadata(const DeviceInfo& d, const NvmlReading& nv, CardIdentity card) {
  Metadata m = {
      {"gpu", d.name},
      {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
      {"sm_count", std::to_string(d.sm_count)},
      {"pci_bus_id", d.pci_bus_id},
      {"driver_version", nv.driver.empty() ? std::to_string(d.driver_version) : nv.driver},
      {"cuda_driver_api", std::to_string(d.driver_version)},
      {"runtime_version", std::to_string(d.runtime_version)},
      {"l2_bytes", std::to_string(d.l2_bytes)},
      {"shared_per_sm_bytes", std::to_string(d.shared_per_sm)},
      {"global_mem_bytes", std::to_string(d.global_mem_bytes)},
      {"memory_clock_mhz", fixed(d.mem_clock_khz / 1e3, 0) + " (cudaDevAttrMemoryClockRate, peak)"},
      {"memory_bus_width_bits", std::to_string(d.bus_width_bits)},
      {"nominal_sm_clock_mhz", fixed(d.nominal_sm_clock_khz / 1e3, 0) + " (attribute; not used)"},
      {"ecc", nv.ecc_current >= 0 ? (nv.ecc_current ? "on" : "off") : (d.ecc ? "on" : "off")},
  };
  card.cuda_uuid = cuda_uuid(d.ordinal);
  for (auto& kv : card_metadata(card))
    m.push_back(std::move(kv));  // which card, not only which model
  if (nv.available) {
    m.emplace_back("power_limit_w", fixed(nv.power_limit_w, 0));
    m.emplace_back("nvml_max_sm_clock_mhz", std::to_string(nv.max_sm_clock_mhz));
    m.emplace_back("nvml_max_mem_clock_mhz", std::to_string(nv.max_mem_clock_mhz));
  } else {
    m.emplace_back("nvml", "unavailable: " + nv.why_unavailable);
  }
  for (auto& kv : node::to_metadata(read_node())) m.push_back(std::move(kv));  // every GPU, its links
  return m;
}

// The command as typed, its absolute paths shortened to ".../<last part>": a run names no
// place on the machine that made it.
std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return relative_text(s, "");
}

// A sticky CUDA error poisons the context: start a fresh one so the next family can run.
void recover_device(int ordinal) {
  cudaGetLastError();
  if (cudaDeviceSynchronize() != cudaSuccess) {
    cudaDeviceReset();
    CUDA_CHECK(cudaSetDevice(ordinal));
    CUDA_CHECK(cudaFree(nullptr));
  }
}

}  // namespace

int print_list() {
  for (ProbeFamily* f : sorted_families()) {
    std::cout << f->name() << ": " << f->description() << "\n";
    for (const auto& p : f->probes())
      std::cout << "  " << f->name() << "/" << p.name << "  " << p.description << "\n";
  }
  return checked_stdout("gpuprobe list", 0);
}

int print_info(const Options& opt) {
  DeviceInfo d = open_device(opt.device);
  Nvml nvml(d.pci_bus_id);
  ClockReading clk = measure_sm_clock(d);
  NvmlReading nv = nvml.read();
  for (const auto& [k, v] : device_metadata(d, nv, nvml.card()))
    std::cout << k << ": " << v << "\n";
  std::cout << "sm_clock_measured_mhz: " << fixed(clk.mhz, 1) << " (clock64 vs %globaltimer, "
            << fixed(clk.window_ms, 1) << " ms window, SMs " << fixed(clk.min_mhz, 1) << ".."
            << fixed(clk.max_mhz, 1) << ")\n";
  if (nv.available)
    std::cout << "nvml_sm_clock_mhz: " << nv.sm_clock_mhz << "\nthrottle_reasons: "
              << throttle_reason_text(nv.throttle_reasons) << "\n";
  std::cout << "theoretical_dram_bandwidth_gbs: " << fixed(d.theoretical_dram_gbs(), 1) << "\n";
  return checked_stdout("gpuprobe info", 0);
}

namespace {

// Google Benchmark parses its own flags; the rest of the command line is ours.
void initialize_benchmark(const Options& opt, char* argv0) {
  std::vector<std::string> gb_args = {argv0};
  gb_args.insert(gb_args.end(), opt.benchmark_flags.begin(), opt.benchmark_flags.end());
  std::vector<char*> gb_argv;
  for (auto& a : gb_args) gb_argv.push_back(a.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());
}

// One run of the suite: its folder, what it measured so far, and how it ended.
class Suite {
 public:
  Suite(const Options& opt, const DeviceInfo& dev, Nvml& nvml, const NvmlReading& nv0, double mhz0,
        std::string dir, Metadata base, PowerSampler& sampler)
      : opt_(opt), dev_(dev), nvml_(nvml), nv0_(nv0), dir_(std::move(dir)),
        base_(std::move(base)), clocks_{mhz0}, throttle_seen_(nv0.throttle_reasons),
        sampler_(sampler) {}

  // Measures and analyzes every family in turn, writing the run files after each, until the
  // last or a stop signal.
  void run_families(const std::vector<ProbeFamily*>& families) {
    for (size_t i = 0; i < families.size() && !stop_.sig; ++i) {
      if (int sig = stop_signal()) {
        stop_.sig = sig;
        break;
      }
      progress_.family(i + 1, families.size(), families[i]->name());
      if (!run_family(*families[i])) continue;  // unsupported: nothing new to write
      if (stop_.sig) run_status_ = "interrupted";
      write_run_files();
    }
    run_status_ = stop_.sig ? "interrupted" : failures_ ? "failed" : "complete";
  }

  // The run-level parameters and the final run files; the exit code when the run ends here
  // (interrupted), else nothing.
  std::optional<int> finish(Clock::time_point suite_t0) {
    sampler_.stop();  // the trace ends with the last family
    if (stop_.sig && !measured_any_) {
      // Nothing measured (a Ctrl-C in the first seconds): no run folder is left to mistake for
      // a run.
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
      std::filesystem::remove(std::filesystem::path(dir_).parent_path(), ec);  // only if empty
      std::fprintf(stderr, "gpuprobe: %s before anything was measured: %s removed\n",
                   signal_name(stop_.sig).c_str(), dir_.c_str());
      return 128 + stop_.sig;
    }
    Summary c = summarize(clocks_);
    // One reading: the value is its own interval (three reads put the value outside it).
    const double wall = seconds_since(suite_t0);
    wall_time_ = format_number(wall);  // also in the metadata, should parameters.csv be lost
    merge_parameters(
        params_,
        {{param::sm_clock_measured, c.p50, "MHz", c.min, c.max, 0.99,
          "clock_vs_globaltimer: clock64 vs %globaltimer over ~20 ms on every SM, median of the readings taken "
          "before each family",
          "families.csv"},
         {param::suite_wall_time, wall, "s", wall, wall, 1.0,
          "host_clock: host steady clock, whole run", "families.csv"}});
    write_run_files();
    if (!opt_.benchmark_out.empty()) write_file_atomic(opt_.benchmark_out, reporter_.json());
    if (!opt_.json_nvbandwidth.empty()) write_nvbandwidth_json(dir_, opt_.json_nvbandwidth);
    if (stop_.sig) {
      std::fprintf(stderr, "gpuprobe: %s during %s: what was measured is kept in %s, marked "
                           "run_status=interrupted (gpuprobe report renders it)\n",
                   signal_name(stop_.sig).c_str(), stopped_in_.empty() ? "no family" : stopped_in_.c_str(),
                   dir_.c_str());
      return 128 + stop_.sig;
    }
    return std::nullopt;
  }

  // The summary table, the probes not measured, then the figures and report.md; the exit code.
  int summarize_run(const Reference& reference) {
    std::cout << "\n" << dev_.name << " (sm_" << dev_.cc() << ", " << dev_.sm_count << " SMs), run "
              << dir_ << "\n\n";
    std::cout << format_summary(params_, [&](const Parameter& p) {
      auto doc = documented_for_gpu(reference, p.name, dev_.name, dev_.cc_major, dev_.cc_minor);
      if (!doc) return std::string();
      std::string versus = versus_documented(p, *doc);
      return describe(*doc) + (versus.empty() ? "" : " (" + versus + ")");
    });
    if (!invalid_.empty())
      std::cout << "\n" << invalid_.size() << " probe(s) invalid: see " << dir_ << "/invalid.csv\n";
    if (!skipped_.empty())
      std::cout << skipped_.size() << " probe(s) skipped on this GPU: see " << dir_ << "/skipped.csv\n";
    // The figures and report.md; without gnuplot `gpuprobe report` renders them later, anywhere.
    std::cout << std::flush;
    report_main({dir_});
    if (int sig = stop_signal()) return 128 + sig;  // the run is complete; its report was cut short
    if (failures_) {
      std::fprintf(stderr, "gpuprobe: %d family(ies) failed; what they measured is kept in %s\n",
                   failures_, dir_.c_str());
      return checked_stdout("gpuprobe", 1);
    }
    return checked_stdout("gpuprobe", 0);
  }

 private:
  // Runs one family; its status and message ("ok", "") or why not.
  std::vector<Observation> measure_family(ProbeFamily& fam, double* mhz, std::string* status,
                                          std::string* message) {
    std::vector<Observation> obs;
    try {
      *mhz = measure_sm_clock(dev_).mhz;
      clocks_.push_back(*mhz);
      FamilyContext ctx(fam, dev_, opt_, *mhz, reporter_, progress_, invalid_, skipped_);
      try {
        fam.run(ctx);
      } catch (...) {
        obs = ctx.observations();
        throw;
      }
      obs = ctx.observations();
    } catch (const Interrupted& e) {
      stop_ = e;
      stopped_in_ = fam.name();
      *status = "interrupted";
      *message = signal_name(e.sig) + ": the rest of the family not measured";
    } catch (const std::exception& e) {
      *status = "failed";
      *message = e.what();
      ++failures_;
      try {
        recover_device(dev_.ordinal);
      } catch (const std::exception& again) {
        *message += "; device not recovered: " + std::string(again.what());
      }
    }
    return obs;
  }

  // Writes the family's observations and merges its parameters; a failed analysis marks it.
  void keep_family(ProbeFamily& fam, const std::vector<Observation>& obs, double mhz, double wall,
                   const OperatingPoint& op, std::string* status, std::string* message) {
    Metadata meta = run_metadata();
    meta.emplace_back("family", fam.name());
    meta.emplace_back("family_sm_clock_mhz", fixed(mhz, 1));
    meta.emplace_back("family_wall_time_s", fixed(wall, 2));
    meta.emplace_back("status", *status == "ok" ? "ok" : *status + ": " + *message);
    add_operating_point_metadata(meta, op);
    try {
      if (!obs.empty()) {
        const std::string path = dir_ + "/" + fam.name() + ".csv";
        const std::string text = format_observations(meta, obs);
        write_file_atomic(path, text);
        measured_any_ = true;
        Analysis a = analyze_family_text(path, text, fam.name());
        for (const auto& w : a.warnings) std::fprintf(stderr, "gpuprobe: warning: %s\n", w.c_str());
        if (!a.error.empty()) throw std::runtime_error(a.error);
        merge_parameters(params_, a.params);
      }
    } catch (const std::exception& e) {
      *status = "failed";
      *message += (message->empty() ? "" : "; ") + std::string("analysis: ") + e.what();
      ++failures_;
    }
  }

  // Measures and keeps one family; false when this device does not support it.
  bool run_family(ProbeFamily& fam) {
    std::string why;
    const bool not_in_quick = left_out_of_quick(fam, &why);
    if (not_in_quick || !fam.supported(dev_, &why)) {
      progress_.done("skipped: " + why);
      add_family_row({fam.name(), not_in_quick ? "not_in_quick" : "unsupported", "0", "", "0", why},
                     {});
      // A family this GPU cannot run is in skipped.csv and the report too; one a quick run
      // leaves out is in not_measured.csv.
      if (!not_in_quick) skipped_.push_back({fam.name(), "all", why});
      return false;
    }
    const auto t0 = Clock::now();
    std::string status = "ok", message;
    double mhz = clocks_.back();
    sampler_.set_family(fam.name());
    std::vector<Observation> obs = measure_family(fam, &mhz, &status, &message);
    sampler_.set_family("");
    const double wall = seconds_since(t0);
    if (nv0_.available) throttle_seen_ |= nvml_.read().throttle_reasons;
    const OperatingPoint op = summarize_family(sampler_.samples(), fam.name());
    keep_family(fam, obs, mhz, wall, op, &status, &message);
    add_family_row(
        {fam.name(), status, fixed(wall, 2), fixed(mhz, 1), std::to_string(obs.size()), message},
        op);
    progress_.done(status == "ok" ? fixed(wall, 1) + " s, " + std::to_string(obs.size()) + " rows"
                                  : (status == "failed" ? "FAILED" : status) + " after " + fixed(wall, 1) +
                                        " s: " + message);
    return true;
  }

  // A family whose descriptor says a quick run leaves it out (base/family.hpp): its parameters
  // go to not_measured.csv with the reason.
  bool left_out_of_quick(const ProbeFamily& fam, std::string* why) {
    if (!opt_.quick) return false;
    auto it = family_descriptors().find(fam.name());
    if (it == family_descriptors().end() || it->second->not_in_quick.empty()) return false;
    *why = std::string(it->second->not_in_quick);
    for (auto& row : family_rows_not_measured(fam.name(), *why)) not_measured_[row[0]] = row;
    return true;
  }

  // A families.csv row: the first six columns, then the family's operating point.
  void add_family_row(std::vector<std::string> row, const OperatingPoint& op) {
    for (auto& c : operating_point_cells(op)) row.push_back(std::move(c));
    family_rows_.push_back(std::move(row));
  }

  Metadata run_metadata() const {
    Metadata m = base_;
    Summary c = summarize(clocks_);
    m.emplace_back("sm_clock_mhz", fixed(c.p50, 1));
    m.emplace_back("sm_clock_range_mhz", fixed(c.min, 1) + ".." + fixed(c.max, 1));
    m.emplace_back("sm_clock_method", "clock64 vs %globaltimer on every SM under load, median; "
                                      "measured before each family");
    m.emplace_back("throttle_reasons_seen", nv0_.available ? throttle_reason_text(throttle_seen_)
                                                           : "unknown (no NVML)");
    m.emplace_back("run_status", run_status_);
    if (!wall_time_.empty()) m.emplace_back("suite_wall_time_s", wall_time_);
    if (stop_.sig)
      m.emplace_back("interrupted", signal_name(stop_.sig) + " during " +
                                        (stopped_in_.empty() ? "no family" : stopped_in_));
    return m;
  }

  void write_run_files() {
    // A quick run writes only what it measures as the full run does (docs/parameters.md).
    if (opt_.quick) {
      for (auto& row : drop_not_quick(params_)) not_measured_[row[0]] = row;
      std::vector<std::vector<std::string>> rows;
      for (const auto& [name, row] : not_measured_) rows.push_back(row);
      write_file_atomic(dir_ + "/not_measured.csv", format_csv(run_metadata(), {"parameter", "reason"}, rows));
    }
    write_file_atomic(dir_ + "/parameters.csv", format_parameters(run_metadata(), params_));
    std::vector<std::string> family_header = {"family",       "status",       "wall_time_s",
                                              "sm_clock_mhz", "observations", "message"};
    for (const auto& c : operating_point_columns()) family_header.push_back(c);
    write_file_atomic(dir_ + "/families.csv",
                      format_csv(run_metadata(), family_header, family_rows_));
    if (nv0_.available)
      write_file_atomic(dir_ + "/" + kTraceFile, format_trace(run_metadata(), sampler_.samples()));
    for (const auto& [file, notes] : {std::pair{"/invalid.csv", &invalid_}, {"/skipped.csv", &skipped_}}) {
      std::vector<std::vector<std::string>> rows;
      for (const auto& n : *notes) rows.push_back({n.family, n.probe, n.why});
      write_file_atomic(dir_ + file, format_csv(run_metadata(), {"family", "probe", "reason"}, rows));
    }
    write_file_atomic(dir_ + "/benchmark.json", reporter_.json());
  }

  const Options& opt_;
  const DeviceInfo& dev_;
  Nvml& nvml_;
  const NvmlReading nv0_;
  const std::string dir_;
  const Metadata base_;
  CollectingReporter reporter_;
  Progress progress_;
  std::vector<ProbeNote> invalid_, skipped_;
  std::vector<Parameter> params_;
  std::vector<double> clocks_;
  unsigned long long throttle_seen_;
  std::vector<std::vector<std::string>> family_rows_;
  int failures_ = 0;
  // running until the last family is done; then complete or failed; interrupted on a signal.
  std::string run_status_ = "running";
  Interrupted stop_{0};
  std::string stopped_in_;
  bool measured_any_ = false;
  std::string wall_time_;  // suite_wall_time once the run is finished
  std::map<std::string, std::vector<std::string>> not_measured_;
  PowerSampler& sampler_;
};

}  // namespace

int run_suite(const Options& opt, int argc, char** argv) {
  // One rank of a job (--ranks-from-env): the ranks other than 0 follow rank 0 and end here.
  if (opt.ranks_from_env)
    if (std::optional<int> code = join_as_rank(opt)) return *code;
  const auto suite_t0 = Clock::now();
  const std::time_t suite_start = std::time(nullptr);  // the run-id
  validate_outputs(opt);
  std::vector<ProbeFamily*> families;
  for (ProbeFamily* f : sorted_families())
    if (family_selected(*f, opt.filter)) families.push_back(f);
  if (families.empty())
    throw UsageError("--filter '" + opt.filter + "' selects no probe (see 'gpuprobe list')");

  std::string ref_path = opt.reference.empty() ? default_reference() : opt.reference;
  Reference reference = load_reference(ref_path);

  DeviceInfo dev = open_device(opt.device);
  Nvml nvml(dev.pci_bus_id);
  NvmlReading nv0 = nvml.read();
  if (!nv0.available)
    std::fprintf(stderr, "gpuprobe: NVML unavailable (%s): clocks and throttle reasons from the "
                         "GPU's own timers only\n", nv0.why_unavailable.c_str());
  ClockReading clk0 = measure_sm_clock(dev);
  initialize_benchmark(opt, argv[0]);

  const auto sass_t0 = Clock::now();
  std::string sass_why = load_sass(dev);
  std::fprintf(stderr, "gpuprobe: %s (%.1f s)\n",
               sass_why.empty() ? "SASS of this program read for the code checks"
                                : ("SASS not checked: " + sass_why).c_str(),
               seconds_since(sass_t0));

  // From here on a signal ends the run cleanly (what was measured kept, or no folder at all);
  // before, nothing is written and the default action ends the process at once.
  install_stop_handlers();
  std::string rid;
  const std::string dir = create_run_dir(opt.out, gpu_slug(dev.name), suite_start, &rid);
  std::fprintf(stderr, "gpuprobe: %s, %d SMs, SM clock %.0f MHz measured; writing %s\n",
               dev.name.c_str(), dev.sm_count, clk0.mhz, dir.c_str());

  Metadata base = device_metadata(dev, nv0, nvml.card());
  base.emplace_back("gpuprobe_version", gpuprobe_version());
  base.emplace_back("command_line", command_line(argc, argv));
  base.emplace_back("run_id", rid);
  base.emplace_back("quick", opt.quick ? "1" : "0");
  if (!opt.filter.empty()) base.emplace_back("filter", opt.filter);

  PowerSampler sampler(nvml, kTracePeriod, suite_t0);
  Suite suite(opt, dev, nvml, nv0, clk0.mhz, dir, base, sampler);
  suite.run_families(families);
  if (auto code = suite.finish(suite_t0)) return *code;
  return suite.summarize_run(reference);
}

}  // namespace gpuprobe
