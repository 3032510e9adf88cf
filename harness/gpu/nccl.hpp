#pragma once
// NCCL, loaded at run time with dlopen (as gpu/nvml.cpp loads NVML), so that the build needs no
// NCCL headers and a machine without NCCL still runs the rest of the suite (the collectives
// family says why it is skipped). The few types and values used are declared here, as NCCL's
// public header (src/nccl.h.in) defines them. Every call is checked: a failure throws with
// ncclGetErrorString's text and, where the library has it, ncclGetLastError's.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace gpuprobe {

namespace nccl {
using Result = int;             // ncclResult_t; ncclSuccess = 0
using Comm = struct ncclComm*;  // ncclComm_t, opaque
using Stream = CUstream_st*;    // cudaStream_t
struct UniqueId {               // ncclUniqueId
  char internal[128];           // NCCL_UNIQUE_ID_BYTES
};
enum DataType : int { kInt64 = 4, kFloat32 = 7, kFloat64 = 8 };  // ncclDataType_t
enum RedOp : int { kSum = 0, kMin = 3 };                         // ncclRedOp_t
// NCCL_VERSION(X, Y, Z): X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z after.
int version_code(int major, int minor, int patch);
std::string version_text(int code);  // 22803 -> "2.28.3"
// ncclSend and ncclRecv (the all-to-all where ncclAlltoAll is missing) came with NCCL 2.7.
constexpr int kMinMajor = 2, kMinMinor = 7;
}  // namespace nccl

// Where to look for the library.
struct NcclSearch {
  std::string explicit_path;                 // GPUPROBE_NCCL: this file and no other
  std::vector<std::string> python_prefixes;  // where pip's nvidia-nccl-cu* wheels may lie
};
// GPUPROBE_NCCL, and the prefixes of $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local, /usr/local, /usr
// and the folders of $PYTHONPATH.
NcclSearch nccl_search_from_env();
// The files tried, in order: GPUPROBE_NCCL alone where it is set; else "libnccl.so.2" (the
// dynamic loader's search: a system install, LD_LIBRARY_PATH), then every
// <prefix>/lib/python3.*/{site,dist}-packages/nvidia/nccl/lib/libnccl.so.2 (and
// <folder>/nvidia/nccl/lib/libnccl.so.2 for a PYTHONPATH folder) that exists.
std::vector<std::string> nccl_candidates(const NcclSearch& search);

// NVLink multicast (NVLS) must stay off on shared hosts: a program that sets it up can put every
// GPU of the host out of service. NCCL turns it on by itself on NVSwitch systems, so gpuprobe
// sets NCCL_NVLS_ENABLE=0 where it is unset, before NCCL is loaded (NCCL reads it once, at its
// first communicator); an explicit setting of the user's is kept, and recorded with the figures.
// Returns the value in effect.
std::string keep_nvls_off();

class Nccl {
 public:
  // Loads the first candidate that opens and has every function used; never throws.
  explicit Nccl(const NcclSearch& search);
  ~Nccl();
  Nccl(const Nccl&) = delete;
  Nccl& operator=(const Nccl&) = delete;

  bool available() const;
  const std::string& why() const;   // why not available: each file tried and what failed
  const std::string& path() const;  // the file loaded
  int version() const;              // NCCL_VERSION_CODE of the library
  bool has_all_to_all() const;      // ncclAlltoAll (NCCL 2.28 on)
  bool has_mem_alloc() const;       // ncclMemAlloc / ncclMemFree (NCCL 2.19 on)

  void get_unique_id(nccl::UniqueId* id) const;
  void comm_init_rank(nccl::Comm* comm, int nranks, const nccl::UniqueId& id, int rank) const;
  void comm_init_all(nccl::Comm* comms, int ndev, const int* devices) const;
  void comm_destroy(nccl::Comm comm) const;
  // Ends a communicator without waiting for its peers (after a failure: they may be gone).
  void comm_abort(nccl::Comm comm) const;
  void group_start() const;
  void group_end() const;
  void all_reduce(const void* send, void* recv, size_t count, nccl::DataType type, nccl::RedOp op,
                  nccl::Comm comm, nccl::Stream stream) const;
  void all_gather(const void* send, void* recv, size_t count, nccl::DataType type, nccl::Comm comm,
                  nccl::Stream stream) const;
  void reduce_scatter(const void* send, void* recv, size_t count, nccl::DataType type,
                      nccl::RedOp op, nccl::Comm comm, nccl::Stream stream) const;
  void broadcast(const void* send, void* recv, size_t count, nccl::DataType type, int root,
                 nccl::Comm comm, nccl::Stream stream) const;
  void all_to_all(const void* send, void* recv, size_t count, nccl::DataType type, nccl::Comm comm,
                  nccl::Stream stream) const;
  void send(const void* buf, size_t count, nccl::DataType type, int peer, nccl::Comm comm,
            nccl::Stream stream) const;
  void recv(void* buf, size_t count, nccl::DataType type, int peer, nccl::Comm comm,
            nccl::Stream stream) const;
  void mem_alloc(void** ptr, size_t bytes) const;
  void mem_free(void* ptr) const;

 private:
  struct Api;
  std::unique_ptr<Api> api_;
  // Throws std::runtime_error "<what>: <ncclGetErrorString> (<ncclGetLastError>)" unless r is 0.
  void check(nccl::Result r, const char* what) const;
};

// The process's NCCL, loaded on first use with nccl_search_from_env() (NCCL keeps global state:
// one copy per process).
const Nccl& nccl_library();

}  // namespace gpuprobe
