# family: dram_read_order
# title: DRAM read kernels against the theoretical peak
# read: One point per read kernel over 32x L2 (order, bytes, hint, ILP, blocks per SM, SMs); dashed: 2 x memory clock x bus width, dotted: 95 % of it.
load 'plots/style.gp'
set datafile missing NaN

is_read(x) = (is_probe("read") || is_probe("read_bulk")) && is_unit("GB/s") ? x : NaN
# "ld.global.cg" -> "cg", "cp.async.bulk" -> "bulk"
op_name(s) = s eq "cp.async.bulk" ? "bulk" : s[11:]
kernel_label(x) = sprintf("%s %s B %s x%s, %s/SM, %s SMs", strcol("order"), strcol("width_bytes"), \
                          op_name(strcol("op")), strcol("ilp"), strcol("blocks_per_sm"), strcol("sms"))

# Per GPU: the theoretical peak the run recorded, and 95 % of it.
peaks = ""
do for [i=1:words(files)] {
  stats word(files, i) using (is_probe("dram_theoretical") ? 1 : 0):(is_probe("dram_theoretical") ? column("value") : 0) nooutput
  if (STATS_sum_x > 0) {
    peak = STATS_sum_y / STATS_sum_x
    peaks = peaks . sprintf(", %g with lines ls %d dt 2 lw 1.5 title '%s theoretical', %g with lines ls %d dt 3 lw 1 title '95 %%'", \
            peak, i, word(labels, i), 0.95 * peak, i)
  }
}

# What the run inferred: the best kernel's rate and its fraction of the theoretical peak, a
# ring on the best point and the values at the top left, above the peak lines, one row per GPU.
inferred_cmd = ""
do for [i=1:words(files)] {
  call 'plots/param_value.gp' param_file(i) "dram_read_bandwidth_best"
  best = param_value
  call 'plots/param_value.gp' param_file(i) "dram_read_peak_fraction"
  if (best == best) {
    stats word(files, i) using (is_read(column(0))):"value" nooutput
    inferred_cmd = inferred_cmd . sprintf("set label %d '' at %g, %g point pt 6 ps 2.5 lc rgb '%s' front; ", \
        300 + i, STATS_pos_max_y, STATS_max_y, gpu_color[i])
    inferred_cmd = inferred_cmd . sprintf("set label %d '%sbest %.0f GB/s%s (ring)' at graph 0.01, graph %g left front tc rgb '%s' font markfont; ", \
        310 + i, words(files) > 1 ? word(labels, i) . ": " : "", best, \
        param_value == param_value ? sprintf(" = %.1f %% of theoretical", 100 * param_value) : "", 0.82 - 0.06 * (i - 1), gpu_color[i])
  }
}

# One tic per kernel of the first file, named by what sets it apart.
tics = ""
stats word(files, 1) using (is_read(1) == 1 ? (tics = tics . sprintf('"%s" %d,', kernel_label(0), column(0)), 1) : 0) nooutput
if (strlen(tics) > 0) { eval "set xtics (" . tics[1:strlen(tics) - 1] . ")" }
set xtics rotate by 90 right noenhanced
set ylabel "DRAM read (GB/s)"
set xlabel ""
set bmargin 16
set offsets 0.5, 0.5, graph 0.4, 0
set key top center horizontal

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  ticfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 8 : 5))
  set xtics font ticfont
  keyfont = sprintf(",%d", ext eq "png" ? 16 : (ext eq "svg" ? 9 : 6))
  set key font keyfont
  markfont = mark_font(ext)
  unset label
  eval inferred_cmd
  plot for [i=1:words(files)] word(files, i) \
         using (is_read(column(0))):"value":"p05":"p95" \
         with yerrorbars ls i title word(labels, i) @peaks
}
