#include "program/ranks.hpp"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "analysis/collectives.hpp"
#include "base/probe.hpp"
#include "base/ranks.hpp"
#include "gpu/device.hpp"

namespace gpuprobe {

namespace {

// The context of a rank other than 0: it measures and records nothing (rank 0 does), and says
// on stderr what it skips.
class FollowerContext : public RunContext {
 public:
  FollowerContext(const ProbeFamily& fam, const DeviceInfo& dev, const Options& opt, int rank)
      : fam_(fam), dev_(dev), opt_(opt), rank_(rank) {}
  const DeviceInfo& device() const override { return dev_; }
  bool quick() const override { return opt_.quick; }
  double sm_clock_mhz() const override { return NAN; }
  bool enabled(const std::string& probe) const override {
    return filter_matches(opt_.filter, fam_.name() + "/" + probe);
  }
  Observation measure(const Point& point, const std::function<Sample()>&) override {
    throw std::logic_error("rank " + std::to_string(rank_) + " measured " + point.probe +
                           ": only rank 0 measures");
  }
  void record(const Observation&) override {}
  void progress(const std::string&) override {}
  void invalid(const std::string& probe, const std::string& why) override {
    note("invalid", probe, why);
  }
  void skip(const std::string& probe, const std::string& why) override {
    note("skipped", probe, why);
  }

 private:
  void note(const char* what, const std::string& probe, const std::string& why) const {
    std::fprintf(stderr, "gpuprobe: rank %d: %s/%s %s: %s\n", rank_, fam_.name().c_str(),
                 probe.c_str(), what, why.c_str());
  }
  const ProbeFamily& fam_;
  const DeviceInfo& dev_;
  const Options& opt_;
  int rank_;
};

// The one family --ranks-from-env runs; UsageError when the filter selects another or none.
ProbeFamily& ranked_family(const std::string& filter) {
  ProbeFamily* found = nullptr;
  for (auto& f : probe_families()) {
    bool selected = false;
    for (const auto& p : f->probes())
      selected = selected || filter_matches(filter, f->name() + "/" + p.name);
    if (!selected) continue;
    if (f->name() != collectives::kFamily.name)
      throw UsageError("--ranks-from-env runs the collectives family alone; --filter '" + filter +
                       "' also selects " + f->name());
    found = f.get();
  }
  if (!found) throw UsageError("--ranks-from-env: --filter '" + filter + "' selects no collective");
  return *found;
}

int follow_rank_zero(ProbeFamily& fam, const Options& opt, const RankPlan& plan) {
  // A Ctrl-C reaches every rank of a host. Rank 0 ends the job between two steps and tells the
  // others (microbench/collectives.cu); a rank that left at once would leave rank 0 waiting in
  // that message. SIGTERM still ends a rank (the launcher's way to end them all).
  std::signal(SIGINT, SIG_IGN);
  try {
    const DeviceInfo dev = open_device(local_device(plan, visible_device_count()));
    std::string why;
    if (!fam.supported(dev, &why)) {
      std::fprintf(stderr, "gpuprobe: rank %d: %s skipped: %s\n", plan.rank, fam.name().c_str(),
                   why.c_str());
      return 0;
    }
    FollowerContext ctx(fam, dev, opt, plan.rank);
    fam.run(ctx);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuprobe: rank %d: %s\n", plan.rank, e.what());
    return 1;
  }
  std::fprintf(stderr, "gpuprobe: rank %d of %d done\n", plan.rank, plan.nranks);
  return 0;
}

}  // namespace

std::optional<int> join_as_rank(const Options& opt) {
  RankPlan plan;
  try {
    plan = rank_plan_from_env();
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--ranks-from-env: ") + e.what());
  }
  plan.id_file = opt.nccl_id_file;
  if (plan.id_file.empty() && !std::getenv("NCCL_COMM_ID"))
    throw UsageError(
        "--ranks-from-env needs --nccl-id-file FILE (on a file system every rank sees) or "
        "NCCL_COMM_ID=<rank 0's host:port> in every rank's environment");
  ProbeFamily& fam = ranked_family(opt.filter);
  set_process_ranks(plan);
  std::fprintf(stderr, "gpuprobe: rank %d of %d (%s), local rank %d%s\n", plan.rank, plan.nranks,
               plan.source.c_str(), plan.local_rank,
               plan.job.empty() ? "" : (", job " + plan.job).c_str());
  if (plan.rank == 0) return std::nullopt;
  return follow_rank_zero(fam, opt, plan);
}

}  // namespace gpuprobe
