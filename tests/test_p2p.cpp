// The node: its description (base/node.hpp), the p2p family's copies and analysis on
// synthetic 1-, 2- and 4-GPU nodes and on the committed 2-GPU runs, and what reads them: the
// nvbandwidth JSON (against the layout of nvbandwidth's own json_output.cpp), the side-by-side
// table, report.md's Node section and export --json's node.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <regex>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "analysis/analyzer.hpp"
#include "analysis/host_link.hpp"
#include "analysis/p2p.hpp"
#include "app/cli.hpp"
#include "app/compare.hpp"
#include "app/export.hpp"
#include "app/nvbandwidth_json.hpp"
#include "app/report_detail.hpp"
#include "base/catalog.hpp"
#include "base/node.hpp"
#include "base/run_dir.hpp"
#include "committed_runs.hpp"
#include "node_rows.hpp"
#include "parameter_checks.hpp"
#include "recorded.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Scratch {
  fs::path path;
  explicit Scratch(const std::string& name) {
    std::string tmpl = (fs::temp_directory_path() / (name + "-XXXXXX")).string();
    if (mkdtemp(tmpl.data())) path = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

constexpr double kLink = 26.562, kLinks = 18;


// ---------------------------------------------------------------- the node's description

TEST(NodeMeta, RoundTripsThroughTheMetadata) {
  node::Node n = nvswitch_node(4);
  n.gpus[3].switch_links = 12;
  n.gpus[3].links = 14;
  n.gpus[3].peer_links[1] = 2;
  n.gpus[3].other_links = 0;
  n.gpus[2].why = "NVML does not know the device at 0000:00:08.0";
  n.gpus[2].nvlink = false;
  const Metadata meta = node::to_metadata(n);
  EXPECT_EQ(meta.front(), (std::pair<std::string, std::string>{"node_gpus", "4"}));
  bool line = false;
  for (const auto& [k, v] : meta)
    if (k == "node_gpu0_nvlink") {
      line = true;
      EXPECT_EQ(v, "18 active links, NVLink 4.0, 26.562 GB/s per link and direction; to nvswitch 18");
    }
  EXPECT_TRUE(line);
  const node::Node back = node::from_metadata(meta);
  ASSERT_EQ(back.gpus.size(), 4u);
  EXPECT_EQ(back.gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(back.gpus[1].bus, "0000:00:07.0");
  EXPECT_EQ(back.gpus[0].links, 18);
  EXPECT_EQ(back.gpus[0].switch_links, 18);
  EXPECT_DOUBLE_EQ(back.gpus[0].link_gbs, kLink);
  EXPECT_EQ(back.gpus[0].version, "4.0");
  EXPECT_EQ(back.gpus[0].pcie_max_gen, 5);
  EXPECT_EQ(back.gpus[0].pcie_width, 16);
  EXPECT_EQ(back.gpus[3].switch_links, 12);
  EXPECT_EQ(back.gpus[3].peer_links.at(1), 2);
  EXPECT_FALSE(back.gpus[2].nvlink);
  EXPECT_NE(back.gpus[2].why.find("does not know"), std::string::npos);
  EXPECT_EQ(back.paths.at({0, 3}), "PHB");
  EXPECT_EQ(node::to_metadata(back), meta);
}

TEST(NodeMeta, OldRunsHaveNone) {
  Metadata meta;
  read_observations(committed_run(kH200TwoGpuRun) + "/p2p.csv", &meta);
  ASSERT_FALSE(meta.empty());
  EXPECT_TRUE(node::from_metadata(meta).empty());
}

TEST(NodeMeta, LinksCountedFromNvmlsReadings) {
  const std::vector<std::string> buses = {"0000:00:06.0", "0000:00:07.0", "0000:00:08.0"};
  std::vector<node::LinkReading> links;
  for (int i = 0; i < 4; ++i) links.push_back({true, 6, 26562, 2, "00000000:C1:00.0"});  // NVSwitch
  links.push_back({true, 6, 26562, 0, "00000000:00:07.0"});   // GPU 1, NVML's 8-digit domain
  links.push_back({true, 6, 25000, 0, "00000000:00:08.0"});   // GPU 2
  links.push_back({true, 6, 26562, 0, "00000000:00:1F.0"});   // a GPU CUDA does not show
  links.push_back({false, 0, -1, -1, ""});                    // inactive
  node::Gpu g;
  g.ordinal = 0;
  g = node::with_links(g, links, buses);
  EXPECT_TRUE(g.nvlink);
  EXPECT_EQ(g.links, 7);
  EXPECT_EQ(g.switch_links, 4);
  EXPECT_EQ(g.peer_links.at(1), 1);
  EXPECT_EQ(g.peer_links.at(2), 1);
  EXPECT_EQ(g.other_links, 1);
  EXPECT_EQ(g.version, "4.0");
  EXPECT_DOUBLE_EQ(g.link_gbs, 26.562);  // the fastest: an upper bound stays one
  EXPECT_TRUE(node::same_pci_bus("0000:c1:00.0", "00000000:C1:00.0"));
  EXPECT_FALSE(node::same_pci_bus("0000:c1:00.0", "0000:c2:00.0"));
  EXPECT_FALSE(node::same_pci_bus("", "0000:c2:00.0"));
  EXPECT_EQ(node::nvlink_version_text(7), "5.0");
  EXPECT_EQ(node::nvlink_version_text(99), "");
  EXPECT_EQ(node::topology_level_name(30), "PHB");
  // A GPU without NVLink (NVML: not supported on every link): known, none.
  node::Gpu pcie_only = node::with_links(node::Gpu{}, {}, buses);
  EXPECT_TRUE(pcie_only.nvlink);
  EXPECT_EQ(node::nvlink_text(pcie_only), "0 active links");
}

TEST(NodeMeta, PhysicalRatesOfNvswitchDirectAndPcieNodes) {
  const node::Node sw = nvswitch_node(4);
  EXPECT_NEAR(node::pair_gbs(sw, 0, 1), kLinks * kLink, 1e-9);
  EXPECT_EQ(node::pair_links(sw, 2, 3), 18);
  EXPECT_NEAR(node::fanout_gbs(sw, 0, {1, 2, 3}), kLinks * kLink, 1e-9);  // its own 18 links
  EXPECT_NEAR(node::gpu_nvlink_gbs(sw.gpus[0]), 478.116, 1e-9);
  // Four GPUs joined directly, 6 links to each other (HGX 4-GPU boards).
  node::Node direct = nvswitch_node(4);
  for (auto& g : direct.gpus) {
    g.switch_links = 0;
    for (int k = 0; k < 4; ++k)
      if (k != g.ordinal) g.peer_links[k] = 6;
  }
  EXPECT_NEAR(node::pair_gbs(direct, 0, 1), 6 * kLink, 1e-9);
  EXPECT_NEAR(node::fanout_gbs(direct, 0, {1, 2, 3}), 18 * kLink, 1e-9);
  // PCIe only: the slower end's transfer rate x lanes.
  node::Node pcie = nvswitch_node(2);
  for (auto& g : pcie.gpus) {
    g.links = g.switch_links = 0;
    g.link_gbs = -1;
  }
  pcie.gpus[1].pcie_max_gen = 4;
  EXPECT_DOUBLE_EQ(node::pcie_gbs(pcie.gpus[0]), 64);
  EXPECT_DOUBLE_EQ(node::pair_gbs(pcie, 0, 1), 32);
  // What NVML could not describe has no bound (a PCIe bound on an NVLink pair would be wrong).
  node::Node unknown = nvswitch_node(2);
  unknown.gpus[1].nvlink = false;
  EXPECT_LT(node::pair_gbs(unknown, 0, 1), 0);
  EXPECT_LT(node::fanout_gbs(unknown, 0, {1}), 0);
  EXPECT_LT(node::pair_gbs(sw, 0, 7), 0);
}

// ---------------------------------------------------------------- the copies of each mode

TEST(P2pModes, CopiesFollowWhoInitiates) {
  auto all = [](int, int) { return true; };
  using T = p2p::Transfer;
  EXPECT_EQ(p2p::transfers(*p2p::find_mode(p2p::kCeWrite), 0, 1, 2, all),
            (std::vector<T>{{0, 1, 0}}));
  EXPECT_EQ(p2p::transfers(*p2p::find_mode(p2p::kCeRead), 0, 1, 2, all),
            (std::vector<T>{{1, 0, 0}}));
  EXPECT_EQ(p2p::transfers(*p2p::find_mode(p2p::kSmReadBidir), 0, 1, 2, all),
            (std::vector<T>{{1, 0, 0}, {0, 1, 1}}));
  EXPECT_EQ(p2p::transfers(*p2p::find_mode(p2p::kOneToAllWriteCe), 1, -1, 3, all),
            (std::vector<T>{{1, 0, 1}, {1, 2, 1}}));
  EXPECT_EQ(p2p::transfers(*p2p::find_mode(p2p::kAllToOneReadCe), 1, -1, 3, all),
            (std::vector<T>{{1, 0, 0}, {1, 2, 2}}));  // the others read the one's memory
  EXPECT_EQ(p2p::transfers(*p2p::find_mode(p2p::kAllPairsWriteCe), -1, -1, 4, all).size(), 12u);
  EXPECT_TRUE(p2p::transfers(*p2p::find_mode(p2p::kCeWrite), 1, 1, 2, all).empty());
  EXPECT_TRUE(p2p::transfers(*p2p::find_mode(p2p::kCeWrite), 0, 2, 2, all).empty());
  // Peer access one way only: no both-ways measurement, the one-way one where it is allowed.
  auto one_way = [](int by, int) { return by == 0; };
  EXPECT_TRUE(p2p::transfers(*p2p::find_mode(p2p::kCeWriteBidir), 0, 1, 2, one_way).empty());
  EXPECT_EQ(p2p::transfers(*p2p::find_mode(p2p::kCeWrite), 0, 1, 2, one_way).size(), 1u);
  EXPECT_TRUE(p2p::transfers(*p2p::find_mode(p2p::kCeWrite), 1, 0, 2, one_way).empty());
}

TEST(P2pModes, EveryModeIsACatalogParameterAndNamesNvbandwidthOnce) {
  std::set<std::string> names;
  for (const auto& m : p2p::modes()) {
    SCOPED_TRACE(m.probe);
    EXPECT_NE(find_parameter(p2p::parameter_name(m)), nullptr);
    if (m.nvbandwidth_name[0]) {
      EXPECT_TRUE(names.insert(m.nvbandwidth_name).second);
    }
    // Written under nvbandwidth's name only with its description.
    if (m.nvbandwidth_name[0] && !p2p::compares_with_total_rows(m)) {
      EXPECT_STRNE(m.nvbandwidth_description, "");
    }
  }
  EXPECT_EQ(p2p::modes().size(), 18u);
}

// ---------------------------------------------------------------- the analysis

std::vector<Parameter> analyze_node(const node::Node& n, const std::vector<Observation>& obs) {
  return analyze(std::string(p2p::kFamily.name), obs, node_run_meta(n));
}

TEST(P2pAnalysis, OneGpuGivesNoPeerFigure) {
  const auto ps = analyze_node(nvswitch_node(1), {});
  for (const auto& p : ps) EXPECT_EQ(p.name.rfind("p2p_", 0), std::string::npos) << p.name;
}

TEST(P2pAnalysis, TwoGpusWithinTheirLinks) {
  const auto ps = analyze_node(nvswitch_node(2), node_rows(2, 393, 420));
  expect_well_formed(ps, "p2p.csv");
  const Parameter* ce = find(ps, param::p2p_ce_write_bandwidth);
  ASSERT_NE(ce, nullptr);
  EXPECT_DOUBLE_EQ(ce->value, 393);
  EXPECT_GT(ce->confidence, 0.9);
  EXPECT_EQ(ce->method.rfind("copy_engine: median over 2 GPU pairs", 0), 0u) << ce->method;
  EXPECT_NE(ce->method.find("at most 82.2 % of the links' physical rate (478.1 GB/s"), std::string::npos) << ce->method;
  EXPECT_NE(ce->method.find("nvbandwidth's device_to_device_memcpy_write_ce"), std::string::npos);
  EXPECT_EQ(find(ps, param::p2p_sm_read_bandwidth)->method.rfind("sm_copy: ", 0), 0u);
  EXPECT_DOUBLE_EQ(find(ps, param::p2p_ce_read_bidir_bandwidth)->value, 786);
  EXPECT_DOUBLE_EQ(find(ps, param::p2p_all_pairs_write_sm_bandwidth)->value, 840);
  EXPECT_DOUBLE_EQ(find(ps, param::p2p_latency)->value, 860);
  EXPECT_DOUBLE_EQ(find(ps, param::nvlink_links)->value, 18);
  EXPECT_DOUBLE_EQ(find(ps, param::nvlink_link_bandwidth)->value, kLink);
  EXPECT_NEAR(find(ps, param::nvlink_bandwidth)->value, kLinks * kLink, 1e-9);
  EXPECT_EQ(find(ps, param::nvlink_links)->method.rfind("nvml_query: ", 0), 0u);
}

TEST(P2pAnalysis, FourGpusMedianSlowestPairAndTheFabricUnderLoad) {
  const auto ps = analyze_node(nvswitch_node(4), node_rows(4, 390, 440, 3));  // 6 of 12 pairs slow
  expect_well_formed(ps, "p2p.csv");
  for (const auto& m : p2p::modes()) EXPECT_NE(find(ps, p2p::parameter_name(m)), nullptr) << m.probe;
  const Parameter* ce = find(ps, param::p2p_ce_write_bandwidth);
  EXPECT_DOUBLE_EQ(ce->value, (195 + 390) / 2.0);  // 6 pairs at 195, 6 at 390
  EXPECT_DOUBLE_EQ(ce->low, 195);
  EXPECT_DOUBLE_EQ(ce->high, 390);
  EXPECT_NE(ce->method.find("the pairs differ by 100 %"), std::string::npos) << ce->method;
  const Parameter* fan = find(ps, param::p2p_one_to_all_write_ce_bandwidth);
  EXPECT_DOUBLE_EQ(fan->value, 440);
  EXPECT_NE(fan->method.find("median over 4 GPUs as the one"), std::string::npos) << fan->method;
  const Parameter* total = find(ps, param::p2p_all_pairs_write_ce_bandwidth);
  EXPECT_DOUBLE_EQ(total->value, 4 * 440);
  EXPECT_LT(total->low, total->value);  // the repetitions' p05..p95
  EXPECT_NE(total->method.find("478.1 GB/s"), std::string::npos) << total->method;
  EXPECT_NE(total->method.find("on 4 GPUs"), std::string::npos) << total->method;
}

TEST(P2pAnalysis, AboveThePhysicalRateIsImpossible) {
  const auto ps = analyze_node(nvswitch_node(2), node_rows(2, 600, 400));  // 600 > 18 x 26.562
  const Parameter* ce = find(ps, param::p2p_ce_write_bandwidth);
  ASSERT_NE(ce, nullptr);
  EXPECT_LE(ce->confidence, 0.02);
  EXPECT_NE(ce->method.find("IMPOSSIBLE: 600 GB/s is above the 478.1 GB/s"), std::string::npos) << ce->method;
  // Both ways at once may reach twice the one-way rate: 1200 > 956 is impossible too.
  EXPECT_LE(find(ps, param::p2p_ce_write_bidir_bandwidth)->confidence, 0.02);
  EXPECT_GT(find(ps, param::p2p_one_to_all_write_ce_bandwidth)->confidence, 0.9);  // 400 < 478
  // Within the slack (2 %): noise, not impossible.
  const auto close = analyze_node(nvswitch_node(2), node_rows(2, 485, 400));
  EXPECT_GT(find(close, param::p2p_ce_write_bandwidth)->confidence, 0.9);
}

TEST(P2pAnalysis, WithoutTheNodeNoBoundIsClaimed) {
  const auto ps = analyze(std::string(p2p::kFamily.name), node_rows(2, 600, 400), {});
  const Parameter* ce = find(ps, param::p2p_ce_write_bandwidth);
  ASSERT_NE(ce, nullptr);
  EXPECT_GT(ce->confidence, 0.9);
  EXPECT_EQ(ce->method.find("physical"), std::string::npos) << ce->method;
  EXPECT_EQ(find(ps, param::nvlink_links), nullptr);
}

// The committed 2-GPU runs (before the node metadata) wrote the old names; they read under
// today's (the catalog's aliases), with their figures unchanged.
TEST(P2pAnalysis, CommittedTwoGpuRunsUnderTheModeNames) {
  int runs = 0;
  for (const auto& dir : committed_run_dirs()) {
    const fs::path csv = fs::path(dir) / "p2p.csv";
    // Runs with the node_* metadata write today's names.
    if (!fs::exists(csv) ||
        read_file(dir + "/parameters.csv").find("\n# node_gpus=") != std::string::npos)
      continue;
    ++runs;
    Metadata meta;
    const auto obs = read_observations(csv.string(), &meta);
    const auto ps = analyze(std::string(p2p::kFamily.name), obs, meta);
    const auto then = read_parameters(dir + "/parameters.csv");
    const std::string text = read_file(dir + "/parameters.csv");
    for (const auto& [old_name, now] : std::vector<std::pair<std::string, std::string>>{
             {"p2p_write_bandwidth_ce", param::p2p_ce_write_bandwidth},
             {"p2p_read_bandwidth_sm", param::p2p_sm_read_bandwidth},
             {"p2p_bidir_bandwidth_ce", param::p2p_ce_write_bidir_bandwidth},
             {"p2p_bidir_bandwidth_sm", param::p2p_sm_read_bidir_bandwidth}}) {
      EXPECT_NE(text.find("\n" + old_name + ","), std::string::npos)
          << dir << " wrote " << old_name;
      const Parameter* a = find(then, now);
      const Parameter* b = find(ps, now);
      ASSERT_NE(a, nullptr) << dir << " " << old_name;
      ASSERT_NE(b, nullptr) << dir << " " << now;
      EXPECT_DOUBLE_EQ(a->value, b->value);
      EXPECT_DOUBLE_EQ(a->confidence, b->confidence);
    }
  }
  EXPECT_GE(runs, 2);
}

TEST(P2pAnalysis, MatrixRowsAreDevicesColumnsPeers) {
  const auto obs = node_rows(4, 370, 400, 3);
  p2p::Matrix m;
  ASSERT_TRUE(p2p::matrix(obs, p2p::kCeWrite, "GB/s", &m));
  ASSERT_EQ(m.gpus(), 4);
  for (int d = 0; d < 4; ++d) EXPECT_TRUE(std::isnan(m.value[size_t(d)][size_t(d)]));
  EXPECT_DOUBLE_EQ(m.value[0][1], 370);
  EXPECT_DOUBLE_EQ(m.value[3][0], 185);
  EXPECT_FALSE(p2p::matrix(obs, "no_such_probe", "GB/s", &m));
  // The node's total under all pairs is no cell; each pair's own rate is.
  ASSERT_TRUE(p2p::matrix(obs, p2p::kAllPairsWriteCe, "GB/s", &m));
  EXPECT_DOUBLE_EQ(m.value[2][1], 400.0 / 3);
  const auto fan = p2p::per_device(obs, p2p::kAllToOneWriteSm, "GB/s");
  EXPECT_EQ(fan, (std::vector<double>{400, 400, 400, 400}));
  EXPECT_TRUE(p2p::per_device(obs, p2p::kCeWrite, "GB/s").empty());
}

TEST(P2pAnalysis, OneGpuRunRecordsTheSkipAndWhy) {
  CsvTable t = read_csv(data_file("h100_paths_families.csv"));
  bool seen = false;
  for (const auto& r : t.rows)
    if (r[0] == p2p::kFamily.name) {
      seen = true;
      EXPECT_EQ(r[1], "unsupported");
      EXPECT_NE(r.back().find("needs two or more GPUs"), std::string::npos) << r.back();
    }
  EXPECT_TRUE(seen);
}

// ---------------------------------------------------------------- nvbandwidth's JSON

// The layout of nvbandwidth v0.8's JSON as its json_output.cpp writes it: one object
// "nvbandwidth" (NVB_TITLE) holding exactly the keys that addVersionInfo, addCudaAndDriverInfo,
// recordDevices and addTestcase set, in jsoncpp's sorted order; each test case "name" and
// "status", and where it passed (addTestcaseResults) "bandwidth_description",
// "bandwidth_matrix" (rows of strings: `std::stringstream << double`, "N/A" for an empty
// cell) and "sum" (a number: the sum of the cells, N/A counting 0); the device list's entries
// "<i>: <name> (<%08x domain>:<%02x bus>:<%02x device>): (<host>)" (getDeviceDisplayInfo).
// `recorded`: every GPU's name and bus (a run before node_* knows its own only).
void expect_nvbandwidth_layout(const json& root, size_t gpus, bool recorded = true) {
  ASSERT_TRUE(root.is_object());
  ASSERT_EQ(root.size(), 1u);
  const json& nvb = root.at("nvbandwidth");
  std::vector<std::string> keys;
  for (const auto& [k, v] : nvb.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"CUDA Runtime Version", "Driver Version", "GPU Device list", "git_version",
                                            "testcases", "version"}));
  EXPECT_TRUE(nvb.at("CUDA Runtime Version").is_number_integer());
  for (const char* k : {"Driver Version", "git_version", "version"}) EXPECT_TRUE(nvb.at(k).is_string()) << k;
  const json& devices = nvb.at("GPU Device list");
  ASSERT_EQ(devices.size(), gpus);
  static const std::regex kDevice(R"(^(\d+): .+ \([0-9a-f]{8}:[0-9a-f]{2}:[0-9a-f]{2}\): \(.+\)$)");
  for (size_t i = 0; i < devices.size(); ++i) {
    if (!recorded && i > 0) {
      EXPECT_EQ(devices[i], std::to_string(i) + ": unknown GPU (unknown): (unknown host)");
      continue;
    }
    std::smatch m;
    const std::string d = devices[i].get<std::string>();
    ASSERT_TRUE(std::regex_match(d, m, kDevice)) << d;
    EXPECT_EQ(m[1], std::to_string(i));
  }
  for (const auto& c : nvb.at("testcases")) {
    std::vector<std::string> ck;
    for (const auto& [k, v] : c.items()) ck.push_back(k);
    if (c.at("status") != "Passed") {
      EXPECT_EQ(ck, (std::vector<std::string>{"name", "status"})) << c.dump();
      continue;
    }
    EXPECT_EQ(ck, (std::vector<std::string>{"bandwidth_description", "bandwidth_matrix", "name", "status", "sum"}));
    const json& m = c.at("bandwidth_matrix");
    ASSERT_FALSE(m.empty());
    double sum = 0;
    for (const auto& row : m) {
      EXPECT_EQ(row.size(), m[0].size());
      for (const auto& cell : row) {
        ASSERT_TRUE(cell.is_string());
        if (cell != "N/A") sum += std::stod(cell.get<std::string>());
      }
    }
    EXPECT_NEAR(c.at("sum").get<double>(), sum, 1e-3 * std::max(1.0, sum));
  }
}

