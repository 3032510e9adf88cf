#include "app/fleet.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>

#include "app/cli.hpp"
#include "app/cli_parse.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/run_dir.hpp"
#include "base/stats.hpp"

namespace gpuprobe {

std::vector<FleetCell> fleet_deviations(const std::vector<FleetMember>& members, double robust_z,
                                        double min_deviation) {
  // parameter -> (member, value), in first-seen order of parameters.
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<size_t, const Parameter*>>> by;
  for (size_t m = 0; m < members.size(); ++m)
    for (const auto& p : members[m].params) {
      if (!std::isfinite(p.value)) continue;
      auto& v = by[p.name];
      if (v.empty()) order.push_back(p.name);
      v.push_back({m, &p});
    }
  std::vector<FleetCell> out;
  for (const auto& name : order) {
    const auto& v = by[name];
    if (int(v.size()) < kMinFleetSize) continue;
    std::vector<double> values;
    for (const auto& [m, p] : v) values.push_back(p->value);
    const double med = median(values);
    std::vector<double> abs_dev;
    for (double x : values) abs_dev.push_back(std::fabs(x - med));
    const double mad = median(abs_dev);
    for (const auto& [m, p] : v) {
      FleetCell c;
      c.parameter = name;
      c.unit = p->unit;
      c.member = m;
      c.value = p->value;
      c.median = med;
      c.mad = mad;
      const double d = p->value - med;
      c.robust_z = mad > 0 ? d / (kMadToSigma * mad)
                           : (d == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), d));
      c.deviation = med != 0 ? d / std::fabs(med) : (d == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), d));
      c.outlier = std::fabs(c.robust_z) > robust_z && std::fabs(c.deviation) > min_deviation;
      out.push_back(c);
    }
  }
  return out;
}

FleetMember load_fleet_member(const std::string& run_dir, std::vector<std::string>* rejected) {
  FleetMember m;
  m.label = run_dir;
  Metadata meta;
  m.params = read_parameters(run_dir + "/parameters.csv", &meta, rejected);
  // A parameters.csv written by `gpuprobe analyze` has no header: the run's families.csv has.
  if (meta.empty() && file_exists(run_dir + "/families.csv")) meta = read_csv(run_dir + "/families.csv").meta;
  for (const auto& [k, v] : meta) {
    if (k == "gpu") m.gpu = v;
    if (k == "pci_bus_id") m.pci_bus_id = v;
    if (k == "hostname") m.host = v;
  }
  m.card = card_key(meta);
  return m;
}

namespace {

std::string num(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string fleet_cards_text(const std::vector<FleetMember>& members) {
  std::map<std::string, int> runs_of;
  int unrecorded = 0;
  for (const auto& m : members) (m.card == kUnrecordedCard ? unrecorded : runs_of[m.card]) += 1;
  std::string md = "Cards: " + std::to_string(runs_of.size()) + " named by their runs";
  const char* sep = ": ";
  for (const auto& [card, n] : runs_of) {
    md += sep + card + " (" + std::to_string(n) + (n == 1 ? " run)" : " runs)");
    sep = ", ";
  }
  if (unrecorded > 0)
    md +=
        "; " + std::to_string(unrecorded) + (unrecorded == 1 ? " run records" : " runs record") +
        " no card (made before runs named it): each may be any card, and none is taken for another's";
  md += ".\n";
  for (const auto& [card, n] : runs_of)
    if (n > 1) {
      md += "Warning: several runs of one card weigh in the fleet median as that many cards.\n";
      break;
    }
  return md + "\n";
}

std::string format_fleet_csv(const std::vector<FleetMember>& members, const std::vector<FleetCell>& cells,
                             double robust_z, double min_deviation) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : cells) {
    const FleetMember& m = members[c.member];
    rows.push_back({m.label, m.gpu, m.card, m.pci_bus_id, c.parameter, num(c.value), c.unit,
                    num(c.median), num(c.mad), num(c.robust_z), num(c.deviation),
                    c.outlier ? "1" : "0"});
  }
  Metadata meta = {{"gpuprobe_fleet", std::to_string(members.size()) + " runs"},
                   {"outlier_rule", "|robust z| > " + num(robust_z) + " and |deviation| > " +
                                        num(min_deviation) + "; robust z = (x - median) / (1.4826 MAD)"}};
  return format_csv(meta,
                    {"run", "gpu", "card", "pci_bus_id", "parameter", "value", "unit",
                     "fleet_median", "fleet_mad", "robust_z", "deviation", "outlier"},
                    rows);
}

