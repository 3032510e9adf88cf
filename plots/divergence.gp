# family: divergence
# title: Warp divergence: cost of P distinct paths per warp
# read: Slowdown against paths (log-log); slope 1 means paths run one after another.
load 'plots/style.gp'
set datafile missing NaN

modes = "full_sm one_warp"
mode_title(m) = m eq "full_sm" ? "SMs full" : "one warp"
mode_dt(m) = m eq "full_sm" ? 1 : 2
mode_pt(m) = m eq "full_sm" ? 7 : 5
sel(m) = is_probe(m) && is_unit("cycles")
nfiles = words(files)

# t(1) of each file and mode, to divide by; NaN where a mode was not measured.
array t1[2 * nfiles]
do for [i=1:nfiles] {
  do for [j=1:2] {
    m = word(modes, j)
    stats word(files, i) using ((sel(m) && column("paths") == 1) ? 1 : 0):((sel(m) && column("paths") == 1) ? column("value") : 0) nooutput
    t1[(i - 1) * 2 + j] = STATS_sum_x > 0 ? STATS_sum_y / STATS_sum_x : NaN
  }
}

# What the run inferred, in rows at the bottom right (below the curves, where the plot is empty):
# the slowdown at 32 paths and the fitted cost of each extra path, a fraction of one path's time.
marks_cmd = ""
do for [i=1:nfiles] {
  do for [j=1:2] {
    suffix = j == 1 ? "" : "_one_warp"
    call 'plots/param_value.gp' param_file(i) ("divergence_slowdown_32_paths" . suffix)
    slow = param_value
    call 'plots/param_value.gp' param_file(i) ("divergence_cost_per_path" . suffix)
    if (slow == slow && param_value == param_value) {
      marks_tag = marks_tag + 1
      marks_cmd = marks_cmd . sprintf("set label %d '%s%s: %.1fx at 32 paths, each path %.2f of one' at graph 0.98, graph %g right front tc rgb '%s' font markfont; ", \
          marks_tag, nfiles > 1 ? word(labels, i) . " " : "", mode_title(word(modes, j)), slow, param_value, \
          0.05 + 0.06 * (2 * nfiles - (i - 1) * 2 - j), series_color(i, j))
    }
  }
}

set logscale xy 2
set xrange [0.8 : 40]
set yrange [0.8 : 48]
set xtics (1, 2, 4, 8, 16, 32)
set ytics (1, 2, 4, 8, 16, 32)
set xlabel "distinct paths in a warp (lane % P)"
set ylabel "time per loop trip / time with one path"

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 6))
  set key top left font keyfont
  markfont = mark_font(ext)
  unset label
  eval marks_cmd
  plot x with lines lc rgb "#000000" dt 2 lw 1.5 title "model: every path paid in full", \
       for [i=1:nfiles] for [j=1:2] word(files, i) \
         using (sel(word(modes, j)) ? column("paths") : NaN):(column("value") / t1[(i - 1) * 2 + j]) smooth unique \
         with linespoints ls i lc rgb series_color(i, j) dt mode_dt(word(modes, j)) pt mode_pt(word(modes, j)) \
         title sprintf("%s %s", word(labels, i), mode_title(word(modes, j)))
}
