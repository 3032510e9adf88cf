#include "app/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "analysis/pipes.hpp"
#include "analysis/roofline.hpp"
#include "app/cli.hpp"
#include "app/cli_parse.hpp"
#include "app/report.hpp"
#include "app/report_detail.hpp"
#include "base/csv.hpp"
#include "base/json.hpp"
#include "base/run_dir.hpp"
#include "base/version.hpp"

namespace gpuprobe {

namespace fs = std::filesystem;
using roofline::Model;
using roofline::Prediction;

namespace {

std::string opt_number(const std::optional<double>& v) { return v ? format_number(*v) : ""; }

}  // namespace

std::string roofline_ceilings_csv(const Model& m) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : m.ceilings)
    rows.push_back({c.name, c.kind, c.what, format_number(c.value), format_number(c.low),
                    format_number(c.high), c.unit, c.source});
  for (const auto& x : m.missing) rows.push_back({x.name, "missing", "", "", "", "", "", x.why});
  if (!m.no_energy.empty())
    rows.push_back({roofline::kEnergy, "missing", "", "", "", "", "", m.no_energy});
  Metadata meta = {{"gpu", m.gpu}, {"written_by", std::string("gpuprobe ") + gpuprobe_version()}};
  return format_csv(meta, {"name", "kind", "what", "value", "low", "high", "unit", "source"}, rows);
}

std::string roofline_points_csv(const std::vector<Prediction>& ps) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : ps)
    rows.push_back({p.kernel, format_number(p.intensity), format_number(p.flops),
                    format_number(p.bytes), opt_number(p.measured_time_s), format_number(p.time_s),
                    opt_number(p.time_error), opt_number(p.measured_energy_j),
                    opt_number(p.energy_j), opt_number(p.energy_error), p.binding, p.bound,
                    p.reason});
  return format_csv({},
                    {"kernel", "intensity", "flops", "dram_bytes", "measured_time_s",
                     "predicted_time_s", "time_error", "measured_energy_j", "predicted_energy_j",
                     "energy_error", "binding", "bound", "reason"},
                    rows);
}

// The Empirical Roofline Tool's roofline.json (ert_core.py's build_database): "empirical" with
// "gflops" and "gbytes", each {"data": [[name, value], ...], "metadata": {...}}, and "spec".
std::string roofline_ert_json(const Model& m) {
  Json gflops = Json::array(), gbytes = Json::array();
  for (const auto& c : m.ceilings) {
    if (c.kind != roofline::kTime) continue;
    if (c.what == roofline::kComputeCeiling && c.unit == "GFLOP/s")
      gflops.push_back({c.name + " GFLOPs", json_number(c.value)});
    else if (c.what == roofline::kBandwidthCeiling)
      gbytes.push_back({c.name, json_number(c.value)});
  }
  Json meta = {{"ERT_VERSION", "gpuprobe " + std::string(gpuprobe_version())},
               {"GPU", m.gpu},
               {"SM_CLOCK_MHZ", json_number(m.clock_hz / 1e6)}};
  Json root;
  root["empirical"] = {{"metadata", meta},
                       {"gflops", {{"data", gflops}, {"metadata", Json::object()}}},
                       {"gbytes", {{"data", gbytes}, {"metadata", Json::object()}}}};
  root["spec"] = {{"gflops", {{"data", Json::array()}}}, {"gbytes", {{"data", Json::array()}}}};
  return json_text(root);
}

namespace {

std::string percent(const std::optional<double>& e) {
  if (!e) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f %%", *e * 100);
  return buf;
}
std::string sig(const std::optional<double>& v, double scale, const char* unit) {
  if (!v) return "not measured";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g %s", *v * scale, unit);
  return buf;
}

}  // namespace

std::string roofline_table_markdown(const std::vector<std::string>& labels,
                                    const std::vector<std::vector<Prediction>>& ps) {
  std::vector<std::vector<std::string>> rows = {{"GPU", "kernel", "flop/B (DRAM)", "time measured",
                                                 "time predicted", "error", "energy measured",
                                                 "energy predicted", "error", "bound", "reason"}};
  for (size_t r = 0; r < ps.size(); ++r)
    for (const auto& p : ps[r])
      rows.push_back({labels[r], p.kernel, format_printf("%.3g", p.intensity),
                      sig(p.measured_time_s, 1e6, "us"), sig(p.time_s, 1e6, "us"),
                      percent(p.time_error), sig(p.measured_energy_j, 1e3, "mJ"),
                      sig(p.energy_j, 1e3, "mJ"), percent(p.energy_error), p.bound,
                      md_escape(p.reason)});
  return markdown_table(rows);
}

