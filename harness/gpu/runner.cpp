#include "gpu/runner.hpp"

#include <map>
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
#include <sstream>

#include "analysis/analyzer.hpp"
#include "common.cuh"
#include "core/catalog.hpp"
#include "core/csv.hpp"
#include "core/data_paths.hpp"
#include "core/nvbandwidth_json.hpp"
#include "core/observation.hpp"
#include "core/reference.hpp"
#include "core/report.hpp"
#include "core/run_dir.hpp"
#include "core/signals.hpp"
#include "core/stats.hpp"
#include "core/summary.hpp"
#include "gpu/device.hpp"
#include "gpu/nvml.hpp"
#include "gpu/sass_check.hpp"

namespace gpuprobe {

namespace {

using Clock = std::chrono::steady_clock;

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

Metadata device_metadata(const DeviceInfo& d, const NvmlReading& nv) {
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
  if (nv.available) {
    m.emplace_back("power_limit_w", fixed(nv.power_limit_w, 0));
    m.emplace_back("nvml_max_sm_clock_mhz", std::to_string(nv.max_sm_clock_mhz));
    m.emplace_back("nvml_max_mem_clock_mhz", std::to_string(nv.max_mem_clock_mhz));
  } else {
    m.emplace_back("nvml", "unavailable: " + nv.why_unavailable);
  }
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
  return 0;
}

int print_info(const Options& opt) {
  DeviceInfo d = open_device(opt.device);
  Nvml nvml(d.pci_bus_id);
  ClockReading clk = measure_sm_clock(d);
  NvmlReading nv = nvml.read();
  for (const auto& [k, v] : device_metadata(d, nv)) std::cout << k << ": " << v << "\n";
  std::cout << "sm_clock_measured_mhz: " << fixed(clk.mhz, 1) << " (clock64 vs %globaltimer, "
            << fixed(clk.window_ms, 1) << " ms window, SMs " << fixed(clk.min_mhz, 1) << ".."
            << fixed(clk.max_mhz, 1) << ")\n";
  if (nv.available)
    std::cout << "nvml_sm_clock_mhz: " << nv.sm_clock_mhz << "\nthrottle_reasons: "
              << throttle_reason_text(nv.throttle_reasons) << "\n";
  std::cout << "theoretical_dram_bandwidth_gbs: " << fixed(d.theoretical_dram_gbs(), 1) << "\n";
  return 0;
}

int run_suite(const Options& opt, int argc, char** argv) {
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

  // Google Benchmark parses its own flags; the rest of the command line is ours.
  std::vector<std::string> gb_args = {argv[0]};
  gb_args.insert(gb_args.end(), opt.benchmark_flags.begin(), opt.benchmark_flags.end());
  std::vector<char*> gb_argv;
  for (auto& a : gb_args) gb_argv.push_back(a.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());

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

  Metadata base = device_metadata(dev, nv0);
  base.emplace_back("gpuprobe_version", GPUPROBE_VERSION);
  base.emplace_back("command_line", command_line(argc, argv));
  base.emplace_back("run_id", rid);
  base.emplace_back("quick", opt.quick ? "1" : "0");
  if (!opt.filter.empty()) base.emplace_back("filter", opt.filter);

  CollectingReporter reporter;
  Progress progress;
  std::vector<ProbeNote> invalid, skipped;
  std::vector<Parameter> params;
  std::vector<double> clocks = {clk0.mhz};
  unsigned long long throttle_seen = nv0.throttle_reasons;
  std::vector<std::vector<std::string>> family_rows;
  int failures = 0;
  // running until the last family is done; then complete or failed; interrupted on a signal.
  std::string run_status = "running";
  Interrupted stop{0};
  std::string stopped_in;
  bool measured_any = false;

  auto run_metadata = [&]() {
    Metadata m = base;
    Summary c = summarize(clocks);
    m.emplace_back("sm_clock_mhz", fixed(c.p50, 1));
    m.emplace_back("sm_clock_range_mhz", fixed(c.min, 1) + ".." + fixed(c.max, 1));
    m.emplace_back("sm_clock_method", "clock64 vs %globaltimer on every SM under load, median; "
                                      "measured before each family");
    m.emplace_back("throttle_reasons_seen", nv0.available ? throttle_reason_text(throttle_seen)
                                                          : "unknown (no NVML)");
    m.emplace_back("run_status", run_status);
    if (stop.sig)
      m.emplace_back("interrupted", signal_name(stop.sig) + " during " +
                                        (stopped_in.empty() ? "no family" : stopped_in));
    return m;
  };
  // A quick run writes only what it measures as the full run does (docs/parameters.md).
  std::map<std::string, std::vector<std::string>> not_measured;
  auto write_run_files = [&]() {
    if (opt.quick) {
      for (auto& row : drop_not_quick(params)) not_measured[row[0]] = row;
      std::vector<std::vector<std::string>> rows;
      for (const auto& [name, row] : not_measured) rows.push_back(row);
      write_file_atomic(dir + "/not_measured.csv",
                        format_csv(run_metadata(), {"parameter", "reason"}, rows));
    }
    write_file_atomic(dir + "/parameters.csv", format_parameters(run_metadata(), params));
    write_file_atomic(dir + "/families.csv",
                      format_csv(run_metadata(),
                                 {"family", "status", "wall_time_s", "sm_clock_mhz",
                                  "observations", "message"},
                                 family_rows));
    for (const auto& [file, notes] : {std::pair{"/invalid.csv", &invalid}, {"/skipped.csv", &skipped}}) {
      std::vector<std::vector<std::string>> rows;
      for (const auto& n : *notes) rows.push_back({n.family, n.probe, n.why});
      write_file_atomic(dir + file, format_csv(run_metadata(), {"family", "probe", "reason"}, rows));
    }
    write_file_atomic(dir + "/benchmark.json", reporter.json());
  };

  for (size_t i = 0; i < families.size() && !stop.sig; ++i) {
    ProbeFamily& fam = *families[i];
    if (int sig = stop_signal()) {
      stop.sig = sig;
      break;
    }
    progress.family(i + 1, families.size(), fam.name());
    std::string why;
    if (!fam.supported(dev, &why)) {
      progress.done("skipped: " + why);
      family_rows.push_back({fam.name(), "unsupported", "0", "", "0", why});
      continue;
    }
    const auto t0 = Clock::now();
    std::string status = "ok", message;
    double mhz = clocks.back();
    std::vector<Observation> obs;
    try {
      mhz = measure_sm_clock(dev).mhz;
      clocks.push_back(mhz);
      FamilyContext ctx(fam, dev, opt, mhz, reporter, progress, invalid, skipped);
      try {
        fam.run(ctx);
      } catch (...) {
        obs = ctx.observations();
        throw;
      }
      obs = ctx.observations();
    } catch (const Interrupted& e) {
      stop = e;
      stopped_in = fam.name();
      status = "interrupted";
      message = signal_name(e.sig) + ": the rest of the family not measured";
    } catch (const std::exception& e) {
      status = "failed";
      message = e.what();
      ++failures;
      try {
        recover_device(dev.ordinal);
      } catch (const std::exception& again) {
        message += "; device not recovered: " + std::string(again.what());
      }
    }
    const double wall = seconds_since(t0);
    if (nv0.available) throttle_seen |= nvml.read().throttle_reasons;

    Metadata meta = run_metadata();
    meta.emplace_back("family", fam.name());
    meta.emplace_back("family_sm_clock_mhz", fixed(mhz, 1));
    meta.emplace_back("family_wall_time_s", fixed(wall, 2));
    meta.emplace_back("status", status == "ok" ? "ok" : status + ": " + message);
    try {
      if (!obs.empty()) {
        write_file_atomic(dir + "/" + fam.name() + ".csv", format_observations(meta, obs));
        measured_any = true;
        Analysis a = analyze_checked(fam.name(), obs, meta);
        for (const auto& w : a.warnings) std::fprintf(stderr, "gpuprobe: warning: %s\n", w.c_str());
        if (!a.error.empty()) throw std::runtime_error(a.error);
        merge_parameters(params, a.params);
      }
    } catch (const std::exception& e) {
      status = "failed";
      message += (message.empty() ? "" : "; ") + std::string("analysis: ") + e.what();
      ++failures;
    }
    family_rows.push_back({fam.name(), status, fixed(wall, 2), fixed(mhz, 1),
                           std::to_string(obs.size()), message});
    progress.done(status == "ok" ? fixed(wall, 1) + " s, " + std::to_string(obs.size()) + " rows"
                                 : (status == "failed" ? "FAILED" : status) + " after " +
                                       fixed(wall, 1) + " s: " + message);
    if (stop.sig) run_status = "interrupted";
    write_run_files();
  }

  run_status = stop.sig ? "interrupted" : failures ? "failed" : "complete";
  if (stop.sig && !measured_any) {
    // Nothing measured (a Ctrl-C in the first seconds): no run folder is left to mistake for
    // a run.
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    std::filesystem::remove(std::filesystem::path(dir).parent_path(), ec);  // only if empty
    std::fprintf(stderr, "gpuprobe: %s before anything was measured: %s removed\n",
                 signal_name(stop.sig).c_str(), dir.c_str());
    return 128 + stop.sig;
  }

  Summary c = summarize(clocks);
  merge_parameters(params, {{"sm_clock_measured", c.p50, "MHz", c.min, c.max, 0.99,
               "clock_vs_globaltimer: clock64 vs %globaltimer over ~20 ms on every SM, median of the readings taken "
               "before each family", "families.csv"},
              {"suite_wall_time", seconds_since(suite_t0), "s", seconds_since(suite_t0),
               seconds_since(suite_t0), 1.0, "host_clock: host steady clock, whole run", "families.csv"}});
  write_run_files();
  if (!opt.benchmark_out.empty()) write_file_atomic(opt.benchmark_out, reporter.json());
  if (!opt.json_nvbandwidth.empty()) write_nvbandwidth_json(dir, opt.json_nvbandwidth);
  if (stop.sig) {
    std::fprintf(stderr, "gpuprobe: %s during %s: what was measured is kept in %s, marked "
                         "run_status=interrupted (gpuprobe report renders it)\n",
                 signal_name(stop.sig).c_str(), stopped_in.empty() ? "no family" : stopped_in.c_str(),
                 dir.c_str());
    return 128 + stop.sig;
  }

  std::cout << "\n" << dev.name << " (sm_" << dev.cc() << ", " << dev.sm_count << " SMs), run "
            << dir << "\n\n";
  std::cout << format_summary(params, [&](const Parameter& p) {
    auto doc = documented_for_gpu(reference, p.name, dev.name, dev.cc_major, dev.cc_minor);
    if (!doc) return std::string();
    std::string versus = versus_documented(p, *doc);
    return describe(*doc) + (versus.empty() ? "" : " (" + versus + ")");
  });
  if (!invalid.empty())
    std::cout << "\n" << invalid.size() << " probe(s) invalid: see " << dir << "/invalid.csv\n";
  if (!skipped.empty())
    std::cout << skipped.size() << " probe(s) skipped on this GPU: see " << dir << "/skipped.csv\n";
  // The figures and report.md; without gnuplot `gpuprobe report` renders them later, anywhere.
  std::cout << std::flush;
  report_main({dir});
  if (int sig = stop_signal()) return 128 + sig;  // the run is complete; its report was cut short
  if (failures) {
    std::fprintf(stderr, "gpuprobe: %d family(ies) failed; what they measured is kept in %s\n",
                 failures, dir.c_str());
    return 1;
  }
  return 0;
}

}  // namespace gpuprobe
