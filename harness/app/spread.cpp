#include "app/spread.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "app/cli.hpp"
#include "base/card.hpp"
#include "base/catalog.hpp"
#include "base/csv.hpp"
#include "base/run_dir.hpp"
#include "base/stats.hpp"

namespace fs = std::filesystem;

namespace gpuprobe {

// Fewer runs than this have no spread to speak of.
constexpr size_t kMinRuns = 2;
// A spread under this fraction of the median is never flagged: a value given with no interval
// (low = high) still differs between runs in its last digits, and the tightest tolerance in
// docs/parameters.md is 2 %.
constexpr double kNegligibleSpread = 1e-3;

// A parameter whose tolerance docs/parameters.md gives as "not compared ..." (suite_wall_time:
// the run's own wall time) claims no precision about the GPU: its spread is listed, not flagged.
bool compared(const std::string& name) {
  const CatalogEntry* e = find_parameter(name);
  double tol = 0;
  return !e || tolerance_fraction(e->tolerance, &tol);
}

namespace {

struct Value {
  double value, low, high;
};

// Whether every run's value lies inside every other run's [low, high]; a run without a finite
// interval claims its value exactly.
bool every_value_inside_every_interval(const std::vector<Value>& vs) {
  for (const Value& a : vs)
    for (const Value& b : vs) {
      const bool bounded = std::isfinite(b.low) && std::isfinite(b.high);
      const double lo = bounded ? std::min(b.low, b.value) : b.value,
                   hi = bounded ? std::max(b.high, b.value) : b.value;
      if (a.value < lo || a.value > hi) return false;
    }
  return true;
}

}  // namespace

std::vector<SpreadRow> spread_of(const std::vector<std::vector<Parameter>>& runs) {
  struct Values {
    std::string unit;
    std::vector<double> values, widths;
    std::vector<Value> with_intervals;
  };
  std::map<std::string, Values> by_name;
  for (const auto& run : runs)
    for (const auto& p : run) {
      Values& v = by_name[p.name];
      if (v.unit.empty()) v.unit = p.unit;
      if (!std::isfinite(p.value)) continue;
      v.values.push_back(p.value);
      v.with_intervals.push_back({p.value, p.low, p.high});
      if (std::isfinite(p.high - p.low)) v.widths.push_back(std::max(0.0, p.high - p.low));
    }
  std::vector<SpreadRow> out;
  for (const auto& [name, v] : by_name) {
    SpreadRow r;
    r.parameter = name;
    r.unit = v.unit;
    r.n = static_cast<int>(v.values.size());
    if (r.n > 0) {
      r.median = median(v.values);
      r.min = *std::min_element(v.values.begin(), v.values.end());
      r.max = *std::max_element(v.values.begin(), v.values.end());
      r.relative_spread = r.median != 0 ? (r.max - r.min) / std::fabs(r.median) : 0;
      r.median_interval = v.widths.empty() ? 0 : median(v.widths);
      const bool judged = v.values.size() >= kMinRuns && compared(name) &&
                          r.max - r.min > kNegligibleSpread * std::fabs(r.median);
      r.exceeds = judged && r.max - r.min > r.median_interval;
      r.strict_excludes = judged && !every_value_inside_every_interval(v.with_intervals);
    }
    out.push_back(r);
  }
  return out;
}

namespace {

struct SpreadArgs {
  std::vector<std::string> runs, fit, check;  // runs, or the fit and check cards' runs
  std::string out, markdown;
};

constexpr const char* kSpreadUsage =
    "usage: gpuprobe spread RUN_DIR RUN_DIR... | --fit RUN_DIR... --check RUN_DIR... [--out FILE] [--markdown FILE]";

// The run folder a path names, without a trailing separator.
fs::path run_folder(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  return p.has_filename() || !p.has_parent_path() ? p : p.parent_path();
}

SpreadArgs parse_spread_args(const std::vector<std::string>& args) {
  SpreadArgs a;
  std::vector<std::string>* into = &a.runs;  // where the next run folder goes
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--out" || args[i] == "--markdown") {
      if (i + 1 >= args.size()) throw UsageError("spread: " + args[i] + ": missing value");
      (args[i] == "--out" ? a.out : a.markdown) = args[i + 1];
      ++i;
    } else if (args[i] == "--fit" || args[i] == "--check") {
      into = args[i] == "--fit" ? &a.fit : &a.check;
    } else if (args[i].rfind("--", 0) == 0) {
      throw UsageError("spread: unknown option '" + args[i] + "' (" + kSpreadUsage + ")");
    } else {
      into->push_back(args[i]);
    }
  }
  const bool split = !a.fit.empty() || !a.check.empty();
  if (split && (!a.runs.empty() || a.fit.empty() || a.check.size() < kMinRuns))
    throw UsageError(
        std::string("spread: --fit takes one run folder or more and --check two or more, and no "
                    "other run folders (") +
        kSpreadUsage + ")");
  if (!split && a.runs.size() < kMinRuns)
    throw UsageError(std::string("spread: needs at least two run folders (") + kSpreadUsage + ")");
  if (split) {
    a.runs = a.fit;
    a.runs.insert(a.runs.end(), a.check.begin(), a.check.end());
  }
  // The same run twice would repeat by construction.
  std::set<fs::path> seen;
  for (const auto& dir : a.runs)
    if (!seen.insert(fs::weakly_canonical(run_folder(dir))).second)
      throw UsageError("spread: " + dir + " is given twice (a run is no repeat of itself)");
  // Beside the runs, never inside one ("RUN/" names the folder RUN as "RUN" does).
  if (a.out.empty()) a.out = (run_folder(a.runs.front()).parent_path() / "spread.csv").string();
  return a;
}

