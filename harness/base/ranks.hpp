#pragma once
// One process per GPU, the way a job across nodes runs (`gpuprobe run --ranks-from-env`): where
// this process stands among the job's, read from the environment its launcher sets, and the
// hand-over of NCCL's unique id from rank 0 to the others through a file on a shared file
// system. Pure C++ (no NCCL, no CUDA), so that the parsing and the hand-over are tested here.
#include <array>
#include <functional>
#include <string>

namespace gpuprobe {

struct RankPlan {
  int rank = 0, nranks = 1;
  int local_rank = 0;   // among the processes of this host
  std::string source;   // the variables read: "SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID"
  std::string job;      // the job's id, "" where the launcher gives none: tells a stale id file
  std::string id_file;  // where rank 0 leaves NCCL's unique id; "" when NCCL_COMM_ID gives it
};

// A variable's value or nullptr (std::getenv's contract), so that tests need no environment.
using EnvLookup = std::function<const char*(const char*)>;

// The first launcher's variables that are set, in this order: GPUPROBE_RANK / GPUPROBE_NRANKS
// [/ GPUPROBE_LOCAL_RANK] (given by hand), OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK (mpirun,
// which inside a Slurm allocation also sees Slurm's), SLURM_PROCID / SLURM_NTASKS /
// SLURM_LOCALID (srun), PMI_RANK / PMI_SIZE / MPI_LOCALRANKID (MPICH, Intel MPI). A missing
// local rank is the rank (one host). The job is GPUPROBE_JOB, else SLURM_JOB_ID.SLURM_STEP_ID,
// else OMPI_MCA_ess_base_jobid. Throws std::invalid_argument, one line naming the variable,
// when none is set or a value is no whole number in range.
RankPlan rank_plan_from_env(const EnvLookup& env);
RankPlan rank_plan_from_env();  // this process's environment

// The CUDA device of this rank among the `visible` ones: the only one (a launcher that gives
// each task its GPU), else the local rank's. Throws std::invalid_argument when the local rank
// has no device of its own.
int local_device(const RankPlan& plan, int visible);

// NCCL's unique id (ncclUniqueId, NCCL_UNIQUE_ID_BYTES in nccl.h).
constexpr size_t kNcclIdBytes = 128;
using NcclId = std::array<unsigned char, kNcclIdBytes>;
// How long the other ranks wait for rank 0's file: rank 0 reads the program's SASS and
// measures the clock before it starts the family (seconds on a busy file system).
constexpr double kIdWaitSeconds = 300;
constexpr double kIdPollSeconds = 0.05;

// The id file's text ("gpuprobe-nccl-id 1", "job=...", "id=<256 hex digits>") and back; false
// for anything else.
std::string id_file_text(const NcclId& id, const std::string& job);
bool parse_id_file(const std::string& text, NcclId* id, std::string* job);
// Rank 0: writes the file through a temporary name renamed into place, so that a reader sees
// all of it or nothing. Throws std::runtime_error naming the path.
void write_id_file(const std::string& path, const NcclId& id, const std::string& job);
// The other ranks: the id in `path` once a file of this job is there. A file of another job
// (left by an earlier one) is waited past, for rank 0 to replace. Throws std::runtime_error
// after `timeout_s`, saying what was found.
NcclId wait_for_id_file(const std::string& path, const std::string& job,
                        double timeout_s = kIdWaitSeconds, double poll_s = kIdPollSeconds);

// The plan of this process when it is one rank of several, set once by the program before any
// family runs; nullptr when one process drives every GPU.
void set_process_ranks(const RankPlan& plan);
const RankPlan* process_ranks();

}  // namespace gpuprobe
