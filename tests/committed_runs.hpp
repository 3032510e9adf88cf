#pragma once
// The committed runs the tests read, named in one table. A test reads the runs this table
// names, never whatever happens to lie under results/: a run of one's own placed there
// changes nothing the tests check, and a named run that is missing fails the tests that read
// it (it does not skip them). To retire or replace a committed run, edit its row here (and
// the roles below that name it: kH100Run, kH200Run, kH200TwoGpuRun, kH100FilteredRun,
// kQuickFullPairs);
// CommittedRuns.TheTableListsEveryTrackedRun says when a run git tracks is not in the table.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace gpuprobe {

enum class RunKind {
  full,      // the whole suite
  quick,     // the whole suite with --quick (not_measured.csv); checked against its full twin
  filtered,  // --filter to some families
  repeat,    // one of several runs of one GPU in a row: parameters and families (gpuprobe spread)
};

struct CommittedRun {
  const char* dir;  // under results/
  RunKind kind;
  const char* why;  // what the tests read it for, beyond re-analysis and rendering
};

// Every run of every kind (but repeat) is re-analysed against its committed parameters.csv
// (Reanalysis), checked for names docs/parameters.md lacks (Families), and reported and
// compared with every figure (CommittedRuns); a quick run is held to the full run of its
// version and GPU (QuickRuns); the Hopper runs' ladder to 1 % (ModelGpus).
inline constexpr CommittedRun kCommittedRuns[] = {
    {"nvidia-h100-80gb-hbm3/20261122T082310Z", RunKind::full,
     "the first whole-suite H100 run (d0cf282): renames and deliberate changes since"},
    {"nvidia-h100-80gb-hbm3/20261122T082400Z", RunKind::filtered,
     "kH100FilteredRun: associativity, bandwidth and tlb again (the CLI tests' copy)"},
    {"nvidia-h100-80gb-hbm3/20261125T180258Z", RunKind::filtered,
     "p2p and host_link alone (282aa80): a filtered run without latency"},
    {"nvidia-h100-80gb-hbm3/20261125T225436Z", RunKind::full,
     "the H100 of results/compare/ (28a9211; its quick twin retired)"},
    {"nvidia-h100-80gb-hbm3/20261126T013959Z", RunKind::full,
     "kH100Run: the figures, report layout, exports, fleet and paper table (96f4783)"},
    {"nvidia-h100-80gb-hbm3/20261126T014039Z", RunKind::quick, "a quick H100 run of 96f4783"},
    {"nvidia-h200/20261122T081642Z", RunKind::full, "the first whole-suite H200 run (d0cf282)"},
    {"nvidia-h200/20261125T225152Z", RunKind::full,
     "kH200Run and kH200TwoGpuRun: the paper table's H200; two GPUs for p2p (28a9211)"},
    {"nvidia-h200/20261125T225234Z", RunKind::quick, "a quick H200 run of 28a9211"},
    {"nvidia-h200/20261128T110751Z", RunKind::full,
     "2 x H200 NV18 (93ac6dc): energy, the operating point, p2p and collectives beside nvbandwidth "
     "and nccl-tests (docs/node.md); the third of repeatability/nvidia-h200-93ac6dc"},
    {"nvidia-h200/20261128T110913Z", RunKind::quick, "the quick twin of 110751Z (93ac6dc)"},
    {"nvidia-h200/20261128T110927Z", RunKind::filtered,
     "collectives with one process per GPU (scripts/collectives-local.sh 2) beside 110751Z's one"},
    {"repeatability/nvidia-h200-93ac6dc/runs/20261128T110508Z", RunKind::repeat,
     "three full runs in a row on one 2 x H200 host (93ac6dc): docs/repeatability.md's After"},
    {"repeatability/nvidia-h200-93ac6dc/runs/20261128T110630Z", RunKind::repeat, "(the second)"},
    {"repeatability/nvidia-h200-93ac6dc/runs/20261128T110751Z", RunKind::repeat,
     "(the third: nvidia-h200/20261128T110751Z's parameters and families)"},
    {"repeatability/nvidia-h200-f32ad6f/runs/20261128T112843Z", RunKind::repeat,
     "three full runs in a row on another 2 x H200 host (f32ad6f): the floors of 1.5 %"},
    {"repeatability/nvidia-h200-f32ad6f/runs/20261128T113003Z", RunKind::repeat, "(the second)"},
    {"repeatability/nvidia-h200-f32ad6f/runs/20261128T113121Z", RunKind::repeat, "(the third)"},
    {"repeatability/nvidia-h200-5b0501a/runs/20261125T190952Z", RunKind::repeat,
     "three runs of one H200 in a row: Spread.CommittedRepeatRunsFlagTheLaunchOverhead"},
    {"repeatability/nvidia-h200-5b0501a/runs/20261125T191033Z", RunKind::repeat, "(the second)"},
    {"repeatability/nvidia-h200-5b0501a/runs/20261125T191114Z", RunKind::repeat, "(the third)"},
    {"repeatability/nvidia-h100-b606fb1/runs/20261206T041051Z", RunKind::repeat,
     "the fit card: three full runs in a row of b606fb1 on one H100 (docs/repeatability.md)"},
    {"repeatability/nvidia-h100-b606fb1/runs/20261206T041213Z", RunKind::repeat, "(the second)"},
    {"repeatability/nvidia-h100-b606fb1/runs/20261206T041518Z", RunKind::repeat, "(the third)"},
    {"repeatability/nvidia-h100-b606fb1/runs/20261206T043538Z", RunKind::repeat,
     "the check card: two full runs of b606fb1 on a second H100, which set no floor"},
    {"repeatability/nvidia-h100-b606fb1/runs/20261206T043654Z", RunKind::repeat, "(the second)"},
};

