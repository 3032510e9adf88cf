# family: associativity
# title: L1 sets and ways from random line sets
# read: Eviction fraction against lines walked; the fitted LRU curve gives sets x ways, its knee the capacity.
load 'plots/style.gp'
wide = 1  # panels side by side: double column

first_reload = 'is_probe("eviction") && is_unit("fraction") && column("repeat") == 1'
evicted(x) = @first_reload && column("shared_bytes") == 0 ? x : NaN
held(x) = @first_reload && column("shared_bytes") > 0 ? x : NaN
disagreed(x) = is_probe("disagreement") && is_unit("fraction") ? x : NaN
modelled(x) = is_probe("model") && is_unit("fraction") ? x : NaN

# Each GPU's fitted capacity in lines (sets x ways of its model rows), for panel (b).
n_gpus = words(files)
array capacity[n_gpus]
do for [i=1:n_gpus] {
  stats word(files, i) using (modelled(column("sets") * column("ways"))) nooutput
  capacity[i] = STATS_records > 0 ? STATS_max : NaN
}

# Documented parts: an LRU cache of S sets x W ways fed random lines evicts a target once W
# of the N lines fall in its set, P = P(Binomial(N, 1/S) >= W) (summed: ibeta loses its
# accuracy at hundreds of ways). Where the L1 size is a range (a carve-out), its largest;
# where the sets are not one number, text only.
binomial(n, k, p) = exp(lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) + k * log(p) + (n - k) * log(1 - p))
lru(n, s, w) = n < w ? 0 : (s == 1 ? 1 : 1 - sum [k=0:int(w) - 1] binomial(n, k, 1.0 / s))
last_number(t) = strstrt(t, "-") > 0 ? real(t[strstrt(t, "-") + 1:]) : NaN
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["K80", "M60", "V100"]
refs = ""
doc_text = ""
do for [g=1:3] {
  # A documented geometry found another way than the eviction fit or the chase names its method.
  call 'plots/ref_value.gp' (arch_gpu[g]) "l1_sets" "eviction_fit"
  sets = ref_value
  sets_text = ref_text
  note = ref_other_method ? ", sets by " . ref_method_text : ""
  call 'plots/ref_value.gp' (arch_gpu[g]) "l1_line_size"
  line = ref_value == ref_value ? ref_value : 128
  call 'plots/ref_value.gp' (arch_gpu[g]) "l1_size" "pointer_chase"
  size = ref_value == ref_value ? ref_value : last_number(ref_text)
  note = note . (ref_other_method ? ", size by " . ref_method_text : "")
  if (sets_text ne "") {
    doc_text = doc_text . sprintf("%s%s: %s sets", doc_text eq "" ? "" : ", ", arch_name[g], sets_text)
  }
  if (sets == sets && size == size) {
    lines = size / line
    ways = lines / sets
    refs = refs . sprintf(", lru(floor(x * %g), %g, %g) with lines ls %d title '%s: %g x %g (documented%s)'", \
        lines, sets, ways, 10 + g, arch_name[g], sets, ways, note)
  }
}
doc_text = doc_text eq "" ? "" : "documented L1 " . doc_text

# What the run inferred: sets x ways of the fitted model, written in panel (b), which is scaled
# by that capacity, one row per GPU (with its confidence: the fit is often ambiguous).
inferred_cmd = ""
do for [i=1:n_gpus] {
  call 'plots/param_value.gp' param_file(i) "l1_sets"
  sets = param_value
  call 'plots/param_value.gp' param_file(i) "l1_ways"
  if (sets == sets && param_value == param_value) {
    stats param_file(i) using (strcol("parameter") eq "l1_ways" ? column("confidence") : NaN) nooutput
    inferred_cmd = inferred_cmd . sprintf("set label %d '%s%.0f sets x %.0f ways (confidence %.2f)' at graph 0.03, graph %g left front tc rgb '%s' font markfont; ", \
        300 + i, n_gpus > 1 ? word(labels, i) . ": " : "fitted: ", sets, param_value, STATS_max, 0.72 - 0.07 * (i - 1), gpu_color[i])
  }
}

panel(s) = sprintf("set label 1 '%s' at graph 0, graph 1.04 front font titlefont", s)

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 12 : (ext eq "svg" ? 7 : 4))
  titlefont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 8 : 5))
  tickfont = sprintf(",%d", ext eq "png" ? 15 : (ext eq "svg" ? 9 : 6))
  pscale = ext eq "pdf" ? 0.25 : 0.5
  set multiplot layout 1, 2
  set tmargin 2
  set tics font tickfont
  set yrange [-0.02 : 1.05]
  set ytics 0.2 nomirror
  set ylabel "targets evicted" font titlefont
  set key top left font keyfont
  set bars 0.3

  unset label
  eval panel("(a)")
  markfont = mark_font(ext)
  set xrange [0 : *]
  set xtics autofreq nomirror
  set xlabel "N random lines" font titlefont
  plot for [i=1:n_gpus] word(files, i) using (evicted(column("lines"))):"value":"p05":"p95" \
         with yerrorbars ls i pt 7 ps pscale title word(labels, i), \
       for [i=1:n_gpus] word(files, i) using (modelled(column("lines"))):"value" \
         with lines ls i notitle, \
       for [i=1:n_gpus] word(files, i) using (held(column("lines"))):"value" \
         with points ls i pt 8 ps pscale title sprintf("%s, 4 KiB shared held", word(labels, i)), \
       for [i=1:n_gpus] word(files, i) using (disagreed(column("lines"))):"value" \
         with points ls i pt 6 ps pscale title sprintf("%s, reloads disagree", word(labels, i))

  unset label
  eval panel("(b)")
  eval inferred_cmd
  if (doc_text ne "") {
    set label 2 doc_text at graph 0.97, graph 0.04 right front font keyfont
  }
  set xrange [0 : 1.6]
  set xtics 0.4 nomirror
  set samples 200
  set xlabel "N / fitted capacity" font titlefont
  plot for [i=1:n_gpus] word(files, i) using (evicted(column("lines") / capacity[i])):"value" \
         with points ls i pt 7 ps pscale title word(labels, i), \
       for [i=1:n_gpus] word(files, i) using (modelled(column("lines") / capacity[i])):"value" \
         with lines ls i notitle @refs
  unset multiplot
}
