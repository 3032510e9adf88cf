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

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 5))
  set multiplot layout 1, 2
  set key bottom right font keyfont
  set ylabel "cycles per load"
  set yrange [0 : *]
  plot for [i=1:nfiles] word(files, i) using (lat("other_sm") ? column("cluster_size") : NaN):(column("value")) smooth unique \
         with linespoints ls i title sprintf("%s other SM", word(labels, i)), \
       for [i=1:nfiles] word(files, i) using (lat("own_sm") ? column("cluster_size") : NaN):(column("value")) smooth unique \
         with linespoints ls i dt 2 pt 6 title sprintf("%s own SM", word(labels, i))
  set ylabel "cycles per cluster.sync()"
  plot for [i=1:nfiles] word(files, i) using ((is_probe("cluster_sync") && is_unit("cycles")) ? column("cluster_size") : NaN):(column("value")) smooth unique \
         with linespoints ls i title word(labels, i)
  unset multiplot
}
