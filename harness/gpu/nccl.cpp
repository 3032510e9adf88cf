#include "gpu/nccl.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace gpuprobe {

namespace nccl {

int version_code(int major, int minor, int patch) {
  return major <= 2 && minor <= 8 ? major * 1000 + minor * 100 + patch
                                  : major * 10000 + minor * 100 + patch;
}

std::string version_text(int code) {
  const int scale = code >= 10000 ? 10000 : 1000;
  return std::to_string(code / scale) + "." + std::to_string(code % scale / 100) + "." +
         std::to_string(code % 100);
}

}  // namespace nccl

namespace {

namespace fs = std::filesystem;
using nccl::Comm;
using nccl::Result;
using nccl::Stream;
using nccl::UniqueId;

constexpr const char* kSystemLibrary = "libnccl.so.2";
constexpr const char* kWheelLibrary = "nvidia/nccl/lib/libnccl.so.2";  // under site-packages

std::vector<std::string> python_package_dirs(const std::string& prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path lib = fs::path(prefix) / "lib";
  if (!fs::is_directory(lib, ec)) return out;
  for (const auto& e : fs::directory_iterator(lib, ec)) {
    const std::string py = e.path().filename().string();
    if (py.rfind("python3", 0) != 0) continue;
    for (const char* kind : {"site-packages", "dist-packages"})
      out.push_back((e.path() / kind).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

NcclSearch nccl_search_from_env() {
  NcclSearch s;
  if (const char* p = std::getenv("GPUPROBE_NCCL")) s.explicit_path = p;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char* p = std::getenv(var)) s.python_prefixes.push_back(p);
  if (const char* home = std::getenv("HOME"))
    s.python_prefixes.push_back(std::string(home) + "/.local");
  s.python_prefixes.push_back("/usr/local");
  s.python_prefixes.push_back("/usr");
  // A PYTHONPATH folder holds packages itself: marked with a trailing '/' (nccl_candidates).
  if (const char* pp = std::getenv("PYTHONPATH")) {
    std::string all = pp;
    for (size_t start = 0; start <= all.size();) {
      size_t end = all.find(':', start);
      if (end == std::string::npos) end = all.size();
      if (end > start) s.python_prefixes.push_back(all.substr(start, end - start) + "/");
      start = end + 1;
    }
  }
  return s;
}

std::vector<std::string> nccl_candidates(const NcclSearch& search) {
  if (!search.explicit_path.empty()) return {search.explicit_path};
  std::vector<std::string> out = {kSystemLibrary};
  std::error_code ec;
  for (const auto& prefix : search.python_prefixes) {
    std::vector<std::string> dirs = !prefix.empty() && prefix.back() == '/'
                                        ? std::vector<std::string>{prefix}
                                        : python_package_dirs(prefix);
    for (const auto& d : dirs) {
      const fs::path lib = fs::path(d) / kWheelLibrary;
      if (fs::exists(lib, ec) && std::find(out.begin(), out.end(), lib.string()) == out.end())
        out.push_back(lib.string());
    }
  }
  return out;
}

std::string keep_nvls_off() {
  setenv("NCCL_NVLS_ENABLE", "0", 0);  // 0: a value the user set stays
  return std::getenv("NCCL_NVLS_ENABLE");
}

struct Nccl::Api {
  void* lib = nullptr;
  std::string why, path;
  int version = 0;
  Result (*get_version)(int*) = nullptr;
  const char* (*error_string)(Result) = nullptr;
  const char* (*last_error)(Comm) = nullptr;
  Result (*get_unique_id)(UniqueId*) = nullptr;
  Result (*comm_init_rank)(Comm*, int, UniqueId, int) = nullptr;
  Result (*comm_init_all)(Comm*, int, const int*) = nullptr;
  Result (*comm_destroy)(Comm) = nullptr;
  Result (*comm_abort)(Comm) = nullptr;
  Result (*group_start)() = nullptr;
  Result (*group_end)() = nullptr;
  Result (*all_reduce)(const void*, void*, size_t, int, int, Comm, Stream) = nullptr;
  Result (*all_gather)(const void*, void*, size_t, int, Comm, Stream) = nullptr;
  Result (*reduce_scatter)(const void*, void*, size_t, int, int, Comm, Stream) = nullptr;
  Result (*broadcast)(const void*, void*, size_t, int, int, Comm, Stream) = nullptr;
  Result (*all_to_all)(const void*, void*, size_t, int, Comm, Stream) = nullptr;
  Result (*send)(const void*, size_t, int, int, Comm, Stream) = nullptr;
  Result (*recv)(void*, size_t, int, int, Comm, Stream) = nullptr;
  Result (*mem_alloc)(void**, size_t) = nullptr;
  Result (*mem_free)(void*) = nullptr;

  template <class F>
  bool load(F& fn, const char* name) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    return fn != nullptr;
  }
  // Every function the family needs; the name of the first one missing, or "".
  std::string load_required() {
    const std::pair<bool, const char*> needed[] = {
        {load(get_version, "ncclGetVersion"), "ncclGetVersion"},
        {load(error_string, "ncclGetErrorString"), "ncclGetErrorString"},
        {load(get_unique_id, "ncclGetUniqueId"), "ncclGetUniqueId"},
        {load(comm_init_rank, "ncclCommInitRank"), "ncclCommInitRank"},
        {load(comm_init_all, "ncclCommInitAll"), "ncclCommInitAll"},
        {load(comm_destroy, "ncclCommDestroy"), "ncclCommDestroy"},
        {load(comm_abort, "ncclCommAbort"), "ncclCommAbort"},
        {load(group_start, "ncclGroupStart"), "ncclGroupStart"},
        {load(group_end, "ncclGroupEnd"), "ncclGroupEnd"},
        {load(all_reduce, "ncclAllReduce"), "ncclAllReduce"},
        {load(all_gather, "ncclAllGather"), "ncclAllGather"},
        {load(reduce_scatter, "ncclReduceScatter"), "ncclReduceScatter"},
        {load(broadcast, "ncclBroadcast"), "ncclBroadcast"},
        {load(send, "ncclSend"), "ncclSend"},
        {load(recv, "ncclRecv"), "ncclRecv"},
    };
    for (const auto& [ok, name] : needed)
      if (!ok) return name;
    load(last_error, "ncclGetLastError");
    load(all_to_all, "ncclAlltoAll");
    if (!load(mem_alloc, "ncclMemAlloc") || !load(mem_free, "ncclMemFree")) mem_alloc = nullptr;
    return "";
  }
  // Opens `file`; "" when it serves, else why not.
  std::string open(const std::string& file) {
    lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      return e ? e : "dlopen failed";
    }
    std::string missing = load_required();
    int v = 0;
    if (missing.empty() && get_version(&v) == 0 &&
        v >= nccl::version_code(nccl::kMinMajor, nccl::kMinMinor, 0)) {
      version = v;
      path = file;
      return "";
    }
    dlclose(lib);
    lib = nullptr;
    return missing.empty() ? "NCCL " + nccl::version_text(v) + " is older than " +
                                 std::to_string(nccl::kMinMajor) + "." +
                                 std::to_string(nccl::kMinMinor) + " (no ncclSend/ncclRecv)"
                           : "lacks " + missing + " (not NCCL)";
  }
};

Nccl::Nccl(const NcclSearch& search) : api_(std::make_unique<Api>()) {
  keep_nvls_off();
  std::string tried;
  for (const auto& file : nccl_candidates(search)) {
    const std::string why = api_->open(file);
    if (why.empty()) return;
    tried += (tried.empty() ? "" : "; ") + file + ": " + why;
  }
  api_->why = "NCCL not found (" + tried + ")" +
              (search.explicit_path.empty()
                   ? "; install it (libnccl2, or pip's nvidia-nccl-cu13) or name the "
                     "library in GPUPROBE_NCCL"
                   : " (GPUPROBE_NCCL)");
}

// The library stays loaded: NCCL's threads may outlive its communicators, and unloading the
// code under them would crash the process on its way out.
Nccl::~Nccl() = default;

bool Nccl::available() const { return api_->lib != nullptr; }
const std::string& Nccl::why() const { return api_->why; }
const std::string& Nccl::path() const { return api_->path; }
int Nccl::version() const { return api_->version; }
bool Nccl::has_all_to_all() const { return api_->all_to_all != nullptr; }
bool Nccl::has_mem_alloc() const { return api_->mem_alloc != nullptr; }

void Nccl::check(Result r, const char* what) const {
  if (r == 0) return;
  std::string msg = std::string(what) + ": " +
                    (api_->error_string ? api_->error_string(r) : "error") + " (" +
                    std::to_string(r) + ")";
  const char* last = api_->last_error ? api_->last_error(nullptr) : nullptr;
  if (last && *last) msg += ": " + std::string(last);
  throw std::runtime_error(msg);
}

namespace {
void require(bool loaded) {
  if (!loaded) throw std::logic_error("NCCL called without a library loaded");
}
}  // namespace

void Nccl::get_unique_id(UniqueId* id) const {
  require(available());
  check(api_->get_unique_id(id), "ncclGetUniqueId");
}
void Nccl::comm_init_rank(Comm* comm, int nranks, const UniqueId& id, int rank) const {
  require(available());
  check(api_->comm_init_rank(comm, nranks, id, rank), "ncclCommInitRank");
}
void Nccl::comm_init_all(Comm* comms, int ndev, const int* devices) const {
  require(available());
  check(api_->comm_init_all(comms, ndev, devices), "ncclCommInitAll");
}
void Nccl::comm_destroy(Comm comm) const {
  require(available());
  check(api_->comm_destroy(comm), "ncclCommDestroy");
}
void Nccl::comm_abort(Comm comm) const {
  require(available());
  check(api_->comm_abort(comm), "ncclCommAbort");
}
void Nccl::group_start() const {
  require(available());
  check(api_->group_start(), "ncclGroupStart");
}
void Nccl::group_end() const {
  require(available());
  check(api_->group_end(), "ncclGroupEnd");
}
void Nccl::all_reduce(const void* s, void* r, size_t n, nccl::DataType t, nccl::RedOp op, Comm c,
                      Stream st) const {
  require(available());
  check(api_->all_reduce(s, r, n, t, op, c, st), "ncclAllReduce");
}
void Nccl::all_gather(const void* s, void* r, size_t n, nccl::DataType t, Comm c, Stream st) const {
  require(available());
  check(api_->all_gather(s, r, n, t, c, st), "ncclAllGather");
}
void Nccl::reduce_scatter(const void* s, void* r, size_t n, nccl::DataType t, nccl::RedOp op,
                          Comm c, Stream st) const {
  require(available());
  check(api_->reduce_scatter(s, r, n, t, op, c, st), "ncclReduceScatter");
}
void Nccl::broadcast(const void* s, void* r, size_t n, nccl::DataType t, int root, Comm c,
                     Stream st) const {
  require(available());
  check(api_->broadcast(s, r, n, t, root, c, st), "ncclBroadcast");
}
void Nccl::all_to_all(const void* s, void* r, size_t n, nccl::DataType t, Comm c, Stream st) const {
  require(has_all_to_all());
  check(api_->all_to_all(s, r, n, t, c, st), "ncclAlltoAll");
}
void Nccl::send(const void* b, size_t n, nccl::DataType t, int peer, Comm c, Stream st) const {
  require(available());
  check(api_->send(b, n, t, peer, c, st), "ncclSend");
}
void Nccl::recv(void* b, size_t n, nccl::DataType t, int peer, Comm c, Stream st) const {
  require(available());
  check(api_->recv(b, n, t, peer, c, st), "ncclRecv");
}
void Nccl::mem_alloc(void** ptr, size_t bytes) const {
  require(has_mem_alloc());
  check(api_->mem_alloc(ptr, bytes), "ncclMemAlloc");
}
void Nccl::mem_free(void* ptr) const {
  require(has_mem_alloc());
  check(api_->mem_free(ptr), "ncclMemFree");
}

const Nccl& nccl_library() {
  static const Nccl lib(nccl_search_from_env());
  return lib;
}

}  // namespace gpuprobe
