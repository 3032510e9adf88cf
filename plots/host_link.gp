# family: host_link
# title: Host link bandwidth against transfer size
# read: Copy engine pinned H2D (solid), D2H (dashed), both at once (dotted); pageable (thin); SM kernels (open); grey: the PCIe link's raw rate.
load 'plots/style.gp'

probes = "ce_h2d_pinned ce_d2h_pinned ce_bidir_pinned ce_h2d_pageable ce_d2h_pageable sm_h2d sm_d2h"
probe_title(p) = p eq "ce_h2d_pinned" ? "CE H2D" : p eq "ce_d2h_pinned" ? "CE D2H" : \
                 p eq "ce_bidir_pinned" ? "CE both" : p eq "ce_h2d_pageable" ? "CE H2D pageable" : \
                 p eq "ce_d2h_pageable" ? "CE D2H pageable" : p eq "sm_h2d" ? "SM H2D" : "SM D2H"
is_d2h(p) = p eq "ce_d2h_pinned" || p eq "ce_d2h_pageable" || p eq "sm_d2h"
probe_dt(p) = is_d2h(p) ? 2 : (p eq "ce_bidir_pinned" ? 3 : 1)
probe_pt(p) = p eq "sm_h2d" || p eq "sm_d2h" ? 6 : (strstrt(p, "pageable") > 0 ? 1 : 7)
probe_lw(p) = strstrt(p, "pageable") > 0 ? 0.8 : 1.5
sel(p) = is_probe(p) && is_unit("GB/s")
nfiles = words(files)

set logscale x 2
set format x "%.0b%B"
set xtics ("4K" 4096, "64K" 65536, "1M" 1048576, "16M" 16777216, "256M" 268435456, "1G" 1073741824)
set xlabel "bytes per copy"
set ylabel "GB/s"
set yrange [0 : *]
set offsets 0, 0, graph 0.45, 0

# The PCIe link's own rate, one direction, before packet overheads (NVML's generation x width,
# read while a copy ran; runs made before it was read have none): a grey line, named at its
# right end, and twice it for both directions at once.
link_cmd = ""
link_label_cmd = ""
do for [i=1:nfiles] {
  stats word(files, i) using (is_probe("pcie_link") ? 1 : 0):(is_probe("pcie_link") ? column("value") : 0) nooutput
  if (STATS_sum_x > 0) {
    link_gbs = STATS_sum_y / STATS_sum_x
    stats word(files, i) using (is_probe("pcie_link") ? column("generation") * 100 + column("lanes") : NaN) nooutput
    link_text = sprintf("PCIe gen %d x%d: %.0f GB/s raw each way%s", int(STATS_max / 100), int(STATS_max) % 100, \
                        link_gbs, nfiles > 1 ? " (" . word(labels, i) . ")" : "")
    link_cmd = link_cmd . sprintf(", %g with lines lc rgb '#909090' dt 4 lw 1 notitle", link_gbs)
    link_cmd = link_cmd . sprintf(", %g with lines lc rgb '#909090' dt 4 lw 1 notitle", 2 * link_gbs)
    link_label_cmd = link_label_cmd . sprintf("set label %d '%s' at graph 0.02, first %g left offset 0, 0.6 front tc rgb '#707070' font markfont; ", \
                          400 + 2 * i, link_text, link_gbs)
    link_label_cmd = link_label_cmd . sprintf("set label %d 'x2: both ways at once' at graph 0.02, first %g left offset 0, 0.6 front tc rgb '#707070' font markfont; ", \
                                        401 + 2 * i, 2 * link_gbs)
  }
}

# What the run inferred: each path's bandwidth, listed at the top right, above the curves (the
# y axis leaves room), three rows per GPU (host_mapped_latency is not drawn here).
inferred_cmd = ""
row = 0
do for [i=1:nfiles] {
  array hv[9]
  k = 0
  do for [q in "h2d_bandwidth_pinned d2h_bandwidth_pinned bidir_bandwidth_pinned h2d_bandwidth_pageable d2h_bandwidth_pageable h2d_bandwidth_pageable_peak d2h_bandwidth_pageable_peak h2d_bandwidth_sm d2h_bandwidth_sm"] {
    k = k + 1
    call 'plots/param_value.gp' param_file(i) q
    hv[k] = param_value
  }
  prefix = nfiles > 1 ? word(labels, i) . ": " : ""
  if (hv[1] == hv[1] || hv[2] == hv[2] || hv[3] == hv[3]) {
    row = row + 1
    inferred_cmd = inferred_cmd . sprintf("set label %d '%spinned H2D %.1f, D2H %.1f, both %.1f GB/s' at graph 0.98, graph %g right front tc rgb '%s' font markfont; ", \
        300 + row, prefix, hv[1], hv[2], hv[3], 0.96 - 0.05 * (row - 1), text_color(i))
  }
  if (hv[4] == hv[4] || hv[5] == hv[5]) {
    row = row + 1
    inferred_cmd = inferred_cmd . sprintf("set label %d '%spageable, sustained: H2D %.1f, D2H %.1f GB/s (peak %.1f, %.1f)' at graph 0.98, graph %g right front tc rgb '%s' font markfont; ", \
        300 + row, prefix, hv[4], hv[5], hv[6], hv[7], 0.96 - 0.05 * (row - 1), text_color(i))
  }
  if (hv[8] == hv[8] || hv[9] == hv[9]) {
    row = row + 1
    inferred_cmd = inferred_cmd . sprintf("set label %d '%sSM H2D %.1f, D2H %.1f GB/s' at graph 0.98, graph %g right front tc rgb '%s' font markfont; ", \
        300 + row, prefix, hv[8], hv[9], 0.96 - 0.05 * (row - 1), text_color(i))
  }
}

# The key below the plot, in columns, so that the curves keep the width (the bottom margin, in
# the terminal font's lines, holds the tics, the x label and the key's rows at its font); a size
# measured again (its neighbours disagreed) shows each pass as a point, the line their mean.
key_cols = 4
key_entries = nfiles * words(probes)
set key outside bottom center horizontal maxcols key_cols samplen 2 spacing 1
set xrange [3000 : 1.4 * 1073741824]
do for [ext in "svg png pdf"] {
  eval set_output(ext)
  key_pt = ext eq "png" ? 13 : (ext eq "svg" ? 8 : 5)
  term_pt = ext eq "png" ? 26 : (ext eq "svg" ? 13 : 8)
  keyfont = sprintf(",%d", key_pt)
  set key font keyfont
  set bmargin 3.5 + ceil(key_entries / real(key_cols)) * 1.15 * key_pt / term_pt + 0.8
  markfont = mark_font(ext)
  unset label
  eval inferred_cmd
  eval link_label_cmd
  plot for [i=1:nfiles] for [j=1:words(probes)] word(files, i) \
         using (sel(word(probes, j)) ? column("bytes") : NaN):(column("value")) smooth unique \
         with lines ls i lc rgb series_color(i, j) dt probe_dt(word(probes, j)) lw probe_lw(word(probes, j)) \
         title sprintf("%s %s", word(labels, i), probe_title(word(probes, j))), \
       for [i=1:nfiles] for [j=1:words(probes)] word(files, i) \
         using (sel(word(probes, j)) ? column("bytes") : NaN):(column("value")) \
         with points ls i lc rgb series_color(i, j) pt probe_pt(word(probes, j)) notitle \
       @link_cmd
}
