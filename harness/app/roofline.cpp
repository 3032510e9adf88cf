#include "app/roofline.hpp"

#include <cstdio>
#include <filesystem>

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
  if (!m.no_energy.empty()) rows.push_back({"energy", "missing", "", "", "", "", "", m.no_energy});
  Metadata meta = {{"gpu", m.gpu}, {"written_by", std::string("gpuprobe ") + gpuprobe_version()}};
  return format_csv(meta, {"name", "kind", "what", "value", "low", "high", "unit", "source"}, rows);
}

std::string roofline_points_csv(const std::vector<Prediction>& ps) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : ps)
    rows.push_back({p.kernel, format_number(p.intensity), format_number(p.flops),
                    format_number(p.bytes), opt_number(p.measured_time_s),
                    format_number(p.time_s), opt_number(p.time_error),
                    opt_number(p.measured_energy_j), opt_number(p.energy_j),
                    opt_number(p.energy_error), p.binding, p.bound, p.reason});
  return format_csv({}, {"kernel", "intensity", "flops", "dram_bytes", "measured_time_s",
                         "predicted_time_s", "time_error", "measured_energy_j",
                         "predicted_energy_j", "energy_error", "binding", "bound", "reason"},
                    rows);
}

// The Empirical Roofline Tool's roofline.json (ert_core.py's build_database): "empirical" with
// "gflops" and "gbytes", each {"data": [[name, value], ...], "metadata": {...}}, and "spec".
std::string roofline_ert_json(const Model& m) {
  Json gflops = Json::array(), gbytes = Json::array();
  for (const auto& c : m.ceilings) {
    if (c.kind != "time") continue;
    if (c.what == "compute" && c.unit == "GFLOP/s")
      gflops.push_back({c.name + " GFLOPs", json_number(c.value)});
    else if (c.what == "bandwidth")
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
  std::vector<std::vector<std::string>> rows = {
      {"GPU", "kernel", "flop/B (DRAM)", "time measured", "time predicted", "error",
       "energy measured", "energy predicted", "error", "bound", "reason"}};
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
    throw std::runtime_error(dir + "/parameters.csv: missing: the roofline reads a run's "
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
  if (runs.size() == 1) return (fs::path(runs[0].data.dir) / "roofline").string();
  std::string slugs;
  for (const auto& r : runs) slugs += (slugs.empty() ? "" : "_vs_") + gpu_slug(r.data.gpu);
  return "results/compare/roofline_" + slugs;
}

void write_run(const RooflineRun& r, const std::string& dir) {
  fs::create_directories(dir);
  write_file_atomic((fs::path(dir) / "roofline.csv").string(), roofline_ceilings_csv(r.model));
  write_file_atomic((fs::path(dir) / "roofline_points.csv").string(),
                    roofline_points_csv(r.points));
  write_file_atomic((fs::path(dir) / "roofline.json").string(), roofline_ert_json(r.model));
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
  for (size_t k = 0; k < runs.size(); ++k)
    write_run(runs[k], runs.size() == 1 ? out : (fs::path(out) / labels[k]).string());
  std::printf("%s: roofline of %zu run(s) written\n", out.c_str(), runs.size());
  return checked_stdout(diag.prefix, 0);
}

}  // namespace

int roofline_main(const std::vector<std::string>& args) {
  Diagnostics diag;
  diag.prefix = "gpuprobe roofline";
  CLI::App app{"The time and energy rooflines of runs from their parameters, with the roofline "
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
