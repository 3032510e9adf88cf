#include "base/ranks.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "base/run_dir.hpp"

namespace gpuprobe {

namespace {

// A job of more ranks than this is a typo, not a cluster.
constexpr long kMaxRanks = 1 << 20;

struct Launcher {
  const char* rank;
  const char* size;
  const char* local;
};
const Launcher kLaunchers[] = {
    {"GPUPROBE_RANK", "GPUPROBE_NRANKS", "GPUPROBE_LOCAL_RANK"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
};

// A whole number in [lo, hi] from variable `name`.
int whole(const EnvLookup& env, const char* name, long lo, long hi) {
  const char* v = env(name);
  if (!v) throw std::invalid_argument(std::string(name) + " is not set");
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v, &end, 10);
  if (*v == '\0' || *end != '\0' || errno != 0 || x < lo || x > hi)
    throw std::invalid_argument(std::string(name) + "='" + v + "': expected a whole number in " +
                                std::to_string(lo) + ".." + std::to_string(hi));
  return int(x);
}

std::string job_of(const EnvLookup& env) {
  if (const char* j = env("GPUPROBE_JOB")) return j;
  if (const char* j = env("SLURM_JOB_ID")) {
    const char* step = env("SLURM_STEP_ID");
    return std::string(j) + "." + (step ? step : "");
  }
  if (const char* j = env("OMPI_MCA_ess_base_jobid")) return j;
  return "";
}

const char kIdHeader[] = "gpuprobe-nccl-id 1";

}  // namespace

RankPlan rank_plan_from_env(const EnvLookup& env) {
  for (const Launcher& l : kLaunchers) {
    if (!env(l.rank)) continue;
    RankPlan p;
    p.nranks = whole(env, l.size, 1, kMaxRanks);
    p.rank = whole(env, l.rank, 0, p.nranks - 1);
    p.local_rank = env(l.local) ? whole(env, l.local, 0, p.nranks - 1) : p.rank;
    p.source =
        std::string(l.rank) + "/" + l.size + (env(l.local) ? std::string("/") + l.local : "");
    p.job = job_of(env);
    return p;
  }
  throw std::invalid_argument(
      "no rank in the environment: set GPUPROBE_RANK and GPUPROBE_NRANKS, or start the processes "
      "with srun or mpirun");
}

RankPlan rank_plan_from_env() {
  return rank_plan_from_env([](const char* n) { return std::getenv(n); });
}

int local_device(const RankPlan& plan, int visible) {
  if (visible < 1)
    throw std::invalid_argument("no GPU visible to rank " + std::to_string(plan.rank));
  if (visible == 1) return 0;
  if (plan.local_rank < visible) return plan.local_rank;
  throw std::invalid_argument("local rank " + std::to_string(plan.local_rank) +
                              " has no GPU of its own: " + std::to_string(visible) +
                              " visible (start at most one process per GPU of a host)");
}

std::string id_file_text(const NcclId& id, const std::string& job) {
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char b : id) {
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return std::string(kIdHeader) + "\njob=" + job + "\nid=" + hex + "\n";
}

bool parse_id_file(const std::string& text, NcclId* id, std::string* job) {
  std::istringstream in(text);
  std::string header, job_line, id_line;
  if (!std::getline(in, header) || header != kIdHeader || !std::getline(in, job_line) ||
      job_line.rfind("job=", 0) != 0 || !std::getline(in, id_line) || id_line.rfind("id=", 0) != 0)
    return false;
  const std::string hex = id_line.substr(3);
  if (hex.size() != 2 * kNcclIdBytes) return false;
  auto nibble = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  for (size_t i = 0; i < kNcclIdBytes; ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*id)[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  *job = job_line.substr(4);
  return true;
}

void write_id_file(const std::string& path, const NcclId& id, const std::string& job) {
  write_file_atomic(path, id_file_text(id, job));
}

NcclId wait_for_id_file(const std::string& path, const std::string& job, double timeout_s,
                        double poll_s) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  std::string found = "no file";
  for (;;) {
    if (file_exists(path)) {
      NcclId id{};
      std::string its_job;
      std::string text;
      try {
        text = read_file(path);
      } catch (const std::runtime_error&) {
        text.clear();  // removed between the check and the read: rank 0 is replacing it
      }
      if (!text.empty() && !parse_id_file(text, &id, &its_job))
        throw std::runtime_error(path + " is not an NCCL id file of gpuprobe");
      if (!text.empty() && its_job == job) return id;
      if (!text.empty())
        found = "a file of job '" + its_job + "', not this job's '" + job + "' (stale: remove it)";
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(poll_s));
  }
  throw std::runtime_error("no NCCL id for this job in " + path + " after " +
                           std::to_string(int(timeout_s)) + " s (" + found +
                           "): rank 0 writes it when it starts the collectives");
}

namespace {
std::unique_ptr<RankPlan>& plan_slot() {
  static std::unique_ptr<RankPlan> p;
  return p;
}
}  // namespace

void set_process_ranks(const RankPlan& plan) { plan_slot() = std::make_unique<RankPlan>(plan); }

const RankPlan* process_ranks() { return plan_slot().get(); }

}  // namespace gpuprobe
