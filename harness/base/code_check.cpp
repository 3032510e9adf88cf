#include "base/code_check.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>
#include <set>

namespace gpuprobe {

namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string collapse_spaces(const std::string& s) {
  std::string out;
  bool space = false;
  for (char c : trim(s)) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Operands split at commas outside brackets and braces.
std::vector<std::string> split_operands(const std::string& s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '[' || c == '{' || c == '(') ++depth;
    if (c == ']' || c == '}' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// PTX registers: %r1, %rd2, %f3, %p4, special ones such as %tid (read-only), and the bare
// names inline asm declares in its own scope ("t" of `.reg .f32 t;`). Other bare names
// (parameters, symbols, labels) are never written, so reading them links nothing.
std::vector<std::string> ptx_registers(const std::string& operand) {
  std::vector<std::string> regs;
  for (size_t i = 0; i < operand.size(); ++i) {
    char c = operand[i];
    bool starts = c == '%' || c == '$' || c == '_' || std::isalpha(static_cast<unsigned char>(c));
    if (!starts || (i > 0 && (ident_char(operand[i - 1]) || operand[i - 1] == '.'))) continue;
    size_t j = i + 1;
    while (j < operand.size() && (ident_char(operand[j]) || operand[j] == '$')) ++j;
    regs.push_back(operand.substr(i, j - i));
    i = j - 1;
  }
  return regs;
}

// SASS registers: R7, UR4, P0, UP1; RZ, URZ, PT and UPT are constants, not registers.
std::vector<std::string> sass_registers(const std::string& operand) {
  std::vector<std::string> regs;
  for (size_t i = 0; i < operand.size(); ++i) {
    if (i > 0 && ident_char(operand[i - 1])) continue;
    size_t j = i;
    if (operand[j] == 'U') ++j;
    if (j >= operand.size() || (operand[j] != 'R' && operand[j] != 'P')) continue;
    size_t k = j + 1;
    while (k < operand.size() && std::isdigit(static_cast<unsigned char>(operand[k]))) ++k;
    if (k == j + 1 || (k < operand.size() && ident_char(operand[k]))) continue;
    regs.push_back(operand.substr(i, k - i));
    i = k - 1;
  }
  return regs;
}

bool is_sass_predicate(const std::string& operand) {
  std::string s = operand;
  while (!s.empty() && (s[0] == '!' || s[0] == '-')) s.erase(0, 1);
  if (s == "PT" || s == "UPT") return true;
  auto regs = sass_registers(s);
  return regs.size() == 1 && regs[0] == s && (s[0] == 'P' || starts_with(s, "UP"));
}

std::string opcode_root(const std::string& opcode) { return opcode.substr(0, opcode.find('.')); }

void fill_ptx_dataflow(Instruction& ins, const std::vector<std::string>& operands) {
  static const std::set<std::string> no_def = {"st", "red", "bar", "barrier", "bra", "ret",
                                               "exit", "membar", "fence", "prefetch",
                                               "prefetchu", "trap", "call", "cp", "stmatrix"};
  bool defines = !no_def.count(opcode_root(ins.opcode)) && !operands.empty();
  for (size_t i = 0; i < operands.size(); ++i) {
    auto regs = ptx_registers(operands[i]);
    auto& into = (defines && i == 0) ? ins.defs : ins.uses;
    into.insert(into.end(), regs.begin(), regs.end());
  }
}

void fill_sass_dataflow(Instruction& ins, const std::vector<std::string>& operands) {
  static const std::set<std::string> no_def = {
      "ST",    "STS",   "STG",      "STL",   "STSM", "RED",  "REDG", "BRA",    "BRX",
      "EXIT",  "RET",   "BAR",      "BSSY",  "BSYNC", "WARPSYNC", "NOP", "CALL", "YIELD",
      "MEMBAR", "FENCE", "ERRBAR",  "CCTL",  "DEPBAR", "BPT", "JMP", "JMX", "KILL"};
  std::string root = opcode_root(ins.opcode);
  size_t first_use = 0;
  if (!no_def.count(root)) {
    bool compare = root.find("SETP") != std::string::npos;
    // Predicate outputs lead; the first other operand is the destination, except for
    // comparisons, whose destinations are predicates only.
    while (first_use < operands.size() && is_sass_predicate(operands[first_use])) {
      for (auto& r : sass_registers(operands[first_use])) ins.defs.push_back(r);
      ++first_use;
    }
    if (!compare && first_use < operands.size()) {
      for (auto& r : sass_registers(operands[first_use])) ins.defs.push_back(r);
      ++first_use;
    }
  }
  for (size_t i = first_use; i < operands.size(); ++i)
    for (auto& r : sass_registers(operands[i])) ins.uses.push_back(r);
}

Instruction make_instruction(const std::string& statement, CodeDialect dialect) {
  Instruction ins;
  std::string s = collapse_spaces(statement);
  if (!s.empty() && s[0] == '@') {
    size_t sp = s.find(' ');
    ins.guard = s.substr(0, sp);
    s = sp == std::string::npos ? "" : s.substr(sp + 1);
  }
  size_t sp = s.find(' ');
  ins.opcode = s.substr(0, sp);
  std::string rest = sp == std::string::npos ? "" : s.substr(sp + 1);
  ins.text = rest.empty() ? ins.opcode : ins.opcode + " " + rest;
  auto operands = split_operands(rest);
  if (dialect == CodeDialect::ptx)
    fill_ptx_dataflow(ins, operands);
  else
    fill_sass_dataflow(ins, operands);
  return ins;
}

std::string strip_ptx_comments(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '"') {  // strings (.pragma "nounroll") are kept whole
      size_t e = text.find('"', i + 1);
      if (e == std::string::npos) e = text.size() - 1;
      out.append(text, i, e - i + 1);
      i = e;
    } else if (text.compare(i, 2, "//") == 0) {
      size_t e = text.find('\n', i);
      if (e == std::string::npos) break;
      i = e - 1;
    } else if (text.compare(i, 2, "/*") == 0) {
      size_t e = text.find("*/", i + 2);
      if (e == std::string::npos) break;
      i = e + 1;
    } else {
      out += text[i];
    }
  }
  return out;
}

// Index of the bracket closing the one at `open`, or npos.
size_t matching(const std::string& s, size_t open, char o, char c) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == o) ++depth;
    if (s[i] == c && --depth == 0) return i;
  }
  return std::string::npos;
}

