#include "base/csv.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpuprobe {

int CsvTable::column(const std::string& name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

int CsvTable::require(const std::string& name) const {
  int c = column(name);
  if (c < 0) throw CsvError(path + ": missing column '" + name + "'");
  return c;
}

std::string CsvTable::meta_value(const std::string& key, const std::string& fallback) const {
  for (const auto& [k, v] : meta)
    if (k == key) return v;
  return fallback;
}

double CsvTable::number(size_t row, int col) const {
  double v = 0;
  const std::string& cell = rows.at(row).at(static_cast<size_t>(col));
  if (!parse_number(cell, &v))
    throw CsvError(path + ":" + std::to_string(row_lines.at(row)) + ": column '" +
                   header.at(static_cast<size_t>(col)) + "' is not a number: '" + cell + "'");
  return v;
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  if (quoted) throw CsvError("unterminated quoted field");
  out.push_back(cur);
  return out;
}

std::string csv_escape(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string join_csv(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    out += csv_escape(fields[i]);
  }
  return out;
}

std::string_view without_bom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  return text.substr(0, kBom.size()) == kBom ? text.substr(kBom.size()) : text;
}

namespace {

// Throws when the header names a (non-empty) column twice.
void check_unique_columns(const std::vector<std::string>& header, const std::string& path,
                          int lineno) {
  std::map<std::string, size_t> first;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i].empty()) continue;
    auto [at, fresh] = first.emplace(header[i], i);
    if (!fresh)
      throw CsvError(path + ":" + std::to_string(lineno) + ": column '" + header[i] +
                     "' appears twice (columns " + std::to_string(at->second + 1) + " and " +
                     std::to_string(i + 1) + ")");
  }
}

const char* file_type(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

std::string read_input_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw CsvError(
        path + ": cannot open file (" +
        (errno == ELOOP ? std::string("a loop of symbolic links") : std::strerror(errno)) + ")");
  if (!S_ISREG(st.st_mode))
    throw CsvError(path + ": " + file_type(st.st_mode) + ", not a regular file: refused as input");
  if (st.st_size > kMaxInputBytes)
    throw CsvError(path + ": " + std::to_string(st.st_size) +
                   " bytes, more than any run writes (at most " + std::to_string(kMaxInputBytes) +
                   "): not read");
  // O_NONBLOCK: should a FIFO take the file's place after the stat, opening it does not wait.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw CsvError(path + ": cannot open file (" + std::strerror(errno) + ")");
  std::string text, why;
  text.reserve(static_cast<size_t>(st.st_size));
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) why = "not a regular file";
  char buf[1 << 16];
  while (why.empty()) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) why = std::strerror(errno);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (static_cast<long long>(text.size()) > kMaxInputBytes)
      why = "grew past " + std::to_string(kMaxInputBytes) + " bytes";
  }
  ::close(fd);
  if (!why.empty()) throw CsvError(path + ": cannot read (" + why + ")");
  return text;
}

namespace {

// Throws for text that is not UTF-8 or ASCII: UTF-16 (what some editors save), or any NUL
// byte (a binary file; a NUL would also cut a message that quoted the line).
void check_text(std::string_view text, const std::string& path) {
  if (text.substr(0, 2) == "\xFF\xFE" || text.substr(0, 2) == "\xFE\xFF")
    throw CsvError(path + ":1: UTF-16 text: not read (save it as UTF-8)");
  const size_t nul = text.find('\0');
  if (nul == std::string_view::npos) return;
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(nul), '\n');
  throw CsvError(path + ":" + std::to_string(line) + ": a NUL byte: not a text file, not read");
}

}  // namespace

CsvTable parse_csv(const std::string& text_in, const std::string& path) {
  CsvTable t;
  t.path = path;
  const std::string_view text = without_bom(text_in);
  check_text(text, path);
  std::string line;
  int lineno = 0;
  bool have_header = false;
  for (size_t pos = 0; pos < text.size();) {
    const size_t nl = std::min(text.find('\n', pos), text.size());
    line.assign(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::string body = line.substr(1);
      size_t start = body.find_first_not_of(' ');
      body = start == std::string::npos ? "" : body.substr(start);
      size_t eq = body.find('=');
      if (eq != std::string::npos) t.meta.emplace_back(body.substr(0, eq), body.substr(eq + 1));
      continue;
    }
    std::vector<std::string> fields;
    try {
      fields = split_csv_line(line);
    } catch (const CsvError& e) {
      throw CsvError(path + ":" + std::to_string(lineno) + ": " + e.what());
    }
    if (!have_header) {
      check_unique_columns(fields, path, lineno);
      t.header = fields;
      have_header = true;
      continue;
    }
    if (fields.size() != t.header.size())
      throw CsvError(path + ":" + std::to_string(lineno) + ": expected " +
                     std::to_string(t.header.size()) + " fields, found " +
                     std::to_string(fields.size()));
    t.rows.push_back(std::move(fields));
    t.row_lines.push_back(lineno);
  }
  if (!have_header) throw CsvError(path + ": no header row (empty or truncated file)");
  return t;
}

CsvTable read_csv(const std::string& path) { return parse_csv(read_input_file(path), path); }

std::string format_csv(const Metadata& meta, const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (const auto& [k, v] : meta) {
    std::string clean = v;
    for (char& c : clean)
      if (c == '\n' || c == '\r') c = ' ';
    out += "# " + k + "=" + clean + "\n";
  }
  out += join_csv(header) + "\n";
  for (const auto& r : rows) out += join_csv(r) + "\n";
  return out;
}

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int prec = 6; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string format_printf(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

bool parse_number(const std::string& s, double* out) {
  if (s.empty()) return false;
  const char* b = s.c_str();
  char* e = nullptr;
  double v = std::strtod(b, &e);
  if (e != b + s.size()) return false;
  *out = v;
  return true;
}

}  // namespace gpuprobe