namespace {

// The figures' x range (flops per byte) and the arch line's samples over it.
constexpr double kMinIntensity = 1.0 / 16, kMaxIntensity = 1e4;
constexpr int kCurveSamples = 97;
// The first run's labels sit above its lines, the others' below: overlaid GPUs of near rates
// keep their labels apart.
constexpr double kLabelAbove = 1.3, kLabelBelow = 1 / 2.4;
// A power-cap label starts no further right than this intensity: it stays inside the plot.
constexpr double kCapLabelMax = 30;

// Pipes drawn: FP64, FP32 and the first tensor pipe of these the run has (the others are in
// roofline.csv: one tensor roof keeps the figure readable).
const std::vector<std::string>& drawn_pipes(const Model& m) {
  static const std::vector<std::string> tensor = {
      pipes::kTensorWgmmaBf16Probe, pipes::kTensorMmaBf16Probe, pipes::kTensorMmaF16Probe};
  static thread_local std::vector<std::string> v;
  v = {"fp64", "fp32"};
  for (const auto& t : tensor)
    if (m.find(t)) {
      v.push_back(t);
      break;
    }
  return v;
}

std::string roof_text(const roofline::Ceiling& c) {
  char buf[96];
  if (c.unit == "GFLOP/s" && c.value >= 1e4)
    std::snprintf(buf, sizeof buf, "%s %.1f TFLOP/s", c.name.c_str(), c.value / 1e3);
  else std::snprintf(buf, sizeof buf, "%s %.0f %s", c.name.c_str(), c.value, c.unit.c_str());
  return buf;
}

using Rows = std::vector<std::vector<std::string>>;
void row(Rows& r, const char* kind, double x, double y, double lo, double hi,
         const std::string& label = "") {
  r.push_back(
      {kind, format_number(x), format_number(y), format_number(lo), format_number(hi), label});
}
// A blank line: gnuplot ends a line there.
void gap(Rows& r) { r.push_back({}); }

// The model with every ceiling of `kind` at its low (or high) bound.
Model at_bound(Model m, const std::string& kind, bool high) {
  for (auto& c : m.ceilings)
    if (c.kind == kind) c.value = high ? c.high : c.low;
  return m;
}

double log_sample(int k) {
  return kMinIntensity * std::pow(kMaxIntensity / kMinIntensity, k / double(kCurveSamples - 1));
}

void kernel_rows(Rows& r, const std::vector<Prediction>& ps, bool energy) {
  for (const auto& p : ps) {
    const auto& measured = energy ? p.measured_energy_j : p.measured_time_s;
    if (p.intensity <= 0 || !measured || *measured <= 0) continue;
    const double y = p.flops / *measured / 1e9;
    row(r, "point", p.intensity, y, y, y, p.kernel);
    const auto predicted = energy ? p.energy_j : std::optional<double>(p.time_s);
    if (predicted && *predicted > 0) {
      const double yp = p.flops / *predicted / 1e9;
      row(r, "predicted", p.intensity, yp, yp, yp, p.kernel);
    }
  }
}

}  // namespace

// Rows: kind (roof, cap, label, point, predicted, missing), intensity, value, low, high, label.
std::string roofline_time_figure_csv(const Model& m, const std::vector<Prediction>& ps, int run) {
  Rows r;
  double top = 0;
  for (const auto& pipe : drawn_pipes(m))
    if (const auto* c = m.find(pipe)) top = std::max(top, c->value);
  // Each level's label at its own place along its line, each run's further along: lines of
  // near rates (L1 and shared, one level on two GPUs) keep their labels apart.
  const double side = run == 0 ? kLabelAbove : kLabelBelow;
  const std::pair<const char*, double> levels[] = {
      {"dram", 0.09}, {"l2", 0.4}, {"l1", 0.09}, {"shared", 0.9}};
  for (const auto& [level, at] : levels) {
    const auto* b = m.find(level);
    if (!b || top <= 0) continue;
    const double x1 = std::min(kMaxIntensity, top / b->value);
    row(r, "roof", kMinIntensity, b->value * kMinIntensity, b->low * kMinIntensity,
        b->high * kMinIntensity);
    row(r, "roof", x1, b->value * x1, b->low * x1, b->high * x1);
    gap(r);
    const double x = std::min(at, x1 / 4);
    row(r, "label", x, b->value * x * side, 0, 0, roof_text(*b));
  }
  const auto* dram = m.find("dram");
  for (const auto& pipe : drawn_pipes(m)) {
    const auto* c = m.find(pipe);
    if (!c) continue;
    const double x0 = dram ? c->value / dram->value : kMinIntensity;
    row(r, "roof", x0, c->value, c->low, c->high);
    row(r, "roof", kMaxIntensity, c->value, c->low, c->high);
    gap(r);
    row(r, "rlabel", kMaxIntensity / 1.2, c->value * (run == 0 ? 1.15 : 1 / 1.3), 0, 0,
        roof_text(*c));
    // Choi et al.'s power-capped roof, where it falls below the time roofs
    bool below = false;
    roofline::CurvePoint cp;
    for (int k = 0; k < kCurveSamples; ++k)
      if (roofline::curve_at(m, pipe, "dram", log_sample(k), &cp) &&
          cp.gflops_capped < cp.gflops * 0.999) {
        below = true;
        row(r, "cap", log_sample(k), cp.gflops_capped, cp.gflops_capped, cp.gflops_capped);
      }
    if (below) {
      gap(r);
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s capped at %.0f W", pipe.c_str(),
                    m.find("power_limit", roofline::kEnergy)->value);
      row(r, "label", std::min(x0 * 1.5, kCapLabelMax), cp.gflops_capped / 1.6, 0, 0, buf);
    }
  }
  for (const auto& x : m.missing) row(r, "missing", 0, 0, 0, 0, x.name + " (" + x.why + ")");
  kernel_rows(r, ps, false);
  return format_csv({}, {"kind", "intensity", "value", "low", "high", "label"}, r);
}

