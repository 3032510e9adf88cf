// NCCL collectives: all-reduce, all-gather, reduce-scatter, broadcast and all-to-all from 8 B to
// 1 GiB, timed as nccl-tests times them (src/common.cu, BenchTime: one call to settle, a barrier,
// then a host clock around 20 out-of-place calls of float32 sums and a wait for every stream;
// buffers from ncclMemAlloc, the offset moved on by one size per call), read as algbw and busbw.
// Two modes: one process drives every GPU of the host (ncclCommInitAll; communicators of 2, 4,
// ... GPUs and of all of them), or each process of a job drives one (`gpuprobe run
// --ranks-from-env`: the mode a job across nodes runs; ncclCommInitRank with the id rank 0 leaves
// in a file). There rank 0 measures and records, and sends the others each step before it is
// taken, so that every process makes the same calls whatever rank 0's harness decides.
// NCCL is loaded at run time (gpu/nccl.hpp); without it, or with one GPU, the family is skipped
// with the reason. NVLink multicast stays off (NCCL_NVLS_ENABLE=0 unless the user set it).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "analysis/collectives.hpp"
#include "analysis/common/util.hpp"
#include "base/ranks.hpp"
#include "base/signals.hpp"
#include "gpu/cuda.cuh"
#include "gpu/device.hpp"
#include "gpu/nccl.hpp"

namespace gpuprobe::collectives {

// Fills a rank's send buffer with one value, so that each collective's result can be checked.
__global__ void fill(float* p, size_t n, float v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    p[i] = v;
}

namespace {

constexpr int kFillBlocks = 256, kFillThreads = 256;
// Every collective's result is checked once, at this size, before it is timed.
constexpr size_t kCheckBytes = size_t(1) << 20;
// Room left beside the two buffers for NCCL's own buffers and the CUDA context.
constexpr size_t kHeadroomBytes = size_t(2) << 30;
constexpr int kRoot = 0;  // broadcast's root, nccl-tests' default

// A step every process takes: rank 0 sends it (Clique::share), each carries it out (execute).
enum Action : int64_t { kStop = 0, kAllocate = 1, kCheck = 2, kTime = 3 };
struct Command {
  int64_t action = kStop;
  int64_t collective = 0;  // index in all()
  int64_t bytes = 0;       // nominal size; kAllocate: the largest wanted
};

// A collective's result was wrong where it was checked: the communicator itself still works.
struct WrongResults : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One GPU of this process: one rank of the communicator.
struct Local {
  int device = 0, rank = 0;
  nccl::Comm comm = nullptr;
  cudaStream_t stream = nullptr;
  char* send = nullptr;
  char* recv = nullptr;
  int64_t* scratch = nullptr;  // commands and the reduction of a time across processes
};

class Clique {
 public:
  // One process, GPUs 0..gpus-1.
  Clique(const Nccl& nccl, int gpus) : nccl_(nccl), ranks_(gpus), processes_(1) {
    std::vector<int> devices(size_t(gpus), 0);
    std::iota(devices.begin(), devices.end(), 0);
    std::vector<nccl::Comm> comms(size_t(gpus), nullptr);
    nccl_.comm_init_all(comms.data(), gpus, devices.data());
    for (int d = 0; d < gpus; ++d) locals_.push_back({d, d, comms[size_t(d)]});
    try {
      for (Local& l : locals_) add_stream(l);
    } catch (...) {
      release(true);
      throw;
    }
  }
  // One rank of a job of plan.nranks processes, on `device`.
  Clique(const Nccl& nccl, const RankPlan& plan, int device)
      : nccl_(nccl), ranks_(plan.nranks), processes_(plan.nranks) {
    CUDA_CHECK(cudaSetDevice(device));
    nccl::UniqueId id{};
    // Rank 0's id goes to the file; without one, NCCL_COMM_ID gives every rank the same id.
    if (plan.id_file.empty() || plan.rank == 0) nccl_.get_unique_id(&id);
    if (!plan.id_file.empty() && plan.rank == 0) {
      NcclId bytes{};
      std::copy(id.internal, id.internal + kNcclIdBytes, bytes.begin());
      write_id_file(plan.id_file, bytes, plan.job);
    } else if (!plan.id_file.empty()) {
      const NcclId bytes = wait_for_id_file(plan.id_file, plan.job);
      std::copy(bytes.begin(), bytes.end(), id.internal);
    }
    nccl::Comm comm = nullptr;
    nccl_.comm_init_rank(&comm, plan.nranks, id, plan.rank);
    locals_.push_back({device, plan.rank, comm});
    // Every rank has joined: the file has served (a later job must not read it).
    if (!plan.id_file.empty() && plan.rank == 0) std::remove(plan.id_file.c_str());
    try {
      add_stream(locals_.back());
    } catch (...) {
      release(true);
      throw;
    }
  }
  // After a failure (unwinding) the communicators are aborted, not destroyed: a peer may be gone
  // or stuck, and ncclCommDestroy would wait for it.
  ~Clique() { release(std::uncaught_exceptions() > 0); }
  Clique(const Clique&) = delete;
  Clique& operator=(const Clique&) = delete;

