# family: fine_grained
# title: Fine-grained chase: the latency of every access
# read: Each point is one access; misses stand above the hit level at the fetch-unit and set boundaries.
load 'plots/style.gp'
wide = 1  # panels side by side: double column

traced(t) = is_probe("trace") && is_unit("cycles") && strcol("trace") eq t
resident(s) = is_probe("resident_lines") && is_unit("lines") && strcol("series") eq s

# sets x line of each representative part: the stride from which only the ways stay resident.
# Parts that agree share one label.
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["K80", "M60", "V100"]
array doc_sets[3]
array doc_line[3]
# A documented geometry found another way than this figure's fine-grained chase names its method.
array doc_note[3] = ["", "", ""]
do for [g=1:3] {
  call 'plots/ref_value.gp' (arch_gpu[g]) "l1_sets" "fine_grained_chase"
  doc_sets[g] = ref_value
  if (ref_other_method) { doc_note[g] = ", " . ref_method_text }
  call 'plots/ref_value.gp' (arch_gpu[g]) "l1_line_size" "fine_grained_chase"
  doc_line[g] = ref_value
  if (ref_other_method && strstrt(doc_note[g], ref_method_text) == 0) { doc_note[g] = doc_note[g] . ", " . ref_method_text }
}
marks_cmd = ""
refs = ""
shown_labels = 0
do for [g=1:3] {
  x = doc_sets[g] * doc_line[g]
  if (x == x) {
    marks_cmd = marks_cmd . sprintf("set arrow from %g, graph 0 to %g, graph 1 nohead ls %d back; ", x, x, 10 + g)
    refs = refs . sprintf(", NaN with lines ls %d title '%s (documented%s)'", 10 + g, arch_name[g], doc_note[g])
    first = 1
    names = ""
    do for [h=1:3] {
      if (doc_sets[h] * doc_line[h] == x && doc_sets[h] == doc_sets[g]) {
        if (h < g) { first = 0 }
        names = names . (names eq "" ? "" : ", ") . arch_name[h]
      }
    }
    if (first) {
      shown_labels = shown_labels + 1
      marks_cmd = marks_cmd . sprintf("set label '%s: %g sets x %g B' at %g, graph %g offset 0.4, 0 front font labelfont; ", \
          names, doc_sets[g], doc_line[g], x, 0.02 + 0.07 * shown_labels)
    }
  }
}

# What the run inferred, written in the panel it is read from: the L1 line (a miss every line
# in panel a) and the constant cache's L1.5 line (panel b), one row per GPU.
array fg_text[2]
fg_text[1] = ""
fg_text[2] = ""
do for [i=1:words(files)] {
  do for [k=1:2] {
    call 'plots/param_value.gp' param_file(i) (k == 1 ? "l1_line_size" : "constant_l15_line_size")
    if (param_value == param_value) {
      fg_text[k] = fg_text[k] . sprintf("set label %d '%s%s %g B' at graph 0.97, graph %g right front tc rgb '%s' font markfont; ", \
          300 + i, words(files) > 1 ? word(labels, i) . ": " : "", k == 1 ? "L1 line" : "constant L1.5 line", param_value, \
          0.06 + 0.08 * (words(files) - i), gpu_color[i])
    }
  }
}

panel(s) = sprintf("set label '%s' at graph 0.02, graph 0.93 front font titlefont", s)

# A hashed or fully associative L1 has no set to fill: the set-conflict trace is then absent,
# and panel (c) says so. Counted before any panel sets log scales.
conflict_rows = 0
do for [i=1:words(files)] {
  stats word(files, i) using (traced("set_conflict") ? 1 : 0) nooutput
  conflict_rows = conflict_rows + STATS_sum
}

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 12 : (ext eq "svg" ? 7 : 4))
  labelfont = sprintf(",%d", ext eq "png" ? 12 : (ext eq "svg" ? 7 : 4))
  titlefont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 8 : 5))
  tickfont = sprintf(",%d", ext eq "png" ? 15 : (ext eq "svg" ? 9 : 6))
  pscale = ext eq "pdf" ? 0.15 : 0.3
  set multiplot layout 2, 2
  set tics font tickfont
  set logscale y 2
  set yrange [16 : 2048]
  set ytics (16, 32, 64, 128, 256, 512, 1024, 2048)
  set xrange [0:*]
  set xtics autofreq
  set ylabel "cycles"
  set key top right font keyfont

  set xlabel "access (cold pass, then a warm one)"
  unset label
  markfont = mark_font(ext)
  eval fg_text[1]
  eval panel("(a) ld.global, 4 B stride")
  plot for [i=1:words(files)] word(files, i) using (traced("l1_cold") ? column("index") : NaN):"value" \
         with points ls i pt 7 ps pscale title word(labels, i)

  unset label
  eval fg_text[2]
  eval panel("(b) ld.const, 4 B stride")
  plot for [i=1:words(files)] word(files, i) using (traced("constant_cold") ? column("index") : NaN):"value" \
         with points ls i pt 7 ps pscale title word(labels, i)

  set xlabel "access (passes over the set in turn)"
  unset label
  eval panel("(c) ways+1 lines of one L1 set")
  if (conflict_rows > 0) {
    plot for [i=1:words(files)] word(files, i) using (traced("set_conflict") ? column("index") : NaN):"value" \
           with points ls i pt 7 ps pscale title word(labels, i)
  } else {
    set label 20 "no set conflicts found:\nfully associative or hashed index" at graph 0.5, 0.5 center
    unset key
    plot [0:1] [1:2] NaN notitle
    set key
    unset label 20
  }

  unset label
  eval marks_cmd
  eval panel("(d) lines resident")
  set logscale x 2
  set xrange [16 : 262144]
  set xtics ("32" 32, "256" 256, "2K" 2048, "16K" 16384, "128K" 131072)
  set yrange [1 : 65536]
  set ytics ("1" 1, "16" 16, "256" 256, "4K" 4096, "64K" 65536)
  set xlabel "stride (bytes)"
  set ylabel "lines resident"
  set key top right font keyfont
  plot for [i=1:words(files)] word(files, i) using (resident("sets") ? column("stride_bytes") : NaN):"value" \
         smooth unique with linespoints ls i lc rgb series_color(i, 1) pt 7 ps 2 * pscale title sprintf("%s, 2^k B", word(labels, i)), \
       for [i=1:words(files)] word(files, i) using (resident("line") ? column("stride_bytes") : NaN):"value" \
         smooth unique with linespoints ls i lc rgb series_color(i, 2) dt 2 pt 9 ps 2 * pscale title sprintf("%s, odd x 32 B", word(labels, i)) @refs
  unset arrow
  unset logscale x
  unset multiplot
}