const json* find_case(const json& root, const std::string& name) {
  for (const auto& c : root.at("nvbandwidth").at("testcases"))
    if (c.at("name") == name) return &c;
  return nullptr;
}

json written_json(const fs::path& run) {
  const fs::path out = run / "nvb.json";
  write_nvbandwidth_json(run.string(), out.string());
  return json::parse(read_file(out.string()));
}

TEST(NvbandwidthJson, FourGpusEveryDeviceAndItsMatricesOriented) {
  Scratch tmp("gpuprobe-nvb4");
  const fs::path run = tmp.path / "run";
  write_node_run(run, nvswitch_node(4), node_rows(4, 390, 440, 3), {});
  const json root = written_json(run);
  expect_nvbandwidth_layout(root, 4);
  EXPECT_EQ(root["nvbandwidth"]["GPU Device list"][2], "2: NVIDIA H200 (00000000:00:08): (unknown host)");
  const json* w = find_case(root, "device_to_device_memcpy_write_ce");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->at("bandwidth_description"), "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)");
  const json& m = w->at("bandwidth_matrix");
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[1][1], "N/A");
  EXPECT_EQ(m[0][1], "390");
  EXPECT_EQ(m[3][0], "195");  // the row is the GPU that writes
  EXPECT_EQ(find_case(root, "device_to_device_memcpy_read_ce")->at("bandwidth_description"),
            "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)");
  const json* fan = find_case(root, p2p::kNvbAllToOneWriteCe);
  ASSERT_NE(fan, nullptr);
  ASSERT_EQ(fan->at("bandwidth_matrix").size(), 1u);  // one row; the column is the one
  EXPECT_EQ(fan->at("bandwidth_matrix")[0].size(), 4u);
  for (const char* n :
       {"device_to_device_memcpy_write_sm", "device_to_device_memcpy_read_sm",
        p2p::kNvbOneToAllWriteCe, p2p::kNvbOneToAllReadCe, p2p::kNvbAllToOneReadCe,
        p2p::kNvbOneToAllWriteSm, p2p::kNvbAllToOneWriteSm, "device_to_device_latency_sm"})
    EXPECT_NE(find_case(root, n), nullptr) << n;
  // Each direction and their sum in one matrix (nvbandwidth) against the sum alone: not written.
  EXPECT_EQ(find_case(root, "device_to_device_bidirectional_memcpy_write_ce"), nullptr);
}