  int ranks() const { return ranks_; }

  // Rank 0's command to every process (in place: the others' is overwritten); nothing to send
  // within one process.
  void share(Command* cmd) {
    if (processes_ == 1) return;
    Local& l = locals_.front();
    int64_t words[3] = {cmd->action, cmd->collective, cmd->bytes};
    CUDA_CHECK(cudaMemcpyAsync(l.scratch, words, sizeof words, cudaMemcpyHostToDevice, l.stream));
    nccl_.broadcast(l.scratch, l.scratch, 3, nccl::kInt64, kRoot, l.comm, l.stream);
    CUDA_CHECK(cudaMemcpyAsync(words, l.scratch, sizeof words, cudaMemcpyDeviceToHost, l.stream));
    CUDA_CHECK(cudaStreamSynchronize(l.stream));
    *cmd = {words[0], words[1], words[2]};
  }

  // Carries out a command on this process's GPUs: kAllocate gives the capacity every process
  // holds, kCheck the wrong elements over all ranks, kTime the seconds per call (the mean over
  // processes, as nccl-tests reports it).
  double execute(const Command& cmd) {
    const Collective c = all().at(size_t(cmd.collective));
    switch (cmd.action) {
      case kAllocate: return double(allocate(size_t(cmd.bytes)));
      case kCheck: return combine(check(c, std::min(size_t(cmd.bytes), capacity_)), nccl::kSum);
      case kTime: return combine(time_calls(c, size_t(cmd.bytes)), nccl::kSum) / processes_;
      default:
        throw std::runtime_error("collectives: unknown command " + std::to_string(cmd.action));
    }
  }

 private:
  void add_stream(Local& l) {
    CUDA_CHECK(cudaSetDevice(l.device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&l.scratch, 4 * sizeof(int64_t)));
  }

  // Ends every communicator (aborted after a failure) and frees what was made; never throws.
  void release(bool abort) {
    for (Local& l : locals_) {
      cudaSetDevice(l.device);
      if (l.stream && !abort) cudaStreamSynchronize(l.stream);
      try {
        if (l.comm && abort) nccl_.comm_abort(l.comm);
        else if (l.comm) nccl_.comm_destroy(l.comm);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "gpuprobe: collectives: %s\n", e.what());
      }
      free_buffers(l);
      if (l.scratch) cudaFree(l.scratch);
      if (l.stream) cudaStreamDestroy(l.stream);
    }
    locals_.clear();
    (void)cudaGetLastError();
  }

  void free_buffers(Local& l) {
    for (char** b : {&l.send, &l.recv}) {
      if (!*b) continue;
      if (nccl_.has_mem_alloc()) {
        try {
          nccl_.mem_free(*b);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "gpuprobe: collectives: %s\n", e.what());
        }
      } else {
        cudaFree(*b);
      }
      *b = nullptr;
    }
  }