// The whole-suite run of each GPU that the tests of figures, report, exports, fleet and the
// paper table read (the H100's report is rendered once for several: tests/shared_render.hpp).
inline constexpr const char* kH100Run = "nvidia-h100-80gb-hbm3/20261126T013959Z";
inline constexpr const char* kH200Run = "nvidia-h200/20261125T225152Z";
// A run of two GPUs of one node (p2p.csv) from before the node_* metadata: the p2p tests.
inline constexpr const char* kH200TwoGpuRun = "nvidia-h200/20261125T225152Z";
// A small filtered H100 run (three families) that the command-line tests copy and report.
inline constexpr const char* kH100FilteredRun = "nvidia-h100-80gb-hbm3/20261122T082400Z";

// The quick runs held to a full run (tests/test_quick_runs.cpp): a quick and a full run of one
// head, made one after the other on one machine, for each GPU.
struct QuickFullPair {
  const char* quick;
  const char* full;
};
inline constexpr QuickFullPair kQuickFullPairs[] = {
    {"nvidia-h100-80gb-hbm3/20261126T014039Z", "nvidia-h100-80gb-hbm3/20261126T013959Z"},
    {"nvidia-h200/20261125T225234Z", "nvidia-h200/20261125T225152Z"},
    {"nvidia-h200/20261128T110913Z", "nvidia-h200/20261128T110751Z"},
};

// The folder of a committed run (`dir` under results/). A run that is missing, or lacks the
// parameters.csv every run has, fails the test that asks for it; the path is returned
// anyway, so that the test's own reads fail too instead of reading something else.
inline std::string committed_run(const std::string& dir) {
  const std::filesystem::path path = std::filesystem::path(GPUPROBE_SOURCE_DIR) / "results" / dir;
  if (!std::filesystem::exists(path / "parameters.csv"))
    ADD_FAILURE() << "the committed run results/" << dir << " is missing "
                  << "(tests/committed_runs.hpp names it: restore it, or edit the table)";
  return path.string();
}

// The folders of the table's runs of the kinds asked for, in the table's order; each missing
// one fails the calling test.
inline std::vector<std::string> committed_run_dirs(const std::vector<RunKind>& kinds) {
  std::vector<std::string> out;
  for (const auto& r : kCommittedRuns)
    for (RunKind k : kinds)
      if (r.kind == k) out.push_back(committed_run(r.dir));
  return out;
}

// Every run of the table but the repeat runs: those a test re-analyses and reports.
inline std::vector<std::string> committed_run_dirs() {
  return committed_run_dirs({RunKind::full, RunKind::quick, RunKind::filtered});
}

}  // namespace gpuprobe