TEST(NvbandwidthJson, OneGpuWaivesThePeerCasesAndSucceeds) {
  Scratch tmp("gpuprobe-nvb1");
  const fs::path run = tmp.path / "run";
  write_node_run(run, nvswitch_node(1), {}, {});
  const json root = written_json(run);
  expect_nvbandwidth_layout(root, 1);
  const json* w = find_case(root, "device_to_device_memcpy_write_ce");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->at("status"), "Waived");
  EXPECT_NE(find_case(root, "device_to_device_latency_sm"), nullptr);
}

TEST(NvbandwidthJson, CommittedTwoGpuRunListsBothDevices) {
  Scratch tmp("gpuprobe-nvb2");
  const std::string out = (tmp.path / "nvb.json").string();
  write_nvbandwidth_json(committed_run(kH200TwoGpuRun), out);
  const json root = json::parse(read_file(out));
  expect_nvbandwidth_layout(root, 2, false);
  EXPECT_EQ(root["nvbandwidth"]["GPU Device list"][0], "0: NVIDIA H200 (00000000:00:06): (unknown host)");
  EXPECT_NE(find_case(root, "device_to_device_memcpy_read_sm"), nullptr);
}

TEST(NvbandwidthJson, RecordedHostLinkUnderNvbandwidthNames) {
  Metadata meta;
  std::map<std::string, std::vector<Observation>> fam;
  fam[std::string(host_link::kFamily.name)] =
      read_observations(data_file("h100_" + std::string(host_link::kFamily.name) + ".csv"), &meta);
  const json root = json::parse(format_nvbandwidth_json(meta, nvbandwidth_cases(fam)));
  expect_nvbandwidth_layout(root, 1);
  const json* h2d = find_case(root, "host_to_device_memcpy_ce");
  ASSERT_NE(h2d, nullptr);
  EXPECT_EQ(h2d->at("bandwidth_description"), "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)");
  const double v = std::stod(h2d->at("bandwidth_matrix")[0][0].get<std::string>());
  EXPECT_NEAR(v, 54, 3);
  for (const char* n : {"device_to_host_memcpy_ce", "host_to_device_memcpy_sm", "device_to_host_memcpy_sm",
                        "host_device_latency_sm"})
    EXPECT_NE(find_case(root, n), nullptr) << n;
  EXPECT_EQ(find_case(root, "host_to_device_bidirectional_memcpy_ce"), nullptr);  // means another thing
  EXPECT_EQ(root.at("nvbandwidth").at("CUDA Runtime Version"), 13000);
  // On a node of four, measured on GPU 2: one row, GPU 2's column.
  const auto cases = nvbandwidth_cases(fam, 4, 2);
  ASSERT_FALSE(cases.empty());
  ASSERT_EQ(cases[0].matrix.size(), 1u);
  ASSERT_EQ(cases[0].matrix[0].size(), 4u);
  EXPECT_TRUE(std::isnan(cases[0].matrix[0][0]));
  EXPECT_FALSE(std::isnan(cases[0].matrix[0][2]));
}

