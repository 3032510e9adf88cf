#include "app/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuprobe {

std::string human_value(double value, const std::string& unit) {
  char buf[64];
  if ((unit == "bytes" || unit == "B") && std::fabs(value) >= 1024) {
    static const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
    double v = value / 1024;
    int i = 0;
    while (std::fabs(v) >= 1024 && i < 3) {
      v /= 1024;
      ++i;
    }
    std::snprintf(buf, sizeof buf, "%.4g %s", v, units[i]);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g %s", value, unit.c_str());
  }
  return buf;
}

std::string format_summary(const std::vector<Parameter>& params,
                           const std::function<std::string(const Parameter&)>& documented) {
  struct Row {
    std::string name, value, conf, doc;
  };
  std::vector<Row> rows = {{"parameter", "measured", "conf", "documented (this GPU)"}};
  for (const auto& p : params) {
    char conf[16];
    std::snprintf(conf, sizeof conf, "%.2f", p.confidence);
    std::string doc = documented(p);
    rows.push_back({p.name, human_value(p.value, p.unit), conf, doc.empty() ? "-" : doc});
  }
  size_t w[3] = {0, 0, 0};
  for (const auto& r : rows) {
    w[0] = std::max(w[0], r.name.size());
    w[1] = std::max(w[1], r.value.size());
    w[2] = std::max(w[2], r.conf.size());
  }
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    out += r.name + std::string(w[0] - r.name.size() + 2, ' ');
    out += std::string(w[1] - r.value.size(), ' ') + r.value + "  ";
    out += std::string(w[2] - r.conf.size(), ' ') + r.conf + "  " + r.doc + "\n";
    if (i == 0) out += std::string(w[0] + w[1] + w[2] + 6 + r.doc.size(), '-') + "\n";
  }
  return out;
}

}  // namespace gpuprobe
