# family: l2_topology
# title: SM x L2 line latency map: the L2 partitions
# read: Each SM's first read of freshly written lines; SMs ordered by the group they read fastest: the groups are the partitions.
load 'plots/style.gp'

f = word(files, 1)
sel = 'is_probe("first_read") && is_unit("cycles")'
stats f using (@sel ? column("value") : NaN) nooutput
lo = STATS_min
hi = STATS_max

set xlabel "SM (ordered by near group)"
set ylabel "L2 line (ordered by group)"
set cblabel "cycles"
set cbrange [lo : hi]
eval palette_cmd
set tics out
set grid noxtics noytics
set autoscale fix
unset key

# What the run inferred (first run only, as drawn): the partitions and how many SMs read each
# fastest, the spread of near and far hit latency across SMs, and the GPCs, in the title.
inferred = ""
call 'plots/param_value.gp' param_file(1) "l2_partitions"
if (param_value == param_value) {
  inferred = sprintf(": %.0f L2 partitions", param_value)
  near_sms = ""
  do for [k=0:int(param_value) - 1] {
    call 'plots/param_value.gp' (param_file(1)) (sprintf("l2_near_sm_count_%d", k))
    if (param_value == param_value) { near_sms = near_sms . (near_sms eq "" ? "" : " + ") . sprintf("%.0f", param_value) }
  }
  inferred = inferred . (near_sms eq "" ? "" : ", " . near_sms . " SMs near")
  call 'plots/param_value.gp' param_file(1) "l2_near_hit_latency_sm_spread"
  spread_near = param_value
  call 'plots/param_value.gp' param_file(1) "l2_far_hit_latency_sm_spread"
  if (spread_near == spread_near && param_value == param_value) {
    inferred = inferred . sprintf("\nspread across SMs: near %.0f, far %.0f cycles", spread_near, param_value)
  }
}
call 'plots/param_value.gp' param_file(1) "gpc_count"
if (param_value == param_value) {
  gpcs = param_value
  call 'plots/param_value.gp' param_file(1) "tpc_count"
  inferred = inferred . (strstrt(inferred, "\n") > 0 ? "; " : "\n") . sprintf("%.0f GPCs", gpcs) . \
             (param_value == param_value ? sprintf(", %.0f TPCs", param_value) : "")
}

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  set title word(labels, 1) . inferred font sprintf(",%d", ext eq "png" ? 20 : (ext eq "svg" ? 11 : 6))
  plot f using (@sel ? column("sm_order") : NaN):(column("line_order")):(column("value")) \
       with image notitle
}
