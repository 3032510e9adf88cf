# family: bandwidth
# title: Read bandwidth against footprint: L1, L2 and DRAM
# read: Each plateau is a level's bandwidth; the drops sit at L1, L2/2 (one partition) and L2 capacity.
load 'plots/style.gp'
set datafile missing NaN

MiB = 1048576.0
# The footprint sweep: 16-byte ld.global.cg at ILP 4 (the DRAM point included).
sweep(w) = is_probe("read") && is_unit("GB/s") && column("width_bytes") == w && \
           column("ilp") == 4 && strcol("op") eq "ld.global.cg" ? column("footprint_bytes") / MiB : NaN
# The bulk-copy engine's DRAM reads (every chunk size) at their footprint.
bulk(w) = is_probe("read_bulk") && is_unit("GB/s") ? column("footprint_bytes") / MiB : NaN
l1(w) = is_probe("l1_read") && is_unit("GB/s") && column("width_bytes") == w && \
        strcol("op") eq "ld.global" ? column("footprint_bytes") / MiB : NaN

# Key entries: 16 B, 8 B, 4 B and L1 per GPU, and one for each curve or mark added below.
key_entries = 4 * words(files)
# Bulk-copy reads where a run has them (older runs do not).
bulk_cmd = ""
do for [i=1:words(files)] {
  stats word(files, i) using (bulk(0) == bulk(0) ? 1 : 0):(0) nooutput
  if (STATS_sum_x > 0) {
    key_entries = key_entries + 1
    bulk_cmd = bulk_cmd . sprintf(", word(files, %d) using (bulk(0)):'value' with points ls %d pt 3 ps 1.4 title '%s cp.async.bulk'", i, i, word(labels, i))
  }
}

# Per GPU: the theoretical DRAM peak, and the L2 size (footprint / l2_fraction) of the first.
peaks = ""
do for [i=1:words(files)] {
  # Counting the matching rows as x keeps stats from failing where there are none.
  stats word(files, i) using (is_probe("dram_theoretical") ? 1 : 0):(is_probe("dram_theoretical") ? column("value") : 0) nooutput
  if (STATS_sum_x > 0) {
    key_entries = key_entries + 1
    peaks = peaks . sprintf(", %g with lines ls %d dt 2 lw 1.5 title '%s theoretical DRAM'", STATS_sum_y / STATS_sum_x, i, word(labels, i))
  }
}
stats word(files, 1) using (is_probe("read") ? column("footprint_bytes") / column("l2_fraction") / MiB : NaN) nooutput
l2_mib = STATS_median
stats word(files, 1) using (sweep(16)):(column("value")) nooutput
x_max = STATS_max_x
x_min = STATS_min_x

# Documented figures of the representative older parts: L2 read at a footprint inside L2,
# DRAM copy at the largest footprint; one measured another way names its method.
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["Kepler", "Maxwell", "Volta"]
marks = ""
do for [g=1:3] {
  call 'plots/ref_value.gp' (arch_gpu[g]) "l2_read_bandwidth" "streaming"
  if (ref_value == ref_value) {
    key_entries = key_entries + 1
    marks = marks . sprintf(", '+' using (%g):(%g) every ::0::0 with points ls %d pt 4 ps 1.6 title '%s doc. L2 read%s'", \
            x_min * 2, ref_value, 10 + g, arch_name[g], ref_other_method ? " (" . ref_method_text . ")" : "")
  }
  call 'plots/ref_value.gp' (arch_gpu[g]) "dram_copy_bandwidth" "streaming"
  if (ref_value == ref_value) {
    key_entries = key_entries + 1
    marks = marks . sprintf(", '+' using (%g):(%g) every ::0::0 with points ls %d pt 8 ps 1.6 title '%s doc. DRAM copy%s'", \
            x_max, ref_value, 10 + g, arch_name[g], ref_other_method ? " (" . ref_method_text . ")" : "")
  }
}

# What the run inferred: the L2 and DRAM read bandwidths, written above their levels where the
# curve lies below them: L2's ending short of the L2/2 line (small footprints climb above the
# level), DRAM's ending at the largest footprint (the curve still falls to it past L2).
level_just = "right"
do for [i=1:words(files)] {
  call 'plots/mark_level.gp' (i) "l2_read_bandwidth" "L2" (l2_mib / 2 / 1.2) "%.0f GB/s"
  call 'plots/mark_level.gp' (i) "dram_read_bandwidth" "DRAM" (x_max) "%.0f GB/s"
}

set logscale x 2
set logscale y 10
set xrange [x_min / 2 : x_max * 2]
set format x "%g"
set xlabel "footprint (MiB, whole chip)"
set ylabel "read bandwidth (GB/s)"
set arrow 1 from l2_mib / 2, graph 0 to l2_mib / 2, graph 1 nohead dt 3 lc rgb "#888888"
set arrow 2 from l2_mib, graph 0 to l2_mib, graph 1 nohead dt 3 lc rgb "#888888"
set label 1 "L2/2" at l2_mib / 2, graph 0.04 right offset -0.3, 0 tc rgb "#666666"
set label 2 "L2" at l2_mib, graph 0.04 left offset 0.3, 0 tc rgb "#666666"
# The key below the plot, in two columns: the plot keeps the figure's width. The bottom margin
# (in the terminal font's lines) holds the tics, the x label and the key's rows at its font.
key_cols = 2
set key outside bottom center horizontal maxcols key_cols noenhanced samplen 2 spacing 1

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  key_pt = ext eq "png" ? 14 : (ext eq "svg" ? 9 : 6)
  term_pt = ext eq "png" ? 26 : (ext eq "svg" ? 13 : 8)
  keyfont = sprintf(",%d", key_pt)
  set key font keyfont
  set bmargin 3.5 + ceil(key_entries / real(key_cols)) * 1.15 * key_pt / term_pt + 0.8
  markfont = mark_font(ext)
  eval marks_cmd
  plot for [i=1:words(files)] word(files, i) using (sweep(16)):"value" smooth unique \
         with linespoints ls i title word(labels, i) . " 16 B", \
       for [i=1:words(files)] word(files, i) using (sweep(8)):"value" \
         with points ls i pt 6 ps 1.1 title word(labels, i) . " 8 B", \
       for [i=1:words(files)] word(files, i) using (sweep(4)):"value" \
         with points ls i pt 2 ps 1.1 title word(labels, i) . " 4 B", \
       for [i=1:words(files)] word(files, i) using (l1(16)):"value" \
         with points ls i pt 13 ps 1.8 title word(labels, i) . " L1, 16 B" \
       @bulk_cmd \
       @peaks @marks
}
