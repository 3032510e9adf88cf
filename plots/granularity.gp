# family: granularity
# title: Cache line and sector sizes from stride sweeps
# read: A cold curve flattens at its fetch unit (sector or line): the stride where it stops rising.
load 'plots/style.gp'
wide = 1  # panels side by side: double column

# Cold and resident walks of each path: 8-byte accesses (constant: 4-byte).
paths = "l1 readonly l2 l2_32 constant"
path_title(p) = p eq "l1" ? "ld.global" : p eq "readonly" ? "ld.nc" : p eq "l2" ? "ld.cg" : \
                p eq "l2_32" ? "ld.cg, 32 B L2 fetch" : "ld.const"
path_dt(p) = p eq "l1" ? 1 : p eq "readonly" ? 4 : p eq "l2" ? 2 : p eq "l2_32" ? 3 : 5
path_pt(p) = p eq "l1" ? 7 : p eq "readonly" ? 9 : p eq "l2" ? 5 : p eq "l2_32" ? 4 : 13
on_path(p) = p eq "l2_32" ? (strcol("path") eq "l2" && column("l2_fetch_limit_bytes") == 32) : \
             p eq "l2" ? (strcol("path") eq "l2" && !(column("l2_fetch_limit_bytes") == 32)) : \
             strcol("path") eq p
width_of(p) = p eq "constant" ? 4 : 8
walk(p, r) = is_probe("stride") && is_unit("cycles") && on_path(p) && \
             column("width_bytes") == width_of(p) && strcol("residency") eq r

# Documented fetch units of the representative parts, one dashed mark each; parts that agree
# share one label.
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["K80", "M60", "V100"]
quantities = "l1_sector_size constant_line_size"
quantity_title(q) = q eq "l1_sector_size" ? "L1 sector" : "const line"
array doc[6]
# A documented size found another way than this figure's stride sweep names its method.
array doc_note[3] = ["", "", ""]
do for [k=1:2] {
  do for [g=1:3] {
    call 'plots/ref_value.gp' (arch_gpu[g]) (word(quantities, k)) "stride_sweep"
    doc[(k - 1) * 3 + g] = ref_value
    if (ref_value == ref_value && ref_other_method && strstrt(doc_note[g], ref_method_text) == 0) {
      doc_note[g] = doc_note[g] . ", " . ref_method_text
    }
  }
}
marks_cmd = ""
refs = ""
shown_labels = 0
do for [g=1:3] {
  shown = 0
  do for [k=1:2] {
    x = doc[(k - 1) * 3 + g]
    if (x == x) {
      shown = 1
      marks_cmd = marks_cmd . sprintf("set arrow from %g, graph 0 to %g, graph 1 nohead ls %d back; ", x, x, 10 + g)
      first = 1
      names = ""
      do for [h=1:3] {
        if (doc[(k - 1) * 3 + h] == x) {
          if (h < g) { first = 0 }
          names = names . (names eq "" ? "" : ", ") . arch_name[h]
        }
      }
      if (first) {
        shown_labels = shown_labels + 1
        marks_cmd = marks_cmd . sprintf("set label '%s %g B: %s' at %g, graph %g offset 0.4, 0 front font labelfont; ", \
            quantity_title(word(quantities, k)), x, names, x, 0.99 - 0.04 * shown_labels)
      }
    }
  }
  if (shown) { refs = refs . sprintf(", NaN with lines ls %d title '%s (documented%s)'", 10 + g, arch_name[g], doc_note[g]) }
}

# What the run inferred: each fetch unit a dotted line over its interval in the GPU's colour,
# and the values listed at the bottom left (several share one stride: no label on the lines).
array unit_q[5] = ["l1_sector_size", "readonly_line_size", "l2_sector_size", "l2_line_size", "constant_line_size"]
array unit_name[5] = ["L1 sector", "ld.nc line", "L2 sector", "L2 line", "const line"]
inferred_cmd = ""
do for [i=1:words(files)] {
  text = ""
  do for [k=1:5] {
    # one line per unit, each read off another path's curve: neutral where paths have colours
    mark_color = text_color(i)
    call 'plots/mark_knee.gp' (i) (unit_q[k]) "-"
    if (knee_value == knee_value) { text = text . sprintf("%s%s %g B", text eq "" ? "" : (k == 3 || k == 5 ? ",\n" : ", "), unit_name[k], knee_value) }
  }
  if (text ne "") {
    inferred_cmd = inferred_cmd . sprintf("set label %d '%s: %s' at graph 0.02, graph %g left front tc rgb '%s' font markfont; ", \
        300 + i, word(labels, i), text, 0.12 + 0.15 * (words(files) - i), text_color(i))
  }
}

