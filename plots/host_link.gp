# family: host_link
# title: Host link bandwidth against transfer size
# read: Copy engine from pinned memory H2D (solid), D2H (dashed), both at once (dotted); pageable (thin); SM kernels on mapped memory (open points).
load 'plots/style.gp'

probes = "ce_h2d_pinned ce_d2h_pinned ce_bidir_pinned ce_h2d_pageable sm_h2d sm_d2h"
probe_title(p) = p eq "ce_h2d_pinned" ? "CE H2D" : p eq "ce_d2h_pinned" ? "CE D2H" : \
                 p eq "ce_bidir_pinned" ? "CE both" : p eq "ce_h2d_pageable" ? "CE H2D pageable" : \
                 p eq "sm_h2d" ? "SM H2D" : "SM D2H"
probe_dt(p) = p eq "ce_d2h_pinned" || p eq "sm_d2h" ? 2 : (p eq "ce_bidir_pinned" ? 3 : 1)
probe_pt(p) = p eq "sm_h2d" || p eq "sm_d2h" ? 6 : (p eq "ce_h2d_pageable" ? 1 : 7)
probe_lw(p) = p eq "ce_h2d_pageable" ? 0.8 : 1.5
sel(p) = is_probe(p) && is_unit("GB/s")
nfiles = words(files)

set logscale x 2
set format x "%.0b%B"
set xtics ("4K" 4096, "64K" 65536, "1M" 1048576, "16M" 16777216, "256M" 268435456, "1G" 1073741824)
set xlabel "bytes per copy"
set ylabel "GB/s"
set yrange [0 : *]
set offsets 0, 0, graph 0.4, 0

# What the run inferred: each path's bandwidth, listed at the top right, above the curves (the
# y axis leaves room), two rows per GPU (host_mapped_latency is not drawn here).
inferred_cmd = ""
row = 0
do for [i=1:nfiles] {
  array hv[7]
  k = 0
  do for [q in "h2d_bandwidth_pinned d2h_bandwidth_pinned bidir_bandwidth_pinned h2d_bandwidth_pageable d2h_bandwidth_pageable h2d_bandwidth_sm d2h_bandwidth_sm"] {
    k = k + 1
    call 'plots/param_value.gp' param_file(i) q
    hv[k] = param_value
  }
  prefix = nfiles > 1 ? word(labels, i) . ": " : ""
  if (hv[1] == hv[1] || hv[2] == hv[2] || hv[3] == hv[3]) {
    row = row + 1
    inferred_cmd = inferred_cmd . sprintf("set label %d '%spinned H2D %.1f, D2H %.1f, both %.1f GB/s' at graph 0.98, graph %g right front tc rgb '%s' font markfont; ", \
        300 + row, prefix, hv[1], hv[2], hv[3], 0.95 - 0.055 * (row - 1), text_color(i))
  }
  if (hv[4] == hv[4] || hv[6] == hv[6]) {
    row = row + 1
    inferred_cmd = inferred_cmd . sprintf("set label %d '%spageable H2D %.1f, D2H %.1f; SM H2D %.1f, D2H %.1f GB/s' at graph 0.98, graph %g right front tc rgb '%s' font markfont; ", \
        300 + row, prefix, hv[4], hv[5], hv[6], hv[7], 0.95 - 0.055 * (row - 1), text_color(i))
  }
}

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 5))
  set key top left font keyfont
  markfont = mark_font(ext)
  unset label
  eval inferred_cmd
  plot for [i=1:nfiles] for [j=1:words(probes)] word(files, i) \
         using (sel(word(probes, j)) ? column("bytes") : NaN):(column("value")) smooth unique \
         with linespoints ls i lc rgb series_color(i, j) dt probe_dt(word(probes, j)) pt probe_pt(word(probes, j)) lw probe_lw(word(probes, j)) \
         title sprintf("%s %s", word(labels, i), probe_title(word(probes, j)))
}
