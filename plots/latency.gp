# family: latency
# title: Pointer-chase latency against footprint
# read: Plateaus are cache levels (values marked), knees their capacities (intervals shaded); documented levels: ticks at right.
load 'plots/style.gp'

probes = "ld_global ld_cg ld_nc shared constant"
# ld.global, ld.cg and ld.nc lie on one another past the L1, and ld.nc on ld.global below it:
# ld.global is the line (small filled marks) that the levels are read from; ld.cg's open squares
# sit on its dashed line; ld.nc, drawn last as large open circles without a line, one measured
# point in nc_every, rings ld.global's marks where the two agree: neither hides the other.
line_order = "constant shared ld_cg ld_global"
probe_title(p) = p eq "ld_global" ? "ld.global" : p eq "ld_cg" ? "ld.cg" : p eq "ld_nc" ? "ld.nc" : p
probe_dt(p) = p eq "ld_global" ? 1 : p eq "ld_cg" ? 2 : p eq "shared" ? 3 : 5
probe_pt(p) = p eq "ld_global" ? 7 : p eq "ld_cg" ? 4 : p eq "ld_nc" ? 6 : p eq "shared" ? 11 : 13
probe_ps(p) = p eq "ld_global" ? 0.6 : p eq "ld_nc" ? 1.8 : 1
nc_lw = 1.2
nc_every = 2
nc_n = 0
nc_pick(x) = (nc_n = nc_n + 1, nc_n % nc_every == 0 ? x : NaN)
sel(p) = is_probe(p) && is_unit("cycles")

# Documented levels of the representative Kepler, Maxwell and Volta parts; a level that is not
# documented for a part (NaN) is not drawn. The curves are pointer chases: a level measured by
# another method (the papers' index chase) is labelled so.
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["K80", "M60", "V100"]
quantities = "l1_hit_latency l2_near_hit_latency dram_latency shared_latency"
quantity_title(q) = q eq "l1_hit_latency" ? "L1" : q eq "l2_near_hit_latency" ? "L2" : \
                    q eq "dram_latency" ? "DRAM" : "shared"
array level[12]
array level_method[12]
do for [g=1:3] {
  do for [k=1:words(quantities)] {
    call 'plots/ref_value.gp' (arch_gpu[g]) (word(quantities, k)) "pointer_chase"
    level[(g - 1) * 4 + k] = ref_value
    level_method[(g - 1) * 4 + k] = ref_other_method ? " (" . ref_method_text . ")" : ""
  }
}
# Documented levels are context: a short tick at the right edge at the level, and beside it,
# in the right margin, "K|M|V level value", pushed apart where levels lie close (the three L2
# latencies); a star where the figure was measured by another method. No line crosses the curves.
array arch_letter[3] = ["K", "M", "V"]
array doc_v[12]
array doc_t[12]
array doc_c[12]
n_doc = 0
other_methods = ""
do for [g=1:3] {
  do for [k=1:4] {
    v = level[(g - 1) * 4 + k]
    if (v == v) {
      n_doc = n_doc + 1
      doc_v[n_doc] = v
      doc_t[n_doc] = sprintf("%s %s %g%s", arch_letter[g], quantity_title(word(quantities, k)), v, \
                             level_method[(g - 1) * 4 + k] eq "" ? "" : "*")
      doc_c[n_doc] = g == 1 ? kepler_color : g == 2 ? maxwell_color : volta_color
      m = level_method[(g - 1) * 4 + k]
      m = m eq "" ? "" : m[3:strlen(m) - 1]
      if (m ne "" && strstrt(other_methods, m) == 0) { other_methods = other_methods . (other_methods eq "" ? "" : ", ") . m }
    }
  }
}
# Sorted by value (insertion sort), then each label at least doc_gap above the one below, in
# graph units of the log y axis (ymin, ymax as set below).
ymin = 10.; ymax = 10000.
do for [a=2:n_doc] {
  do for [b=a:2:-1] {
    if (doc_v[b] < doc_v[b - 1]) {
      tv = doc_v[b]; doc_v[b] = doc_v[b - 1]; doc_v[b - 1] = tv
      tt = doc_t[b]; doc_t[b] = doc_t[b - 1]; doc_t[b - 1] = tt
      tc = doc_c[b]; doc_c[b] = doc_c[b - 1]; doc_c[b - 1] = tc
    }
  }
}
doc_gap = 0.042
array doc_at[12]
do for [a=1:n_doc] {
  f = log(doc_v[a] / ymin) / log(ymax / ymin)
  doc_at[a] = a > 1 && f < doc_at[a - 1] + doc_gap ? doc_at[a - 1] + doc_gap : f
}
labels_cmd = ""
do for [a=1:n_doc] {
  labels_cmd = labels_cmd . sprintf("set arrow from graph 0.975, first %g to graph 1, first %g nohead front lc rgb '%s' lw 2; ", \
      doc_v[a], doc_v[a], doc_c[a])
  labels_cmd = labels_cmd . sprintf("set arrow from graph 1, first %g to graph 1.02, graph %g nohead front lc rgb '%s' lw 0.6; ", \
      doc_v[a], doc_at[a], doc_c[a])
  labels_cmd = labels_cmd . sprintf("set label '%s' at graph 1.025, graph %g left front tc rgb '#606060' font labelfont; ", \
      doc_t[a], doc_at[a])
}
doc_key = n_doc == 0 ? "" : "documented:\nK = K80\nM = M60\nV = V100" . \
          (other_methods eq "" ? "" : "\n* " . other_methods)

