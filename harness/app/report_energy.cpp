// report.md's power sections: the families that ran with a clock-limiting reason active
// (families.csv's operating-point columns), and the energy family's held-out check.
#include <cmath>
#include <filesystem>

#include "analysis/common/util.hpp"
#include "analysis/energy.hpp"
#include "app/report_detail.hpp"
#include "base/operating_point.hpp"

namespace gpuprobe {

namespace fs = std::filesystem;

namespace {

std::string cell_of(const CsvTable& t, const std::vector<std::string>& row,
                    const std::string& col) {
  const int c = t.column(col);
  return c >= 0 && static_cast<size_t>(c) < row.size() ? row[static_cast<size_t>(c)] : "";
}

// Families with a limiting reason in their NVML samples; "" for a run without the columns.
std::string throttled_markdown(const CsvTable& families) {
  if (families.column("throttled_fraction") < 0) return "";
  std::vector<std::vector<std::string>> rows = {{"family", "reasons", "share of samples",
                                                 "power (W)", "SM clock (MHz, median / least)",
                                                 "temperature (max, C)"}};
  for (const auto& r : families.rows) {
    double fraction = 0;
    if (!parse_number(cell_of(families, r, "throttled_fraction"), &fraction) || !(fraction > 0))
      continue;
    const unsigned long long limiting =
        throttle_reason_mask(cell_of(families, r, "throttle_reasons")) & kLimitingReasons;
    rows.push_back({r[0], throttle_reason_text(limiting), format_printf("%.0f %%", 100 * fraction),
                    cell_of(families, r, "power_w"),
                    cell_of(families, r, "nvml_sm_clock_mhz") + " / " +
                        cell_of(families, r, "nvml_sm_clock_min_mhz"),
                    cell_of(families, r, "temperature_max_c")});
  }
  std::string md = "### Operating point\n\n";
  if (rows.size() == 1)
    return md +
           "No family ran with a power, thermal or slowdown clock-event reason active (NVML, read "
           "every "
           "25 ms through the run: `" +
           std::string(kTraceFile) +
           "`; each family's power, clocks and "
           "temperature in families.csv).\n\n";
  return md +
         "These families ran with a power, thermal or slowdown clock-event reason active; their "
         "values "
         "name it in their evidence, and their confidence is lowered by up to " +
         format_printf("%.0f %%", 100 * kThrottlePenalty) + " (by the share of samples):\n\n" +
         markdown_table(rows) + "\n";
}

std::string heldout_markdown(const RunData& run, Diagnostics& diag) {
  const std::string path = run.file_of(std::string(energy::kFamily.name));
  if (path.empty()) return "";
  std::vector<Observation> obs;
  try {
    obs = read_observations(path);
  } catch (const std::exception& e) {
    diag.warn(e.what());
    return "";
  }
  const auto checks = energy::heldout_checks(obs, run.params);
  if (checks.empty()) return "";
  std::vector<std::vector<std::string>> rows = {{"kernel", "measured (J/launch)",
                                                 "predicted (J/launch)", "error", "within 10 %",
                                                 "predicted from"}};
  for (const auto& c : checks) {
    std::string from;
    for (const auto& [term, joules] : c.terms)
      from += (from.empty() ? "" : ", ") + term +
              (c.predicted_j > 0 ? format_printf(" %.0f %%", 100 * joules / c.predicted_j) : "");
    if (!c.note.empty()) from += (from.empty() ? "" : "; ") + c.note;
    rows.push_back({c.kernel, analysis::num(c.measured_j),
                    c.predicted ? analysis::num(c.predicted_j) : "-",
                    c.predicted ? format_printf("%+.1f %%", 100 * c.error) : "-",
                    c.predicted ? (std::fabs(c.error) <= energy::kHeldOutGoal ? "yes" : "no") : "-",
                    md_escape(from)});
  }
  return "### Energy check: kernels the fits never saw\n\nThe energy of one launch of each "
         "held-out kernel, "
         "measured with NVML's energy counter and predicted from this run's parameters alone "
         "(static_power x "
         "time per launch + each operation's and byte's energy x its count; each term's "
         "share):\n\n" +
         markdown_table(rows) + "\n";
}

}  // namespace

std::string power_markdown(const RunData& run, const CsvTable& families, Diagnostics& diag) {
  std::string md = throttled_markdown(families) + heldout_markdown(run, diag);
  return md.empty() ? "" : "## Power and energy\n\n" + md;
}

}  // namespace gpuprobe
