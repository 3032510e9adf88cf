#include "gpu/sass_check.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>

namespace gpuprobe {

namespace {

bool executable(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

std::string find_cuobjdump() {
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* dir = std::getenv(var))
      if (executable(std::string(dir) + "/bin/cuobjdump")) return std::string(dir) + "/bin/cuobjdump";
  if (executable("/usr/local/cuda/bin/cuobjdump")) return "/usr/local/cuda/bin/cuobjdump";
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (size_t b = 0; b <= p.size();) {
      size_t e = p.find(':', b);
      if (e == std::string::npos) e = p.size();
      std::string cand = p.substr(b, e - b) + "/cuobjdump";
      if (e > b && executable(cand)) return cand;
      b = e + 1;
    }
  }
  return "";
}

// Output of `command`, or false when it could not run or exited non-zero.
bool run_command(const std::string& command, std::string* out) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return false;
  std::array<char, 65536> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe.get())) > 0) out->append(buf.data(), n);
  return pclose(pipe.release()) == 0;
}

struct SassCache {
  bool available = false;
  std::string why;  // when not available
  std::vector<KernelCode> kernels;
};

// Parses `found`'s SASS (and its architecture-specific twin) into the cache entry.
const SassCache& parsed(SassCache& c, const std::string& text, const std::string& found,
                        const std::string& arch) {
  c.kernels = parse_sass(text, found);
  // Architecture-specific cubins (sm_90a, built only for the kernels that need it) run on the
  // same device: their kernels are this device's code too.
  if (found == arch) {
    auto specific = parse_sass(text, arch + "a");
    c.kernels.insert(c.kernels.end(), specific.begin(), specific.end());
  }
  c.available = true;
  return c;
}

// SASS of this binary for `arch`, read once per architecture.
const SassCache& sass_for(const std::string& arch) {
  static std::mutex mutex;
  static std::map<std::string, SassCache> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(arch);
  if (it != cache.end()) return it->second;
  SassCache& c = cache[arch];
  // This architecture's SASS only (a binary built for several is several times larger); the
  // whole dump when it has none under that exact name (sm_90a for sm_90, say).
  auto matching = [&](const std::string& text) {
    std::string found;
    for (const auto& a : sass_architectures(text))
      if (a == arch || (found.empty() && a.compare(0, arch.size(), arch) == 0)) found = a;
    return found;
  };
  std::string text, found;
  // The dump the build left beside this program (CMakeLists.txt), when no older than it.
  char exe[4096];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) {
    std::string dump = std::string(exe, static_cast<size_t>(len)) + ".sass";
    struct stat program {}, saved {};
    if (stat(dump.c_str(), &saved) == 0 && stat(std::string(exe, static_cast<size_t>(len)).c_str(), &program) == 0 &&
        saved.st_mtime >= program.st_mtime) {
      std::ifstream in(dump);
      std::stringstream s;
      s << in.rdbuf();
      text = s.str();
      found = matching(text);
    }
  }
  if (!found.empty()) return parsed(c, text, found, arch);
  std::string tool = find_cuobjdump();
  if (tool.empty()) {
    c.why = "cuobjdump not found ($CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, PATH)";
    return c;
  }
  // This process's executable: /proc/self/exe would name the shell that popen starts.
  std::string self = " /proc/" + std::to_string(getpid()) + "/exe 2>/dev/null";
  text.clear();
  std::string command = "'" + tool + "' -sass";
  bool ran = run_command(command + " -arch " + arch + self, &text);
  found = ran ? matching(text) : "";
  if (found.empty()) {
    text.clear();
    if (!run_command(command + self, &text)) {
      c.why = tool + " -sass failed on this program (/proc/<pid>/exe)";
      return c;
    }
    found = matching(text);
  }
  if (found.empty()) {
    c.why = "the binary holds no SASS for " + arch + " (it runs JIT-compiled PTX)";
    return c;
  }
  return parsed(c, text, found, arch);
}

// The SASS of this device's architecture. It takes the device, not the architecture's name: a
// reference bound to sass_for("sm_" + ...) is one GCC 13 takes for dangling on the temporary
// name (-Wdangling-reference), though the entry lives in sass_for's static cache.
const SassCache& device_sass(const DeviceInfo& dev) {
  return sass_for("sm_" + std::to_string(dev.cc()));
}

}  // namespace

std::string load_sass(const DeviceInfo& dev) {
  const SassCache& sass = device_sass(dev);
  return sass.available ? "" : sass.why;
}

SassVerdict check_kernel_sass(const DeviceInfo& dev, const std::string& kernel) {
  const SassCache& sass = device_sass(dev);
  if (!sass.available) return {SassStatus::unchecked, sass.why};
  const CodeExpectation* e = find_expectation(kernel);
  if (!e) return {SassStatus::failed, "no code expectation registered for " + kernel};
  const KernelCode* k = find_kernel(sass.kernels, kernel);
  if (!k) return {SassStatus::failed, "no kernel " + kernel + " in this binary's SASS"};
  CheckOutcome o = check_code(*k, e->sass, CodeDialect::sass);
  return {o.ok ? SassStatus::ok : SassStatus::failed, o.why};
}

std::vector<Instruction> timed_sass(const DeviceInfo& dev, const std::string& kernel) {
  const SassCache& sass = device_sass(dev);
  const KernelCode* k = sass.available ? find_kernel(sass.kernels, kernel) : nullptr;
  return k ? timed_region(*k, CodeDialect::sass) : std::vector<Instruction>{};
}

bool sass_allows(RunContext& ctx, const std::string& probe, const std::vector<std::string>& kernels) {
  static std::once_flag told;
  for (const auto& kernel : kernels) {
    SassVerdict v = check_kernel_sass(ctx.device(), kernel);
    if (v.status == SassStatus::failed) {
      ctx.invalid(probe, "SASS check: " + v.why);
      return false;
    }
    if (v.status == SassStatus::unchecked)
      std::call_once(told, [&] { std::cerr << "gpuprobe: SASS not checked: " << v.why << "\n"; });
  }
  return true;
}

}  // namespace gpuprobe