std::string format_fleet_markdown(const std::vector<FleetMember>& members, const std::vector<FleetCell>& cells,
                                  double robust_z, double min_deviation) {
  std::string md = "# gpuprobe fleet: " + std::to_string(members.size()) + " runs\n\n";
  md += "Outlier: |robust z| > " + num(robust_z) + " (z = (x - fleet median) / (1.4826 MAD)) and more than " +
        num(100 * min_deviation) + " % from the fleet median; parameters measured by fewer than " +
        std::to_string(kMinFleetSize) + " runs are not compared.\n\n";
  std::map<std::string, int> models;
  for (const auto& m : members) ++models[m.gpu.empty() ? "unknown GPU" : m.gpu];
  if (models.size() > 1) {
    std::string list;
    for (const auto& [g, n] : models) list += (list.empty() ? "" : "; ") + g + ": " + std::to_string(n);
    md += "Warning: the fleet mixes GPU models (" + list + "): a model in the minority shows as outliers.\n\n";
  }
  md += fleet_cards_text(members);
  std::map<size_t, std::vector<const FleetCell*>> flagged;
  for (const auto& c : cells)
    if (c.outlier) flagged[c.member].push_back(&c);
  if (flagged.empty()) {
    md += "No outliers.\n";
  } else {
    md +=
        "| run | card | gpu | parameter | value | fleet median | deviation | robust z |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const auto& [m, list] : flagged)
      for (const FleetCell* c : list)
        md += "| " + members[m].label + " | " + card_short(members[m].card) + " | " +
              members[m].gpu + " | " + c->parameter + " | " + num(c->value) + " " + c->unit +
              " | " + num(c->median) + " | " + num(100 * c->deviation) + " % | " +
              num(c->robust_z) + " |\n";
  }
  md += "\n" + std::to_string(flagged.size()) + " of " + std::to_string(members.size()) + " runs have outliers.\n";
  return md;
}

int fleet_main(const std::vector<std::string>& args) {
  CLI::App app{"Many runs of GPUs that should be alike, each parameter set against the fleet's median and "
               "the outliers flagged (markdown on stdout; no GPU).",
               "gpuprobe compare --fleet"};
  std::vector<std::string> dirs;
  std::string csv;
  double z = kOutlierRobustZ, min_dev = kMinOutlierDeviation;
  app.add_option("RUN_DIR", dirs, "the runs, at least " + std::to_string(kMinFleetSize))->required();
  app.add_option("--csv", csv, "also every deviation as CSV")->type_name("FILE")->check(non_empty());
  app.add_option("--z", z, "robust z-score beyond which a value is an outlier")
      ->check(finite_positive())
      ->capture_default_str();
  app.add_option("--min-deviation", min_dev, "and the fraction of the median it must differ by")
      ->check(finite_positive())
      ->capture_default_str();
  auto enough_runs = [&] {
    if (int(dirs.size()) < kMinFleetSize)
      throw UsageError("--fleet: expected at least " + std::to_string(kMinFleetSize) + " RUN_DIRs");
  };
  if (auto code = parse_subcommand(app, args, "gpuprobe compare", enough_runs)) return *code;
  try {
    if (!csv.empty()) check_output_path(csv);  // before any work
    std::vector<FleetMember> members;
    std::vector<std::string> rejected;  // rows of a parameters.csv not used, each said
    for (const auto& d : dirs) {
      if (!std::filesystem::is_directory(d)) throw std::runtime_error(d + ": not a run directory");
      members.push_back(load_fleet_member(d, &rejected));
    }
    auto cells = fleet_deviations(members, z, min_dev);
    if (!csv.empty()) write_file_atomic(csv, format_fleet_csv(members, cells, z, min_dev));
    std::fputs(format_fleet_markdown(members, cells, z, min_dev).c_str(), stdout);
    for (const auto& r : rejected) std::fprintf(stderr, "gpuprobe compare: %s\n", r.c_str());
    return checked_stdout("gpuprobe compare", rejected.empty() ? 0 : 1);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuprobe compare: %s\n", e.what());
    return 1;
  }
}

}  // namespace gpuprobe
