# family: ilp_occupancy
# title: ILP against occupancy (Volkov): fp32 FMA and DRAM loads
# read: One curve per ILP: more independent operations reach the peak with fewer warps.
load 'plots/style.gp'
set datafile missing NaN

ilps = "1 2 4 8"
ilp_dt(k) = k == 1 ? 1 : k == 2 ? 2 : k == 4 ? 4 : 5
ilp_pt(k) = k == 1 ? 7 : k == 2 ? 5 : k == 4 ? 9 : 11
sel(p, k) = is_probe(p) && column("ilp") == k
ilp_index(k) = k == 1 ? 1 : k == 2 ? 2 : k == 4 ? 3 : 4
nfiles = words(files)

# Documented peak fp32 FMA rates: the measured GPU's compute capability (from the first
# file's metadata), then the representative Kepler, Maxwell and Volta parts.
cc = system(sprintf("sed -n 's/^# compute_capability=//p' '%s' | head -n 1", word(files, 1)))
_dv = ""
if (cc ne "") {
  stats ref using ((_dv eq "" && strcol("cc") eq cc && strcol("quantity") eq "fp32_fma_throughput_per_sm") ? \
                   (_dv = strcol("value"), 1) : 0) nooutput
}
array doc_level[4]
array doc_name[4] = [sprintf("cc %s", cc), "K80", "M60", "V100"]
array doc_color[4] = ["#000000", kepler_color, maxwell_color, volta_color]
doc_level[1] = _dv ne "" ? real(_dv) : NaN
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
do for [g=1:3] {
  call 'plots/ref_value.gp' (arch_gpu[g]) "fp32_fma_throughput_per_sm"
  doc_level[g + 1] = ref_value
}
# One dashed level per documented value; parts documented alike share its label.
levels = ""
labels_cmd = ""
do for [s=1:4] {
  v = doc_level[s]
  first = v == v
  do for [t=1:s-1] { first = first && doc_level[t] != v }
  if (first) {
    names = doc_name[s]
    do for [t=s+1:4] { if (doc_level[t] == v) { names = names . ", " . doc_name[t] } }
    levels = levels . sprintf(", %g with lines lc rgb '%s' dt 2 lw 1.5 notitle", v, doc_color[s])
    labels_cmd = labels_cmd . sprintf("set label '%s documented: %g' at graph 0.99, first %g offset 0, 0.5 right front tc rgb '%s' font labelfont; ", \
                 names, v, v, doc_color[s])
  }
}

# What the run inferred, per panel: the fewest warps reaching 90 % of the peak for each ILP (a
# knee over its interval) and, for an ILP that never gets there, its best rate as a fraction of
# the peak (a ring on that point). One GPU: a row per ILP at its knee, the ceilings in the rows
# below at the right. Several GPUs: the bands and rings, and one summary row per GPU at the
# right, under the key (rows per ILP and GPU would fill the panel).
knee_rotate = 0
knee_step = 0.09
knee_text(v) = sprintf("%g warps", v)
array panel_marks[2]
do for [pn=1:2] {
  kind = pn == 1 ? "fp32_fma" : "dram_load"
  marks_cmd = ""
  row = 0
  do for [i=1:nfiles] {
    knees = ""
    ceilings = ""
    do for [k in "8 4 2 1"] {
      knee_slot = row + 1
      mark_color = series_color(i, ilp_index(k + 0))
      call 'plots/mark_knee.gp' (i) (kind . "_warps_90pct_ilp" . k) (nfiles > 1 ? "-" : "ILP " . k . ":")
      if (knee_value == knee_value) {
        row = nfiles > 1 ? row : row + 1
        knees = knees . sprintf("%sILP %s %g", knees eq "" ? "" : ", ", k, knee_value)
      }
      call 'plots/param_value.gp' param_file(i) (kind . "_ceiling_ilp" . k)
      if (param_value == param_value) {
        stats word(files, i) using (sel(kind, k + 0) ? column("warps_per_sm") : NaN):"value" nooutput
        marks_tag = marks_tag + 1
        marks_cmd = marks_cmd . sprintf("set label %d '' at %g, %g point pt 6 ps 2.5 lc rgb '%s' front; ", \
            marks_tag, STATS_pos_max_y, STATS_max_y, series_color(i, ilp_index(k + 0)))
        ceilings = ceilings . sprintf("%sILP %s %.2f", ceilings eq "" ? "" : ", ", k, param_value)
        if (nfiles == 1) {
          row = row + 1
          marks_tag = marks_tag + 1
          marks_cmd = marks_cmd . sprintf("set label %d 'ILP %s never 90 %%: best %.2f of peak (ring)' at graph 0.99, graph %g right offset 0, -0.6 front tc rgb '%s' font markfont; ", \
              marks_tag, k, param_value, 0.97 - knee_step * (row - 1), series_color(i, ilp_index(k + 0)))
        }
      }
    }
    if (nfiles > 1 && (knees ne "" || ceilings ne "")) {
      row = row + 1
      marks_tag = marks_tag + 1
      marks_cmd = marks_cmd . sprintf("set label %d '%s: %s%s' at graph 0.99, graph %g right offset 0, -0.6 front tc rgb '%s' font markfont; ", \
          marks_tag, word(labels, i), knees eq "" ? "" : "90 % at " . knees . " warps", \
          ceilings eq "" ? "" : (knees eq "" ? "" : "; ") . "best of peak (ring) " . ceilings, \
          0.8 - knee_step * (row - 1), gpu_color[i])
    }
  }
  panel_marks[pn] = marks_cmd
}
knee_slot = 0
mark_color = ""

set logscale x 2
set xrange [0.8 : 80]
set xtics (1, 2, 4, 8, 16, 32, 64)
set grid xtics ytics

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 13 : (ext eq "svg" ? 8 : 6))
  labelfont = sprintf(",%d", ext eq "png" ? 12 : (ext eq "svg" ? 7 : 5))
  set multiplot
  set lmargin at screen 0.12
  set rmargin at screen 0.97
  set tmargin at screen 0.97
  set bmargin at screen 0.58
  set key top left font keyfont maxrows 4
  set format x ""
  set xlabel ""
  set ylabel "fp32 FMA\nresults/clk/SM"
  # Head room above the curves and the documented levels for the marks' rows.
  set yrange [0:350]
  unset offsets
  markfont = mark_font(ext)
  unset label
  unset object
  unset arrow
  eval labels_cmd
  eval panel_marks[1]
  plot for [i=1:nfiles] for [k in ilps] word(files, i) \
         using (sel("fp32_fma", k + 0) ? column("warps_per_sm") : NaN):"value" smooth unique \
         with linespoints ls i lc rgb series_color(i, ilp_index(k + 0)) dt ilp_dt(k + 0) pt ilp_pt(k + 0) \
         title sprintf("%s ILP %s", word(labels, i), k) @levels
  unset label
  unset object
  unset arrow
  eval panel_marks[2]
  set tmargin at screen 0.53
  set bmargin at screen 0.14
  set format x "%g"
  set xlabel "warps per SM (set exactly)"
  set ylabel "DRAM loads\nbytes/clk/SM"
  set yrange [0:*]
  set offsets 0, 0, graph 0.6, 0
  unset key
  plot for [i=1:nfiles] for [k in ilps] word(files, i) \
         using (sel("dram_load", k + 0) ? column("warps_per_sm") : NaN):"value" smooth unique \
         with linespoints ls i lc rgb series_color(i, ilp_index(k + 0)) dt ilp_dt(k + 0) pt ilp_pt(k + 0) notitle
  unset multiplot
}
