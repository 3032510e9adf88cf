#pragma once
// Documented figures (results/reference/documented_figures.csv) and the lookups that put
// them beside a measurement: for the GPU being measured, and for the representative part of
// an older architecture. Documented figures are only ever shown next to measured ones.
#include <optional>
#include <string>
#include <vector>

#include "base/observation.hpp"

namespace gpuprobe {

struct DocumentedFigure {
  std::string arch, gpu, cc, quantity;
  std::string value_text;  // as written: "28", "32768-131072", "32 or 64", "N/A"
  double value;            // the figure when value_text is one number, else NaN
  double low, high;        // bounds: a range "a-b", or value twice; NaN for text
  std::string unit;
  std::string method;  // label of docs/parameters.md's vocabulary; "unknown" in older files
  std::string method_note, source;
  int line = 0;  // line in the reference file

  bool numeric() const;  // a number or a range: low and high are finite
};

struct Reference {
  std::string path;
  std::vector<DocumentedFigure> figures;  // in file order
};

// Throws CsvError naming the file (and line) on a missing column, a row without a quantity,
// part or source, or a malformed CSV record.
Reference load_reference(const std::string& path);
Reference parse_reference(const std::string& text, const std::string& path);

// The documented figure of `quantity` for the GPU being measured. Rows whose part shares the
// device's model token ("H100") and contradicts none of its qualifiers (form factor, memory
// type and size: "NVIDIA H100 80GB HBM3" matches "H100 SXM5 80GB HBM3", not "H100 PCIe 80GB
// HBM2e") come first, most shared tokens first; else rows documented for every part of the
// device's compute capability ("Hopper GH100 (all cc9.0 parts)", "cc 7.x (GV100)"). Ties go
// to the earlier row.
std::optional<DocumentedFigure> documented_for_gpu(const Reference& ref,
                                                   const std::string& quantity,
                                                   const std::string& gpu_name, int cc_major,
                                                   int cc_minor);

struct RepresentativeGpu {
  std::string arch;   // "kepler"
  std::string label;  // "Kepler K80", for table headers and figure keys
  std::string gpu;    // "Tesla K80 (GK210)", as named in the reference
  std::string chip;   // "GK210"
  int cc_major, cc_minor;
};
// Kepler K80, Maxwell M60, Volta V100 PCIe: the parts reports compare with.
const std::vector<RepresentativeGpu>& representative_gpus();

// The documented figure of `quantity` for the representative part of `arch` ("kepler",
// "maxwell", "volta"): the first row for that part; else the first row of the same
// architecture naming its chip ("cc 7.x (GV100)"); else the first documented for every part
// of a compute capability that covers the part's ("cc 5.0/5.2 (GM10x/GM20x)"), never another
// product's row. plots/ref_value.gp follows the same order.
// Empty for an unknown architecture.
std::optional<DocumentedFigure> documented_for_arch(const Reference& ref,
                                                    const std::string& quantity,
                                                    const std::string& arch);

// True when a cc field ("7.0", "7.x", "3.5/3.7", "3.x-7.x") covers major.minor.
bool cc_covers(const std::string& cc_field, int major, int minor);

// Human text of a documented figure: "28 cycles", "6 MiB", "32-128 KiB", "32 or 64 sets".
std::string describe(const DocumentedFigure& f);

// The method label of a measured parameter: its method text up to the first ':' where that is
// a label of the vocabulary ("index_chase: j = s[j], ..." -> "index_chase"); else, for runs
// written before labels, the catalog's label of its canonical name; else "".
std::string method_label(const Parameter& p);

// A specification (a vendor's figure, or arithmetic on documented unit counts and clocks) of a
// size, count or peak rate: what a measurement is checked against whatever its method, the
// ratio saying how much of it the measurement reaches. Latencies have no such specification.
bool is_specification(const DocumentedFigure& doc);

// The one rule for setting a measurement beside a documented figure: a ratio only where the
// parameter's method label equals the figure's (and neither is "unknown"), or the figure is a
// specification (is_specification). Returns "x1.18",
// "in range", "x0.91 of low", "" where no ratio can be formed, or "other method: index_chase"
// where the methods differ: the figure is then shown without a ratio.
bool methods_comparable(const Parameter& p, const DocumentedFigure& doc);
std::string versus_documented(const Parameter& p, const DocumentedFigure& doc);

// Units that name the same thing ("B" and "bytes") compare equal.
bool same_unit(const std::string& a, const std::string& b);

}  // namespace gpuprobe