std::vector<Instruction> parse_ptx_body(const std::string& body) {
  std::vector<Instruction> code;
  size_t start = 0;
  while (start < body.size()) {
    size_t end = body.find(';', start);
    if (end == std::string::npos) end = body.size();
    std::string st = trim(body.substr(start, end - start));
    start = end + 1;
    // Scope braces of inline asm blocks and labels precede the statement itself.
    for (bool changed = true; changed && !st.empty();) {
      changed = false;
      if (st[0] == '{' || st[0] == '}') {
        st = trim(st.substr(1));
        changed = true;
        continue;
      }
      size_t colon = st.find(':');
      if (colon != std::string::npos && colon > 0) {
        bool label = true;
        for (size_t i = 0; i < colon; ++i) label = label && (ident_char(st[i]) || st[i] == '$');
        if (label) {
          st = trim(st.substr(colon + 1));
          changed = true;
        }
      }
    }
    if (st.empty() || st[0] == '.') continue;  // directives: .reg, .shared, .pragma, ...
    code.push_back(make_instruction(st, CodeDialect::ptx));
  }
  return code;
}

bool is_clock_read(const Instruction& ins, CodeDialect dialect) {
  if (dialect == CodeDialect::ptx) return ins.text.find("%clock") != std::string::npos;
  return ins.text.find("SR_CLOCKLO") != std::string::npos ||
         ins.text.find("SR_CLOCKHI") != std::string::npos;
}

bool intersects(const std::vector<std::string>& a, const std::set<std::string>& b) {
  for (const auto& x : a)
    if (b.count(x)) return true;
  return false;
}

}  // namespace