std::string meta_of(const Metadata& meta, const std::string& key) {
  for (const auto& [k, v] : meta)
    if (k == key) return v;
  return "";
}

struct SpreadRun {
  std::string id, card, version;  // card: card_key() of its header
  std::vector<Parameter> params;
};

// One card's runs, scored on their own.
struct CardSet {
  std::string label;  // "card1", or "fit" / "check"
  std::string card;   // the UUID, or how the card is known without one
  std::vector<size_t> runs;
};

// Every run, each of one GPU model; throws on a run it cannot read or of another model.
std::vector<SpreadRun> load_runs(const std::vector<std::string>& dirs, std::string* gpu,
                                 std::vector<std::string>* rejected) {
  std::vector<SpreadRun> runs;
  for (const auto& dir : dirs) {
    const fs::path file = fs::path(dir) / "parameters.csv";
    if (!fs::exists(file)) throw std::runtime_error("spread: " + file.string() + ": no such file (not a run folder?)");
    Metadata meta;
    SpreadRun r;
    r.params = read_parameters(file.string(), &meta, rejected);
    const std::string this_gpu = meta_of(meta, "gpu");
    if (!gpu->empty() && this_gpu != *gpu)
      throw std::runtime_error("spread: " + dir + " is a run of " + this_gpu + ", not of " + *gpu +
                               " (across GPUs: gpuprobe compare --fleet)");
    *gpu = this_gpu;
    r.id = run_folder(dir).filename().string();
    r.card = card_key(meta);
    r.version = meta_of(meta, "gpuprobe_version");
    runs.push_back(std::move(r));
  }
  return runs;
}

// The runs by the card their headers name, in first-seen order; runs that record no card
// belong to none (they count only across cards), unless no run records one: then they are
// scored as one set, which the card text says is not known to be one card.
std::vector<CardSet> cards_of(const std::vector<SpreadRun>& runs) {
  std::vector<CardSet> sets;
  std::map<std::string, size_t> by_key;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].card == kUnrecordedCard) continue;
    auto [it, fresh] = by_key.emplace(runs[i].card, sets.size());
    if (fresh) sets.push_back({"card" + std::to_string(sets.size() + 1), runs[i].card, {}});
    sets[it->second].runs.push_back(i);
  }
  if (sets.empty()) {
    CardSet all{
        "card1",
        "not recorded (the runs' headers name no card: taken as one set, not known to be one card)",
        {}};
    for (size_t i = 0; i < runs.size(); ++i) all.runs.push_back(i);
    sets.push_back(all);
  }
  return sets;
}

