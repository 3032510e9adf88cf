#include "app/reference.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "app/summary.hpp"

namespace gpuprobe {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> tokens(const std::string& name) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : lower(name)) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur += c;
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool has_digit(const std::string& t) {
  return std::any_of(t.begin(), t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

bool all_digits(const std::string& t) {
  return std::all_of(t.begin(), t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// Qualifier classes: two names that both say something about one of these and disagree
// name different products.
enum class Qualifier { none, form_factor, memory_type, memory_size };

Qualifier qualifier(const std::string& t) {
  static const std::set<std::string> form = {"pcie", "sxm", "sxm2", "sxm3", "sxm4",
                                             "sxm5", "nvl",  "nvlink", "mxm"};
  static const std::set<std::string> memory = {"hbm",   "hbm2",   "hbm2e", "hbm3",  "hbm3e",
                                               "gddr5", "gddr5x", "gddr6", "gddr6x", "gddr7"};
  if (form.count(t)) return Qualifier::form_factor;
  if (memory.count(t)) return Qualifier::memory_type;
  if (t.size() > 2 && t.compare(t.size() - 2, 2, "gb") == 0 && all_digits(t.substr(0, t.size() - 2)))
    return Qualifier::memory_size;
  return Qualifier::none;
}

// Tokens that name a product or chip: "h100", "k80", "gv100", "4090"; not vendor words,
// qualifiers, or the bits of "cc9.0".
bool is_model(const std::string& t) {
  if (qualifier(t) != Qualifier::none || !has_digit(t)) return false;
  if (t.rfind("cc", 0) == 0) return false;
  return !all_digits(t) || t.size() >= 3;
}

struct NameMatch {
  bool matches = false;
  int score = 0;
};

NameMatch match_names(const std::vector<std::string>& device, const std::string& row_gpu) {
  std::vector<std::string> row = tokens(row_gpu);
  auto in = [](const std::vector<std::string>& v, const std::string& t) {
    return std::find(v.begin(), v.end(), t) != v.end();
  };
  NameMatch m;
  bool shared_model = false;
  for (const auto& t : device) {
    if (!in(row, t)) continue;
    ++m.score;
    shared_model = shared_model || is_model(t);
  }
  if (!shared_model) return m;
  for (Qualifier q : {Qualifier::form_factor, Qualifier::memory_type, Qualifier::memory_size}) {
    bool dev_has = false, row_has = false, overlap = false;
    for (const auto& t : device) dev_has = dev_has || qualifier(t) == q;
    for (const auto& t : row) {
      if (qualifier(t) != q) continue;
      row_has = true;
      overlap = overlap || in(device, t);
    }
    if (dev_has && row_has && !overlap) return m;
  }
  m.matches = true;
  return m;
}

// A row documented for every part of its compute capability rather than for one product.
bool is_generic(const std::string& gpu) {
  std::string g = lower(gpu);
  auto t = tokens(gpu);
  return std::find(t.begin(), t.end(), "all") != t.end() || g.rfind("cc ", 0) == 0 ||
         g.find("(cc ") != std::string::npos;
}

// "7.0" -> {7, 0}; "7.x" -> {7, -1}. False when malformed.
bool parse_cc(const std::string& s, int* major, int* minor) {
  std::string t = trim(s);
  size_t dot = t.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= t.size()) return false;
  std::string a = t.substr(0, dot), b = t.substr(dot + 1);
  if (!all_digits(a) || a.size() > 3) return false;
  *major = std::stoi(a);
  if (b == "x") {
    *minor = -1;
  } else if (all_digits(b) && b.size() <= 3) {
    *minor = std::stoi(b);
  } else {
    return false;
  }
  return true;
}

void parse_value(DocumentedFigure& f) {
  f.value = f.low = f.high = kNaN;
  double v = 0;
  if (parse_number(f.value_text, &v) && std::isfinite(v)) {
    f.value = f.low = f.high = v;
    return;
  }
  size_t dash = f.value_text.find('-', 1);
  double a = 0, b = 0;
  if (dash != std::string::npos && parse_number(f.value_text.substr(0, dash), &a) &&
      parse_number(f.value_text.substr(dash + 1), &b) && std::isfinite(a) && std::isfinite(b) &&
      a <= b) {
    f.low = a;
    f.high = b;
  }
}

std::optional<DocumentedFigure> first_where(
    const Reference& ref, const std::string& quantity,
    const std::function<bool(const DocumentedFigure&)>& pred) {
  for (const auto& f : ref.figures)
    if (f.quantity == quantity && pred(f)) return f;
  return std::nullopt;
}

}  // namespace

bool DocumentedFigure::numeric() const { return std::isfinite(low) && std::isfinite(high); }

namespace {

Reference reference_from_table(const CsvTable& t) {
  const std::string& path = t.path;
  const std::vector<std::string> cols = {"arch", "gpu",         "cc",    "quantity",
                                         "value", "unit",       "method_note", "source"};
  std::vector<size_t> c;
  for (const auto& name : cols) c.push_back(static_cast<size_t>(t.require(name)));
  const int method_col = t.column("method");  // absent from files written before it was added
  Reference ref;
  ref.path = path;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    DocumentedFigure f;
    f.arch = lower(trim(row[c[0]]));
    f.gpu = trim(row[c[1]]);
    f.cc = trim(row[c[2]]);
    f.quantity = canonical_name(trim(row[c[3]]));  // an old name reads as today's
    f.value_text = trim(row[c[4]]);
    f.unit = trim(row[c[5]]);
    f.method = method_col < 0 ? "unknown" : trim(row[static_cast<size_t>(method_col)]);
    if (f.method.empty()) f.method = "unknown";
    f.method_note = row[c[6]];
    f.source = trim(row[c[7]]);
    f.line = t.row_lines[r];
    auto fail = [&](const std::string& what) {
      throw CsvError(path + ":" + std::to_string(f.line) + ": " + what);
    };
    if (f.quantity.empty()) fail("row without a quantity");
    if (f.gpu.empty()) fail("row without a gpu");
    if (f.value_text.empty()) fail("row without a value");
    if (f.source.empty()) fail("row without a source (every documented figure is cited)");
    parse_value(f);
    ref.figures.push_back(std::move(f));
  }
  return ref;
}

}  // namespace

Reference parse_reference(const std::string& text, const std::string& path) {
  return reference_from_table(parse_csv(text, path));
}

Reference load_reference(const std::string& path) { return reference_from_table(read_csv(path)); }

bool cc_covers(const std::string& cc_field, int major, int minor) {
  size_t start = 0;
  while (start <= cc_field.size()) {
    size_t slash = cc_field.find('/', start);
    std::string part = cc_field.substr(start, slash == std::string::npos ? std::string::npos
                                                                          : slash - start);
    int lo_major = 0, lo_minor = 0, hi_major = 0, hi_minor = 0;
    size_t dash = part.find('-');
    bool ok = dash == std::string::npos
                  ? parse_cc(part, &lo_major, &lo_minor) && parse_cc(part, &hi_major, &hi_minor)
                  : parse_cc(part.substr(0, dash), &lo_major, &lo_minor) &&
                        parse_cc(part.substr(dash + 1), &hi_major, &hi_minor);
    if (ok) {
      // "x" is every minor version: the bottom of a range's low end, the top of its high end.
      int lo = lo_major * 1000 + (lo_minor < 0 ? 0 : lo_minor);
      int hi = hi_major * 1000 + (hi_minor < 0 ? 999 : hi_minor);
      int v = major * 1000 + minor;
      if (v >= lo && v <= hi) return true;
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return false;
}

std::optional<DocumentedFigure> documented_for_gpu(const Reference& ref,
                                                   const std::string& quantity,
                                                   const std::string& gpu_name, int cc_major,
                                                   int cc_minor) {
  std::vector<std::string> device;
  for (const auto& t : tokens(gpu_name))
    if (t != "nvidia" && t != "tesla" && t != "geforce" && t != "quadro") device.push_back(t);
  const DocumentedFigure* best = nullptr;
  int best_score = 0;
  for (const auto& f : ref.figures) {
    if (f.quantity != quantity) continue;
    NameMatch m = match_names(device, f.gpu);
    if (m.matches && m.score > best_score) {
      best = &f;
      best_score = m.score;
    }
  }
  if (best) return *best;
  return first_where(ref, quantity, [&](const DocumentedFigure& f) {
    return is_generic(f.gpu) && cc_covers(f.cc, cc_major, cc_minor);
  });
}

const std::vector<RepresentativeGpu>& representative_gpus() {
  static const std::vector<RepresentativeGpu> reps = {
      {"kepler", "Kepler K80", "Tesla K80 (GK210)", "GK210", 3, 7},
      {"maxwell", "Maxwell M60", "Tesla M60 (GM204)", "GM204", 5, 2},
      {"volta", "Volta V100", "Tesla V100 PCIe (GV100)", "GV100", 7, 0},
  };
  return reps;
}

std::optional<DocumentedFigure> documented_for_arch(const Reference& ref,
                                                    const std::string& quantity,
                                                    const std::string& arch) {
  const std::string a = lower(arch);
  for (const auto& rep : representative_gpus()) {
    if (rep.arch != a) continue;
    const std::string chip = lower(rep.chip);
    if (auto f = first_where(ref, quantity, [&](const DocumentedFigure& d) { return d.gpu == rep.gpu; }))
      return f;
    if (auto f = first_where(ref, quantity, [&](const DocumentedFigure& d) {
          return d.arch == a && lower(d.gpu).find(chip) != std::string::npos;
        }))
      return f;
    return first_where(ref, quantity, [&](const DocumentedFigure& d) {
      return d.arch == a && is_generic(d.gpu) && cc_covers(d.cc, rep.cc_major, rep.cc_minor);
    });
  }
  return std::nullopt;
}

std::string method_label(const Parameter& p) {
  size_t colon = p.method.find(':');
  if (colon != std::string::npos && catalog().methods.count(p.method.substr(0, colon)))
    return p.method.substr(0, colon);
  // Runs written before parameters carried labels: a canonical name means one method.
  const CatalogEntry* entry = find_parameter(p.name);
  return entry ? entry->method : "";
}

bool is_specification(const DocumentedFigure& doc) {
  return (doc.method == "vendor_spec" || doc.method == "theoretical_bound") && doc.unit != "cycles" &&
         doc.unit != "ns";
}

bool methods_comparable(const Parameter& p, const DocumentedFigure& doc) {
  if (is_specification(doc)) return true;
  std::string label = method_label(p);
  return !label.empty() && label != "unknown" && label == doc.method;
}

std::string versus_documented(const Parameter& p, const DocumentedFigure& doc) {
  if (!methods_comparable(p, doc)) return "other method: " + doc.method;
  if (!std::isfinite(p.value) || !doc.numeric()) return "";
  if (std::isfinite(doc.value))
    return doc.value == 0 ? "" : "x" + format_printf("%.2f", p.value / doc.value);
  if (p.value >= doc.low && p.value <= doc.high) return "in range";
  double bound = p.value < doc.low ? doc.low : doc.high;
  return bound == 0 ? "" : "x" + format_printf("%.2f", p.value / bound) + (p.value < doc.low ? " of low" : " of high");
}

bool same_unit(const std::string& a, const std::string& b) {
  auto canon = [](const std::string& u) {
    std::string t = trim(u);
    if (t == "B" || t == "byte") return std::string("bytes");
    return t;
  };
  return canon(a) == canon(b);
}

std::string describe(const DocumentedFigure& f) {
  std::string unit = f.unit == "text" ? "" : f.unit;
  auto num = [&](double v) { return trim(human_value(v, unit)); };
  if (std::isfinite(f.value)) return num(f.value);
  if (f.numeric()) return num(f.low) + " to " + num(f.high);
  return unit.empty() ? f.value_text : f.value_text + " " + unit;
}

}  // namespace gpuprobe
