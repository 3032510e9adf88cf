# family: collectives
# title: Collectives: bus bandwidth against size (NCCL, nccl-tests' busbw)
# read: busbw of each collective against the bytes per call (log x), at the largest communicator measured; the dashed line is the NVLink rate one way (links x link rate, from NVML) where the run has it.
load 'plots/style.gp'
set datafile missing NaN

colls = "all_reduce all_gather reduce_scatter broadcast all_to_all"
coll_title(c) = c eq "all_reduce" ? "all-reduce" : c eq "all_gather" ? "all-gather" : \
                c eq "reduce_scatter" ? "reduce-scatter" : c eq "broadcast" ? "broadcast" : "all-to-all"
array coll_pt[5] = [7, 5, 9, 11, 13]
nfiles = words(files)
is_bus(d) = is_unit("GB/s") && strcol("bw") eq "bus"

# The largest communicator of each file (its parameters are read there), and the highest busbw
# drawn, to leave room above it.
array top[nfiles]
array link[nfiles]
ymax = 0
do for [i=1:nfiles] {
  stats word(files, i) using (is_bus(0) ? 1 : 0):(is_bus(0) ? column("ranks") : 0) nooutput
  top[i] = STATS_max_y
  stats word(files, i) using (is_bus(0) && column("ranks") == top[i] ? 1 : 0):(is_bus(0) && column("ranks") == top[i] ? column("value") : 0) nooutput
  ymax = STATS_max_y > ymax ? STATS_max_y : ymax
  # The link's rate one way, as the run's p2p family read it from NVML: nvlink_bandwidth (a
  # GPU's links x the link rate), else nvlink_links x nvlink_link_bandwidth; NaN without either.
  call 'plots/param_value.gp' param_file(i) "nvlink_link_bandwidth"
  per_link = param_value
  call 'plots/param_value.gp' param_file(i) "nvlink_links"
  links = param_value
  call 'plots/param_value.gp' param_file(i) "nvlink_bandwidth"
  link[i] = param_value == param_value ? param_value : per_link * links
  ymax = link[i] > ymax ? link[i] : ymax
}
sel(c, i) = is_probe(c) && is_bus(0) && column("ranks") == top[i]

# What the run inferred, in rows at the bottom right: each collective's busbw at the largest size
# (and the communicator it was read at); the link's rate as a dashed line across.
marks_cmd = ""
row = 0
do for [i=1:nfiles] {
  prefix = nfiles > 1 ? word(labels, i) . " " : ""
  do for [j=1:5] {
    c = word(colls, j)
    call 'plots/param_value.gp' param_file(i) (c . "_busbw")
    if (param_value == param_value) {
      row = row + 1
      marks_tag = marks_tag + 1
      marks_cmd = marks_cmd . sprintf("set label %d '%s%s: %.0f GB/s' at graph 0.98, graph %g right front tc rgb '%s' font markfont; ", \
          marks_tag, prefix, coll_title(c), param_value, 0.04 + 0.055 * (row - 1), series_color(i, j))
    }
  }
  if (top[i] > 0) {
    row = row + 1
    marks_tag = marks_tag + 1
    marks_cmd = marks_cmd . sprintf("set label %d '%s%d ranks' at graph 0.98, graph %g right front tc rgb '%s' font markfont; ", \
        marks_tag, prefix, int(top[i]), 0.04 + 0.055 * (row - 1), text_color(i))
  }
  if (link[i] == link[i]) {
    marks_tag = marks_tag + 1
    marks_cmd = marks_cmd . sprintf("set arrow %d from graph 0, first %g to graph 1, first %g nohead dt 2 lw 1.2 lc rgb '%s' front; ", \
        marks_tag, link[i], link[i], text_color(i))
    marks_tag = marks_tag + 1
    marks_cmd = marks_cmd . sprintf("set label %d '%sNVLink one way: %.0f GB/s' at graph 0.98, first %g offset 0, 0.6 right front tc rgb '%s' font markfont; ", \
        marks_tag, prefix, link[i], link[i], text_color(i))
  }
}

set logscale x 2
set xtics ("8" 8, "256" 256, "8K" 8192, "256K" 262144, "8M" 8388608, "256M" 268435456, "1G" 1073741824)
set xrange [6 : 1.6e9]
set xlabel "bytes per call (nccl-tests' size)"
set ylabel "bus bandwidth (GB/s)"
set yrange [0 : (ymax > 0 ? ymax * 1.15 : 1)]

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 5))
  set key left center font keyfont
  markfont = mark_font(ext)
  unset label
  unset arrow
  eval marks_cmd
  plot for [i=1:nfiles] for [j=1:5] word(files, i) \
         using (sel(word(colls, j), i) ? column("bytes") : NaN):(column("value")) smooth unique \
         with linespoints ls i lc rgb series_color(i, j) pt coll_pt[j] \
         title sprintf("%s %s", word(labels, i), coll_title(word(colls, j)))
}
