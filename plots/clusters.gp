# family: clusters
# title: Distributed shared memory latency and cluster.sync() cost by cluster size
# read: Solid: a load from another SM's shared memory; dashed: the block's own through its cluster address; right: one cluster.sync().
load 'plots/style.gp'

nfiles = words(files)
lat(t) = is_probe("dsm_latency") && is_unit("cycles") && strcol("target") eq t
syn = 'is_probe("cluster_sync") && is_unit("cycles")'

set xrange [1 : 17]
set xtics 2
set xlabel "blocks in the cluster"

# What the run inferred, written at the points it was read from (one row per GPU): the
# latency to another SM's shared memory with 2 blocks and with the largest cluster, the own
# SM's through its cluster address, and one cluster.sync() at both ends.
lat_marks = ""
sync_marks = ""
do for [i=1:nfiles] {
  call 'plots/param_value.gp' param_file(i) "cluster_size_max"
  largest = param_value == param_value ? param_value : 16
  do for [q in "dsm_latency dsm_latency_largest_cluster dsm_latency_own_sm cluster_sync_latency cluster_sync_latency_largest_cluster"] {
    call 'plots/param_value.gp' param_file(i) q
    if (param_value == param_value) {
      at_largest = strstrt(q, "largest") > 0 || q eq "dsm_latency_own_sm"
      marks_tag = marks_tag + 1
      cmd = sprintf("set label %d '%.0f' at %g, %g %s offset %g, %g front tc rgb '%s' font markfont; ", marks_tag, param_value, \
          at_largest ? largest : 2, param_value, at_largest ? "right" : "left", at_largest ? -0.5 : 0.5, \
          (q eq "dsm_latency_own_sm" ? 1 : -1) * (1.2 + 1.0 * (i - 1)), series_color(i, q eq "dsm_latency_own_sm" ? 2 : 1))
      if (strstrt(q, "sync") > 0) { sync_marks = sync_marks . cmd } else { lat_marks = lat_marks . cmd }
    }
  }
}

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 5))
  set multiplot layout 1, 2
  set key bottom right font keyfont
  set ylabel "cycles per load"
  set yrange [0 : *]
  markfont = mark_font(ext)
  unset label
  eval lat_marks
  plot for [i=1:nfiles] word(files, i) using (lat("other_sm") ? column("cluster_size") : NaN):(column("value")) smooth unique \
         with linespoints ls i title sprintf("%s other SM", word(labels, i)), \
       for [i=1:nfiles] word(files, i) using (lat("own_sm") ? column("cluster_size") : NaN):(column("value")) smooth unique \
         with linespoints ls i lc rgb series_color(i, 2) dt 2 pt 6 title sprintf("%s own SM", word(labels, i))
  set ylabel "cycles per cluster.sync()"
  unset label
  eval sync_marks
  plot for [i=1:nfiles] word(files, i) using ((is_probe("cluster_sync") && is_unit("cycles")) ? column("cluster_size") : NaN):(column("value")) smooth unique \
         with linespoints ls i title word(labels, i)
  unset multiplot
}
