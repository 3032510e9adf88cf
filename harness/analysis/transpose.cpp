#include "analysis/transpose.hpp"

#include "analysis/analyzer.hpp"
#include "analysis/common/util.hpp"
#include "base/parameter_names.hpp"

namespace gpuprobe::transpose {

std::vector<Parameter> analyze_transpose(const std::vector<Observation>& obs, const Metadata&) {
  std::vector<Parameter> out;
  const auto rows = analysis::finite_rows(obs, kTransposeProbe, "us");
  const std::pair<std::string, const char*> types[] = {
      {"float", param::transpose_padding_speedup_float},
      {"double", param::transpose_padding_speedup_double}};
  for (const auto& [type, name] : types) {
    const Observation* plain =
        analysis::find_row(rows, {{kTypeColumn, type}, {kPaddingColumn, "0"}});
    const Observation* padded =
        analysis::find_row(rows, {{kTypeColumn, type}, {kPaddingColumn, "1"}});
    if (!plain || !padded || !(padded->value > 0 && padded->p05 > 0)) continue;
    double v = plain->value / padded->value;
    double lo = plain->p05 / padded->p95, hi = plain->p95 / padded->p05;
    out.push_back({name, v, "x", lo, hi, analysis::spread_confidence(lo, v, hi),
                   "32x32 " + type +
                       " tile through shared memory, n=" + plain->param_text(kSideColumn) +
                       ": time unpadded / time with one column of padding",
                   analysis::evidence_file(obs, std::string(kFamily.name))});
  }
  return out;
}

GPUPROBE_REGISTER_ANALYZER(transpose::kFamily, analyze_transpose);

}  // namespace gpuprobe::transpose