std::string roofline_energy_figure_csv(const Model& m, const std::vector<Prediction>& ps, int run) {
  Rows r;
  const Model lo = at_bound(m, roofline::kEnergy, true), hi = at_bound(m, roofline::kEnergy, false);
  for (const auto& pipe : drawn_pipes(m)) {
    if (!m.find(pipe, roofline::kEnergy)) continue;
    roofline::CurvePoint c, cl, ch;
    for (int k = 0; k < kCurveSamples; ++k) {
      const double i = log_sample(k);
      if (roofline::curve_at(m, pipe, "dram", i, &c) &&
          roofline::curve_at(lo, pipe, "dram", i, &cl) &&
          roofline::curve_at(hi, pipe, "dram", i, &ch) && c.gflops_per_joule > 0)
        row(r, "roof", i, c.gflops_per_joule, cl.gflops_per_joule, ch.gflops_per_joule);
    }
    gap(r);
    if (c.gflops_per_joule > 0) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s + dram: %.4g GFLOP/J", pipe.c_str(), c.gflops_per_joule);
      row(r, "rlabel", kMaxIntensity / 1.2, c.gflops_per_joule * (run == 0 ? 1.12 : 1 / 1.3), 0, 0,
          buf);
    }
  }
  for (const auto& x : m.missing) row(r, "missing", 0, 0, 0, 0, x.name + " (" + x.why + ")");
  kernel_rows(r, ps, true);
  return format_csv({}, {"kind", "intensity", "value", "low", "high", "label"}, r);
}

