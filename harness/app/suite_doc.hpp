#pragma once
// docs/suite.md, the suite on one page: every family of the program, what it measures, its
// probes, the parameters it may emit, its figure and its wall time in the committed full H100
// run, generated from the registry (base/probe.hpp, base/family.hpp), the catalog
// (base/parameters/) and that run's families.csv by `gpuprobe catalog --suite docs/suite.md`.
// Suite.ThePageIsGenerated fails when the committed page differs from what the program gives.
#include <map>
#include <string>

namespace gpuprobe {

// families.csv of the committed full H100 run, from the source tree: the wall times shown.
extern const char kSuiteTimesRun[];

// A family's row of a run's families.csv: its wall time, or why the run did not measure it.
struct FamilyTime {
  double wall_s = 0;    // status ok
  std::string not_run;  // otherwise: "<status>: <message>" ("unsupported: needs two or more GPUs")
};

// The page for the families registered in this program. `times` holds each family's row (a
// family absent from it reads "not in that run"); `plots_dir` is where the figure scripts are,
// for their titles ("" leaves the titles out).
std::string suite_page(const std::map<std::string, FamilyTime>& times, const std::string& plots_dir,
                       const std::string& times_source);

// The family -> row of a run's families.csv.
std::map<std::string, FamilyTime> read_family_times(const std::string& families_csv);

}  // namespace gpuprobe
