#!/usr/bin/env python3
"""Curate the documented figures for gpuprobe (Python 3 standard library only).

Reads the raw collection (default ../shared/reference/documented_figures.csv, relative to
the repository root) and writes results/reference/documented_figures.csv with the same
columns plus `method` (after `unit`), where every documented quantity that corresponds to a canonical parameter of
docs/parameters.md (docs/design.md, section 3) carries the canonical name and the unit the suite reports (sizes in
bytes, latencies in cycles, bandwidth in GB/s or B/clk/SM, rates in results/clk/SM).
Every other row is copied unchanged. No row is dropped; a few are duplicated where one
documented figure covers several canonical parameters (see MAPPING). Each decision is
written into the row's method_note, so the curated file explains itself. Every row gets a
method label from the controlled vocabulary of docs/parameters.md, decided from its source and
note by METHOD_RULES: a ratio to a measured value is shown only where the labels match.

Usage: scripts/curate_reference.py [RAW_CSV] [OUT_CSV]
"""
import csv
import io
import os
import re
import sys

COLUMNS = ["arch", "gpu", "cc", "quantity", "value", "unit", "method_note", "source"]
OUT_COLUMNS = COLUMNS[:6] + ["method"] + COLUMNS[6:]

# How each documented figure was obtained, as a label of docs/parameters.md's vocabulary.
# Rules are tried in order on the raw row; the first whose source, quantity and note patterns
# all match (case-insensitive regular expressions, searched) gives the label.
JIA = r"^Jia et al\. 2018"
METHOD_RULES = [
    # (source, quantity, method_note, label)
    (r"^SECONDARY \(companion data", "", "", "unknown"),  # Arafa et al.: method not read
    (JIA, "", r"cuBLAS", "library_benchmark"),
    (JIA, "", r"stall count in SASS control word", "stall_count"),
    (JIA, "", r"control-word analysis", "sass_inspection"),
    (JIA, "", r"FFMA", "instruction_sequence"),
    (JIA, r"^register_bank", "", "instruction_sequence"),
    (JIA, r"^atomic_", "", "dependent_pair"),  # Table 4.2: latency(A,B) - latency(B)
    (JIA, r"^dram_bw_peak$", "", "vendor_spec"),  # taken from NVIDIA's whitepapers
    (JIA, r"^dram_bw_measured", "", "streaming"),  # copy kernel over two global arrays
    (JIA, r"_theoretical$", "", "theoretical_bound"),
    (JIA, "", r"theoretical|authors' bound", "theoretical_bound"),
    (JIA, r"^shared_bank_conflict", "", "stride_sweep"),
    (JIA, r"_bw|_bandwidth", "", "throughput_loop"),  # clock() bracket around all-thread loads
    (JIA, r"^tlb_", "", "tlb_chase"),
    (JIA, r"granularity|line_size", "", "fine_grained_chase"),
    (JIA, r"_sets$|associativity", "", "stride_sweep"),
    # Mei & Chu's chase, which Jia et al. use throughout: j = A[j], index arithmetic in the loop.
    (JIA, r"latency|_size|_detected_|physically_indexed|replacement|populated", "", "index_chase"),
    (JIA, r"^(clock_mhz|dram_clock_mhz|dram_type|sm_count)$", "", "vendor_spec"),
    (r"", "", r"^DERIVED|\(x32 = .*derived\)", "theoretical_bound"),
    # NVIDIA's documents, talks and engineers' forum answers, and teaching material restating them.
    (r"^(NVIDIA|CUDA C\+\+|Volta Tuning|Micikevicius|Mirko Myllykoski|Umea|SECONDARY: Chinese)",
     "", "", "vendor_spec"),
]


# Canonical names of the method variants (docs/parameters.md): a figure measured by the
# variant's method is also listed under the variant's name, so that its measured twin is set
# beside it with a ratio while the headline name shows it as another method.
VARIANTS = {
    ("shared_latency", "index_chase"): "shared_latency_index_chase",
    ("l1_hit_latency", "index_chase"): "l1_hit_latency_index_chase",
    ("l2_near_hit_latency", "index_chase"): "l2_hit_latency_index_chase",
    ("dram_latency", "index_chase"): "dram_latency_index_chase",
    # Jia et al.'s atomic pair has no twin: the suite's result_pair follows their description,
    # but their V100 figures (6 and 36 cycles) are shorter than any L2 round trip, so their
    # timing differs in a way the paper does not describe.
}