  // The largest size up to `wanted` (halving) whose two buffers fit every GPU of every process;
  // allocated on each as nccl-tests allocates them.
  size_t allocate(size_t wanted) {
    size_t fits = wanted;
    for (Local& l : locals_) {
      size_t free = 0, total = 0;
      CUDA_CHECK(cudaSetDevice(l.device));
      CUDA_CHECK(cudaMemGetInfo(&free, &total));
      while (fits > kMinBytes && 2 * fits + kHeadroomBytes > free) fits /= 2;
    }
    capacity_ = size_t(combine(double(fits), nccl::kMin));
    for (Local& l : locals_) {
      CUDA_CHECK(cudaSetDevice(l.device));
      free_buffers(l);
      for (char** b : {&l.send, &l.recv}) {
        if (nccl_.has_mem_alloc()) nccl_.mem_alloc(reinterpret_cast<void**>(b), capacity_);
        else CUDA_CHECK(cudaMalloc(b, capacity_));
        CUDA_CHECK(cudaMemset(*b, 0, capacity_));
      }
      // The memsets ran on the legacy stream, which ours do not wait for.
      CUDA_CHECK(cudaDeviceSynchronize());
    }
    return capacity_;
  }

  // One call of `c` on every local rank, its buffers `shift` bytes in, as one group.
  void launch(Collective c, const Counts& k, size_t shift) {
    const bool group = locals_.size() > 1;
    if (group) nccl_.group_start();
    for (Local& l : locals_) {
      const char* s = l.send + shift;
      char* r = l.recv + shift;
      switch (c) {
        case Collective::all_reduce:
          nccl_.all_reduce(s, r, k.count, nccl::kFloat32, nccl::kSum, l.comm, l.stream);
          break;
        case Collective::all_gather:
          nccl_.all_gather(s, r, k.count, nccl::kFloat32, l.comm, l.stream);
          break;
        case Collective::reduce_scatter:
          nccl_.reduce_scatter(s, r, k.count, nccl::kFloat32, nccl::kSum, l.comm, l.stream);
          break;
        case Collective::broadcast:
          nccl_.broadcast(s, r, k.count, nccl::kFloat32, kRoot, l.comm, l.stream);
          break;
        case Collective::all_to_all: all_to_all(l, s, r, k.count); break;
      }
    }
    if (group) nccl_.group_end();
  }

  // ncclAlltoAll where the library has it (NCCL 2.28 on), else what nccl-tests does before it:
  // a send and a receive of `count` elements per peer, grouped.
  void all_to_all(Local& l, const char* s, char* r, size_t count) {
    if (nccl_.has_all_to_all())
      return nccl_.all_to_all(s, r, count, nccl::kFloat32, l.comm, l.stream);
    const size_t block = count * kElementBytes;
    nccl_.group_start();
    for (int peer = 0; peer < ranks_; ++peer) {
      nccl_.send(s + size_t(peer) * block, count, nccl::kFloat32, peer, l.comm, l.stream);
      nccl_.recv(r + size_t(peer) * block, count, nccl::kFloat32, peer, l.comm, l.stream);
    }
    nccl_.group_end();
  }

  // Waits for every local stream as nccl-tests does (polling, yielding the CPU to NCCL's threads).
  void synchronize() {
    for (Local& l : locals_) {
      for (;;) {
        const cudaError_t e = cudaStreamQuery(l.stream);
        if (e == cudaSuccess) break;
        if (e != cudaErrorNotReady) CUDA_CHECK(e);
        std::this_thread::yield();
      }
    }
  }

  // v reduced over the processes (op: sum or min); v itself within one process.
  double combine(double v, nccl::RedOp op) {
    if (processes_ == 1) return v;
    Local& l = locals_.front();
    CUDA_CHECK(cudaMemcpyAsync(l.scratch, &v, sizeof v, cudaMemcpyHostToDevice, l.stream));
    nccl_.all_reduce(l.scratch, l.scratch, 1, nccl::kFloat64, op, l.comm, l.stream);
    CUDA_CHECK(cudaMemcpyAsync(&v, l.scratch, sizeof v, cudaMemcpyDeviceToHost, l.stream));
    CUDA_CHECK(cudaStreamSynchronize(l.stream));
    return v;
  }

