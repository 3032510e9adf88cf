#include "app/anchor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "analysis/collectives.hpp"
#include "analysis/common/util.hpp"
#include "app/cli.hpp"
#include "app/cli_parse.hpp"
#include "app/report.hpp"
#include "base/run_dir.hpp"

namespace gpuprobe {

namespace {

// Two figures of the same collective and size agree where they lie this close (the issue's
// check: gpuprobe's busbw within 5 % of nccl-tests' on the same machine).
constexpr double kAgreement = 0.05;
// nccl-tests' row: size count type redop root, then time algbw busbw #wrong out of place.
constexpr size_t kOutOfPlaceColumns = 9;

bool whole_number(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

double number(const std::string& s, const std::string& where) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v))
    throw std::runtime_error(where + ": '" + s + "' is no number");
  return v;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

std::vector<CollectiveRow> parse_nccl_tests(const std::string& text, const std::string& fallback) {
  static const std::regex kStart(R"(^#\s*Collective test starting:\s*(\S+))");
  static const std::regex kRank(R"(^#\s+Rank\s+\d+\s)");
  std::vector<CollectiveRow> out;
  std::string current = fallback;
  int ranks = 0;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::smatch m;
    if (std::regex_search(line, m, kStart)) {
      current = m[1].str();
      ranks = 0;
      continue;
    }
    if (std::regex_search(line, kRank)) ++ranks;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.size() < kOutOfPlaceColumns || !whole_number(f[0]) || !whole_number(f[1]))
      continue;  // not a row
    const std::string where = "line " + std::to_string(n);
    collectives::Collective c;
    if (!collectives::parse(current, &c))
      throw std::runtime_error(where + ": a result row, but no collective named before it ('" +
                               current + "')");
    CollectiveRow r;
    r.collective = collectives::name(c);
    r.bytes = number(f[0], where);
    if (r.bytes == 0) continue;  // a rank's share rounds to nothing: the run has no such row either
    r.ranks = ranks;
    r.time_us = number(f[5], where);
    r.algbw = number(f[6], where);
    r.busbw = number(f[7], where);
    out.push_back(r);
  }
  return out;
}

std::vector<CollectiveRow> collective_rows(const std::vector<Observation>& obs) {
  std::vector<CollectiveRow> out;
  for (const auto& o : obs) {
    collectives::Collective c;
    const double ranks = o.param(collectives::kRanksColumn),
                 bytes = o.param(collectives::kBytesColumn);
    if (o.unit != "us" || !collectives::parse(o.probe, &c) || !(ranks >= 1 && ranks < 1e6) ||
        !(bytes > 0) || !(o.value > 0))
      continue;
    const double s = o.value * 1e-6;
    out.push_back({o.probe, bytes, int(ranks), o.param_text(collectives::kModeColumn), o.value,
                   collectives::algbw(bytes, s), collectives::busbw(c, int(ranks), bytes, s)});
  }
  return out;
}

namespace {

const CollectiveRow* find(const AnchorSource& s, const std::string& c, double bytes, int ranks) {
  for (const auto& r : s.rows)
    if (r.collective == c && r.bytes == bytes && r.ranks == ranks) return &r;
  return nullptr;
}

// The sizes of collective c the table shows: the largest and the smallest, or all.
std::vector<double> shown_sizes(const AnchorSource& run, const std::string& c, int ranks,
                                bool all_sizes) {
  std::set<double> sizes;
  for (const auto& r : run.rows)
    if (r.collective == c && r.ranks == ranks) sizes.insert(r.bytes);
  if (all_sizes || sizes.size() <= 2) return {sizes.begin(), sizes.end()};
  return {*sizes.rbegin(), *sizes.begin()};
}

}  // namespace

