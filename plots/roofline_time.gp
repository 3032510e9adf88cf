# The time roofline of `gpuprobe roofline` (app/roofline.cpp writes its data): attainable
# GFLOP/s against flops per DRAM byte, one line per memory level and pipe with its interval
# shaded, the power-capped roof dashed, the kernels measured (filled) and predicted (hollow).
# No "family:" header: `gpuprobe report` does not draw it; `gpuprobe roofline` does.
load 'plots/style.gp'
if (!exists("ylabel_text")) { ylabel_text = "attainable GFLOP/s" }
is_kind(k) = strcol("kind") eq k
x_of(k) = is_kind(k) ? column("intensity") : NaN
set logscale xy
set format x "10^{%T}"
set format y "10^{%T}"
set xlabel "arithmetic intensity (flop per DRAM byte)"
set ylabel ylabel_text
set xrange [1.0/16:1e4]
set key bottom right opaque box noenhanced
set style fill transparent solid 0.18 noborder
# Roofs a run lacks, named under the plot.
missing_text = ""
do for [i=1:words(files)] {
  stats word(files, i) using (is_kind("missing") ? 1 : 0) nooutput
  if (STATS_sum > 0) {
    missing_text = missing_text . word(labels, i) . " lacks some roofs (see roofline.csv)  "
  }
}
if (strlen(missing_text) > 0) { set label 90 missing_text at graph 0.01, graph 0.02 font ",8" noenhanced }
# A run without kernel points (no roofline family) gets no key entries for them.
array kernel_points[words(files)]
do for [i=1:words(files)] {
  stats word(files, i) using (is_kind("point") ? 1 : 0) nooutput
  kernel_points[i] = STATS_sum
}
point_title(i, what) = kernel_points[i] > 0 ? word(labels, i) . what : ""
do for [ext in "svg png pdf"] {
  eval set_output(ext)
  lf = ext eq "png" ? ",15" : (ext eq "svg" ? ",9" : ",5")
  plot for [i=1:words(files)] word(files, i) using (x_of("roof")):"low":"high" \
         with filledcurves lc rgb gpu_color[i] notitle, \
       for [i=1:words(files)] word(files, i) using (x_of("roof")):"value" \
         with lines ls i title word(labels, i), \
       for [i=1:words(files)] word(files, i) using (x_of("cap")):"value" \
         with lines ls i dt 2 notitle, \
       for [i=1:words(files)] word(files, i) using (x_of("label")):"value":"label" \
         with labels left noenhanced font lf tc rgb gpu_color[i] notitle, \
       for [i=1:words(files)] word(files, i) using (x_of("rlabel")):"value":"label" \
         with labels right noenhanced font lf tc rgb gpu_color[i] notitle, \
       for [i=1:words(files)] word(files, i) using (x_of("point")):"value" \
         with points ls i pt 7 ps 1.2 title point_title(i, " measured"), \
       for [i=1:words(files)] word(files, i) using (x_of("predicted")):"value" \
         with points ls i pt 6 ps 1.2 title point_title(i, " predicted"), \
       for [i=1:words(files)] word(files, i) using (x_of("point")):"value":"label" \
         with labels left noenhanced offset char 0.8,0.4 font lf notitle
}
