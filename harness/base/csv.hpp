#pragma once
// Reading and writing the suite's CSV files: `# key=value` metadata lines, one header row,
// RFC 4180 quoting. Every error names the file and the line, because these files are
// whatever a user hands us.
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpuprobe {

using Metadata = std::vector<std::pair<std::string, std::string>>;

class CsvError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CsvTable {
  std::string path;
  Metadata meta;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> row_lines;  // source line of each row, for messages

  // Index of a column, or -1.
  int column(const std::string& name) const;
  // Index of a column that must exist; throws CsvError naming the file otherwise.
  int require(const std::string& name) const;
  std::string meta_value(const std::string& key, const std::string& fallback = "") const;
  // A cell parsed as a number; throws CsvError naming file and line when it is not one.
  double number(size_t row, int col) const;
};

// Splits one CSV record; `line` may not contain an unquoted newline. Throws CsvError on an
// unterminated quote.
std::vector<std::string> split_csv_line(const std::string& line);
std::string csv_escape(const std::string& field);
std::string join_csv(const std::vector<std::string>& fields);

// A UTF-8 byte-order mark (spreadsheet programs write one) is read as if absent. A header
// naming a column twice is refused: a reader would take one and ignore the other.
CsvTable parse_csv(const std::string& text, const std::string& path);
CsvTable read_csv(const std::string& path);

// The most an input file may hold: a full run's largest file is well under 1 MB (tlb.csv),
// a stress test's 60 MB; a file of gigabytes is no run's, and parsing it would take minutes
// and many times its size in memory.
inline constexpr long long kMaxInputBytes = 256LL << 20;
// The text of an input file, read only when it is a regular file (a link to one is followed)
// of at most kMaxInputBytes: a FIFO would wait forever for a writer and /dev/zero never ends,
// so neither is opened for reading. Throws CsvError naming the path and why.
std::string read_input_file(const std::string& path);
// `text` without a leading UTF-8 byte-order mark.
std::string_view without_bom(std::string_view text);

// Text of a CSV file: metadata lines, header, rows.
std::string format_csv(const Metadata& meta, const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows);

// Shortest text that reads back as the same double.
std::string format_number(double v);
// One number through a printf format ("%.1f"), for method texts and tables.
std::string format_printf(const char* fmt, double v);
// Strict parse of a whole field as a finite-or-nan number.
bool parse_number(const std::string& s, double* out);

}  // namespace gpuprobe
