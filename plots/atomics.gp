# family: atomics
# title: Atomic latency and throughput against lanes on one address
# read: Top: one warp's latency per atomic as lanes collide; bottom: lane atomics per clock per SM.
load 'plots/style.gp'
# Each curve picks its rows out of the file; the rows it skips must not break its line.
set datafile missing NaN

# Rows of each probe across the files: a panel whose probe has none stays empty (a run with
# that probe filtered out or invalid) instead of failing the figure.
do for [p in "latency throughput"] {
  n = 0
  do for [i=1:words(files)] {
    stats word(files, i) using (is_probe(p) ? 1 : 0) nooutput
    n = n + STATS_sum
  }
  eval sprintf("have_%s = %d", p, n)
}

kinds = "shared:add shared:cas global:add global:cas"
kind_index(k) = (space_of(k) eq "shared" ? 1 : 3) + (op_of(k) eq "add" ? 0 : 1)
space_of(k) = k[1:strstrt(k, ":") - 1]
op_of(k) = k[strstrt(k, ":") + 1:]
kind_dt(k) = op_of(k) eq "add" ? 1 : 2
kind_pt(k) = space_of(k) eq "shared" ? (op_of(k) eq "add" ? 7 : 6) : (op_of(k) eq "add" ? 9 : 8)
sel(p, u, k) = is_probe(p) && is_unit(u) && strcol("space") eq space_of(k) && strcol("op") eq op_of(k)
# Lanes on one word at x = lanes (a curve); 32 lanes on 32 words, no contention, set apart at
# x = 64 (a point).
contended(p, u, k) = sel(p, u, k) && column("addresses") == 1 ? column("lanes") : NaN
free(p, u, k) = sel(p, u, k) && column("addresses") > 1 ? 64 : NaN

# Documented (Jia et al. 2018, Table 4.2): one lane alone, and 32 lanes on one address.
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["Kepler", "Maxwell", "Volta"]
marks = ""
do for [g=1:3] {
  do for [space in "shared global"] {
    # The curves are dependent chains of one atomic; Jia et al. time a dependent pair.
    call 'plots/ref_value.gp' (arch_gpu[g]) ("atomic_" . space . "_latency_nocontention") "dependent_chain"
    alone = ref_value
    other = ref_other_method ? " (" . ref_method_text . ")" : ""
    call 'plots/ref_value.gp' (arch_gpu[g]) ("atomic_" . space . "_latency_32way") "dependent_chain"
    all32 = ref_value
    if (alone == alone || all32 == all32) {
      marks = marks . sprintf(", '+' using (1):(%g) every ::0::0 with points ls %d pt %d ps 1.5 title '%s doc. %s add%s', '+' using (32):(%g) every ::0::0 with points ls %d pt %d ps 1.5 notitle", \
              alone, 10 + g, space eq "shared" ? 4 : 8, arch_name[g], space, other, all32, 10 + g, space eq "shared" ? 4 : 8)
    }
  }
}

# What the run inferred, written beside the points it was read from: one lane alone (add, and
# CAS in parentheses) at x = 1, 32 lanes on one address at x = 32, and the rate of 32 lanes on
# 32 words at the right.
lat_marks = ""
tput_marks = ""
do for [i=1:words(files)] {
  do for [space in "shared global"] {
    call 'plots/param_value.gp' param_file(i) ("atomic_" . space . "_latency_nocontention")
    alone = param_value
    call 'plots/param_value.gp' param_file(i) ("atomic_" . space . "_cas_latency_nocontention")
    cas = param_value
    if (alone == alone) {
      marks_tag = marks_tag + 1
      lat_marks = lat_marks . sprintf("set label %d '%.0f%s' at 1, %g left offset 1, %g front tc rgb '%s' font markfont; ", marks_tag, \
          alone, cas == cas ? sprintf(" (CAS %.0f)", cas) : "", alone, -0.6 - 1.0 * (i - 1), series_color(i, kind_index(space . ":add")))
    }
    call 'plots/param_value.gp' param_file(i) ("atomic_" . space . "_latency_32way")
    if (param_value == param_value) {
      marks_tag = marks_tag + 1
      lat_marks = lat_marks . sprintf("set label %d '%.0f' at 32, %g left offset 1, %g front tc rgb '%s' font markfont; ", marks_tag, \
          param_value, param_value, -0.6 - 1.0 * (i - 1), series_color(i, kind_index(space . ":add")))
    }
    call 'plots/param_value.gp' param_file(i) ("atomic_" . space . "_throughput_per_sm")
    if (param_value == param_value) {
      marks_tag = marks_tag + 1
      tput_marks = tput_marks . sprintf("set label %d '%.3g' at 64, %g right offset -1.2, %g front tc rgb '%s' font markfont; ", marks_tag, \
          param_value, param_value, 0.6 + 1.0 * (i - 1), series_color(i, kind_index(space . ":add")))
    }
  }
}

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 13 : (ext eq "svg" ? 8 : 6))
  set multiplot
  set lmargin at screen 0.16
  set rmargin at screen 0.66
  set key at screen 0.995, screen 0.97 right top vertical font keyfont
  set logscale x 2
  set logscale y 10
  set xrange [0.8:80]
  set xtics ("" 1, "" 2, "" 4, "" 8, "" 16, "" 32, "" 64)
  set tmargin at screen 0.97
  set bmargin at screen 0.58
  set xlabel ""
  set ylabel "cycles per atomic\n(one warp)"
  markfont = mark_font(ext)
  unset label
  eval lat_marks
  if (have_latency) {
    plot for [i=1:words(files)] for [k in kinds] word(files, i) \
           using (contended("latency", "cycles", k)):"value" \
           with linespoints ls i lc rgb series_color(i, kind_index(k)) dt kind_dt(k) pt kind_pt(k) title sprintf("%s %s %s", word(labels, i), space_of(k), op_of(k)), \
         for [i=1:words(files)] for [k in kinds] word(files, i) \
           using (free("latency", "cycles", k)):"value" with points ls i lc rgb series_color(i, kind_index(k)) pt kind_pt(k) notitle @marks
  }
  set tmargin at screen 0.54
  set bmargin at screen 0.16
  set key at screen 0.995, screen 0.54
  set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32, "32 on 32\nwords" 64)
  set xlabel "lanes of a warp on one address"
  set ylabel "atomics/clk/SM\n(all warps)"
  unset label
  eval tput_marks
  if (have_throughput) {
    plot for [i=1:words(files)] for [k in kinds] word(files, i) \
           using (contended("throughput", "atomics/clk/SM", k)):"value" \
           with linespoints ls i lc rgb series_color(i, kind_index(k)) dt kind_dt(k) pt kind_pt(k) title sprintf("%s %s %s", word(labels, i), space_of(k), op_of(k)), \
         for [i=1:words(files)] for [k in kinds] word(files, i) \
           using (free("throughput", "atomics/clk/SM", k)):"value" with points ls i lc rgb series_color(i, kind_index(k)) pt kind_pt(k) notitle
  }
  unset logscale
  unset multiplot
}
