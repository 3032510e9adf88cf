#include "base/run_dir.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
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
      return dir.string();
    }
    if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
  }
  throw std::runtime_error("no free run-id under " + parent.string());
}

void write_file_atomic(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
    f << text;
    f.flush();
    if (!f) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + why);
  }
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

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open file");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

namespace {

// The `# key=value` lines at the top of a CSV file, without reading past them.
std::map<std::string, std::string> leading_metadata(const fs::path& path) {
  std::map<std::string, std::string> meta;
  std::ifstream f(path, std::ios::binary);
  std::string line;
  while (std::getline(f, line) && line.rfind("# ", 0) == 0) {
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
  if (fs::exists(params, ec) && leading_metadata(params).count("run_1")) return FolderKind::compare;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".csv" && leading_metadata(e.path()).count("run_id"))
      return FolderKind::run;
  return FolderKind::other;
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