def with_variants(rows):
    out = []
    for r in rows:
        out.append(r)
        variant = VARIANTS.get((r["quantity"], r["method"]))
        if variant:
            out.append(dict(r, quantity=variant,
                            method_note=f"the {r['method']} twin of {r['quantity']}; " + r["method_note"]))
    return out


def method_of(row):
    for source, quantity, note, label in METHOD_RULES:
        if (re.search(source, row["source"], re.I) and re.search(quantity, row["quantity"], re.I)
                and re.search(note, row["method_note"], re.I)):
            return label
    return "unknown"

# original quantity -> (canonical names, note added to method_note or "")
MAPPING = {
    "l2_hit_latency": (["l2_near_hit_latency"],
                       "documented as the single L2 hit latency (no L2 partitions seen): "
                       "compared with the near L2 plateau"),
    "constant_cache_latency": (["constant_hit_latency"], ""),
    "constant_l1_line_size": (["constant_line_size"], "line of the L1 constant cache"),
    # Jia et al. call the 32 B load granularity 'line size' (their note says so); the suite
    # calls that the sector and keeps 'line' for the 128 B allocation (update) granularity.
    "l1_load_granularity": (["l1_sector_size"], "documented as L1 load granularity"),
    "l1_update_granularity": (["l1_line_size"], "documented as L1 update (allocation) granularity"),
    # Kepler's 32 B 'segment' is a transaction granularity, not the L2 partition that the
    # canonical l2_segment_size names: keeping the name would compare unlike things.
    "l2_segment_size": (["l2_sector_size"],
                        "documented as 'segment' (32 B granularity of non-caching loads); "
                        "not the L2 partition size the suite calls l2_segment_size"),
    "tlb_l1_page_entry": (["tlb_page_entry_size"], "documented as L1 TLB page-entry size"),
    "shared_bw_per_sm": (["shared_bandwidth_per_sm"], ""),
    "l1_bw_per_sm_measured": (["l1_bandwidth_per_sm"], ""),
    "l2_bw": (["l2_read_bandwidth"], ""),
    "dram_bw_measured": (["dram_copy_bandwidth"],
                         "unit printed as GiB/s but read as GB/s: the paper's theoretical "
                         "figures are NVIDIA's GB/s peaks and measured/theoretical is its "
                         "printed fraction; bytes counted as in the paper (not stated whether "
                         "read plus write)"),
    "bytes_in_flight_needed_per_sm": (["dram_bytes_in_flight_90pct"],
                                      "documented as needed to saturate DRAM; the suite uses "
                                      "90 % of peak"),
    "fp32_throughput_per_sm": (["fp32_fma_throughput_per_sm", "fp32_add_throughput_per_sm"],
                               "one documented figure for fp32 add/mul/fma"),
    "fp64_throughput_per_sm": (["fp64_fma_throughput_per_sm"], ""),
    "fp16_throughput_per_sm": (["fp16x2_fma_throughput_per_sm"],
                               "counts each half of an fp16x2 result as one result"),
    "int_add_throughput_per_sm": (["int32_add_throughput_per_sm"], ""),
    "int32_add_throughput_per_sm": (["int32_add_throughput_per_sm"], ""),
    "int_mul_throughput_per_sm": (["int32_mad_throughput_per_sm"],
                                  "documented for 32-bit integer multiply and multiply-add"),
    "bitwise_throughput_per_sm": (["int32_logic_throughput_per_sm"], ""),
    "sfu_throughput_per_sm": (["sfu_sin_throughput_per_sm", "sfu_rsqrt_throughput_per_sm",
                               "sfu_ex2_throughput_per_sm"],
                              "one documented figure for rcp/rsqrt/log2/exp2/sin/cos"),
    "shfl_throughput_per_sm": (["shuffle_throughput_per_sm"], ""),
    "warp_shuffle_throughput_per_sm": (["shuffle_throughput_per_sm"], ""),
    "type_conversion_throughput_per_sm": (["conversion_throughput_per_sm"], ""),
    "int_add_latency": (["int32_add_latency"], ""),
    "int_mad_latency": (["int32_mad_latency"], ""),
    # Renamed since: the raw collection keeps the old name.
    "shared_banks": (["shared_bank_count"], ""),
}