  // nccl-tests' BenchTime, out of place: the seconds per call on this process's clock.
  double time_calls(Collective c, size_t nominal) {
    const Counts k = counts(c, nominal, ranks_);
    if (k.bytes == 0 || k.bytes > capacity_)
      throw std::runtime_error("collectives: no room for the size asked");
    launch(c, k, 0);  // nccl-tests' "Sync" call
    synchronize();
    combine(0, nccl::kSum);  // a barrier across processes, where nccl-tests has MPI's
    const size_t steps = capacity_ / k.bytes;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kIters; ++i) launch(c, k, k.bytes * (size_t(i) % steps));
    synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kIters;
  }

  // Rank r sends r + 1 everywhere; each rank's result is checked element by element. Wrong
  // elements on this process's ranks.
  double check(Collective c, size_t nominal) {
    const Counts k = counts(c, nominal, ranks_);
    for (Local& l : locals_) {
      CUDA_CHECK(cudaSetDevice(l.device));
      fill<<<kFillBlocks, kFillThreads, 0, l.stream>>>(reinterpret_cast<float*>(l.send), k.send,
                                                       float(l.rank + 1));
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaMemsetAsync(l.recv, 0, k.recv * kElementBytes, l.stream));
    }
    synchronize();
    launch(c, k, 0);
    synchronize();
    const double n = ranks_, sum = n * (n + 1) / 2;
    double wrong = 0;
    std::vector<float> got(k.recv);
    for (Local& l : locals_) {
      CUDA_CHECK(cudaMemcpy(got.data(), l.recv, k.recv * kElementBytes, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < k.recv; ++i) {
        // Element i of a gathered or exchanged result came from rank i / count (it sent r + 1).
        const double sent = double(i / std::max<size_t>(k.count, 1)) + 1;
        const double want = c == Collective::all_reduce || c == Collective::reduce_scatter ? sum
                            : c == Collective::broadcast ? kRoot + 1
                                                         : sent;
        if (got[i] != want) ++wrong;
      }
    }
    return wrong;
  }

  const Nccl& nccl_;
  const int ranks_, processes_;
  std::vector<Local> locals_;
  size_t capacity_ = 0;
};

// Ranks other than 0: rank 0's steps until it says stop.
void follow(Clique& q) {
  for (;;) {
    Command cmd;
    q.share(&cmd);
    if (cmd.action == kStop) return;
    q.execute(cmd);
  }
}

class CollectivesFamily : public ProbeFamily {
 public:
  std::string name() const override { return std::string(collectives::kFamily.name); }
  std::string description() const override {
    return "NCCL collectives across GPUs, 8 B to 1 GiB: time, algbw and busbw as nccl-tests "
           "defines them";
  }
  std::vector<ProbeInfo> probes() const override {
    std::vector<ProbeInfo> p;
    for (Collective c : all())
      p.push_back({name_of(c), std::string(nccl_call(c)) + ", float32, out of place"});
    p.push_back({kNcclProbe, "the NCCL library: its version and the NCCL_NVLS_ENABLE in effect"});
    return p;
  }
  // The peers first (counting them costs nothing), then the library (loading it does).
  bool supported(const DeviceInfo&, std::string* why) const override {
    const RankPlan* plan = process_ranks();
    if (plan && plan->nranks < 2) {
      *why = "a job of one rank (" + plan->source + "): no peer to communicate with";
      return false;
    }
    if (const int n = visible_device_count(); !plan && n < 2) {
      *why =
          "needs two or more GPUs; this machine has " + std::to_string(n) + " (cudaGetDeviceCount)";
      return false;
    }
    const Nccl& lib = nccl_library();
    if (!lib.available()) *why = lib.why();
    return lib.available();
  }

  void run(RunContext& ctx) override {
    const Nccl& lib = nccl_library();
    const std::string nvls = keep_nvls_off();
    if (const RankPlan* plan = process_ranks()) {
      Clique q(lib, *plan, local_device(*plan, visible_device_count()));
      if (plan->rank != 0) return follow(q);
      record_library(ctx, lib, nvls);
      lead(ctx, q, kProcessPerGpu);
    } else {
      record_library(ctx, lib, nvls);
      for (int r : rank_counts(visible_device_count())) {
        Clique q(lib, r);
        lead(ctx, q, kOneProcess);
      }
    }
    CUDA_CHECK(cudaSetDevice(ctx.device().ordinal));
  }

