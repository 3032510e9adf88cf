# family: clusters
# title: Distributed shared memory latency and cluster.sync() cost by cluster size
# read: Left: one load from another SM's shared memory (solid), from the block's own through its cluster address (dashed). Right: one cluster.sync() (release arrive, solid) and the barrier with a relaxed arrive (dashed), median over the places a cluster lands.
load 'plots/style.gp'
wide = 1  # panels side by side: double column

nfiles = words(files)
lat(t) = is_probe("dsm_latency") && is_unit("cycles") && strcol("target") eq t
# Runs before the two barrier kinds were measured have no "barrier" column: all release.
array has_barrier[nfiles]
do for [i=1:nfiles] {
  has_barrier[i] = int(system(sprintf("grep -m 1 '^family,' '%s' | grep -c ',barrier,'", word(files, i))))
}
syn(i, k) = is_probe("cluster_sync") && is_unit("cycles") && (has_barrier[i] ? strcol("barrier") eq k : k eq "release")

set xrange [1 : 17]
set xtics 2
set xlabel "blocks in the cluster"

# What the run inferred, written at the points it was read from (one row per GPU): the
# latency to another SM's shared memory with 2 blocks and with the largest cluster, the own
# SM's through its cluster address, one cluster.sync() at both ends, the relaxed barrier at 2.
lat_marks = ""
sync_marks = ""
do for [i=1:nfiles] {
  call 'plots/param_value.gp' param_file(i) "cluster_size_max"
  largest = param_value == param_value ? param_value : 16
  do for [q in "dsm_latency dsm_latency_largest_cluster dsm_latency_own_sm cluster_sync_latency cluster_sync_latency_largest_cluster cluster_sync_relaxed_latency"] {
    call 'plots/param_value.gp' param_file(i) q
    if (param_value == param_value) {
      at_largest = strstrt(q, "largest") > 0 || q eq "dsm_latency_own_sm"
      second = q eq "dsm_latency_own_sm" || q eq "cluster_sync_relaxed_latency"  # the dashed series
      marks_tag = marks_tag + 1
      cmd = sprintf("set label %d '%.0f' at %g, %g %s offset %g, %g front tc rgb '%s' font markfont; ", marks_tag, param_value, \
          at_largest ? largest : 2, param_value, at_largest ? "right" : "left", at_largest ? -0.5 : 0.5, \
          (second ? 1 : -1) * (1.2 + 1.0 * (i - 1)), series_color(i, second ? 2 : 1))
      if (strstrt(q, "sync") > 0) { sync_marks = sync_marks . cmd } else { lat_marks = lat_marks . cmd }
    }
  }
}

# The right panel's plot: cluster.sync() for every run, the relaxed barrier for the runs that
# measured it (a series with no point would be a gnuplot warning in the report).
sync_plot = "plot for [i=1:nfiles] word(files, i) using (syn(i, 'release') ? column('cluster_size') : NaN):(column('value')) " . \
            "smooth unique with linespoints ls i title sprintf('%s cluster.sync()', word(labels, i))"
do for [i=1:nfiles] {
  if (has_barrier[i]) {
    sync_plot = sync_plot . sprintf(", word(files, %d) using (syn(%d, 'relaxed') ? column('cluster_size') : NaN):(column('value')) " . \
        "smooth unique with linespoints ls %d lc rgb series_color(%d, 2) dt 2 pt 6 title sprintf('%%s relaxed arrive', word(labels, %d))", \
        i, i, i, i, i)
  }
}

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 5))
  titlefont = sprintf(",%d", ext eq "png" ? 22 : (ext eq "svg" ? 12 : 7))
  set multiplot layout 1, 2
  set key bottom right font keyfont
  set yrange [0 : *]
  markfont = mark_font(ext)

  set title "Load from another SM's shared memory (DSM)" font titlefont
  set ylabel "cycles per load"
  unset label
  eval lat_marks
  plot for [i=1:nfiles] word(files, i) using (lat("other_sm") ? column("cluster_size") : NaN):(column("value")) smooth unique \
         with linespoints ls i title sprintf("%s other SM", word(labels, i)), \
       for [i=1:nfiles] word(files, i) using (lat("own_sm") ? column("cluster_size") : NaN):(column("value")) smooth unique \
         with linespoints ls i lc rgb series_color(i, 2) dt 2 pt 6 title sprintf("%s own SM", word(labels, i))

  set title "cluster.sync(): one barrier of the whole cluster" font titlefont
  set ylabel "cycles per barrier"
  unset label
  eval sync_marks
  eval sync_plot
  unset multiplot
}