std::string anchor_table(const AnchorSource& run, const std::vector<AnchorSource>& others,
                         int ranks, bool all_sizes) {
  std::vector<const AnchorSource*> sources = {&run};
  for (const auto& o : others) sources.push_back(&o);
  std::vector<std::string> head = {"collective", "size", "ranks"};
  for (const AnchorSource* s : sources) {
    head.push_back(s->label + " busbw (GB/s)");
    head.push_back(s->label + " time (us)");
  }
  for (const auto& o : others) head.push_back(o.label + " / " + run.label + " (busbw)");
  std::vector<std::vector<std::string>> rows = {head};
  for (collectives::Collective c : collectives::all()) {
    const std::string name = collectives::name(c);
    for (double bytes : shown_sizes(run, name, ranks, all_sizes)) {
      const CollectiveRow* mine = find(run, name, bytes, ranks);
      std::vector<std::string> row = {name, analysis::bytes_text(bytes), std::to_string(ranks)},
                               ratios;
      for (const AnchorSource* s : sources) {
        const CollectiveRow* r = find(*s, name, bytes, ranks);
        row.push_back(r ? fixed(r->busbw, 1) : "-");
        row.push_back(r ? fixed(r->time_us, 1) : "-");
        if (s == &run) continue;
        // busbw other / busbw run is time run / time other: the same S and factor.
        const double x = r && mine && r->time_us > 0 ? mine->time_us / r->time_us : NAN;
        ratios.push_back(!std::isfinite(x)
                             ? "-"
                             : fixed(x, 3) +
                                   (std::fabs(x - 1) <= kAgreement ? " (within 5 %)" : " (apart)"));
      }
      row.insert(row.end(), ratios.begin(), ratios.end());
      rows.push_back(row);
    }
  }
  return markdown_table(rows);
}

namespace {

std::string label_of(const std::vector<CollectiveRow>& rows, const std::string& fallback) {
  for (const auto& r : rows)
    if (!r.mode.empty()) return "gpuprobe " + r.mode;
  return fallback;
}

std::vector<CollectiveRow> run_rows(const std::string& dir) {
  const std::string file =
      (std::filesystem::path(dir) / (std::string(collectives::kFamily.name) + ".csv")).string();
  if (!file_exists(file))
    throw std::runtime_error(dir + " has no " + std::string(collectives::kFamily.name) + ".csv");
  return collective_rows(read_observations(file));
}

}  // namespace

int anchor_main(const std::vector<std::string>& args) {
  CLI::App app{
      "A run's collective figures beside nccl-tests' output or another run's, as a markdown table "
      "(no GPU).",
      "gpuprobe anchor"};
  std::string dir;
  std::vector<std::string> logs, versus;
  int ranks = 0;
  bool all_sizes = false;
  app.add_option("RUN_DIR", dir, "the run directory (its collectives.csv)")->required();
  app.add_option("--nccl-tests", logs,
                 "nccl-tests' stdout, one *_perf run or several in one file (repeatable)")
      ->type_name("LOG");
  app.add_option("--versus", versus,
                 "another run of the same machine: one process per GPU against one process")
      ->type_name("RUN_DIR");
  app.add_option("--ranks", ranks, "the communicator size to compare (default: the run's largest)")
      ->type_name("N");
  app.add_flag("--all-sizes", all_sizes, "every size, not only the largest and the smallest");
  auto something = [&] {
    if (logs.empty() && versus.empty())
      throw UsageError("nothing to compare with: give --nccl-tests or --versus");
  };
  if (auto code = parse_subcommand(app, args, "gpuprobe anchor", something)) return *code;
  try {
    AnchorSource run{"", run_rows(dir)};
    run.label = label_of(run.rows, "gpuprobe");
    std::vector<AnchorSource> others;
    if (!logs.empty()) {
      AnchorSource nt{"nccl-tests", {}};
      for (const auto& log : logs) {
        const auto rows =
            parse_nccl_tests(read_file(log), std::filesystem::path(log).stem().string());
        nt.rows.insert(nt.rows.end(), rows.begin(), rows.end());
      }
      others.push_back(nt);
    }
    for (const auto& v : versus) {
      AnchorSource s{"", run_rows(v)};
      s.label = label_of(s.rows, "other");
      if (s.label == run.label)
        s.label += " (" + std::filesystem::path(v).filename().string() + ")";
      others.push_back(s);
    }
    if (ranks == 0)
      for (const auto& r : run.rows) ranks = std::max(ranks, r.ranks);
    std::fputs(anchor_table(run, others, ranks, all_sizes).c_str(), stdout);
    return checked_stdout("gpuprobe anchor", 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuprobe anchor: %s\n", e.what());
    return 1;
  }
}

}  // namespace gpuprobe