# Jia et al. Table 3.1 prints the L1 load granularity as 'line size'.
JIA_LINE_SIZE_NOTE = "L1 'line size' as reported"

# Canonical names already used as-is by the raw file.
CANONICAL_AS_IS = {
    "l1_hit_latency", "l1_size", "l2_size", "dram_latency", "shared_latency", "l1_line_size",
    "l1_sector_size", "l2_line_size", "l2_sector_size", "l1_sets", "tlb_l1_coverage",
    "tlb_l2_coverage", "shared_bank_width", "fp32_fma_latency",
    "fp64_fma_latency", "fp16x2_fma_latency", "max_concurrent_kernels",
}

# Target unit per unit family, and the factor from each documented unit to it.
# Cache and TLB sizes use binary prefixes whatever the document prints: vendors print
# "6144 KB" and "50 MB" for 6 MiB and 50 MiB (the H100's API reports 52428800 B).
TO_BYTES = {"B": 1, "KB": 1024, "KiB": 1024, "MB": 1024 ** 2, "MiB": 1024 ** 2,
            "GB": 1024 ** 3, "GiB": 1024 ** 3}
UNIT_RULES = [
    # (canonical-name predicate, documented unit -> (target unit, factor))
    (lambda q: q.endswith("_latency"), {"cycles": ("cycles", 1)}),
    (lambda q: q.endswith("_throughput_per_sm"),
     {"ops/clk/SM": ("results/clk/SM", 1), "results/clk/SM": ("results/clk/SM", 1)}),
    (lambda q: q.endswith("_bandwidth_per_sm"),
     {"B/clk": ("B/clk/SM", 1), "B/clk/SM": ("B/clk/SM", 1)}),
    (lambda q: q.endswith("_bandwidth"), {"GB/s": ("GB/s", 1), "GiB/s": ("GB/s", 1)}),
    (lambda q: q in ("shared_bank_count",), {"banks": ("banks", 1)}),
    (lambda q: q in ("l1_sets",), {"sets": ("sets", 1)}),
    (lambda q: q in ("max_concurrent_kernels",), {"kernels": ("kernels", 1)}),
    (lambda q: True, {u: ("bytes", f) for u, f in TO_BYTES.items()}),
]

NUMBER = r"[0-9]+(?:\.[0-9]+)?"


def scale_value(text, factor):
    """Scales a number or a range 'a-b'; other text (e.g. '32 or 64') is kept."""
    def fmt(x):
        return str(int(x)) if x == int(x) else repr(x)
    m = re.fullmatch(rf"({NUMBER})-({NUMBER})", text)
    if m:
        return f"{fmt(float(m.group(1)) * factor)}-{fmt(float(m.group(2)) * factor)}"
    if re.fullmatch(NUMBER, text):
        return fmt(float(text) * factor)
    if factor != 1:
        raise ValueError(f"cannot scale value '{text}'")
    return text


def curate_row(row, lineno):
    """Returns the curated rows (usually one) for one raw row."""
    q = row["quantity"]
    if q == "l1_line_size" and row["method_note"].startswith(JIA_LINE_SIZE_NOTE):
        names, note = ["l1_sector_size"], ("Jia et al.'s 'line size' is the load granularity "
                                           "(their text): the suite's sector")
    elif q in MAPPING:
        names, note = MAPPING[q]
    elif q in CANONICAL_AS_IS:
        names, note = [q], ""
    else:
        return [dict(row, method=method_of(row))]
    out = []
    for name in names:
        r = dict(row)
        r["method"] = method_of(row)
        r["quantity"] = name
        notes = []
        if name != q:
            notes.append(f"curated from '{q}'")
        if note:
            notes.append(note)
        value = r["value"]
        # "64 (8 for GeForce)": the number is the figure; the qualifier stays in the note.
        m = re.fullmatch(rf"({NUMBER}) \((.+)\)", value)
        if m:
            value = m.group(1)
        for applies, units in UNIT_RULES:
            if applies(name):
                if r["unit"] not in units:
                    raise ValueError(f"line {lineno}: unit '{r['unit']}' of {q} has no rule "
                                     f"for {name}")
                unit, factor = units[r["unit"]]
                scaled = scale_value(value, factor)
                if unit != r["unit"] or scaled != r["value"]:
                    notes.append(f"printed as {r['value']} {r['unit']}")
                r["value"] = scaled
                r["unit"] = unit
                break
        if notes:
            r["method_note"] = "; ".join(notes) + ("; " + r["method_note"] if r["method_note"] else "")
        out.append(r)
    return out


