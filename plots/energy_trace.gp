# family: energy
# title: Power, SM clock and temperature over the whole run, each family shaded
# read: NVML read every 25 ms (power_trace.csv); a shaded band is a family (families.csv), red ticks mark samples with a power, thermal or slowdown clock-event reason.
load 'plots/style.gp'
set datafile missing NaN

# The run's own trace and families, beside its energy.csv (the first run's, when comparing).
dir = system(sprintf("dirname \"$(readlink -f '%s')\"", word(files, 1)))
trace = dir . "/power_trace.csv"
fams = dir . "/families.csv"
if (system(sprintf("test -s '%s' && test -s '%s' && echo yes", trace, fams)) ne "yes") {
  print "no power_trace.csv or families.csv beside ", word(files, 1); exit status 1
}
limiting(r) = strstrt(r, "sw_power_cap") || strstrt(r, "hw_slowdown") || strstrt(r, "thermal") || strstrt(r, "power_brake")

# Family spans: start_s and end_s of every family that ran.
array fname[64]
array fstart[64]
array fend[64]
nf = 0
stats fams using (nf < 64 && column("end_s") == column("end_s") ? \
      (nf = nf + 1, fname[nf] = strcol("family"), fstart[nf] = column("start_s"), fend[nf] = column("end_s"), 1) : 0) nooutput
stats trace using "time_s" nooutput
t_max = STATS_max

set xrange [0 : t_max]
# Each panel's range from its data, padded: a constant trace (an idle GPU's temperature) still
# gets a range.
pad_range(col) = sprintf("set autoscale y; stats trace using 'time_s':'%s' nooutput; set yrange [STATS_min_y - 1 - 0.05 * (STATS_max_y - STATS_min_y) : STATS_max_y + 1 + 0.05 * (STATS_max_y - STATS_min_y)]", col)
set grid ytics
set lmargin 12
set rmargin 3
set key at graph 1, graph 1.2 right top horizontal noenhanced nobox noopaque
do for [ext in "svg png pdf"] {
  eval set_output(ext)
  ticfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 7 : 5))
  unset object
  unset label
  do for [k=1:nf] {
    set object k rect from fstart[k], graph 0 to fend[k], graph 1 behind fc rgb (k % 2 ? "#e8eef6" : "#f4f4f4") fs solid noborder
    set label k fname[k] at (fstart[k] + fend[k]) / 2., graph 0.03 rotate by 90 left front font ticfont tc rgb "#606060" noenhanced
  }
  set multiplot layout 3, 1
  set ylabel "power (W)"
  eval pad_range("power_w")
  mark_y = STATS_min_y - 0.5  # the samples with a limiting reason, marked along the panel's foot
  set format x ""
  plot trace using "time_s":"power_w" with lines lc rgb gpu_color[1] title "power (instant)", \
       trace using "time_s":(limiting(strcol("reasons")) ? mark_y : NaN) with points pt 9 ps 0.6 lc rgb "#d00000" \
         title "power, thermal or slowdown reason"
  unset label
  set ylabel "clock (MHz)"
  set autoscale y
  stats trace using "time_s":"sm_clock_mhz" nooutput
  lo = STATS_min_y
  hi = STATS_max_y
  stats trace using "time_s":"mem_clock_mhz" nooutput
  lo = STATS_min_y < lo ? STATS_min_y : lo
  hi = STATS_max_y > hi ? STATS_max_y : hi
  set yrange [lo - 10 - 0.05 * (hi - lo) : hi + 10 + 0.05 * (hi - lo)]
  plot trace using "time_s":"sm_clock_mhz" with lines lc rgb gpu_color[2] title "SM", \
       trace using "time_s":"mem_clock_mhz" with lines lc rgb gpu_color[3] dt 2 title "memory"
  set ylabel "temp. (C)"
  eval pad_range("temperature_c")
  # A short panel: at most about four tick labels, or they overlap.
  span = STATS_max_y - STATS_min_y
  tstep = span > 20 ? 10 : (span > 8 ? 5 : 2)
  set ytics tstep
  set format x "%g"
  set xlabel "time since the run started (s)"
  plot trace using "time_s":"temperature_c" with lines lc rgb gpu_color[4] title "GPU"
  unset multiplot
  unset xlabel
  set ytics autofreq
}
