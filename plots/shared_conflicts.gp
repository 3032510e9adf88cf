# family: shared_banks
# title: Shared memory conflict ladder and multicast
# read: Cost against N distinct words per bank (left) and m lanes reading one word (right).
load 'plots/style.gp'
# Each curve picks its rows out of the file; the rows it skips must not break its line.
set datafile missing NaN

# Rows of each probe across the files: a panel whose probe has none stays empty (a run with
# that probe filtered out or invalid) instead of failing the figure.
do for [p in "conflict_latency conflict_throughput"] {
  n = 0
  do for [i=1:words(files)] {
    stats word(files, i) using (is_probe(p) ? 1 : 0) nooutput
    n = n + STATS_sum
  }
  eval sprintf("have_%s = %d", p, n)
}

ladder(p, u) = is_probe(p) && is_unit(u) && column("lanes_per_word") == 1
one_bank(p, u) = is_probe(p) && is_unit(u) && column("ways") > 1 && column("lanes_per_word") > 1
multicast(p, u) = is_probe(p) && is_unit(u) && column("ways") == 1

array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["Kepler", "Maxwell", "Volta"]
array arch_latency[3]
array arch_method[3]
do for [g=1:3] {
  call 'plots/ref_value.gp' (arch_gpu[g]) "shared_latency" "pointer_chase"
  arch_latency[g] = ref_value
  arch_method[g] = ref_other_method ? " (" . ref_method_text . ")" : ""
}
# Documented conflict-free load latency, marked at N = 1 (and across the multicast panel).
lat_marks = ""
lat_lines = ""
do for [g=1:3] {
  if (arch_latency[g] == arch_latency[g]) {
    lat_marks = lat_marks . sprintf(", '+' using (1):(%g) every ::0::0 with points ls %d pt %d ps 1.6 title '%s doc. %g%s'", arch_latency[g], 10 + g, 3 + g, arch_name[g], arch_latency[g], arch_method[g])
    lat_lines = lat_lines . sprintf(", %g with lines ls %d notitle", arch_latency[g], 10 + g)
  }
}

# What the run inferred, written in the panel it is read from: the cost of each extra way (the
# ladder's slope, top) and the conflict-free bandwidth (bottom, at N = 1), one row per GPU.
inferred_lat = ""
inferred_tput = ""
do for [i=1:words(files)] {
  call 'plots/param_value.gp' param_file(i) "shared_conflict_penalty_per_way"
  if (param_value == param_value) {
    inferred_lat = inferred_lat . sprintf("set label %d '%s%.2f cycles per extra way' at graph 0.97, graph %g right front tc rgb '%s' font markfont; ", \
        300 + i, words(files) > 1 ? word(labels, i) . ": " : "", param_value, 0.06 + 0.1 * (words(files) - i), gpu_color[i])
  }
  call 'plots/param_value.gp' param_file(i) "shared_bandwidth_per_sm"
  if (param_value == param_value) {
    inferred_tput = inferred_tput . sprintf("set label %d '%s%.0f B/clk/SM without conflicts' at graph 0.97, graph %g right front tc rgb '%s' font markfont; ", \
        310 + i, words(files) > 1 ? word(labels, i) . ": " : "", param_value, 0.06 + 0.1 * (words(files) - i), gpu_color[i])
  }
}

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 7))
  set multiplot
  set key top left box opaque font keyfont
  # Left: the ladder against N; right: multicast against m. Fixed margins align the panels.
  set lmargin at screen 0.12
  set rmargin at screen 0.62
  set tmargin at screen 0.97
  set bmargin at screen 0.58
  set xrange [0:33]
  set xtics 4
  set format x ""
  set xlabel ""
  set ylabel "cycles per load\none warp"
  set autoscale y
  markfont = mark_font(ext)
  unset label
  eval inferred_lat
  if (have_conflict_latency) {
    plot for [i=1:words(files)] word(files, i) \
           using (ladder("conflict_latency", "cycles") ? column("ways") : NaN):"value" \
           with linespoints ls i title sprintf("%s, 1 lane per word", word(labels, i)), \
         for [i=1:words(files)] word(files, i) \
           using (one_bank("conflict_latency", "cycles") ? column("ways") : NaN):"value" \
           with points ls i lc rgb series_color(i, 2) pt 6 ps 1.5 title sprintf("%s, 32/N lanes per word", word(labels, i)) @lat_marks
  }
  set tmargin at screen 0.54
  set bmargin at screen 0.14
  set format x "%g"
  set xlabel "N distinct words in a bank (N-way conflict)"
  set ylabel "cycles per request\nall warps"
  unset label
  eval inferred_tput
  # The programming guide's rule for 4-byte banks: an N-way conflict is served in N passes,
  # one pass per clock at 32 banks x 4 B.
  if (have_conflict_throughput) {
    plot for [i=1:words(files)] word(files, i) \
           using (ladder("conflict_throughput", "cycles/request") ? column("ways") : NaN):"value" \
           with linespoints ls i title sprintf("%s, 1 lane per word", word(labels, i)), \
         for [i=1:words(files)] word(files, i) \
           using (one_bank("conflict_throughput", "cycles/request") ? column("ways") : NaN):"value" \
           with points ls i lc rgb series_color(i, 2) pt 6 ps 1.5 title sprintf("%s, 32/N lanes per word", word(labels, i)), \
         x with lines ls 13 title "doc. rule: N-way = N passes"
  }

  unset label
  set lmargin at screen 0.72
  set rmargin at screen 0.98
  set tmargin at screen 0.97
  set bmargin at screen 0.58
  set logscale x 2
  set xrange [0.8:40]
  set xtics (1, 2, 4, 8, 16, 32)
  set format x ""
  set xlabel ""
  set ylabel ""
  unset key
  if (have_conflict_latency) {
    plot for [i=1:words(files)] word(files, i) \
           using (multicast("conflict_latency", "cycles") ? column("lanes_per_word") : NaN):"value" \
           with linespoints ls i notitle @lat_lines
  }
  set tmargin at screen 0.54
  set bmargin at screen 0.14
  set format x "%g"
  set xlabel "m lanes per word"
  set label "multicast: one word per bank,\nm lanes per word;\n32 = broadcast" at graph 0.5, 0.35 center font keyfont
  set yrange [0:*]
  if (have_conflict_throughput) {
    plot for [i=1:words(files)] word(files, i) \
           using (multicast("conflict_throughput", "cycles/request") ? column("lanes_per_word") : NaN):"value" \
           with linespoints ls i notitle
  }
  unset logscale x
  set autoscale
  unset label
  unset multiplot
}
