#pragma once
// `gpuprobe compare --fleet RUN_DIR...`: many runs of GPUs that should be alike (one per GPU of
// a cluster, from scripts/slurm/gpuprobe.sbatch), each parameter set against the fleet's
// median, and the outliers flagged: the slow GPU, the throttled clock, the degraded link.
//
// A value is an outlier when its robust z-score, (x - median) / (1.4826 MAD), passes
// kOutlierRobustZ AND it lies more than kMinOutlierDeviation from the median: the first keeps
// the fleet's own spread in view, the second stops a fleet of near-identical GPUs (MAD ~ 0)
// from flagging differences no measurement resolves.
#include <string>
#include <vector>

#include "base/card.hpp"
#include "base/observation.hpp"

namespace gpuprobe {

constexpr double kOutlierRobustZ = 3.5;        // Iglewicz & Hoaglin's cut for modified z-scores
constexpr double kMinOutlierDeviation = 0.05;  // 5 %: above the run-to-run spread of most parameters
constexpr int kMinFleetSize = 3;               // a median of two says nothing about which is off
constexpr double kMadToSigma = 1.4826;         // MAD of a normal distribution, in sigmas

struct FleetMember {
  std::string label;  // the run directory
  std::string gpu, pci_bus_id, host;
  std::string card = kUnrecordedCard;  // card_key() of its header (base/card.hpp)
  std::vector<Parameter> params;
};

struct FleetCell {
  std::string parameter, unit;
  size_t member = 0;  // index into the members
  double value = 0, median = 0, mad = 0;
  double robust_z = 0;   // 0 when MAD is 0 and the value is the median; +-inf when MAD is 0
  double deviation = 0;  // (value - median) / |median|
  bool outlier = false;
};

// Which cards the fleet's runs are of (runs of one card are one card's evidence), as a markdown
// paragraph: each card by its UUID with its run count, and the runs that record no card.
std::string fleet_cards_text(const std::vector<FleetMember>& members);

// Every parameter that at least kMinFleetSize members measured, per member.
std::vector<FleetCell> fleet_deviations(const std::vector<FleetMember>& members,
                                        double robust_z = kOutlierRobustZ,
                                        double min_deviation = kMinOutlierDeviation);

// Reads RUN_DIR/parameters.csv (and its metadata); throws CsvError on a malformed file. A row
// that cannot be used is left out and described in *rejected (without it: throws).
FleetMember load_fleet_member(const std::string& run_dir,
                              std::vector<std::string>* rejected = nullptr);

std::string format_fleet_csv(const std::vector<FleetMember>& members, const std::vector<FleetCell>& cells,
                             double robust_z, double min_deviation);
// Markdown: the outliers by GPU, then a count per parameter.
std::string format_fleet_markdown(const std::vector<FleetMember>& members, const std::vector<FleetCell>& cells,
                                  double robust_z, double min_deviation);

// args: RUN_DIR... [--csv FILE] [--z Z] [--min-deviation F]. Markdown on stdout. Exit code 0,
// 2 on bad input, 1 when a run cannot be read.
int fleet_main(const std::vector<std::string>& args);

}  // namespace gpuprobe
