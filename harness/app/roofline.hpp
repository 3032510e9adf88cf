#pragma once
// `gpuprobe roofline RUN_DIR... [--out DIR] [--table markdown]`: the roofline model of each run
// (analysis/roofline_model.hpp) from its parameters alone (no GPU), written per GPU as
//   roofline.csv         the ceilings: name, kind (time|energy), value, low, high, unit, source
//   roofline_points.csv  each kernel of the run's roofline family: measured against predicted
//   roofline.json        the Empirical Roofline Tool's database, read by its Roofline Visualizer
// and the figures of the time and energy rooflines, the runs overlaid, under DIR/figures.
// The default DIR: RUN_DIR/roofline for one run, results/compare/roofline_<slug>_vs_<slug>
// for several. --table markdown prints the predicted-against-measured table instead.
#include <string>
#include <vector>

#include "analysis/roofline_model.hpp"

namespace gpuprobe {

// The files' texts, for the tests.
std::string roofline_ceilings_csv(const roofline::Model& m);
std::string roofline_points_csv(const std::vector<roofline::Prediction>& p);
std::string roofline_ert_json(const roofline::Model& m);
std::string roofline_table_markdown(const std::vector<std::string>& labels,
                                    const std::vector<std::vector<roofline::Prediction>>& p);

// The figures' data: roofs, bands, labels and the kernels' points (plots/roofline_*.gp);
// `run` (0, 1, ...) staggers the labels of overlaid runs.
std::string roofline_time_figure_csv(const roofline::Model& m,
                                     const std::vector<roofline::Prediction>& p, int run);
std::string roofline_energy_figure_csv(const roofline::Model& m,
                                       const std::vector<roofline::Prediction>& p, int run);

int roofline_main(const std::vector<std::string>& args);

}  // namespace gpuprobe
