# family: shared_banks
# title: Shared memory bank conflicts against stride
# read: Cycles per request against stride for each access width; peaks are conflict degrees.
load 'plots/style.gp'
# Each curve picks its rows out of the file; the rows it skips must not break its line.
set datafile missing NaN

# Rows of each probe across the files: a panel whose probe has none stays empty (a run with
# that probe filtered out or invalid) instead of failing the figure.
do for [p in "stride_latency stride_throughput"] {
  n = 0
  do for [i=1:words(files)] {
    stats word(files, i) using (is_probe(p) ? 1 : 0) nooutput
    n = n + STATS_sum
  }
  eval sprintf("have_%s = %d", p, n)
}

widths = "4 8 16"
width_dt(w) = w eq "4" ? 1 : (w eq "8" ? 2 : 4)
width_pt(w) = w eq "4" ? 7 : (w eq "8" ? 5 : 9)
sel(p, u, w) = is_probe(p) && is_unit(u) && strcol("access_bytes") eq w

# Documented bank geometry and load latency of Kepler, Maxwell and Volta.
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["Kepler", "Maxwell", "Volta"]
array arch_banks[3]
array arch_width[3]
array arch_latency[3]
do for [g=1:3] {
  call 'plots/ref_value.gp' (arch_gpu[g]) "shared_banks"
  arch_banks[g] = ref_value
  call 'plots/ref_value.gp' (arch_gpu[g]) "shared_bank_width"
  arch_width[g] = ref_value
  call 'plots/ref_value.gp' (arch_gpu[g]) "shared_latency"
  arch_latency[g] = ref_value
}

# Passes a warp's 4 B request of stride s needs on B banks of W bytes: lane t reads bank word
# 4st/W, bank (4st/W) mod B; a bank serves one distinct word per pass (GTC 2013, CUDA guide).
set print $model
print "stride,kepler,maxwell,volta"
do for [s=0:64] {
  line = sprintf("%d", s)
  do for [g=1:3] {
    B = arch_banks[g]; W = arch_width[g]
    if (B != B || W != W) { line = line . ",nan"; continue }
    B = int(B); W = int(W)
    array cnt[B]
    do for [b=1:B] { cnt[b] = 0 }
    deepest = 1; prev = -1
    do for [t=0:31] {
      u = (4 * s * t) / W
      if (u != prev) { k = u % B + 1; cnt[k] = cnt[k] + 1; deepest = cnt[k] > deepest ? cnt[k] : deepest }
      prev = u
    }
    line = line . sprintf(",%d", deepest)
  }
  print line
}
unset print

# Maxwell and Volta document the same geometry: one curve for both when they agree.
same_mv = arch_banks[2] == arch_banks[3] && arch_width[2] == arch_width[3]
geom(g) = sprintf("%dx%d B", int(arch_banks[g]), int(arch_width[g]))
models = ""
if (arch_banks[1] == arch_banks[1] && arch_width[1] == arch_width[1]) {
  models = models . sprintf(", $model using 1:2 with steps ls 11 title 'Kepler doc. %s'", geom(1))
}
if (arch_banks[2] == arch_banks[2] && arch_width[2] == arch_width[2]) {
  models = models . sprintf(", $model using 1:3 with steps ls 12 title '%s doc. %s'", same_mv ? "Maxwell/Volta" : "Maxwell", geom(2))
}
if (!same_mv && arch_banks[3] == arch_banks[3] && arch_width[3] == arch_width[3]) {
  models = models . sprintf(", $model using 1:4 with steps ls 13 title 'Volta doc. %s'", geom(3))
}
latencies = ""
do for [g=1:3] {
  if (arch_latency[g] == arch_latency[g]) {
    latencies = latencies . sprintf(", %g with lines ls %d title '%s doc. latency %g'", arch_latency[g], 10 + g, arch_name[g], arch_latency[g])
  }
}

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 7))
  set multiplot
  # Fixed margins keep the two panels' stride axes aligned whatever the keys need.
  set lmargin at screen 0.12
  set rmargin at screen 0.68
  set key at screen 0.995, screen 0.97 right top vertical font keyfont
  set xrange [-1:65]
  set xtics 8
  set tmargin at screen 0.97
  set bmargin at screen 0.58
  set format x ""
  set xlabel ""
  set ylabel "cycles per load\none warp"
  if (have_stride_latency) {
    plot for [i=1:words(files)] for [w in widths] word(files, i) \
           using (sel("stride_latency", "cycles", w) ? column("stride") : NaN):"value" \
           with linespoints ls i dt width_dt(w) pt width_pt(w) title sprintf("%s %s B", word(labels, i), w) @latencies
  }
  set tmargin at screen 0.54
  set bmargin at screen 0.14
  set key at screen 0.995, screen 0.54
  set format x "%g"
  set xlabel "stride between lanes (elements of the access width)"
  set ylabel "cycles per request\nall warps"
  set logscale y 2
  if (have_stride_throughput) {
    plot for [i=1:words(files)] for [w in widths] word(files, i) \
           using (sel("stride_throughput", "cycles/request", w) ? column("stride") : NaN):"value" \
           with linespoints ls i dt width_dt(w) pt width_pt(w) title sprintf("%s %s B", word(labels, i), w) @models
  }
  unset logscale y
  unset multiplot
}
