# family: loaded_latency
# title: DRAM latency under load
# read: Latency against the bandwidth other SMs draw; the first point is the idle latency.
# Figure only: no parameter is inferred from these rows; marked is the idle latency each curve starts from.
load 'plots/style.gp'
set datafile missing NaN

chase(u) = is_probe("chase") && is_unit(u) ? column("load_gbs") : NaN

array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["Kepler", "Maxwell", "Volta"]
marks = ""
do for [g=1:3] {
  call 'plots/ref_value.gp' (arch_gpu[g]) "dram_latency" "pointer_chase"
  if (ref_value == ref_value) {
    marks = marks . sprintf(", '+' using (0):(%g) every ::0::0 with points ls %d pt 8 ps 1.6 title '%s doc. unloaded%s'", \
            ref_value, 10 + g, arch_name[g], ref_other_method ? " (" . ref_method_text . ")" : "")
  }
}

# ns per cycle of the first GPU, from its chase rows (each is written in both units).
stats word(files, 1) using (is_probe("chase") ? 1 : 0):(is_probe("chase") && is_unit("ns") ? column("value") : 0) nooutput
ns_sum = STATS_sum_y
stats word(files, 1) using (is_probe("chase") ? 1 : 0):(is_probe("chase") && is_unit("cycles") ? column("value") : 0) nooutput
ns_per_cycle = STATS_sum_y > 0 ? ns_sum / STATS_sum_y : 1

set xlabel "bandwidth achieved by the streaming SMs (GB/s)"
set ylabel "DRAM latency (cycles)"
set y2label sprintf("DRAM latency (ns, %s)", word(labels, 1))
set ytics nomirror
set y2tics 250 format "%.0f"
set link y2 via y * ns_per_cycle inverse y / ns_per_cycle
set xrange [-100:*]
set yrange [0:*]
set key top left noenhanced

# The first chase row of each file: no load on the other SMs.
idle_cmd = ""
do for [i=1:words(files)] {
  stats word(files, i) using (chase("cycles")):"value" every ::0 nooutput
  if (STATS_records > 0) {
    idle_cmd = idle_cmd . sprintf("set label %d 'idle: %.0f cycles' at %g, %g left offset 1, %g front tc rgb '%s' font markfont; ", \
        200 + i, STATS_min_y, STATS_pos_min_y, STATS_min_y, -0.8 - 1.0 * (i - 1), gpu_color[i])
  }
}

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 6))
  set key font keyfont
  markfont = mark_font(ext)
  unset label
  eval idle_cmd
  # In the order written, from idle to the heaviest offered load: at saturation the achieved
  # bandwidth stays put while the latency climbs, so sorting by it would zigzag.
  plot for [i=1:words(files)] word(files, i) using (chase("cycles")):"value" \
         with linespoints ls i title word(labels, i) @marks
}
