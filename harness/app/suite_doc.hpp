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

// The page for the families registered in this program. `wall_s` holds each family's wall
// time (a family absent from it reads "not in that run"); `plots_dir` is where the figure
// scripts are, for their titles ("" leaves the titles out).
std::string suite_page(const std::map<std::string, double>& wall_s, const std::string& plots_dir,
                       const std::string& times_source);

// The family -> wall_time_s of a run's families.csv (rows whose status is not "ok" left out).
std::map<std::string, double> read_wall_times(const std::string& families_csv);

}  // namespace gpuprobe