# The x axis ends at the first 4x tic past the largest footprint of any file.
xmax = 1024
do for [i=1:words(files)] {
  stats word(files, i) using (is_unit("cycles") ? column("footprint_bytes") : 0) nooutput
  xmax = STATS_max > xmax ? STATS_max : xmax
}
x_hi = 1.05 * 256 * 4**ceil(log(xmax / 256) / log(4) - 1e-9)

# What the run inferred, in each GPU's colour: plateaus as "name value" at the level, knees as a
# dotted line at the capacity over its interval (shaded). Every level between L1 and DRAM that
# the run names: a mid cache, the L2 (near and far), a last-level cache.
array lvl_name[6] = ["L1", "mid", "L2", "L2 far", "LLC", "DRAM"]
array lvl_q[6] = ["l1_hit_latency", "mid_cache_hit_latency", "l2_near_hit_latency", "l2_far_hit_latency", \
                  "llc_hit_latency", "dram_latency"]
array knee_name[5] = ["L1", "mid", "L2/2", "L2", "LLC"]
array knee_q[5] = ["l1_size", "mid_cache_size", "l2_segment_size", "l2_size", "llc_size"]
marks_cmd = ""
knee_text(b) = b >= 1048576 ? sprintf("%.0f MiB", b / 1048576.) : sprintf("%.0f KiB", b / 1024.)
knee_step = 0.17
# known(v): the run gave the value (NaN where it did not)
known(v) = v == v
do for [i=1:words(files)] {
  array knee_at[5]
  do for [k=1:5] {
    call 'plots/mark_knee.gp' (i) (knee_q[k]) (knee_name[k])
    knee_at[k] = knee_value
  }
  # an unsplit L2 is l2_hit_latency
  call 'plots/param_value.gp' param_file(i) "l2_near_hit_latency"
  lvl_q[3] = param_value == param_value ? "l2_near_hit_latency" : "l2_hit_latency"
  # A level's label sits inside its plateau: after the knee before it (the L2's after the mid
  # cache's where there is one). The far L2's plateau is short: its label ends before the knee
  # that starts it; DRAM's ends at the right edge, clear of the far L2's.
  inner_end = known(knee_at[2]) ? knee_at[2] : knee_at[1]
  do for [k=1:6] {
    x = k == 1 ? 512 : k == 2 ? 1.2 * knee_at[1] : \
        k == 3 ? (known(inner_end) ? 2 * inner_end : 1048576) : \
        k == 4 ? (known(knee_at[3]) ? 0.85 * knee_at[3] : 16777216) : \
        k == 5 ? 1.5 * knee_at[4] : x_hi / 1.1
    level_just = k == 4 || k == 6 ? "right" : "left"
    # L1's label stays above its level: the shared and constant curves lie just below it.
    level_side = k == 1 ? "above" : "around"
    if (known(x)) { call 'plots/mark_level.gp' (i) (lvl_q[k]) (lvl_name[k]) (x) "%.0f" }
  }
}

set logscale x 2
set xrange [192 : x_hi]
set logscale y 10
set xtics ("256 B" 256, "4 KiB" 4096, "64 KiB" 65536, "1 MiB" 1048576, "16 MiB" 16777216, \
           "256 MiB" 268435456)
set xtics add ("" 1024 1, "" 16384 1, "" 262144 1, "" 4194304 1, "" 67108864 1, "" 1073741824 1)
set ytics (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
set yrange [ymin : ymax]
if (n_doc > 0) { set rmargin at screen 0.85 }
set xlabel "footprint (bytes, 128 B between pointers; constant: 64 B)"
set ylabel "cycles per dependent load"

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 16 : (ext eq "svg" ? 9 : 6))
  labelfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 8 : 5))
  # about 90 points a curve: small marks, so that the refined knees stay legible
  pscale = ext eq "pdf" ? 0.3 : 0.5
  set key top left font keyfont
  markfont = mark_font(ext)
  unset label
  unset object
  unset arrow
  eval labels_cmd
  eval marks_cmd
  set label 99 doc_key at graph 1.025, graph 0.98 left front tc rgb '#606060' font labelfont
  # Refinement adds points after the coarse sweep: smooth unique puts each curve in x order.
  # The key names each GPU by its colour and each load path by its dashes and marks (and, for
  # one GPU, its colour). ld.global, whose levels are marked, is drawn last with smaller points,
  # over the paths that lie on it, whose open points show around its own.
  nc = word_index(probes, "ld_nc", 1)
  plot for [i=1:words(files)] for [p in line_order] word(files, i) \
         using (sel(p) ? column("footprint_bytes") : NaN):"value" smooth unique \
         with linespoints ls i lc rgb series_color(i, word_index(probes, p, 1)) dt probe_dt(p) \
         pt probe_pt(p) ps probe_ps(p) * pscale notitle, \
       for [i=1:words(files)] word(files, i) using (sel("ld_nc") ? nc_pick(column("footprint_bytes")) : NaN):"value" \
         with points ls i lc rgb series_color(i, nc) lw nc_lw pt probe_pt("ld_nc") ps probe_ps("ld_nc") * pscale notitle, \
       for [i=1:words(files)] NaN with lines ls i title word(labels, i), \
       for [p in "ld_global ld_cg"] NaN with linespoints lc rgb key_color(word_index(probes, p, 1)) \
         dt probe_dt(p) pt probe_pt(p) ps pscale title probe_title(p), \
       NaN with points lc rgb key_color(nc) lw nc_lw pt probe_pt("ld_nc") ps probe_ps("ld_nc") * pscale \
         title probe_title("ld_nc"), \
       for [p in "shared constant"] NaN with linespoints lc rgb key_color(word_index(probes, p, 1)) \
         dt probe_dt(p) pt probe_pt(p) ps pscale title probe_title(p)
}