# Vendor tensor peaks are chip-wide TFLOPS at the tensor boost clock; the suite measures
# multiply-adds per clock per SM. Where a part documents the peak, its SM count and that clock,
# the per-SM figure is derived (and says so): TFLOPS / (2 x SMs x MHz).
TENSOR_PEAKS = {
    "fp16_tensor_dense_peak": ["tensor_wgmma_f16_throughput_per_sm", "tensor_wgmma_bf16_throughput_per_sm"],
    "tf32_tensor_dense_peak": ["tensor_wgmma_tf32_throughput_per_sm"],
    "fp8_tensor_dense_peak": ["tensor_wgmma_fp8_e4m3_throughput_per_sm", "tensor_wgmma_int8_throughput_per_sm"],
}


def derived_tensor_rows(raw_rows):
    by_gpu = {}
    for r in raw_rows:
        by_gpu.setdefault(r["gpu"], {})[r["quantity"]] = r
    out = []
    for gpu, q in by_gpu.items():
        sms, clock = q.get("sm_count"), q.get("clock_mhz_tensor_boost")
        if not sms or not clock:
            continue
        for peak, names in TENSOR_PEAKS.items():
            p = q.get(peak)
            if not p or p["unit"] != "TFLOPS":
                continue
            per_sm = float(p["value"]) * 1e12 / (2 * float(sms["value"]) * float(clock["value"]) * 1e6)
            sources = "; ".join(dict.fromkeys(
                part.strip() for r in (p, sms, clock) for part in r["source"].split("; ")))
            for name in names:
                out.append({"arch": p["arch"], "gpu": gpu, "cc": p["cc"], "quantity": name,
                            "value": f"{per_sm:.0f}", "unit": "results/clk/SM",
                            "method": "vendor_spec",
                            "method_note": f"derived: {p['value']} TFLOPS {peak} / (2 x "
                                           f"{sms['value']} SMs x {clock['value']} MHz tensor boost)"
                                           + (f" ({p['method_note']})" if "int8" in name and p["method_note"] else ""),
                            "source": sources})
    return out


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    raw = argv[1] if len(argv) > 1 else os.path.join(root, "..", "shared", "reference",
                                                     "documented_figures.csv")
    out_path = argv[2] if len(argv) > 2 else os.path.join(root, "results", "reference",
                                                          "documented_figures.csv")
    with open(raw, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != COLUMNS:
            sys.exit(f"{raw}: columns {reader.fieldnames}, expected {COLUMNS}")
        rows = []
        raw_rows = []
        for row in reader:
            raw_rows.append(dict(row))
            lineno = reader.line_num
            if not row["source"].strip():
                sys.exit(f"{raw}:{lineno}: row without a source")
            for r in with_variants(curate_row(row, lineno)):
                for k in OUT_COLUMNS[:7]:
                    if "," in r[k] or '"' in r[k]:
                        sys.exit(f"{raw}:{lineno}: field {k} '{r[k]}' holds a comma or quote "
                                 "(gnuplot reads the first seven fields unquoted)")
                rows.append(r)
    rows.extend(derived_tensor_rows(raw_rows))
    # Rows in final form (canonical names and units) that the raw collection lacks.
    with open(os.path.join(root, "scripts", "reference_additions.csv"), newline="", encoding="utf-8") as f:
        rows.extend({k: r.get(k, "") for k in OUT_COLUMNS} for r in csv.DictReader(f))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=OUT_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(buf.getvalue())
    os.replace(tmp, out_path)
    print(f"{out_path}: {len(rows)} rows from {raw}")


if __name__ == "__main__":
    main(sys.argv)