// The --fit and --check sets, each one card: the UUID its runs record, or the user's word.
std::vector<CardSet> fit_and_check(const std::vector<SpreadRun>& runs, size_t n_fit) {
  std::vector<CardSet> sets = {{"fit", "", {}}, {"check", "", {}}};
  for (size_t i = 0; i < runs.size(); ++i) sets[i < n_fit ? 0 : 1].runs.push_back(i);
  for (CardSet& s : sets) {
    std::set<std::string> keys;
    for (size_t i : s.runs) keys.insert(runs[i].card);
    keys.erase(kUnrecordedCard);
    if (keys.size() > 1)
      throw std::runtime_error("spread: --" + s.label + ": runs of " + std::to_string(keys.size()) +
                               " cards (" + *keys.begin() + ", " + *keys.rbegin() +
                               "): one card per set");
    s.card = keys.empty() ? "not recorded (taken as one card: --" + s.label + " says so)"
                          : *keys.begin();
  }
  if (sets[0].card == sets[1].card)
    throw std::runtime_error("spread: --fit and --check are runs of one card (" + sets[0].card +
                             ")");
  return sets;
}

std::vector<SpreadRow> spread_of_set(const std::vector<SpreadRun>& runs,
                                     const std::vector<size_t>& members) {
  std::vector<std::vector<Parameter>> params;
  for (size_t i : members) params.push_back(runs[i].params);
  return spread_of(params);
}

struct Counts {
  size_t runs = 0, parameters = 0;
  int exceeds = 0, strict = 0;
  std::vector<std::string> flagged, strict_only;
};

Counts counts_of(const std::vector<SpreadRow>& rows, size_t n_runs) {
  Counts c;
  c.runs = n_runs;
  c.parameters = rows.size();
  for (const auto& r : rows) {
    c.exceeds += r.exceeds;
    c.strict += r.strict_excludes;
    if (r.exceeds) c.flagged.push_back(r.parameter);
    if (r.strict_excludes && !r.exceeds) c.strict_only.push_back(r.parameter);
  }
  return c;
}

std::string names(const std::vector<std::string>& list) {
  std::string s;
  for (const auto& n : list) s += (s.empty() ? "`" : ", `") + n + "`";
  return s.empty() ? "none" : s;
}

// The table for docs/repeatability.md: each card's own runs, then all of them.
std::string spread_markdown(const std::string& gpu, const std::vector<CardSet>& sets,
                            const std::vector<Counts>& per_set, const Counts& across,
                            bool several) {
  std::string md =
      "# Spread over runs of " + gpu +
      "\n\n"
      "Interval rule: max - min over the runs > the median of their high - low. Strict rule: some "
      "run's value lies outside another run's [low, high].\n\n"
      "| set | card | runs | parameters | flagged, interval rule | flagged, strict rule |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  auto line = [&](const std::string& set, const std::string& card, const Counts& c) {
    md += "| " + set + " | " + card + " | " + std::to_string(c.runs) + " | " +
          std::to_string(c.parameters) + " | " + std::to_string(c.exceeds) + " | " +
          std::to_string(c.strict) + " |\n";
  };
  for (size_t k = 0; k < sets.size(); ++k) line(sets[k].label, sets[k].card, per_set[k]);
  if (several) line("across the cards", std::to_string(sets.size()) + " cards", across);
  md += "\n";
  auto flagged = [&](const std::string& set, const Counts& c) {
    md += "- " + set + ": " + names(c.flagged) +
          "; by the strict rule only: " + names(c.strict_only) + "\n";
  };
  for (size_t k = 0; k < sets.size(); ++k) flagged(sets[k].label, per_set[k]);
  if (several) flagged("across the cards", across);
  return md;
}

// What spread_main scores: all runs together, and each card's runs on their own.
struct SpreadResult {
  std::string gpu;
  std::vector<SpreadRun> runs;
  std::vector<CardSet> sets;
  std::vector<SpreadRow> across_rows;
  Counts across;
  std::vector<Counts> per_set;
  std::vector<std::map<std::string, SpreadRow>> by_set;
  bool several = false;  // more than one set, or runs outside every set: per-card columns
};

