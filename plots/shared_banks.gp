# family: shared_banks
# title: Shared memory bank conflicts against stride
# read: Cycles per request against stride, one panel per access width; peaks are conflict degrees.
load 'plots/style.gp'
# Each curve picks its rows out of the file; the rows it skips must not break its line.
set datafile missing NaN

widths = "4 8 16"
sel(p, u, w) = is_probe(p) && is_unit(u) && strcol("access_bytes") eq w

# Documented bank geometry of Kepler, Maxwell and Volta.
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["Kepler", "Maxwell", "Volta"]
array arch_banks[3]
array arch_width[3]
# A documented geometry found another way than the stride sweep names its method.
array arch_note[3] = ["", "", ""]
do for [g=1:3] {
  call 'plots/ref_value.gp' (arch_gpu[g]) "shared_bank_count" "stride_sweep"
  arch_banks[g] = ref_value
  if (ref_other_method) { arch_note[g] = " (" . ref_method_text . ")" }
  call 'plots/ref_value.gp' (arch_gpu[g]) "shared_bank_width" "stride_sweep"
  arch_width[g] = ref_value
  if (ref_other_method && arch_note[g] eq "") { arch_note[g] = " (" . ref_method_text . ")" }
}

# Passes a warp's 4 B request of stride s needs on B banks of W bytes: lane t reads bank word
# 4st/W, bank (4st/W) mod B; a bank serves one distinct word per pass (GTC 2013, CUDA guide).
set print $model
print "stride,kepler,maxwell,volta"
do for [s=0:32] {
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

# Maxwell and Volta document the same geometry: one mark for both when they agree. Each names
# its GPUs; a source that does not say how it found the geometry is said to be so.
same_mv = arch_banks[2] == arch_banks[3] && arch_width[2] == arch_width[3]
short_gpu(g) = (_sg = arch_gpu[g][1:5] eq "Tesla" ? arch_gpu[g][7:] : arch_gpu[g], \
                strstrt(_sg, " ") > 0 ? _sg[1:strstrt(_sg, " ") - 1] : _sg)
note_text(g) = arch_note[g] eq " (unknown)" ? ", no method given" : arch_note[g]
geom(g) = sprintf("%dx%d B%s", int(arch_banks[g]), int(arch_width[g]), note_text(g))
# Documented pass counts as large open marks at each stride, under the measured curve: a
# measured point inside its mark agrees, one outside parts from it.
set style line 21 lc rgb "#D55E00" lw 2 pt 4 ps 2.2
set style line 22 lc rgb "#555555" lw 1.5 pt 8 ps 1.6
set style line 23 lc rgb "#CC79A7" lw 1.5 pt 12 ps 1.8
models = ""
if (arch_banks[2] == arch_banks[2] && arch_width[2] == arch_width[2]) {
  models = models . sprintf("$model using 1:3 with points ls 21 title '%s%s doc. %s', ", short_gpu(2), \
                            same_mv ? ", " . short_gpu(3) : "", geom(2))
}
if (!same_mv && arch_banks[3] == arch_banks[3] && arch_width[3] == arch_width[3]) {
  models = models . sprintf("$model using 1:4 with points ls 23 title '%s doc. %s', ", short_gpu(3), geom(3))
}
if (arch_banks[1] == arch_banks[1] && arch_width[1] == arch_width[1]) {
  models = models . sprintf("$model using 1:2 with points ls 22 title '%s doc. %s', ", short_gpu(1), geom(1))
}
# What the run inferred: banks x width, written at the top left of the middle panel (the first
# holds the key) in each GPU's colour.
inferred_cmd = ""
do for [i=1:words(files)] {
  call 'plots/param_value.gp' param_file(i) "shared_bank_count"
  nb = param_value
  call 'plots/param_value.gp' param_file(i) "shared_bank_width"
  if (nb == nb && param_value == param_value) {
    inferred_cmd = inferred_cmd . sprintf("set label '%s: %d banks x %d B' at graph 0.04, graph %g left front tc rgb '%s' font markfont; ", \
        word(labels, i), int(nb), int(param_value), 0.95 - 0.07 * (i - 1), gpu_color[i])
  }
}

# One panel per access width, strides 0-32 (the pattern repeats past the bank count; the sweep's
# larger strides are left out, not drawn to the edge): all warps' cycles per request, one colour
# per GPU; the documented geometries' pass counts in the 4 B panel, for which they are computed;
# the key above the panels.
max_stride = 32
in_range(s) = s <= max_stride ? s : NaN
wide = 1
do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 16 : (ext eq "svg" ? 9 : 6))
  markfont = mark_font(ext)
  set multiplot layout 1, 3 margins 0.08, 0.99, 0.16, 0.84 spacing 0.03, 0
  set xrange [-0.5:32.5]
  set xtics 0, 8, 32
  set mxtics 4
  set logscale y 2
  set yrange [0.7:48]
  set ytics (1, 2, 4, 8, 16, 32)
  do for [k=1:3] {
    # The key above the panels: no curve or mark under it.
    set key at screen 0.5, screen 0.995 center top vertical font keyfont
    w = word(widths, k)
    set title sprintf("%s B per lane", w) font keyfont
    set xlabel (k == 2 ? "stride between lanes (elements of the access width)" : "")
    set ylabel (k == 1 ? "cycles per request (all warps)" : "")
    set format y (k == 1 ? "%g" : "")
    unset label
    if (k == 2) { eval inferred_cmd }
    if (k == 1) {
      plot @models for [i=1:words(files)] word(files, i) \
             using (sel("stride_throughput", "cycles/request", w) ? in_range(column("stride")) : NaN):"value" \
             with linespoints ls i pt 7 ps 0.5 title word(labels, i) . " measured"
    } else {
      unset key
      plot for [i=1:words(files)] word(files, i) \
             using (sel("stride_throughput", "cycles/request", w) ? in_range(column("stride")) : NaN):"value" \
             with linespoints ls i pt 7 ps 0.5 notitle
    }
  }
  unset multiplot
}
