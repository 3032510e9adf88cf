#include "base/csv.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

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

CsvTable parse_csv(const std::string& text, const std::string& path) {
  CsvTable t;
  t.path = path;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  bool have_header = false;
  while (std::getline(in, line)) {
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

CsvTable read_csv(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw CsvError(path + ": cannot open file");
  std::ostringstream ss;
  ss << f.rdbuf();
  return parse_csv(ss.str(), path);
}

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
