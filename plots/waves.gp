# family: concurrency
# title: The tail effect: run time against grid size in waves
# read: A staircase: each partial wave costs a whole block time.
# Figure only: no parameter is inferred from these rows; marked is the block time each curve is divided by.
load 'plots/style.gp'
set datafile missing NaN

waves(u) = is_probe("waves") && is_unit(u) ? column("waves") : NaN
set xlabel "grid size (waves of resident blocks)"
set ylabel "run time (block times)"
set xrange [0:*]
set autoscale xfixmax
set yrange [0:*]
set xtics 1
set samples 1000
set key top left noenhanced

# One block time per GPU (the unit of the y axis), in microseconds.
unit_cmd = ""
do for [i=1:words(files)] {
  stats word(files, i) using (is_probe("waves") && is_unit("us") ? column("block_us") : NaN) nooutput
  if (STATS_records > 0) {
    unit_cmd = unit_cmd . sprintf("set label %d '%s%s block time: %.3g us' at graph 0.98, graph %g right front tc rgb '%s' font markfont; ", \
        200 + i, words(files) > 1 ? word(labels, i) : "", words(files) > 1 ? "" : "1", STATS_median, 0.05 + 0.07 * (words(files) - i), gpu_color[i])
  }
}

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 6))
  set key font keyfont
  markfont = mark_font(ext)
  unset label
  eval unit_cmd
  plot for [i=1:words(files)] word(files, i) using (waves("us")):(column("value") / column("block_us")) \
         smooth unique with linespoints ls i title word(labels, i), \
       ceil(x) with lines lc rgb "#999999" dt 3 title "ceil(waves)"
}
