# family: dual_issue
# title: Dual issue: two pipes' streams in one warp
# read: Bar 1: the pair runs as fast as separate pipes allow; 0.5: the two streams serialise.
load 'plots/style.gp'
set datafile missing NaN

pairs = "fp32_int32 fp32_fp64 fp32_sfu fp32_ldst fp32_shared fp16_fp32 fp32_tensor"
np = words(pairs)
nfiles = words(files)

# From each file: the solo rates of A and B, the pair's rate and its instructions per round.
row_of(p, s) = is_probe(p) && strcol("stream") eq s
array overlap[nfiles * np]
array ratio[nfiles * np]
array bound[nfiles * np]
do for [i=1:nfiles] {
  # the issue rate: the fastest solo stream of the file
  stats word(files, i) using ((strcol("stream") eq "a" || strcol("stream") eq "b") ? column("value") : NaN) nooutput
  issue = STATS_max
  do for [j=1:np] {
    p = word(pairs, j)
    stats word(files, i) using (row_of(p, "a") ? 1 : 0):(row_of(p, "a") ? column("value") : 0) nooutput
    ra = STATS_sum_x > 0 ? STATS_sum_y / STATS_sum_x : NaN
    stats word(files, i) using (row_of(p, "b") ? 1 : 0):(row_of(p, "b") ? column("value") : 0) nooutput
    rb = STATS_sum_x > 0 ? STATS_sum_y / STATS_sum_x : NaN
    stats word(files, i) using (row_of(p, "pair") ? 1 : 0):(row_of(p, "pair") ? column("value") : 0) nooutput
    rp = STATS_sum_x > 0 ? STATS_sum_y / STATS_sum_x : NaN
    stats word(files, i) using (row_of(p, "pair") ? column("a_per_round") : 0):(row_of(p, "pair") ? column("b_per_round") : 0) nooutput
    na = STATS_sum_x
    nb = STATS_sum_y
    # the model of harness/analysis/dual_issue.cpp
    ta = na / ra
    tb = nb / rb
    tp = (na + nb) / rp
    ti = (na + nb) / issue
    side = ta > tb ? ta : tb
    side = ti > side ? ti : side
    bound[(i - 1) * np + j] = (rp <= 1.03 * issue && ta + tb - side < 0.1 * (ta + tb)) ? 1 : 0
    overlap[(i - 1) * np + j] = bound[(i - 1) * np + j] ? NaN : (ta + tb - tp) / (ta + tb - side)
    # The bar's label is the run's inferred dual_issue_<pair> (parameters.csv); the ratio of the
    # rates above stands in only where the run has no such parameter.
    call 'plots/param_value.gp' param_file(i) ("dual_issue_" . p)
    ratio[(i - 1) * np + j] = param_value == param_value ? param_value : rp / (ra > rb ? ra : rb)
  }
}
ov(i, k) = k >= 1 ? overlap[(i - 1) * np + int(k)] : NaN
rt(i, k) = k >= 1 ? ratio[(i - 1) * np + int(k)] : NaN
bd(i, k) = k >= 1 ? bound[(i - 1) * np + int(k)] : 0
# bar label: the ratio, and "issue-bound" where there is no bar (stacked per GPU: no bar to sit on)
bar_text(i, k) = bd(i, k) ? sprintf("x%.2f\nissue-bound", rt(i, k)) : sprintf("x%.2f", rt(i, k))
bar_y(i, k) = bd(i, k) ? 0.08 + 0.13 * (i - 1) : ov(i, k) + 0.03

# Documented statements (text) of the representative parts, where the reference has one.
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["K80", "M60", "V100"]
documented = ""
do for [g=1:3] {
  call 'plots/ref_value.gp' (arch_gpu[g]) "dual_issue"
  if (ref_text ne "") { documented = documented . sprintf("%s%s: %s", documented eq "" ? "documented dual issue - " : "; ", arch_name[g], ref_text) }
}

bw = 0.8 / nfiles
off(i) = -0.4 + (i - 0.5) * bw
set xrange [0.4 : np + 0.6]
set yrange [-0.1 : 1.35]
set boxwidth bw absolute
set style fill solid 0.85 border -1
set xtics () scale 0 noenhanced
do for [j=1:np] { set xtics add (word(pairs, j) j) }
set ytics (0, 0.2, 0.4, 0.6, 0.8, 1)
set ylabel "overlap of the two streams"
set grid noxtics ytics
# verdict zones, as the analysis draws them
set object 1 rect from graph 0, first 0.8 to graph 1, first 1.35 fc rgb "#e8f4e8" fs solid 1.0 noborder behind
set object 2 rect from graph 0, first -0.1 to graph 1, first 0.2 fc rgb "#f6e6e6" fs solid 1.0 noborder behind

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 8 : 6))
  labelfont = sprintf(",%d", ext eq "png" ? 12 : (ext eq "svg" ? 7 : 5))
  set key top right font keyfont
  unset label
  set label 1 "separate pipes (above 1: beyond the fastest stream)" at graph 0.01, first 1.3 left font labelfont
  set label 2 "shared pipe" at graph 0.01, first -0.05 left font labelfont
  set label 4 "partial" at graph 0.995, first 0.5 right font labelfont
  ticfont = sprintf(",%d", ext eq "png" ? 15 : (ext eq "svg" ? 9 : 6))
  set xtics font ticfont
  set label 3 documented at graph 0.5, graph -0.16 center noenhanced font labelfont
  set bmargin 5
  plot for [i=1:nfiles] [k=0:np:1] '+' using (k + off(i)):(ov(i, k)) with boxes fc rgb gpu_color[i] title word(labels, i), \
       for [i=1:nfiles] [k=0:np:1] '+' using (k + off(i)):(bar_y(i, k)):(bar_text(i, k)) \
         with labels font labelfont notitle
}