std::string kernel_name(const std::string& symbol) {
  int status = 0;
  char* d = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return symbol;
  std::string s(d);
  std::free(d);
  // Drop the parameter list: the parenthesis closing the name.
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') ++depth;
      if (s[i] == '(' && --depth == 0) {
        s.erase(i);
        break;
      }
    }
  }
  // Drop the return type that a template's mangled name carries: text before the last space
  // outside <> and ().
  int depth = 0;
  size_t cut = std::string::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' || s[i] == '(') ++depth;
    if (s[i] == '>' || s[i] == ')') --depth;
    if (s[i] == ' ' && depth == 0) cut = i;
  }
  if (cut != std::string::npos) s.erase(0, cut + 1);
  const std::string ns = "gpuprobe::";
  for (size_t p; (p = s.find(ns)) != std::string::npos;) s.erase(p, ns.size());
  return s;
}

std::vector<KernelCode> parse_ptx(const std::string& text) {
  std::vector<KernelCode> out;
  std::string s = strip_ptx_comments(text);
  for (size_t pos = 0; (pos = s.find(".entry", pos)) != std::string::npos; ++pos) {
    if (pos > 0 && !std::isspace(static_cast<unsigned char>(s[pos - 1]))) continue;
    size_t b = pos + 6;
    while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    size_t e = b;
    while (e < s.size() && (ident_char(s[e]) || s[e] == '$')) ++e;
    size_t params = s.find('(', e);
    size_t params_end = params == std::string::npos ? params : matching(s, params, '(', ')');
    size_t open = params_end == std::string::npos ? params_end : s.find('{', params_end);
    size_t close = open == std::string::npos ? open : matching(s, open, '{', '}');
    if (close == std::string::npos) break;  // truncated file: keep what was complete
    KernelCode k;
    k.symbol = s.substr(b, e - b);
    k.name = kernel_name(k.symbol);
    k.code = parse_ptx_body(s.substr(open + 1, close - open - 1));
    out.push_back(std::move(k));
    pos = close;
  }
  return out;
}

namespace {

// "arch = sm_90" (fatbin header) or "code for sm_90" (before the functions).
// Cheap tests come before the regexes: a whole binary's SASS runs to 10^5 lines and more.
std::string sass_arch_of_line(const std::string& line) {
  if (line.find("arch = ") == std::string::npos && line.find("code for ") == std::string::npos)
    return "";
  static const std::regex re(R"((?:arch = |code for )(sm_[0-9]+[a-z]?))");
  std::smatch m;
  return std::regex_search(line, m, re) ? m[1].str() : "";
}

// "        /*0120*/                   FFMA R5, R5, R2, R3 ;   /* 0x... */" -> "FFMA R5, R5, R2, R3".
// Encoding-only lines ("/* 0x000fe4... */") start with a space inside the comment: not code.
bool sass_instruction_text(const std::string& line, std::string* out) {
  size_t b = line.find_first_not_of(" \t");
  if (b == std::string::npos || line.compare(b, 2, "/*") != 0) return false;
  size_t e = b + 2;
  while (e < line.size() && std::isxdigit(static_cast<unsigned char>(line[e]))) ++e;
  if (e == b + 2 || line.compare(e, 2, "*/") != 0) return false;
  size_t semi = line.find(';', e + 2);
  if (semi == std::string::npos) return false;
  *out = trim(line.substr(e + 2, semi - e - 2));
  return !out->empty();
}

}  // namespace

std::vector<std::string> sass_architectures(const std::string& text) {
  std::vector<std::string> archs;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string a = sass_arch_of_line(text.substr(start, end - start));
    if (!a.empty() && std::find(archs.begin(), archs.end(), a) == archs.end()) archs.push_back(a);
    start = end + 1;
  }
  return archs;
}