mark_color = ""

# Bytes per warp request: where each pattern sits on the x axis, and what it moves when every
# 32 B sector it touches is moved once (the bus-utilisation arithmetic of GTC 2013).
pattern_x(p, k) = p eq "aligned" ? 1 : p eq "offset" ? 2 : p eq "permuted" ? 3 : \
                  p eq "strided" ? 3 + log(k) / log(2) : p eq "scattered" ? 9 : NaN
$sector_model << EOD
x,bytes
1,128
2,160
3,128
4,256
5,512
6,1024
7,1024
8,1024
9,1024
EOD
moved(l) = is_probe("warp_pattern") && is_unit("bytes") && strcol("level") eq l

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 13 : (ext eq "svg" ? 7 : 4))
  labelfont = sprintf(",%d", ext eq "png" ? 12 : (ext eq "svg" ? 7 : 4))
  pscale = ext eq "pdf" ? 0.35 : 0.6
  set multiplot layout 1, 2

  set logscale x 2
  set xrange [3 : 1400]
  set xtics ("4" 4, "16" 16, "64" 64, "256" 256, "1K" 1024) font ""
  set xtics add ("" 8 1, "" 32 1, "" 128 1, "" 512 1)
  set logscale y 2
  set yrange [3 : 2048]
  set ytics (8, 16, 32, 64, 128, 256, 512, 1024, 2048)
  set xlabel "stride between accesses (bytes)"
  set bars 0
  set ylabel "cycles per access"
  set key bottom right font keyfont
  markfont = mark_font(ext)
  unset arrow
  unset label
  unset object
  eval marks_cmd
  eval inferred_cmd
  plot for [i=1:words(files)] for [p in paths] word(files, i) \
         using (walk(p, "cold") ? column("stride_bytes") : NaN):"value" smooth unique \
         with linespoints ls i lc rgb series_color(i, word_index(paths, p, 1)) dt path_dt(p) pt path_pt(p) ps pscale notitle, \
       for [i=1:words(files)] for [p in paths] word(files, i) \
         using (walk(p, "resident") ? column("stride_bytes") : NaN):"value" smooth unique \
         with lines ls i lc rgb series_color(i, word_index(paths, p, 1)) dt path_dt(p) lw 0.6 notitle, \
       for [i=1:words(files)] NaN with lines ls i title word(labels, i), \
       for [p in paths] NaN with linespoints lc rgb key_color(word_index(paths, p, 1)) dt path_dt(p) pt path_pt(p) ps pscale \
         title path_title(p) @refs

  unset arrow
  unset label
  unset object
  unset logscale x
  set xrange [0.5 : 9.5]
  set xtics ("aligned" 1, "offset" 2, "perm." 3, "x2" 4, "x4" 5, "x8" 6, "x16" 7, "x32" 8, \
             "scatt." 9) rotate by 45 right font labelfont
  set yrange [64 : 4096]
  set ytics (64, 128, 256, 512, 1024, 2048, 4096)
  set xlabel "warp address pattern"
  set ylabel "bytes moved per 128 B request"
  set key top left font keyfont
  plot $sector_model using 1:2:($1 - 0.42):($1 + 0.42) with xerrorbars pt -1 lc rgb "#999999" \
         lw 2 title "32 B sectors", \
       for [i=1:words(files)] word(files, i) \
         using (moved("l2") ? pattern_x(strcol("pattern"), column("stride_words")) : NaN):"value" \
         with points ls i lc rgb series_color(i, 1) pt 7 ps 1.2 * pscale title sprintf("%s from L2", word(labels, i)), \
       for [i=1:words(files)] word(files, i) \
         using (moved("dram") ? pattern_x(strcol("pattern"), column("stride_words")) : NaN):"value" \
         with points ls i lc rgb series_color(i, 2) pt 5 ps 1.2 * pscale title sprintf("%s from DRAM", word(labels, i))
  set xtics norotate
  unset multiplot
}