TEST(NvbandwidthJson, NotARunFolderIsAnError) {
  Scratch tmp("gpuprobe-nvb-empty");
  EXPECT_THROW(write_nvbandwidth_json(tmp.path.string(), (tmp.path / "x.json").string()), std::runtime_error);
  EXPECT_FALSE(fs::exists(tmp.path / "x.json"));
}

TEST(NvbandwidthJson, CommandLine) {
  EXPECT_EQ(parse_command_line({"run", "--json-nvbandwidth", "a.json"}).json_nvbandwidth, "a.json");
  EXPECT_EQ(parse_command_line({"analyze", "d", "--json-nvbandwidth=b.json"}).json_nvbandwidth, "b.json");
  EXPECT_THROW(parse_command_line({"run", "--json-nvbandwidth"}), UsageError);
  EXPECT_THROW(parse_command_line({"run", "--json-nvbandwidth="}), UsageError);
  EXPECT_THROW(parse_command_line({"info", "--json-nvbandwidth", "x"}), UsageError);
}

// nvbandwidth's own output for two GPUs, as its json_output.cpp lays it out: the bidirectional
// case's three matrices (each direction, then the sum) appended into one bandwidth_matrix.
std::string nvbandwidth_output() {
  json tc = json::array();
  tc.push_back({{"bandwidth_description", "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)"},
                {"bandwidth_matrix", json::array({json::array({"N/A", "400"}), json::array({"380", "N/A"})})},
                {"name", "device_to_device_memcpy_write_ce"},
                {"status", "Passed"},
                {"sum", 780}});
  tc.push_back({{"bandwidth_description", "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)"},
                {"bandwidth_matrix", json::array({json::array({"N/A", "380"}), json::array({"380", "N/A"}),
                                                  json::array({"N/A", "381"}), json::array({"381", "N/A"}),
                                                  json::array({"N/A", "761"}), json::array({"761", "N/A"})})},
                {"name", "device_to_device_bidirectional_memcpy_write_ce"},
                {"status", "Passed"},
                {"sum", 3044}});
  tc.push_back({{"name", "host_to_all_memcpy_ce"},
                {"status", "Passed"},
                {"bandwidth_matrix", json::array({json::array({"50", "50"})})}});
  tc.push_back({{"name", "multinode_bisect_write_ce"}, {"status", "Waived"}});
  return json{{"nvbandwidth", {{"testcases", tc}}}}.dump();
}