 private:
  static std::string name_of(Collective c) { return collectives::name(c); }
  static const char* nccl_call(Collective c) {
    switch (c) {
      case Collective::all_reduce: return "ncclAllReduce (sum)";
      case Collective::all_gather: return "ncclAllGather";
      case Collective::reduce_scatter: return "ncclReduceScatter (sum)";
      case Collective::broadcast: return "ncclBroadcast (root 0)";
      case Collective::all_to_all:
        return "ncclAlltoAll (or grouped ncclSend/ncclRecv before NCCL 2.28)";
    }
    return "";
  }

  static void record_library(RunContext& ctx, const Nccl& lib, const std::string& nvls) {
    const double v = lib.version();
    const Params params = {{kVersionColumn, nccl::version_text(lib.version())},
                           {kNvlsColumn, nvls}};
    ctx.record({"", kNcclProbe, params, v, kVersionUnit, v, v, v, 1});
  }

  // Tells the other processes to end after a stop or a wrong result here, where the
  // communicator still works. After an NCCL or CUDA failure it may not: rank 0 sends nothing
  // more, and the launcher ends the others when it exits non-zero (scripts/
  // collectives-local.sh, srun --kill-on-bad-exit).
  static void stop_others(Clique& q) {
    try {
      Command stop;
      q.share(&stop);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpuprobe: collectives: could not tell the other ranks to stop: %s\n",
                   e.what());
    }
  }

  // Rank 0 (or the one process): every selected collective at every size, then stop.
  void lead(RunContext& ctx, Clique& q, const char* mode) {
    try {
      const std::vector<size_t> swept = sizes(ctx.quick());
      Command alloc{kAllocate, 0, int64_t(swept.back())};
      q.share(&alloc);
      const size_t capacity = size_t(q.execute(alloc));
      for (size_t i = 0; i < all().size(); ++i)
        if (ctx.enabled(name_of(all()[i]))) sweep(ctx, q, mode, i, swept, capacity);
    } catch (const Interrupted&) {
      stop_others(q);  // the others end too; the run keeps what was measured
      throw;
    } catch (const WrongResults&) {
      stop_others(q);
      throw;
    }
    Command stop;
    q.share(&stop);
  }

  void sweep(RunContext& ctx, Clique& q, const char* mode, size_t index,
             const std::vector<size_t>& swept, size_t capacity) {
    const Collective c = all()[index];
    const std::string probe = name_of(c);
    Command check{kCheck, int64_t(index), int64_t(kCheckBytes)};
    q.share(&check);
    if (const double wrong = q.execute(check); wrong > 0)
      throw WrongResults(probe + ": " + analysis::num(wrong) +
                         " wrong elements in the results of " + std::to_string(q.ranks()) +
                         " ranks at " + analysis::bytes_text(double(kCheckBytes)));
    for (size_t nominal : swept) {
      if (nominal > capacity) {
        ctx.skip(probe, "sizes above " + analysis::bytes_text(double(capacity)) +
                            ": too little free GPU memory for two buffers of the size");
        break;
      }
      const Counts k = counts(c, nominal, q.ranks());
      if (k.bytes == 0) continue;  // a rank's share rounds to nothing (nccl-tests' 0 B rows)
      const Params params = {{kBytesColumn, std::to_string(k.bytes)},
                             {kRanksColumn, std::to_string(q.ranks())},
                             {kModeColumn, mode}};
      const Observation o =
          ctx.measure({probe, params, "us", reps(ctx.quick()), double(k.bytes) * kIters}, [&] {
            Command t{kTime, int64_t(index), int64_t(nominal)};
            q.share(&t);
            const double s = q.execute(t);
            return Sample{s * 1e6, s * kIters};
          });
      ctx.record(bandwidth_row(o, c, q.ranks(), false));
      ctx.record(bandwidth_row(o, c, q.ranks(), true));
    }
  }
};

GPUPROBE_REGISTER_FAMILY(CollectivesFamily);

}  // namespace

}  // namespace gpuprobe::collectives