SpreadResult score(const SpreadArgs& a, std::vector<std::string>* rejected) {
  SpreadResult s;
  s.runs = load_runs(a.runs, &s.gpu, rejected);
  s.sets = a.fit.empty() ? cards_of(s.runs) : fit_and_check(s.runs, a.fit.size());
  std::vector<size_t> all(s.runs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  s.across_rows = spread_of_set(s.runs, all);
  s.across = counts_of(s.across_rows, s.runs.size());
  s.several = s.sets.size() > 1 || s.sets[0].runs.size() != s.runs.size();
  for (const CardSet& set : s.sets) {
    const std::vector<SpreadRow> rows = spread_of_set(s.runs, set.runs);
    s.per_set.push_back(counts_of(rows, set.runs.size()));
    auto& m = s.by_set.emplace_back();
    for (const auto& r : rows) m[r.parameter] = r;
  }
  return s;
}

std::string spread_csv(const SpreadResult& s) {
  std::vector<std::string> columns = {"parameter",
                                      "unit",
                                      "n",
                                      "median",
                                      "min",
                                      "max",
                                      "relative_spread",
                                      "median_interval_width",
                                      "spread_exceeds_interval",
                                      "strict_excludes"};
  if (s.several)
    for (const CardSet& set : s.sets)
      columns.insert(columns.end(), {"n_" + set.label, "spread_exceeds_interval_" + set.label,
                                     "strict_excludes_" + set.label});
  std::vector<std::vector<std::string>> rows;
  for (const SpreadRow& r : s.across_rows) {
    rows.push_back({r.parameter, r.unit, std::to_string(r.n), format_number(r.median),
                    format_number(r.min), format_number(r.max), format_number(r.relative_spread),
                    format_number(r.median_interval), r.exceeds ? "1" : "0",
                    r.strict_excludes ? "1" : "0"});
    if (!s.several) continue;
    for (const auto& m : s.by_set) {
      const auto it = m.find(r.parameter);
      const bool has = it != m.end();
      rows.back().insert(rows.back().end(), {has ? std::to_string(it->second.n) : "0",
                                             has && it->second.exceeds ? "1" : "0",
                                             has && it->second.strict_excludes ? "1" : "0"});
    }
  }
  std::set<std::string> versions;
  std::string ids, version_text;
  for (const auto& r : s.runs) {
    versions.insert(r.version);
    ids += (ids.empty() ? "" : " ") + r.id;
  }
  for (const auto& v : versions) version_text += (version_text.empty() ? "" : " ") + v;
  Metadata meta = {
      {"gpu", s.gpu},
      {"runs", ids},
      {"gpuprobe_versions", version_text},
      {"spread_exceeds_interval", "max - min over the runs > the median of the runs' high - low"},
      {"strict_excludes", "some run's value lies outside another run's [low, high]"}};
  for (const CardSet& set : s.sets) {
    std::string members;
    for (size_t i : set.runs) members += " " + s.runs[i].id;
    meta.emplace_back(set.label, set.card + ":" + members);
  }
  return format_csv(meta, columns, rows);
}

}  // namespace

int spread_main(const std::vector<std::string>& args) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::printf(
        "%s\n  the spread of each parameter over runs of one GPU model against its interval, as CSV, by\n"
        "  card and across cards (default: spread.csv in the folder of the first run; scripts/repeat.sh\n"
        "  makes the runs); --fit/--check score a second card's runs beside the first's\n",
        kSpreadUsage);
    return 0;
  }
  const SpreadArgs a = parse_spread_args(args);
  check_output_path(a.out);  // before any work
  if (!a.markdown.empty()) check_output_path(a.markdown);
  std::vector<std::string> rejected;  // rows not used, each said
  const SpreadResult s = score(a, &rejected);
  write_file_atomic(a.out, spread_csv(s));
  if (!a.markdown.empty())
    write_file_atomic(a.markdown, spread_markdown(s.gpu, s.sets, s.per_set, s.across, s.several));
  std::printf(
      "%s written: %zu parameters over %zu runs, %d whose spread exceeds their interval, %d with a value "
      "outside another run's interval\n",
      a.out.c_str(), s.across_rows.size(), s.runs.size(), s.across.exceeds, s.across.strict);
  for (size_t k = 0; k < s.sets.size(); ++k)
    if (s.several || s.sets[k].card.rfind("not recorded", 0) == 0)
      std::printf(
          "  %s, card %s: %zu runs, %d flagged by the interval rule, %d by the strict rule\n",
          s.sets[k].label.c_str(), s.sets[k].card.c_str(), s.sets[k].runs.size(),
          s.per_set[k].exceeds, s.per_set[k].strict);
  for (const auto& r : rejected) std::fprintf(stderr, "gpuprobe spread: %s\n", r.c_str());
  return checked_stdout("gpuprobe spread", rejected.empty() ? 0 : 1);
}

}  // namespace gpuprobe