TEST(NvbandwidthCompare, SideBySideCellByCell) {
  Scratch tmp("gpuprobe-nvb-cmp");
  const fs::path run = tmp.path / "run";
  write_node_run(run, nvswitch_node(2), node_rows(2, 390, 440), {});
  const std::string md = nvbandwidth_side_by_side(run.string(), nvbandwidth_output());
  // 390 and 390 against 400 and 380: ratios 0.975 and 1.026.
  EXPECT_NE(md.find("| `device_to_device_memcpy_write_ce` | 2 | 390 GB/s [380, 400] | 390 GB/s | 1.001 [0.975, 1.026] |"),
            std::string::npos)
      << md;
  // The sums' rows: 761 against gpuprobe's 780 both ways.
  EXPECT_NE(md.find("| `device_to_device_bidirectional_memcpy_write_ce` | 2 | 761 GB/s | 780 GB/s | 1.025 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Not compared: host_to_all_memcpy_ce (no gpuprobe mode like it), multinode_bisect_write_ce (Waived)."),
            std::string::npos)
      << md;
  EXPECT_THROW(nvbandwidth_side_by_side(run.string(), "{\"x\": 1}"), std::runtime_error);
  EXPECT_THROW(nvbandwidth_side_by_side(run.string(), "not json"), std::runtime_error);
  // The command: one run and the file.
  const fs::path file = tmp.path / "nvb.json";
  write_file_atomic(file.string(), nvbandwidth_output());
  EXPECT_EQ(compare_main({run.string(), "--nvbandwidth", file.string()}), 0);
  EXPECT_EQ(compare_main({run.string(), run.string(), "--nvbandwidth", file.string()}), 2);
  EXPECT_EQ(compare_main({run.string(), "--nvbandwidth", (tmp.path / "missing.json").string()}), 1);
}

