#include "model_gpu.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "analysis/bandwidth.hpp"
#include "analysis/common/memory_chase.hpp"
#include "analysis/dram_read_order.hpp"
#include "analysis/latency.hpp"
#include "analysis/shared_banks.hpp"
#include "base/csv.hpp"
#include "base/parameter_names.hpp"
#include "observation_rows.hpp"

namespace gpuprobe {
namespace model {

namespace {

constexpr double KiB = 1024, MiB = 1024 * KiB;

// Where the figures come from. Rows of results/reference/documented_figures.csv (curated from
// the raw collection or appended from scripts/reference_additions.csv) are named by their
// source; a figure no source gives says `assumed:` and why the value is plausible.
const std::string kJia18 = "Jia et al. 2018, arXiv:1804.06826, Table 3.1 (results/reference)";
const std::string kJia18Dram = "Jia et al. 2018, arXiv:1804.06826, Fig 3.2 (results/reference)";
const std::string kJia19 = "Jia et al. 2019, arXiv:1903.07486, Table 3.1 (reference_additions.csv)";
const std::string kV100Wp = "NVIDIA Tesla V100 whitepaper WP-08608-001_v1.1, Table 1 (results/reference)";
const std::string kPpt = "PPT GPU_config.py, secondary (results/reference)";
const std::string kA100Wp = "NVIDIA A100 Tensor Core GPU Architecture whitepaper (reference_additions.csv)";
const std::string kGa102Wp = "NVIDIA Ampere GA102 GPU Architecture whitepaper (reference_additions.csv)";
const std::string kAdaWp = "NVIDIA Ada GPU Architecture whitepaper (reference_additions.csv)";
const std::string kH100Wp = "NVIDIA H100 Tensor Core GPU Architecture whitepaper v1.04 (results/reference)";
const std::string kH100Run = "measured: gpuprobe run results/nvidia-h100-80gb-hbm3/20261122T082310Z";
const std::string kCdna2Wp = "AMD CDNA 2 Architecture whitepaper (reference_additions.csv)";
const std::string kCdna3Wp = "AMD CDNA 3 Architecture whitepaper (reference_additions.csv)";
const std::string kRdna2 = "AMD Radeon RX 6900 XT specifications / RDNA 2 ISA guide (reference_additions.csv)";
const std::string kRdna3 = "AMD Radeon RX 7900 XTX specifications / RDNA 3 ISA guide (reference_additions.csv)";

// Latency levels read off public pointer-chase curves of other designs (not documented
// figures): an Infinity Cache of 256 MB at about 456 cycles before DRAM at about 880 (CDNA 3), a
// 128 KB mid cache at about 120 cycles before an L2 at about 220 (RDNA 2), and Blackwell's two
// dies, the second die's L2 half at 660-690 cycles past a ~330-cycle L2, DRAM at about 860.
const std::string kPublicCurve = "the shape read off a public latency curve of the part";

Figure doc(double v, const std::string& src) { return {v, src}; }
Figure assumed(double v, const std::string& why) { return {v, "assumed: " + why}; }

// Shared memory banks: documented for Kepler to Volta (Jia et al. 2018: 32 banks, 8 B wide on
// Kepler, 4 B after); 32 banks of 4 B elsewhere, as every NVIDIA GPU since Maxwell and AMD's
// LDS have.
void banks(Gpu& g, Figure count, Figure width) {
  g.shared_banks = std::move(count);
  g.shared_bank_width = std::move(width);
}
void usual_banks(Gpu& g) {
  const std::string why = "32 banks of 4 B, as every GPU since Maxwell (Jia et al. 2018) and AMD's LDS";
  banks(g, assumed(32, why), assumed(4, why));
}

Level level(const std::string& name, Figure size, Figure lat, double sharpness = 40) {
  Level l;
  l.name = name;
  l.size = std::move(size);
  l.latency = std::move(lat);
  l.sharpness = sharpness;
  return l;
}

Level split_l2(Figure size, Figure near, Figure far, double sharpness = 30) {
  Level l = level("l2", std::move(size), std::move(near), sharpness);
  l.far_latency = std::move(far);
  return l;
}

// TLB levels: reach, entry size and the cycles a miss past the reach adds.
constexpr double GiB = 1024 * MiB;
TlbLevel tlb_level(Figure reach, Figure entry, Figure miss) {
  return {std::move(reach), std::move(entry), std::move(miss)};
}
const std::string kTlbMiss = "TLB miss cost not documented; of the order the H100 run shows";
std::vector<TlbLevel> jia_tlb(double l1_reach, double l1_entry, double l2_reach, double l2_entry) {
  return {tlb_level(doc(l1_reach, kJia18 + " (L1 TLB reach)"), doc(l1_entry, kJia18 + " (L1 TLB entry)"),
                    assumed(20, kTlbMiss)),
          tlb_level(doc(l2_reach, kJia18 + " (L2 TLB reach)"), doc(l2_entry, kJia18 + " (L2 TLB entry)"),
                    assumed(250, kTlbMiss))};
}
// Kepler and Maxwell: a third level (Jia et al. 2018: ~2 GiB of 2 MiB entries)
std::vector<TlbLevel> jia_tlb3() {
  auto v = jia_tlb(2 * MiB, 128 * KiB, 128 * MiB, 2 * MiB);
  v[1].miss = assumed(60, kTlbMiss + "; a third level follows");
  v.push_back(tlb_level(doc(2 * GiB, kJia18 + " (L3 TLB reach)"), doc(2 * MiB, kJia18 + " (L3 TLB entry)"),
                        assumed(300, kTlbMiss)));
  return v;
}
std::vector<TlbLevel> assumed_tlb(const std::string& why, double l1_reach, double l1_entry,
                                  double l2_reach, double l2_entry) {
  return {tlb_level(assumed(l1_reach, why), assumed(l1_entry, why), assumed(20, kTlbMiss)),
          tlb_level(assumed(l2_reach, why), assumed(l2_entry, why), assumed(250, kTlbMiss))};
}
// Hopper: the committed H100 run's tlb.csv (16 entries of 16 MiB, 2048 of 32 MiB, a walk past
// 256 GiB)
std::vector<TlbLevel> hopper_tlb(const std::string& src) {
  return {tlb_level(doc(256 * MiB, src), doc(16 * MiB, src), doc(9, src)),
          tlb_level(doc(64 * GiB, src), doc(32 * MiB, src), doc(92, src)),
          tlb_level(doc(256 * GiB, src), doc(32 * MiB, src), doc(810, src))};
}
void tlb(Gpu& g, std::vector<TlbLevel> levels, double memory_gib) {
  g.tlb_levels = std::move(levels);
  g.memory_bytes = assumed(memory_gib * GiB, "the card's memory per GPU (datasheet)");
}

Gpu gpu(const std::string& key, const std::string& name, const std::string& arch,
        const std::string& cc) {
  Gpu g;
  g.key = key;
  g.name = name;
  g.arch = arch;
  g.cc = cc;
  return g;
}

// Figures no source gives, and why the value is plausible.
const std::string kLat = "no cycle figure documented; a value of the generation's order";
const std::string kWalk = "walk cost not documented; a visible step of the order page walks take";

// Kepler to Volta: the figures Jia et al. document.
void nvidia_to_volta(std::vector<Gpu>& v) {
  {
    Gpu g = gpu("kepler", "Tesla K80 (GK210)", "kepler", "3.7");
    tlb(g, jia_tlb3(), 12);
    g.levels = {level("l1", doc(48 * KiB, kJia18 + ", upper end of 16-48 KiB (largest carve-out)"),
                      doc(35, kJia18), 40),
                level("l2", doc(1536 * KiB, kJia18), doc(200, kJia18), 14)};
    g.dram_latency = doc(331, kPpt + ", K40m figure taken for the GK210");
    g.tlb = {{doc(128 * MiB, kJia18 + " (L2 TLB reach)"), assumed(120, kWalk)}};
    g.l2_bytes_meta = 1536 * KiB;
    g.shared_per_sm_meta = 112 * KiB;
    g.sm_clock_mhz = assumed(875, "K80 boost clock");
    g.dram_read_gbs = assumed(200, "near the documented copy figure 191 GB/s");
    g.dram_theoretical_gbs = assumed(240, "half of the K80 board's 480 GB/s");
    g.l2_read_gbs = doc(339, kJia18);
    banks(g, doc(32, kJia18), doc(8, kJia18 + " (Kepler 8-byte banks)"));
    v.push_back(g);
  }
  {
    Gpu g = gpu("maxwell", "Tesla M60 (GM204)", "maxwell", "5.2");
    tlb(g, jia_tlb3(), 8);
    g.levels = {level("l1", doc(24 * KiB, kJia18), doc(82, kJia18), 30),
                level("l2", doc(2 * MiB, kJia18), doc(207, kJia18), 14)};
    g.dram_latency = doc(379, kPpt + ", GTX Titan X (GM200) figure taken for the GM204");
    g.tlb = {{doc(128 * MiB, kJia18 + " (L2 TLB reach)"), assumed(120, kWalk)}};
    g.l2_bytes_meta = 2 * MiB;
    g.shared_per_sm_meta = 96 * KiB;
    g.sm_clock_mhz = assumed(1178, "M60 boost clock");
    g.dram_read_gbs = assumed(140, "near the documented copy figure 127 GB/s");
    g.dram_theoretical_gbs = assumed(160, "half of the M60 board's 320 GB/s");
    g.l2_read_gbs = doc(446, kJia18);
    banks(g, doc(32, kJia18), doc(4, kJia18));
    v.push_back(g);
  }
  {
    Gpu g = gpu("pascal", "Tesla P100 PCIe (GP100)", "pascal", "6.0");
    tlb(g, jia_tlb(32 * MiB, 2 * MiB, 2 * GiB, 32 * MiB), 16);
    g.levels = {level("l1", doc(24 * KiB, kJia18), doc(82, kJia18), 30),
                level("l2", doc(4 * MiB, kJia18), doc(234, kJia18), 20)};
    g.dram_latency = assumed(430, kLat);
    g.tlb = {{doc(32 * MiB, kJia18 + " (L1 TLB reach)"), assumed(70, kWalk)}};
    g.l2_bytes_meta = 4 * MiB;
    g.shared_per_sm_meta = 64 * KiB;
    g.sm_clock_mhz = assumed(1328, "P100 PCIe boost clock");
    g.dram_read_gbs = assumed(550, "near the documented copy figure 510 GB/s");
    g.dram_theoretical_gbs = doc(732, kV100Wp);
    g.l2_read_gbs = doc(1624, kJia18);
    g.cold_climb = true;
    banks(g, doc(32, kJia18), doc(4, kJia18));
    v.push_back(g);
  }
  {
    Gpu g = gpu("volta", "Tesla V100 PCIe (GV100)", "volta", "7.0");
    tlb(g, jia_tlb(32 * MiB, 2 * MiB, 8 * GiB, 32 * MiB), 16);
    g.levels = {level("l1", doc(128 * KiB, kJia18 + ", upper end of 32-128 KiB (largest carve-out)"),
                      doc(28, kJia18), 40),
                level("l2", doc(6 * MiB, kJia18), doc(193, kJia18), 20)};
    g.dram_latency = doc(375, kJia18Dram);
    g.tlb = {{doc(32 * MiB, kJia18 + " (L1 TLB reach)"), assumed(60, kWalk)}};
    g.l2_bytes_meta = 6 * MiB;
    g.shared_per_sm_meta = 96 * KiB;
    g.sm_clock_mhz = assumed(1380, "V100 PCIe boost clock");
    g.dram_read_gbs = assumed(800, "near the documented copy figure 750 GB/s");
    g.dram_theoretical_gbs = doc(900, kV100Wp);
    g.l2_read_gbs = doc(2155, kJia18);
    banks(g, doc(32, kJia18), doc(4, kJia18));
    v.push_back(g);
  }
}

// Turing to Ada.
void nvidia_turing_to_ada(std::vector<Gpu>& v) {
  {
    Gpu g = gpu("turing", "Tesla T4 (TU104)", "turing", "7.5");
    tlb(g, assumed_tlb("as the documented V100 (Jia et al. 2018)", 32 * MiB, 2 * MiB, 8 * GiB, 32 * MiB), 16);
    g.levels = {level("l1", doc(64 * KiB, kJia19 + ", upper end of 32-64 KiB"), doc(32, kJia19), 40),
                level("l2", doc(4 * MiB, kJia19), doc(188, kJia19), 12)};
    g.dram_latency = assumed(300, kLat);
    g.tlb = {{assumed(32 * MiB, "as the documented V100 L1 TLB reach"), assumed(60, kWalk)}};
    g.l2_bytes_meta = 4 * MiB;
    g.shared_per_sm_meta = 64 * KiB;
    g.sm_clock_mhz = assumed(1590, "T4 boost clock");
    g.dram_read_gbs = assumed(240, "three quarters of the theoretical peak");
    g.dram_theoretical_gbs = assumed(320, "T4 datasheet 320 GB/s");
    g.l2_read_gbs = assumed(1100, "between P4 and V100 figures");
    g.cold_climb = true;
    usual_banks(g);
    v.push_back(g);
  }
  {
    Gpu g = gpu("ga100", "A100 40GB (GA100)", "ampere", "8.0");
    tlb(g, assumed_tlb("as the documented V100 (Jia et al. 2018)", 32 * MiB, 2 * MiB, 8 * GiB, 32 * MiB), 40);
    g.levels = {level("l1", doc(192 * KiB, kA100Wp + ", 192 KB L1/shared, no shared carve-out"),
                      assumed(34, kLat), 40),
                split_l2(doc(40 * MiB, kA100Wp), assumed(210, kLat),
                         assumed(390, kLat + "; far partition"), 24)};
    g.dram_latency = assumed(560, kLat);
    g.l2_bytes_meta = 40 * MiB;
    g.shared_per_sm_meta = 164 * KiB;
    g.sm_clock_mhz = assumed(1410, "A100 boost clock");
    g.dram_read_gbs = assumed(1400, "90 % of the theoretical peak");
    g.dram_theoretical_gbs = assumed(1555, "A100 40GB datasheet 1555 GB/s");
    g.l2_read_gbs = assumed(5000, "of the order GA100 microbenchmarks show");
    usual_banks(g);
    v.push_back(g);
  }
  {
    Gpu g = gpu("ga102", "GeForce RTX 3090 (GA102)", "ampere", "8.6");
    tlb(g, assumed_tlb("as the documented V100 (Jia et al. 2018)", 32 * MiB, 2 * MiB, 8 * GiB, 32 * MiB), 24);
    g.levels = {
        level("l1", doc(128 * KiB, kGa102Wp + ", 128 KB L1/shared per SM"), assumed(33, kLat), 30),
        level("l2", doc(6 * MiB, kGa102Wp), assumed(240, kLat), 5)};
    g.dram_latency = assumed(500, kLat);
    g.l2_bytes_meta = 6 * MiB;
    g.shared_per_sm_meta = 100 * KiB;
    g.sm_clock_mhz = assumed(1695, "RTX 3090 boost clock");
    g.dram_read_gbs = assumed(850, "90 % of the theoretical peak");
    g.dram_theoretical_gbs = assumed(936, "RTX 3090 specification 936 GB/s");
    g.l2_read_gbs = assumed(2500, "of the order GA102 microbenchmarks show");
    usual_banks(g);
    v.push_back(g);
  }
  {
    Gpu g = gpu("ada", "GeForce RTX 4090 (AD102)", "ada", "8.9");
    tlb(g, assumed_tlb("as the documented V100 (Jia et al. 2018)", 32 * MiB, 2 * MiB, 8 * GiB, 32 * MiB), 24);
    g.levels = {
        level("l1", doc(128 * KiB, kAdaWp + ", 128 KB L1/shared per SM"), assumed(30, kLat), 30),
        level("l2", doc(72 * MiB, kAdaWp), assumed(270, kLat), 6)};
    g.dram_latency = assumed(580, kLat);
    g.l2_bytes_meta = 72 * MiB;
    g.shared_per_sm_meta = 100 * KiB;
    g.sm_clock_mhz = assumed(2520, "RTX 4090 boost clock");
    g.dram_read_gbs = assumed(900, "90 % of the theoretical peak");
    g.dram_theoretical_gbs = assumed(1008, "RTX 4090 specification 1008 GB/s");
    g.l2_read_gbs = assumed(5000, "of the order AD102 microbenchmarks show");
    g.cold_climb = true;
    usual_banks(g);
    v.push_back(g);
  }
}

// Hopper and Blackwell: split L2s, the second a two-die part.
void nvidia_hopper_on(std::vector<Gpu>& v) {
  {
    Gpu g = gpu("h100", "H100 SXM5 80GB HBM3", "hopper", "9.0");
    tlb(g, hopper_tlb(kH100Run + ", tlb.csv"), 80);
    g.levels = {level("l1", doc(240 * KiB, kH100Run + " (238-245 KiB cliff)"), doc(32, kH100Run), 60),
                split_l2(doc(50 * MiB, kH100Wp), doc(263, kH100Run), doc(500, kH100Run), 40)};
    g.dram_latency = doc(680, kH100Run);
    g.l2_bytes_meta = 50 * MiB;
    g.shared_per_sm_meta = 228 * KiB;
    g.sm_clock_mhz = doc(1980, kH100Wp);
    g.dram_read_gbs = doc(3150, kH100Run);
    g.dram_theoretical_gbs = doc(3352, kH100Wp);
    g.l2_read_gbs = doc(7800, kH100Run + " (L2 plateau past one round)");
    usual_banks(g);
    v.push_back(g);
  }
  {
    Gpu g = gpu("gh200", "GH200 (H100 96GB HBM3)", "hopper", "9.0");
    tlb(g, hopper_tlb("assumed: as the measured H100 SXM5"), 96);
    g.levels = {level("l1", assumed(240 * KiB, "as the H100 SXM5"), assumed(32, "as the H100 SXM5"), 60),
                split_l2(assumed(50 * MiB, "as the H100 SXM5"), assumed(265, "as the H100 SXM5"),
                         assumed(510, "as the H100 SXM5"), 30)};
    g.dram_latency = assumed(720, "HBM3 behind the same L2; a little above the H100 SXM5");
    g.tlb = {{assumed(512 * MiB, "a TLB step past the sweep's fine range"), assumed(90, kWalk)}};
    g.l2_bytes_meta = 0;  // a converted curve without metadata
    g.sm_clock_mhz = assumed(1980, "as the H100 SXM5");
    g.dram_read_gbs = assumed(3700, "about 92 % of 4 TB/s");
    g.dram_theoretical_gbs = assumed(4000, "GH200 96GB HBM3 4 TB/s");
    g.l2_read_gbs = assumed(8000, "as the H100 SXM5");
    g.round_bytes = false;
    usual_banks(g);
    v.push_back(g);
  }
  {
    Gpu g = gpu("b200", "B200 (Blackwell)", "blackwell", "10.0");
    tlb(g, hopper_tlb("assumed: as the measured H100 SXM5"), 180);
    // Two dies: the L2 half of the SM's own die, then the other die's half past it (the shape
    // of Hopper's near and far partitions, with twice the far penalty), then DRAM.
    g.levels = {
        level("l1", assumed(240 * KiB, "256 KB L1/shared per SM as Hopper"), assumed(33, kLat), 60),
        split_l2(assumed(126 * MiB, "L2 size reported for the B200"), assumed(330, kPublicCurve),
                 assumed(675, kPublicCurve + " (660-690: the second die's L2 half)"), 30)};
    g.dram_latency = assumed(860, kPublicCurve);
    g.l2_bytes_meta = 126 * MiB;
    g.shared_per_sm_meta = 228 * KiB;
    g.sm_clock_mhz = assumed(1965, "B200 boost clock");
    g.dram_read_gbs = assumed(7000, "about 88 % of 8 TB/s");
    g.dram_theoretical_gbs = assumed(8000, "B200 HBM3e 8 TB/s");
    g.l2_read_gbs = assumed(16000, "twice Hopper's");
    usual_banks(g);
    v.push_back(g);
  }
}

// AMD's designs, as converted public curves: one chase (no ld.cg), more levels.
void amd(std::vector<Gpu>& v) {
  {
    Gpu g = gpu("cdna2", "Instinct MI250X, one GCD (CDNA 2)", "cdna2", "gfx90a");
    tlb(g, assumed_tlb("no AMD TLB reach documented; 2 MiB fragments, a few thousand L2 entries", 32 * MiB, 2 * MiB, 4 * GiB, 2 * MiB), 64);
    g.levels = {
        level("l1", doc(16 * KiB, kCdna2Wp + ", 16 KB vector L1 per CU"), assumed(120, kLat), 20),
        level("l2", doc(8 * MiB, kCdna2Wp + ", 8 MB L2 per GCD"), assumed(310, kLat), 10)};
    g.dram_latency = assumed(720, kLat);
    g.l2_bytes_meta = 8 * MiB;
    g.sm_clock_mhz = assumed(1700, "MI250X peak engine clock");
    g.dram_read_gbs = assumed(1300, "about 80 % of one GCD's 1.6 TB/s");
    g.dram_theoretical_gbs = assumed(1638, "half of MI250X's 3.2 TB/s");
    g.cg_probe = false;
    g.l2_read_gbs = assumed(4000, "of the order CDNA 2 microbenchmarks show");
    g.round_bytes = false;
    usual_banks(g);
    v.push_back(g);
  }
  {
    Gpu g = gpu("cdna3", "Instinct MI300X (CDNA 3)", "cdna3", "gfx942");
    tlb(g, assumed_tlb("no AMD TLB reach documented; 2 MiB fragments, a few thousand L2 entries", 32 * MiB, 2 * MiB, 4 * GiB, 2 * MiB), 192);
    g.levels = {
        level("l1", doc(32 * KiB, kCdna3Wp + ", 32 KB vector L1 per CU"), assumed(120, kLat), 20),
        level("l2", doc(4 * MiB, kCdna3Wp + ", 4 MB L2 per XCD"), assumed(240, kLat), 12),
        level("llc", doc(256 * MiB, kCdna3Wp + ", 256 MB Infinity Cache"),
              assumed(456, kPublicCurve), 8)};
    g.dram_latency = assumed(880, kPublicCurve);
    // a TLB reach inside the Infinity Cache (the L1 TLB's, above): the cache's plateau steps up
    // before DRAM, a step of the kind that made the cache read as DRAM
    g.tlb = {{assumed(32 * MiB, "the L1 TLB reach assumed above"), assumed(45, kWalk)}};
    g.cg_probe = false;
    g.l2_bytes_meta = 4 * MiB;  // one die's share
    g.sm_clock_mhz = assumed(2100, "MI300X peak engine clock");
    g.dram_read_gbs = assumed(4300, "about 80 % of 5.3 TB/s");
    g.dram_theoretical_gbs = assumed(5300, "MI300X HBM3 5.3 TB/s");
    g.l2_read_gbs = assumed(14000, "eight XCDs' L2 together");
    g.round_bytes = false;
    usual_banks(g);
    v.push_back(g);
  }
  {
    Gpu g = gpu("rdna2", "Radeon RX 6900 XT (RDNA 2)", "rdna2", "gfx1030");
    tlb(g, assumed_tlb("no AMD TLB reach documented; 2 MiB fragments, a few thousand L2 entries", 32 * MiB, 2 * MiB, 4 * GiB, 2 * MiB), 16);
    g.levels = {
        level("l1", doc(16 * KiB, kRdna2 + ", 16 KB L0 vector cache per CU"),
              assumed(75, "a cache step below the mid cache"), 20),
        level("mid_cache", doc(128 * KiB, kRdna2 + ", 128 KB L1 per shader array"),
              assumed(120, kPublicCurve), 12),
        level("l2", doc(4 * MiB, kRdna2), assumed(220, kPublicCurve), 12),
        level("llc", doc(128 * MiB, kRdna2 + ", 128 MB Infinity Cache"), assumed(400, kLat), 8)};
    g.dram_latency = assumed(720, kLat);
    g.l2_bytes_meta = 4 * MiB;
    g.sm_clock_mhz = assumed(2250, "RX 6900 XT boost clock");
    g.dram_read_gbs = assumed(460, "90 % of 512 GB/s");
    g.dram_theoretical_gbs = assumed(512, "RX 6900 XT specification 512 GB/s");
    g.cg_probe = false;
    g.l2_read_gbs = assumed(2000, "of the order RDNA 2 microbenchmarks show");
    g.round_bytes = false;
    usual_banks(g);
    v.push_back(g);
  }
  {
    Gpu g = gpu("rdna3", "Radeon RX 7900 XTX (RDNA 3)", "rdna3", "gfx1100");
    tlb(g, assumed_tlb("no AMD TLB reach documented; 2 MiB fragments, a few thousand L2 entries", 32 * MiB, 2 * MiB, 4 * GiB, 2 * MiB), 24);
    g.levels = {
        level("l1", doc(32 * KiB, kRdna3 + ", 32 KB L0 vector cache per CU"), assumed(100, kLat),
              20),
        level("mid_cache", doc(256 * KiB, kRdna3 + ", 256 KB L1 per shader array"),
              assumed(160, kLat), 12),
        level("l2", doc(6 * MiB, kRdna3), assumed(260, kLat), 12),
        level("llc", doc(96 * MiB, kRdna3 + ", 96 MB Infinity Cache"), assumed(390, kLat), 8)};
    g.dram_latency = assumed(700, kLat);
    g.l2_bytes_meta = 6 * MiB;
    g.sm_clock_mhz = assumed(2500, "RX 7900 XTX boost clock");
    g.dram_read_gbs = assumed(860, "90 % of 960 GB/s");
    g.dram_theoretical_gbs = assumed(960, "RX 7900 XTX specification 960 GB/s");
    g.cg_probe = false;
    g.l2_read_gbs = assumed(3000, "of the order RDNA 3 microbenchmarks show");
    g.round_bytes = false;
    g.cold_climb = true;
    usual_banks(g);
    v.push_back(g);
  }
}

std::vector<Gpu> declare() {
  std::vector<Gpu> v;
  nvidia_to_volta(v);
  nvidia_turing_to_ada(v);
  nvidia_hopper_on(v);
  amd(v);
  for (auto& g : v) declare_family_figures(g);
  return v;
}

// Hit fraction of a level of `size` bytes and `sharpness` for a chase over `f` bytes.
double hit(double f, double size, double sharpness) {
  return 1.0 / (1.0 + std::pow(f / size, sharpness));
}

bool skips(const Level& l, bool skip_l1) {
  return skip_l1 && (l.name == "l1" || l.name == "mid_cache");
}

// Latency with each level's own multiplier (wobble, climb) applied to its hits; `walks`: with
// the ladder's TLB steps.
double chase_latency_with(const Gpu& g, double f, bool skip_l1,
                          const std::vector<double>& factor, bool walks = true) {
  double walk = 0;
  if (walks)
    for (const auto& t : g.tlb) walk += t.walk.value * (1 - hit(f, t.reach.value, 8));
  double lat = g.dram_latency.value + walk;
  for (size_t i = g.levels.size(); i-- > 0;) {
    const Level& l = g.levels[i];
    if (skips(l, skip_l1)) continue;
    double own = l.latency.value * factor[i];
    if (l.split()) {
      const double h_near = hit(f, l.size.value / 2, l.sharpness);
      const double h_all = hit(f, l.size.value, l.sharpness);
      const double far = l.far_latency.value * factor[i];
      lat = h_near * own + (h_all - std::min(h_all, h_near)) * far + (1 - std::max(h_all, h_near)) * lat;
      continue;
    }
    const double h = hit(f, l.size.value, l.sharpness);
    lat = h * own + (1 - h) * lat;
  }
  return lat;
}

}  // namespace

const std::vector<Gpu>& model_gpus() {
  static const std::vector<Gpu> v = declare();
  return v;
}

double chase_latency(const Gpu& g, double f, bool skip_l1) {
  return chase_latency_with(g, f, skip_l1, std::vector<double>(g.levels.size(), 1.0));
}

double cache_latency(const Gpu& g, double f, bool skip_l1) {
  return chase_latency_with(g, f, skip_l1, std::vector<double>(g.levels.size(), 1.0), false);
}

Noise noise_for(const Gpu& g, unsigned seed) {
  std::mt19937_64 rng(0x5eed0000ULL + seed * 7919ULL + std::hash<std::string>{}(g.key));
  std::uniform_real_distribution<double> u(0, 1);
  Noise n;
  n.jitter = 0.002 + 0.010 * u(rng);
  for (const auto& l : g.levels) {
    // the far partition and a last-level cache wobble most (the issue saw +-3-7 %)
    const bool wide = l.split() || l.name == "llc";
    n.wobble.push_back(wide ? 0.03 + 0.05 * u(rng) : 0.03 * u(rng));
    n.phase.push_back(2 * M_PI * u(rng));
  }
  n.climb = g.cold_climb ? 0.02 + 0.03 * u(rng) : 0.0;
  n.clock_offset = 0.02 * (u(rng) - 0.5);
  n.outlier_rate = 0.02 * u(rng);
  return n;
}

namespace {

// The run's metadata, as a converted curve would carry it (l2_bytes and shared_per_sm_bytes
// only where declared).
Metadata metadata(const Gpu& g, const std::string& family) {
  Metadata m = {{"gpu", g.name}, {"compute_capability", g.cc}};
  if (g.l2_bytes_meta > 0) m.push_back({"l2_bytes", format_printf("%.0f", g.l2_bytes_meta)});
  if (g.shared_per_sm_meta > 0)
    m.push_back({"shared_per_sm_bytes", format_printf("%.0f", g.shared_per_sm_meta)});
  m.push_back({"sm_clock_mhz", format_printf("%.1f", g.sm_clock_mhz.value)});
  m.push_back({"family", family});
  return m;
}

// A shelf's wobble swings up and down every half octave of footprint: a few swings along a
// level, as the far L2 partition showed, rather than a slope across it.
constexpr double kWobblePeriod = 0.5;
constexpr uint32_t kLine = 128;       // the chase's pointer spacing (microbench/latency.cu)
constexpr double kFineRatio = 1.122462048;  // its full-run coarse step, 2^(1/6)
constexpr int kRefineRounds = 3;
constexpr size_t kRefinePoints = 10;

}  // namespace

namespace {

// The shared_banks family's stride sweeps (microbench/shared_banks.cu: 4, 8 and 16 B per lane,
// strides 0 to 64): all warps' cycles per request, one pass per wavefront on top of an issue
// cost; one warp's latency, the load's latency plus a few cycles per further wavefront.
constexpr int kBankWidths[] = {4, 8, 16};
constexpr int kMaxBankStride = 64;
constexpr double kRequestBase = 0.1, kPerWavefront = 1.0;     // cycles/request
constexpr double kLoadLatency = 30, kPerWavefrontLatency = 2;  // cycles

void shared_bank_rows(const Gpu& g, const Noise& n, std::mt19937_64& rng, Run& run) {
  std::normal_distribution<double> gauss(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  const shared_banks::BankModel m{int(g.shared_banks.value), int(g.shared_bank_width.value)};
  auto noisy = [&](double v) {
    v *= 1 + n.jitter * gauss(rng);
    return u(rng) < n.outlier_rate ? v * (1.2 + 0.6 * u(rng)) : v;
  };
  for (int bytes : kBankWidths)
    for (int stride = 0; stride <= kMaxBankStride; ++stride) {
      const int wf = shared_banks::bank_wavefronts(m, bytes, shared_banks::stride_offsets(bytes, stride));
      const Params p = {{shared_banks::kAccessBytesColumn, std::to_string(bytes)},
                        {shared_banks::kStrideColumn, std::to_string(stride)}};
      run.shared_banks.push_back(
          make_row(std::string(shared_banks::kFamily.name), shared_banks::kStrideLatency, p,
                   noisy(kLoadLatency + kPerWavefrontLatency * (wf - 1)), "cycles", n.jitter));
      Params pt = p;
      pt.push_back({shared_banks::kWarpsPerSmColumn, "32"});
      run.shared_banks.push_back(
          make_row(std::string(shared_banks::kFamily.name), shared_banks::kStrideThroughput, pt,
                   noisy(kRequestBase + kPerWavefront * wf), shared_banks::kPerRequest, n.jitter));
    }
}

}  // namespace

namespace {

// One seed's random stream: every row of a run draws from it in turn.
struct Draws {
  std::mt19937_64 rng;
  std::normal_distribution<double> gauss{0, 1};
  std::uniform_real_distribution<double> u{0, 1};
  double normal() { return gauss(rng); }
  double uniform() { return u(rng); }
};

// A curve's coarse footprints measured, then refined as the family refines (rounds of
// refinement_points around the knees).
template <typename Measure>
std::vector<segmentation::CurvePoint> refined_curve(const std::vector<uint64_t>& coarse,
                                                    uint64_t most, Measure measure) {
  std::vector<segmentation::CurvePoint> curve;
  for (uint64_t f : coarse) curve.push_back({double(f), measure(double(f))});
  segmentation::RefineOptions ro;
  ro.min_ratio = 1.0 + (kFineRatio - 1.0) / 16;
  ro.max_points = kRefinePoints;
  for (int r = 0; r < kRefineRounds; ++r) {
    std::vector<uint64_t> next;
    for (double x : segmentation::refinement_points(curve, ro)) {
      const uint64_t f = latency::round_to_lines(x, kLine);
      const bool seen =
          std::any_of(curve.begin(), curve.end(),
                      [&](const segmentation::CurvePoint& q) { return uint64_t(q.x) == f; });
      if (!seen && f >= 1024 && f <= most && std::find(next.begin(), next.end(), f) == next.end())
        next.push_back(f);
    }
    if (next.empty()) break;
    for (uint64_t f : next) curve.push_back({double(f), measure(double(f))});
  }
  return curve;
}

// Each level's multiplier at footprint `f`: its wobble, and the first level's climb.
std::vector<double> level_factors(const Gpu& g, const Noise& n, double f, bool skip_l1) {
  std::vector<double> fac(g.levels.size(), 1.0);
  for (size_t i = 0; i < g.levels.size(); ++i) {
    fac[i] = 1 + n.wobble[i] * std::sin(2 * M_PI * std::log2(f) / kWobblePeriod + n.phase[i]);
    if (i == 0 && !skip_l1 && n.climb > 0)
      fac[i] *= 1 + n.climb * std::clamp(std::log(f / KiB) / std::log(g.levels[0].size.value / KiB),
                                         0.0, 1.0);
  }
  return fac;
}

// One noisy chase measurement at footprint `f`.
double noisy_chase(const Gpu& g, const Noise& n, Draws& d, double f, bool skip_l1) {
  double y = chase_latency_with(g, f, skip_l1, level_factors(g, n, f, skip_l1));
  y *= (1 + n.clock_offset) * (1 + n.jitter * d.normal());
  if (d.uniform() < n.outlier_rate) y *= 1.2 + 0.6 * d.uniform();
  return y;
}

Observation chase_row(const std::string& probe, double f, double y, const Noise& n) {
  return make_row(std::string(latency::kFamily.name), probe,
                  {{memory_chase::kFootprintColumn, format_printf("%.0f", f)},
                   {latency::kStrideColumn, std::to_string(kLine)}},
                  y, "cycles", 2 * n.jitter);
}

// The latency family's chase curves (ld_global, and ld_cg where the run has it); returns the L2
// size the sweep was made for.
double latency_rows(const Gpu& g, const Noise& n, Draws& d, Run& run) {
  // The sweep the family makes (its free memory taken as ample).
  const double l2_seen = g.l2_bytes_meta > 0 ? g.l2_bytes_meta : g.levels.back().size.value;
  const auto range = latency::global_sweep(l2_seen, 64.0 * 1024 * MiB, kLine);
  const auto coarse = latency::coarse_footprints(1024, range.max_bytes, kLine, kFineRatio, range.tail_bytes);
  for (const std::string probe : {latency::kLdGlobalProbe, latency::kLdCgProbe}) {
    const bool skip_l1 = probe == latency::kLdCgProbe;
    if (skip_l1 && !g.cg_probe) continue;
    auto measure = [&](double f) { return noisy_chase(g, n, d, f, skip_l1); };
    for (const auto& q :
         refined_curve(coarse, std::max(range.max_bytes, range.tail_bytes), measure))
      run.latency.push_back(chase_row(probe, q.x, q.y, n));
  }
  return l2_seen;
}

// Bandwidth: ld.global.cg reads from 0.005x to 32x the reported L2 (the whole L2 where none
// is reported), a few widths and ILPs each; the rate mixes each level's bandwidth by its hit
// fraction (DRAM and every cache between as one level past the L2). Below one round of the
// grid's reads the memory system merges requests and the rate is inflated.
void bandwidth_rows(const Gpu& g, const Noise& n, double l2_seen, Draws& d, Run& run) {
  const double l2 = g.l2_bytes_meta > 0 ? g.l2_bytes_meta : l2_seen;
  // one round of the grid's reads: about a third of the L2 (the H100: 17 MiB of 50)
  const double round = 0.34 * l2;
  run.bandwidth.push_back(make_row(std::string(bandwidth::kFamily.name),
                                   dram_read_order::kTheoreticalProbe, {},
                                   g.dram_theoretical_gbs.value, "GB/s", 0));
  const Level* l2_level = nullptr;
  for (const auto& l : g.levels)
    if (l.name == "l2") l2_level = &l;
  for (double frac = 0.005; frac <= 32.5; frac *= 1.26) {
    const double f = frac * l2;
    const double h = l2_level ? hit(f, l2_level->size.value, l2_level->sharpness) : 0;
    const double inv = h / g.l2_read_gbs.value + (1 - h) / g.dram_read_gbs.value;
    for (const auto& [width, ilp, eff] : std::vector<std::tuple<int, int, double>>{
             {16, 4, 1.0}, {8, 4, 0.97}, {4, 4, 0.8}}) {
      double bw = eff / inv * (1 + n.jitter * d.normal());
      if (f < round) bw *= 1.1 + 1.2 * d.uniform();
      Params p = {{bandwidth::kWidthColumn, std::to_string(width)},
                  {bandwidth::kIlpColumn, std::to_string(ilp)},
                  {bandwidth::kOpColumn, "ld.global.cg"},
                  {memory_chase::kFootprintColumn, format_printf("%.0f", f)},
                  {bandwidth::kL2FractionColumn, format_printf("%.6g", frac)}};
      if (g.round_bytes) p.push_back({bandwidth::kRoundColumn, format_printf("%.0f", round)});
      run.bandwidth.push_back(make_row(std::string(bandwidth::kFamily.name), bandwidth::kReadProbe,
                                       p, bw, "GB/s", n.jitter));
    }
  }
}

}  // namespace

Run generate(const Gpu& g, unsigned seed) {
  const Noise n = noise_for(g, seed);
  Draws d{std::mt19937_64(0xabcdefULL + seed * 104729ULL + std::hash<std::string>{}(g.key))};
  Run run;
  run.meta = metadata(g, std::string(latency::kFamily.name));
  const double l2_seen = latency_rows(g, n, d, run);
  bandwidth_rows(g, n, l2_seen, d, run);
  // the banks' own generator, so that the rows above stay as they were
  std::mt19937_64 bank_rng(0xba4cULL + seed * 15485863ULL + std::hash<std::string>{}(g.key));
  shared_bank_rows(g, n, bank_rng, run);
  return run;
}

Run generate_on_grid(const Gpu& g, unsigned seed, const Grid& grid) {
  Noise n = noise_for(g, seed);
  n.jitter *= grid.noise;
  n.outlier_rate *= grid.noise;
  for (double& w : n.wobble) w *= grid.noise;
  Draws d{std::mt19937_64(0x9e1dULL + seed * 104729ULL + std::hash<std::string>{}(g.key))};
  Run run;
  run.meta = metadata(g, std::string(latency::kFamily.name));
  auto in_gap = [&](double f) {
    return std::any_of(
        grid.gaps.begin(), grid.gaps.end(),
        [&](const std::pair<double, double>& gap) { return f > gap.first && f < gap.second; });
  };
  for (const std::string probe : {latency::kLdGlobalProbe, latency::kLdCgProbe}) {
    const bool skip_l1 = probe == latency::kLdCgProbe;
    if (skip_l1 && !(grid.cg && g.cg_probe)) continue;
    for (double f = grid.min_bytes; f <= grid.max_bytes * (1 + 1e-9); f *= grid.ratio) {
      const double at = double(latency::round_to_lines(f, kLine));
      if (!in_gap(at))
        run.latency.push_back(chase_row(probe, at, noisy_chase(g, n, d, at, skip_l1), n));
    }
  }
  return run;
}

std::vector<Truth> truths(const Gpu& g) {
  std::vector<Truth> t;
  auto lat = [&](const std::string& name, const Figure& f) {
    t.push_back({name, f.value, "cycles", 0.03, false, f.source});
  };
  auto size = [&](const std::string& name, double v, const std::string& src) {
    t.push_back({name, v, "bytes", 0.10, true, src});
  };
  for (const auto& l : g.levels) {
    if (l.split()) {
      lat(param::l2_near_hit_latency, l.latency);
      size(param::l2_segment_size, l.size.value / 2, l.size.source + " (half)");
      lat(param::l2_far_hit_latency, l.far_latency);
      size(param::l2_size, l.size.value, l.size.source);
      continue;
    }
    lat(l.name + "_hit_latency", l.latency);
    size(l.name + "_size", l.size.value, l.size.source);
  }
  // DRAM as the chase sees it where the last cache's hits are gone (walks passed by then
  // included).
  const Level& last = g.levels.back();
  const double f = last.size.value * std::pow(49.0, 1.0 / last.sharpness) * 1.5;
  t.push_back({param::dram_latency, chase_latency(g, f, true), "cycles", 0.03, false,
               g.dram_latency.source});
  t.push_back(
      {param::cache_levels, double(g.levels.size()), "levels", 0.0, false, "declared hierarchy"});
  t.push_back({param::dram_read_bandwidth, g.dram_read_gbs.value, "GB/s", 0.05, false,
               g.dram_read_gbs.source});
  t.push_back(
      {param::l2_read_bandwidth, g.l2_read_gbs.value, "GB/s", 0.05, false, g.l2_read_gbs.source});
  t.push_back(
      {param::shared_bank_count, g.shared_banks.value, "banks", 0.0, false, g.shared_banks.source});
  t.push_back({param::shared_bank_width, g.shared_bank_width.value, "bytes", 0.0, false,
               g.shared_bank_width.source});
  return t;
}

std::vector<std::string> ladder_names() {
  return {param::l1_hit_latency,
          param::l1_size,
          param::mid_cache_hit_latency,
          param::mid_cache_size,
          param::l2_hit_latency,
          param::l2_near_hit_latency,
          param::l2_segment_size,
          param::l2_far_hit_latency,
          param::l2_size,
          param::llc_hit_latency,
          param::llc_size,
          param::dram_latency,
          param::cache_levels,
          param::dram_read_bandwidth,
          param::l2_read_bandwidth,
          param::shared_bank_count,
          param::shared_bank_width};
}

}  // namespace model
}  // namespace gpuprobe