std::vector<KernelCode> parse_sass(const std::string& text, const std::string& arch) {
  static const std::regex function_re(R"(Function\s*:\s*(\S+))");
  std::vector<KernelCode> out;
  std::string current_arch;
  bool in_function = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    std::string a = sass_arch_of_line(line);
    if (!a.empty()) {
      current_arch = a;
      in_function = false;
      continue;
    }
    std::smatch m;
    if (line.find("Function") != std::string::npos && std::regex_search(line, m, function_re)) {
      in_function = arch.empty() || current_arch == arch;
      if (in_function) {
        KernelCode k;
        k.symbol = m[1].str();
        k.name = kernel_name(k.symbol);
        out.push_back(std::move(k));
      }
      continue;
    }
    std::string ins;
    if (in_function && sass_instruction_text(line, &ins))
      out.back().code.push_back(make_instruction(ins, CodeDialect::sass));
  }
  return out;
}

const KernelCode* find_kernel(const std::vector<KernelCode>& kernels, const std::string& name) {
  for (const auto& k : kernels)
    if (k.name == name) return &k;
  return nullptr;
}

std::vector<Instruction> timed_region(const KernelCode& kernel, CodeDialect dialect) {
  std::vector<size_t> reads;
  for (size_t i = 0; i < kernel.code.size(); ++i)
    if (is_clock_read(kernel.code[i], dialect)) reads.push_back(i);
  if (reads.size() < 2) return kernel.code;
  return std::vector<Instruction>(kernel.code.begin() + static_cast<long>(reads.front()) + 1,
                                  kernel.code.begin() + static_cast<long>(reads.back()));
}

int count_matches(const std::vector<Instruction>& code, const std::string& pattern) {
  std::regex re(pattern);
  int n = 0;
  for (const auto& ins : code) n += std::regex_search(ins.text, re) ? 1 : 0;
  return n;
}

bool chain_is_dependent(const std::vector<Instruction>& code, const std::string& pattern,
                        std::string* why) {
  std::regex re(pattern);
  std::set<std::string> live;  // registers carrying the previous match's result
  int matched = 0;
  for (const auto& ins : code) {
    bool is_match = std::regex_search(ins.text, re);
    bool reads_live = intersects(ins.uses, live);
    if (is_match) {
      if (matched > 0 && !reads_live) {
        if (why)
          *why = "'" + ins.text + "' (match " + std::to_string(matched + 1) +
                 ") does not depend on the previous match";
        return false;
      }
      ++matched;
      live.clear();
      live.insert(ins.defs.begin(), ins.defs.end());
    } else if (reads_live) {
      live.insert(ins.defs.begin(), ins.defs.end());
    } else {
      for (const auto& d : ins.defs) live.erase(d);  // overwritten with something unrelated
    }
  }
  return true;
}

CheckOutcome check_code(const KernelCode& kernel, const std::vector<InstructionRule>& rules,
                        CodeDialect dialect) {
  CheckOutcome out;
  auto region = timed_region(kernel, dialect);
  const char* what = dialect == CodeDialect::ptx ? "PTX" : "SASS";
  for (const auto& r : rules) {
    int n = count_matches(region, r.pattern);
    bool count_ok = r.count < 0 ? n > 0 : n == r.count;
    std::string why;
    if (!count_ok) {
      why = std::string(what) + " of " + kernel.name + ": " + std::to_string(n) +
            " instructions match /" + r.pattern + "/, expected " +
            (r.count < 0 ? std::string("at least 1") : std::to_string(r.count));
    } else if (r.chained && !chain_is_dependent(region, r.pattern, &why)) {
      why = std::string(what) + " of " + kernel.name + ": chain /" + r.pattern + "/ broken: " + why;
    }
    if (!why.empty()) {
      out.ok = false;
      out.why += (out.why.empty() ? "" : "; ") + why;
    }
  }
  return out;
}

std::vector<CodeExpectation>& code_expectations() {
  static std::vector<CodeExpectation> all;
  return all;
}

const CodeExpectation* find_expectation(const std::string& kernel) {
  for (const auto& e : code_expectations())
    if (e.kernel == kernel) return &e;
  return nullptr;
}

RegisterCodeExpectations::RegisterCodeExpectations(std::vector<CodeExpectation> (*make)()) {
  for (auto& e : make()) code_expectations().push_back(std::move(e));
}

}  // namespace gpuprobe
