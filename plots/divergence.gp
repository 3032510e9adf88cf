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
  plot x with lines lc rgb "#000000" dt 2 lw 1.5 title "model: every path paid in full", \
       for [i=1:nfiles] for [j=1:2] word(files, i) \
         using (sel(word(modes, j)) ? column("paths") : NaN):(column("value") / t1[(i - 1) * 2 + j]) smooth unique \
         with linespoints ls i dt mode_dt(word(modes, j)) pt mode_pt(word(modes, j)) \
         title sprintf("%s %s", word(labels, i), mode_title(word(modes, j)))
}
