# family: l2_topology
# title: SM x L2 line latency map: the L2 partitions
# read: Each SM's first read of freshly written lines; SMs ordered by the group they read fastest: the groups are the partitions.
load 'plots/style.gp'

f = word(files, 1)
sel = 'is_probe("first_read") && is_unit("cycles")'
stats f using (@sel ? column("value") : NaN) nooutput
lo = STATS_min
hi = STATS_max

set xlabel "SM (ordered by near group)"
set ylabel "L2 line (ordered by group)"
set cblabel "cycles"
set cbrange [lo : hi]
set palette rgbformulae 33,13,10
set tics out
set grid noxtics noytics
set autoscale fix
unset key

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  set title word(labels, 1) font sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 6))
  plot f using (@sel ? column("sm_order") : NaN):(column("line_order")):(column("value")) \
       with image notitle
}
