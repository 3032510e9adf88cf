#include "base/run_dir.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpuprobe {

namespace fs = std::filesystem;

std::string gpu_slug(const std::string& device_name) {
  std::string out;
  bool dash = false;
  for (unsigned char c : device_name) {
    if (std::isalnum(c)) {
      if (dash && !out.empty()) out += '-';
      out += static_cast<char>(std::tolower(c));
      dash = false;
    } else {
      dash = true;
    }
  }
  return out.empty() ? "unknown-gpu" : out;
}

std::string run_id(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

namespace {

// The run folders this process made (canonical paths): `gpuprobe run` writes all of its own.
std::set<std::string>& made_here() {
  static std::set<std::string> dirs;
  return dirs;
}

}  // namespace

std::string create_run_dir(const std::string& root, const std::string& slug, std::time_t start,
                           std::string* id) {
  fs::path parent = fs::path(root) / slug;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw std::runtime_error("cannot create " + parent.string() + ": " + ec.message());
  for (int attempt = 0; attempt < 3600; ++attempt) {
    std::string rid = run_id(start + attempt);
    fs::path dir = parent / rid;
    if (fs::create_directory(dir, ec)) {
      if (id) *id = rid;
      made_here().insert(fs::weakly_canonical(dir, ec).string());
      return dir.string();
    }
    if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
  }
  throw std::runtime_error("no free run-id under " + parent.string());
}

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw std::runtime_error("cannot " + what + " " + path + ": " + std::strerror(err));
}

// Writes all of `text` to `fd`; the errno of the first failure, 0 when all was written.
int write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// The descriptor a path names in this process (/dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N), else -1: what the shell handed us, written to as it is.
int named_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string p = prefix;
    if (path.size() <= p.size() || path.compare(0, p.size(), p) != 0) continue;
    const std::string digits = path.substr(p.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoi(digits);
  }
  return -1;
}

// The file a path finally names: its symbolic links followed, even to a target that does
// not exist yet (which is then created there, not in the link's place).
std::string final_target(const std::string& path) {
  // More links in a chain than this is a loop (the kernel's own limit is 40).
  constexpr int kMaxLinks = 40;
  fs::path p = path;
  std::error_code ec;
  for (int hop = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hop) {
    if (hop == kMaxLinks)
      throw std::runtime_error("cannot write " + path + ": a loop of symbolic links");
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) fail("write", path, ec.value());
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  const fs::path canon = fs::weakly_canonical(p, ec);
  return ec ? p.string() : canon.string();
}

bool is_protected_name(const fs::path& name) {
  return name.extension() == ".csv" || name.filename() == "benchmark.json";
}

// Through what the path names, not in its place: a device or a FIFO (opened so that a FIFO
// without a reader fails at once instead of waiting for one).
void write_through(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENXIO)
      throw std::runtime_error("cannot write " + path + ": a FIFO that no process reads");
    fail("open", path, errno);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const int err = write_all(fd, text);
  const int closed = ::close(fd) == 0 ? 0 : errno;
  if (err || closed) fail("write", path, err ? err : closed);
}

// A regular file by a temporary one beside it, renamed into place; its mode kept.
void replace_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  struct stat old {};
  const bool existed = ::stat(path.c_str(), &old) == 0;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) fail("write", path, errno);  // the user's name: the temporary one is ours
  if (existed) ::fchmod(fd, old.st_mode & 07777);
  const int err = write_all(fd, text);
  const int closed = ::close(fd) == 0 ? 0 : errno;
  if (err || closed) {
    ::unlink(tmp.c_str());
    fail("write", path, err ? err : closed);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int why = errno;
    ::unlink(tmp.c_str());
    fail("write", path, why);
  }
}

}  // namespace

void check_output_path(const std::string& path, RunFileRights rights) {
  const int fd = named_descriptor(path);
  std::string target = path;
  if (fd >= 0) {
    // A descriptor redirected to a file: the file it is.
    std::error_code ec;
    const fs::path file = fs::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
    if (ec || !fs::is_regular_file(file, ec)) return;
    target = file.string();
  } else {
    target = final_target(path);
  }
  const fs::path t = target;
  if (rights == RunFileRights::run || !is_protected_name(t.filename())) return;
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(t.parent_path().empty() ? "." : t.parent_path(), ec);
  if (made_here().count(dir.string())) return;
  if (folder_kind(dir.string()) != FolderKind::run) return;
  if (rights == RunFileRights::parameters && t.filename() == "parameters.csv") return;
  const std::string shown = path + (target != path ? " (" + target + ")" : "");
  if (t.filename() == "parameters.csv")
    throw std::runtime_error(
        shown +
        ": a run's parameters.csv (only gpuprobe analyze writes it): not written over; "
        "name another file");
  if (fs::exists(t, ec))
    throw std::runtime_error(
        shown + ": a file of a run's measurements: not written over; name another file");
  throw std::runtime_error(
      shown + ": in a run folder, a new " + t.extension().string() +
      " would be read as one of its measurements: not written; name a file outside the run");
}