namespace {

struct RooflineRun {
  RunData data;
  Model model;
  std::vector<Prediction> points;
  std::string note;  // a run without the roofline family: no points, and why
};

RooflineRun load_roofline_run(const std::string& dir, Diagnostics& diag) {
  if (const FolderKind kind = folder_kind(dir); kind != FolderKind::run)
    throw std::runtime_error(dir + ": " + folder_kind_name(kind) + ", not a run folder");
  RunData data = load_run(dir, known_families({}), diag);
  if (!diag.errors.empty()) throw std::runtime_error(diag.errors.front());
  if (!file_exists((fs::path(dir) / "parameters.csv").string()))
    throw std::runtime_error(dir +
                             "/parameters.csv: missing: the roofline reads a run's "
                             "parameters (run gpuprobe analyze first)");
  RooflineRun r{data, roofline::build_model(data.params, data.meta, data.gpu), {}, ""};
  const std::string obs = (fs::path(dir) / "roofline.csv").string();
  if (!file_exists(obs)) {
    r.note = dir + ": no roofline.csv (the roofline family did not run): ceilings only";
    return r;
  }
  for (const auto& k : roofline::kernels_of(read_observations(obs)))
    r.points.push_back(roofline::predict(r.model, k));
  return r;
}

std::string default_out(const std::vector<RooflineRun>& runs) {
  if (runs.size() == 1) return (fs::path(runs[0].data.dir) / roofline::kCommand).string();
  std::string slugs;
  for (const auto& r : runs) slugs += (slugs.empty() ? "" : "_vs_") + gpu_slug(r.data.gpu);
  return "results/compare/roofline_" + slugs;
}

constexpr const char* kTimeFigure = "roofline_time";
constexpr const char* kEnergyFigure = "roofline_energy";

void write_run(const RooflineRun& r, const std::string& dir, int run) {
  fs::create_directories(dir);
  write_file_atomic((fs::path(dir) / (std::string(kTimeFigure) + ".csv")).string(),
                    roofline_time_figure_csv(r.model, r.points, run));
  if (r.model.no_energy.empty())
    write_file_atomic((fs::path(dir) / (std::string(kEnergyFigure) + ".csv")).string(),
                      roofline_energy_figure_csv(r.model, r.points, run));
  write_file_atomic((fs::path(dir) / "roofline.csv").string(), roofline_ceilings_csv(r.model));
  write_file_atomic((fs::path(dir) / "roofline_points.csv").string(),
                    roofline_points_csv(r.points));
  write_file_atomic((fs::path(dir) / "roofline.json").string(), roofline_ert_json(r.model));
}

// One figure over the runs that have its data, by the report's gnuplot runner.
void draw_figure(const ReportPaths& paths, const char* name, const std::vector<std::string>& dirs,
                 const std::vector<std::string>& labels, const std::string& out,
                 Diagnostics& diag) {
  std::vector<std::string> files, shown;
  for (size_t k = 0; k < dirs.size(); ++k) {
    const std::string f = (fs::path(dirs[k]) / (std::string(name) + ".csv")).string();
    if (!file_exists(f)) continue;
    files.push_back(f);
    shown.push_back(labels[k]);
  }
  if (files.empty()) return;
  const FigureScript s{name, (fs::path(paths.plots_dir) / (std::string(name) + ".gp")).string(), "",
                       name, ""};
  const auto written =
      render_figure(paths, s, files, shown, (fs::path(out) / "figures").string(), diag);
  if (!written.empty()) std::printf("%s/figures/%s.{svg,png,pdf} written\n", out.c_str(), name);
}

void draw_figures(const std::vector<RooflineRun>& runs, const std::vector<std::string>& labels,
                  const std::vector<std::string>& dirs, const std::string& out, Diagnostics& diag) {
  const ReportPaths paths = resolve_paths();
  if (paths.gnuplot.empty()) {
    std::fprintf(stderr, "gpuprobe roofline: gnuplot not found on PATH: figures not drawn\n");
    return;
  }
  draw_figure(paths, kTimeFigure, dirs, labels, out, diag);
  bool energy = false;
  for (const auto& r : runs) energy = energy || r.model.no_energy.empty();
  if (energy) draw_figure(paths, kEnergyFigure, dirs, labels, out, diag);
  for (const auto& e : diag.errors) std::fprintf(stderr, "gpuprobe roofline: %s\n", e.c_str());
}

int roofline_runs(const std::vector<std::string>& dirs, const std::string& out_flag,
                  const std::string& table, Diagnostics& diag) {
  std::vector<RooflineRun> runs;
  for (const auto& d : dirs) runs.push_back(load_roofline_run(d, diag));
  std::vector<RunData> data;
  for (const auto& r : runs) data.push_back(r.data);
  const std::vector<std::string> labels = run_labels(data);
  for (const auto& r : runs) {
    if (!r.note.empty()) std::fprintf(stderr, "gpuprobe roofline: %s\n", r.note.c_str());
    if (!r.model.no_energy.empty())
      std::fprintf(stderr, "gpuprobe roofline: %s: %s\n", r.data.dir.c_str(),
                   r.model.no_energy.c_str());
  }
  if (table == "markdown") {
    std::vector<std::vector<Prediction>> ps;
    for (const auto& r : runs) ps.push_back(r.points);
    std::fputs(roofline_table_markdown(labels, ps).c_str(), stdout);
    return checked_stdout(diag.prefix, 0);
  }
  const std::string out = out_flag.empty() ? default_out(runs) : out_flag;
  std::vector<std::string> dirs_out;
  for (size_t k = 0; k < runs.size(); ++k) {
    dirs_out.push_back(runs.size() == 1 ? out : (fs::path(out) / labels[k]).string());
    write_run(runs[k], dirs_out.back(), static_cast<int>(k));
  }
  draw_figures(runs, labels, dirs_out, out, diag);
  std::printf("%s: roofline of %zu run(s) written\n", out.c_str(), runs.size());
  return checked_stdout(diag.prefix, diag.errors.empty() ? 0 : 1);
}

}  // namespace

int roofline_main(const std::vector<std::string>& args) {
  Diagnostics diag;
  diag.prefix = "gpuprobe roofline";
  CLI::App app{
      "The time and energy rooflines of runs from their parameters, with the roofline "
      "family's kernels predicted on them (no GPU).",
      "gpuprobe roofline"};
  std::vector<std::string> dirs;
  std::string out, table;
  app.add_option("RUN_DIR", dirs, "the runs, overlaid")->required();
  app.add_option("--out", out,
                 "the folder (default: RUN_DIR/roofline for one run, "
                 "results/compare/roofline_<slug>_vs_<slug> for several)")
      ->type_name("DIR")
      ->check(non_empty());
  app.add_option("--table", table, "the predicted-against-measured table to stdout instead")
      ->check(CLI::IsMember({"markdown"}));
  if (auto code = parse_subcommand(app, args, diag.prefix)) return *code;
  try {
    return roofline_runs(dirs, out, table, diag);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuprobe roofline: %s\n", e.what());
    return 1;
  }
}

}  // namespace gpuprobe
