# family: tlb
# title: TLB reach: cycles per access against footprint
# read: Each step is a TLB level running out of entries; the shaded footprints are the inferred reaches.
load 'plots/style.gp'

strides = "262144 524288 1048576 2097152 4194304 8388608 16777216 33554432 67108864"
stride_title(s) = s < 1048576 ? sprintf("%d KiB", s / 1024) : sprintf("%d MiB", s / 1048576)
stride_dt(k) = (k - 1) % 5 + 1
stride_pt(k) = word("7 5 9 11 13 4 6 8 10", k) + 0
chased(s) = is_probe("chase") && is_unit("cycles") && column("stride_bytes") == s
# The same chase in a virtual space made of one physical chunk mapped again and again (up to
# 1 TiB): the last TLB level's step beyond device memory.
aliased(s) = is_probe("chase_aliased") && is_unit("cycles") && column("stride_bytes") == s
size_text(b) = b >= 1073741824 ? sprintf("%.3g GiB", b / 1073741824.) : sprintf("%.3g MiB", b / 1048576.)

# Documented reach of each TLB level of the representative parts; parts that agree share a label,
# written low, under the curves (the inferred knees are labelled at the top).
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["K80", "M60", "V100"]
quantities = "tlb_l1_coverage tlb_l2_coverage"
quantity_title(q) = q eq "tlb_l1_coverage" ? "L1 TLB" : "L2 TLB"
array doc[6]
do for [k=1:2] {
  do for [g=1:3] {
    call 'plots/ref_value.gp' (arch_gpu[g]) (word(quantities, k))
    doc[(k - 1) * 3 + g] = ref_value
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
        marks_cmd = marks_cmd . sprintf("set label '%s %s: %s' at %g, graph %g offset 0.4, 0 front font labelfont; ", \
            quantity_title(word(quantities, k)), size_text(x), names, x, 0.175 - 0.045 * (shown_labels - 1))
      }
    }
  }
  if (shown) { refs = refs . sprintf(", NaN with lines ls %d title '%s (documented)'", 10 + g, arch_name[g]) }
}

# The aliased chase runs at a few strides only: the (file, stride) pairs it has, so that
# gnuplot is not asked for curves without points. Counting the matching rows as x keeps stats
# from failing where there are none.
aliased_pairs = ""
do for [i=1:words(files)] {
  do for [k=1:words(strides)] {
    stats word(files, i) using (aliased(word(strides, k) + 0) ? 1 : 0):(0) nooutput
    if (STATS_sum_x > 0) { aliased_pairs = aliased_pairs . sprintf(" %d:%d", i, k) }
  }
}
pair_file(p) = int(substr(p, 1, strstrt(p, ":") - 1))
pair_stride(p) = int(substr(p, strstrt(p, ":") + 1, strlen(p)))
aliased_cmd = aliased_pairs eq "" ? "" : \
  ", for [p in aliased_pairs] word(files, pair_file(p)) " . \
  "using (aliased(word(strides, pair_stride(p)) + 0) ? column('footprint_bytes') : NaN):'value' smooth unique " . \
  "with linespoints ls pair_file(p) dt stride_dt(pair_stride(p)) pt 2 ps pscale lw 2.5 notitle, " . \
  "NaN with lines lc rgb '#333333' lw 2.5 title 'aliased virtual space (thick)'"

# What the run inferred: each TLB level's reach over its interval, in the GPU's colour.
do for [i=1:words(files)] {
  call 'plots/mark_knee.gp' (i) "tlb_l1_coverage" "L1 TLB"
  call 'plots/mark_knee.gp' (i) "tlb_l2_coverage" "L2 TLB"
}

set logscale x 2
set xrange [131072 : 1099511627776 * 1.3]
set xtics ("256K" 262144, "4M" 4194304, "64M" 67108864, "1G" 1073741824, "16G" 17179869184, \
           "1T" 1099511627776)
set xtics add ("" 274877906944 1)
set xtics add ("" 1048576 1, "" 16777216 1, "" 268435456 1, "" 4294967296 1, "" 68719476736 1)
set xlabel "footprint (bytes)"
set ylabel "cycles per access"
set yrange [0 : *]

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 13 : (ext eq "svg" ? 7 : 4))
  labelfont = sprintf(",%d", ext eq "png" ? 12 : (ext eq "svg" ? 7 : 4))
  pscale = ext eq "pdf" ? 0.25 : 0.45
  set key outside right top font keyfont
  markfont = mark_font(ext)
  unset arrow
  unset label
  unset object
  eval marks_cmd
  plot for [i=1:words(files)] for [k=1:words(strides)] word(files, i) \
         using (chased(word(strides, k) + 0) ? column("footprint_bytes") : NaN):"value" smooth unique \
         with linespoints ls i lc rgb series_color(i, k) dt stride_dt(k) pt stride_pt(k) ps pscale lw 1 notitle, \
       for [i=1:words(files)] NaN with lines ls i title word(labels, i) @aliased_cmd, \
       for [k=1:words(strides)] NaN with linespoints lc rgb key_color(k) dt stride_dt(k) pt stride_pt(k) \
         ps pscale title sprintf("stride %s", stride_title(word(strides, k) + 0)) @refs
}