void write_file_atomic(const std::string& path, const std::string& text, RunFileRights rights) {
  check_output_path(path, rights);
  if (const int fd = named_descriptor(path); fd >= 0) {
    std::fflush(nullptr);  // what stdio holds for it goes first
    if (const int err = write_all(fd, text)) fail("write", path, err);
    return;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return write_through(path, text);
    throw std::runtime_error(
        "cannot write " + path + ": " +
        (S_ISDIR(st.st_mode) ? "a folder" : "neither a file, a character device nor a FIFO"));
  }
  replace_file(final_target(path), text);
}

void replace_dir(const std::string& staged, const std::string& target) {
  // Another process may create or replace `target` in between: a few tries settle it.
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0)
      return;
    if (errno == ENOENT) {  // no target yet
      if (std::rename(staged.c_str(), target.c_str()) == 0) {
        ::mkdir(staged.c_str(), 0755);  // the caller removes `staged` as it would the old one
        return;
      }
      if (errno == ENOTEMPTY || errno == EEXIST) continue;  // one appeared meanwhile
    } else if (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) {
      // No exchange on this file system: move the old folder aside, then the new one in.
      const std::string aside = staged + ".old";
      if (std::rename(target.c_str(), aside.c_str()) == 0) {
        if (std::rename(staged.c_str(), target.c_str()) == 0) {
          std::rename(aside.c_str(), staged.c_str());
          return;
        }
        const int why = errno;
        std::rename(aside.c_str(), target.c_str());  // put the old one back
        errno = why;
      }
    }
    if (errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT) break;
  }
  throw std::runtime_error("cannot move " + staged + " to " + target + ": " + std::strerror(errno));
}

std::string read_file(const std::string& path) { return read_input_file(path); }

namespace {

// The metadata keys at the top of a file are this many bytes at most: a first line longer
// than that is no file gpuprobe wrote.
constexpr size_t kMaxMetadataBytes = 1 << 16;

// The `# key=value` lines at the top of a CSV file, without reading past them; nothing from a
// file that is not a regular one (a FIFO would wait for a writer, /dev/zero never ends).
std::map<std::string, std::string> leading_metadata(const fs::path& path) {
  std::map<std::string, std::string> meta;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return meta;
  // O_NONBLOCK: should a FIFO take the file's place meanwhile, opening it does not wait.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return meta;
  std::string head(kMaxMetadataBytes, '\0');
  struct stat st {};
  const ssize_t n =
      ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? ::read(fd, head.data(), head.size()) : 0;
  ::close(fd);
  head.resize(n > 0 ? static_cast<size_t>(n) : 0);
  std::istringstream lines{std::string(without_bom(head))};
  std::string line;
  while (std::getline(lines, line) && line.rfind("# ", 0) == 0) {
    auto eq = line.find('=');
    if (eq != std::string::npos) meta[line.substr(2, eq - 2)] = line.substr(eq + 1);
  }
  return meta;
}

}  // namespace

FolderKind folder_kind(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return FolderKind::missing;
  if (fs::is_empty(dir, ec)) return FolderKind::empty;
  const fs::path params = fs::path(dir) / "parameters.csv";
  if (leading_metadata(params).count("run_1")) return FolderKind::compare;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".csv" && leading_metadata(e.path()).count("run_id"))
      return FolderKind::run;
  return FolderKind::other;
}

std::string identity_conflict(const std::vector<std::pair<std::string, Metadata>>& files) {
  // Besides the GPU's model: its slot, its UUID where recorded (newer runs), and the run.
  std::vector<const char*> keys(std::begin(kIdentityKeys), std::end(kIdentityKeys));
  for (const char* key : {"pci_bus_id", "gpu_uuid", "run_id"}) keys.push_back(key);
  for (const char* key : keys) {
    const std::string* first_file = nullptr;
    const std::string* first_value = nullptr;
    for (const auto& [file, meta] : files)
      for (const auto& [k, v] : meta) {
        if (k != key) continue;
        if (!first_value) {
          first_file = &file;
          first_value = &v;
        } else if (v != *first_value) {
          return *first_file + " names " + key + "=" + *first_value + ", " + file + " " + key +
                 "=" + v +
                 (std::string(key) == "run_id" ? ": files of two runs in one folder"
                                               : ": files of two GPUs in one run");
        }
      }
  }
  return "";
}

const char* folder_kind_name(FolderKind k) {
  switch (k) {
    case FolderKind::missing: return "no such folder";
    case FolderKind::empty: return "an empty folder";
    case FolderKind::run: return "a run folder";
    case FolderKind::compare: return "a compare folder";
    case FolderKind::other: return "not a folder gpuprobe wrote";
  }
  return "?";
}

bool file_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

bool is_run_level_file(const std::string& stem) {
  return stem == "parameters" || stem == "families" || stem == "invalid" || stem == "skipped" ||
         stem == "not_measured" || stem == "power_trace";
}

}  // namespace gpuprobe