// ---------------------------------------------------------------- report and export

RunData load(const fs::path& dir) {
  Diagnostics quiet;
  quiet.prefix = "test";
  return load_run(dir.string(), known_families({}), quiet);
}

// A 4 x H200 run under `dir`, with its parameters, read back as report and export read it.
RunData four_gpu_run(const fs::path& dir) {
  const node::Node n = nvswitch_node(4);
  const auto obs = node_rows(4, 393, 440);
  write_node_run(dir, n, obs, analyze_node(n, obs));
  return load(dir);
}

TEST(NodeReport, GpusLinksAndTheFiguresAgainstThem) {
  Scratch tmp("gpuprobe-node-report");
  const std::string md = node_markdown(four_gpu_run(tmp.path / "run"));
  EXPECT_NE(md.find("## Node\n\n4 GPUs as CUDA numbers them"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | NVIDIA H200 | 0000:00:07.0 | gen5 x16 (max gen5 x16) | 18 links, NVLink 4.0, 26.56 GB/s each "
                    "| NVSwitch (18) | 478.1 GB/s (18 x 26.562) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("0-1 PHB, 0-2 PHB"), std::string::npos) << md;
  EXPECT_NE(md.find("| `p2p_ce_write_bandwidth` | 393 GB/s | 478.1 GB/s | 82.2 % |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `p2p_ce_write_bidir_bandwidth` | 786 GB/s | 956.2 GB/s | 82.2 % |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `p2p_all_pairs_write_ce_bandwidth` | 1760 GB/s | 1912 GB/s |"), std::string::npos) << md;

  const fs::path one = tmp.path / "one";
  write_node_run(one, nvswitch_node(1), {}, {});
  EXPECT_NE(node_markdown(load(one)).find("One GPU: the p2p family has no peer to measure."), std::string::npos);
  EXPECT_NE(node_markdown(load(committed_run(kH200TwoGpuRun))).find("predates the node_* metadata"),
            std::string::npos);
  EXPECT_EQ(node_markdown(load(committed_run(kH100Run))), "");  // one GPU, before node_*
}

TEST(NodeExport, JsonHoldsTheGpusLinksAndMatrices) {
  Scratch tmp("gpuprobe-node-export");
  const json root = json::parse(export_json(four_gpu_run(tmp.path / "run")));
  const json& node = root.at("node");
  ASSERT_EQ(node.at(kNodeGpusKey).size(), 4u);
  EXPECT_EQ(node[kNodeGpusKey][0]["nvlink"]["active_links"], 18);
  EXPECT_EQ(node[kNodeGpusKey][0]["nvlink"]["to_nvswitch"], 18);
  EXPECT_NEAR(node[kNodeGpusKey][0]["nvlink"]["gbs"].get<double>(), 478.116, 1e-9);
  EXPECT_EQ(node[kNodeGpusKey][0]["pcie"]["max_generation"], 5);
  EXPECT_EQ(node["pcie_paths"].size(), 6u);
  const json& w = node.at(p2p::kExportKey).at(p2p::kCeWrite).at("matrix");
  ASSERT_EQ(w.size(), 4u);
  EXPECT_TRUE(w[2][2].is_null());
  EXPECT_EQ(w[2][3], 393);
  EXPECT_EQ(node[p2p::kExportKey][p2p::kAllToOneReadCe]["per_device"].size(), 4u);
  EXPECT_EQ(node[p2p::kExportKey][p2p::kAllPairsWriteCe]["total"], 1760);
  EXPECT_EQ(node[p2p::kExportKey][p2p::kLatencyProbe]["unit"], "ns");
  // A run of one GPU before node_*: an empty node, the key still there.
  const json old = json::parse(export_json(load(committed_run(kH100Run))));
  EXPECT_TRUE(old.at("node").at(kNodeGpusKey).empty());
}

}  // namespace
}  // namespace gpuprobe
