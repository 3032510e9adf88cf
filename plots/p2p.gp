# family: p2p
# title: GPU to GPU bandwidth per ordered pair, one panel per mode
# read: Row: the GPU that initiates (its copy engine or kernel moves the data); column: the peer whose memory it writes or reads; GB/s in each cell.
load 'plots/style.gp'

nfiles = words(files)
# Every pair mode, then each pair's own rate while all pairs copy at once, then the latency.
all_modes = "ce_write ce_read sm_write sm_read ce_write_bidir ce_read_bidir sm_write_bidir sm_read_bidir all_pairs_write_ce all_pairs_write_sm latency"
# Several runs: one row of panels each, the one-way modes only (compare.md has every mode's
# median side by side).
compare_modes = "ce_write ce_read sm_write sm_read"
modes = nfiles > 1 ? compare_modes : all_modes
unit_of(m) = m eq "latency" ? "ns" : "GB/s"
cell(m) = is_probe(m) && is_unit(unit_of(m)) && strcol("peer") ne ""

# The modes the first run measured (a run before the full set has four), and its GPU count.
shown = ""
gpus = 0
do for [m in modes] {
  stats word(files, 1) using (cell(m) ? 1 : 0) nooutput
  if (STATS_sum > 0) {
    shown = shown . " " . m
    stats word(files, 1) using (cell(m) ? (column("device") > column("peer") ? column("device") : column("peer")) : 0) nooutput
    gpus = STATS_max + 1 > gpus ? STATS_max + 1 : gpus
  }
}
if (words(shown) == 0) { print "p2p.gp: no pair rows in ", word(files, 1); exit status 1 }

# The median the run inferred, in the panel's title.
param_of(m) = m eq "latency" ? "p2p_latency" : "p2p_" . m . "_bandwidth"
array median_of[words(shown) * nfiles]
do for [i=1:nfiles] {
  do for [k=1:words(shown)] {
    call 'plots/param_value.gp' param_file(i) param_of(word(shown, k))
    median_of[(i - 1) * words(shown) + k] = param_value
  }
}
# (all pairs at once: each pair's own rate in the cells, the node's total in the title)
panel_title(i, k) = (nfiles > 1 ? word(labels, i) . ": " : "") . word(shown, k) . \
    (median_of[(i - 1) * words(shown) + k] == median_of[(i - 1) * words(shown) + k] ? \
     sprintf(strstrt(word(shown, k), "all_pairs") ? ", node total %.0f %s" : ", median %.0f %s", \
             median_of[(i - 1) * words(shown) + k], unit_of(word(shown, k))) : "")

# One colour scale for every bandwidth panel (0 to the largest cell of all runs), its own for
# the latency, so that like cells look alike across modes and runs.
top_gbs = 0
top_ns = 0
do for [i=1:nfiles] {
  do for [m in shown] {
    stats word(files, i) using (cell(m) ? column("value") : 0) nooutput
    if (m eq "latency") { top_ns = STATS_max > top_ns ? STATS_max : top_ns } else { top_gbs = STATS_max > top_gbs ? STATS_max : top_gbs }
  }
}
top(m) = m eq "latency" ? top_ns : top_gbs
# Which runs have which mode (a run may lack one the first has): asked before the axes'
# ranges are set, which stats would apply.
array present[words(shown) * nfiles]
do for [i=1:nfiles] {
  do for [k=1:words(shown)] {
    stats word(files, i) using (cell(word(shown, k)) ? 1 : 0) nooutput
    present[(i - 1) * words(shown) + k] = STATS_sum > 0
  }
}
# Dark text on the light end of the palette, light text on the dark end.
text_rgb(v, m) = v > 0.6 * top(m) ? 0x000000 : 0xffffff

ncols = nfiles > 1 ? words(shown) : (words(shown) < 4 ? words(shown) : 4)
nrows = nfiles > 1 ? nfiles : int((words(shown) + ncols - 1) / ncols)
wide = 1

eval palette_cmd
set xrange [-0.5 : gpus - 0.5]
set yrange [gpus - 0.5 : -0.5]
set xtics 1 scale 0
set ytics 1 scale 0
set grid noxtics noytics
set border 0
set size ratio -1
unset key
unset colorbox
# The axes are named in the read: line (row: initiating GPU, column: peer), not in each panel.
unset xlabel
unset ylabel
set datafile missing NaN

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  titlefont = sprintf(",%d", ext eq "png" ? 16 : (ext eq "svg" ? 8 : 5))
  # Cells get smaller with more GPUs; their numbers with them.
  cellfont = sprintf(",%d", (ext eq "png" ? 40 : (ext eq "svg" ? 20 : 12)) / (gpus > 2 ? gpus : 2))
  set tics font titlefont
  set multiplot layout nrows, ncols margins 0.05, 0.98, 0.06, 0.94 spacing 0.06, 0.12
  do for [i=1:nfiles] {
    f = word(files, i)
    do for [k=1:words(shown)] {
      m = word(shown, k)
      set title panel_title(i, k) font titlefont noenhanced
      set cbrange [0 : top(m)]
      if (!present[(i - 1) * words(shown) + k]) {
        set label 1 "not measured" at (gpus - 1) / 2.0, (gpus - 1) / 2.0 center font titlefont
        plot NaN notitle
        unset label 1
        continue
      }
      plot f using (cell(m) ? column("peer") : NaN):(column("device")):(0.5):(0.5):(column("value")) \
             with boxxyerror fillstyle solid 1.0 noborder lc palette, \
           f using (cell(m) ? column("peer") : NaN):(column("device")):(sprintf("%.0f", column("value"))):(text_rgb(column("value"), m)) \
             with labels font cellfont tc rgb variable
    }
  }
  unset multiplot
}
