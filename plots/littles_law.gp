# family: bytes_in_flight
# title: Little's law: bandwidth against bytes in flight per SM
# read: Bandwidth rises with bytes in flight until the peak; the marked line is 90 % of DRAM peak.
load 'plots/style.gp'
set datafile missing NaN

KiB = 1024.0
level(l) = is_probe(l) && is_unit("GB/s") ? column("bytes_in_flight_per_sm") / KiB : NaN

# Little's law per GPU and level from its littles_law row: bandwidth rises as bytes / latency
# until the peak, reached at the row's bytes per SM.
law(x, b, p) = x < b / KiB ? p * x * KiB / b : p
law_row(l) = strcol("probe") eq "littles_law" && strcol("level") eq l
laws = ""
x_lo = 1e30
x_hi = 0
do for [i=1:words(files)] {
  do for [l in "dram l2"] {
    # Counting the matching rows as x keeps stats from failing where there are none.
    stats word(files, i) using (law_row(l) ? 1 : 0):(law_row(l) ? column("value") : 0) nooutput
    if (STATS_sum_x > 0) {
      b = STATS_sum_y / STATS_sum_x
      stats word(files, i) using (law_row(l) ? 1 : 0):(law_row(l) ? column("peak_gbs") : 0) nooutput
      laws = laws . sprintf(", law(x, %g, %g) with lines ls %d dt %d lw 1.5 title '%s %s: latency x peak'", \
                            b, STATS_sum_y / STATS_sum_x, i, l eq "dram" ? 2 : 4, word(labels, i), l eq "dram" ? "DRAM" : "L2")
    }
  }
  stats word(files, i) using (level("dram")) nooutput
  x_lo = STATS_min < x_lo ? STATS_min : x_lo
  x_hi = STATS_max > x_hi ? STATS_max : x_hi
}

# The talk documents GK104/GK110 (not the representative K80): asked for by that name.
call 'plots/ref_value.gp' "GK104/GK110" "dram_bytes_in_flight_90pct"
kepler = ref_value / KiB
if (kepler == kepler) {
  set arrow 1 from kepler, graph 0 to kepler, graph 1 nohead ls 11 dt 3 lw 2
  set label 1 "Kepler (GTC 2013):\nabout 100 lines of 128 B" at kepler, graph 0.12 right offset -0.5, 0 tc rgb kepler_color
}

# What the run inferred: the least bytes in flight per SM for 90 % of the DRAM peak.
do for [i=1:words(files)] {
  call 'plots/mark_knee.gp' (i) "dram_bytes_in_flight_90pct" "90 % of DRAM peak:" (KiB)
}

set logscale x 2
set logscale y 10
set xrange [x_lo / 1.5 : x_hi * 1.5]
set samples 400
set format x "%g"
set xlabel "bytes in flight per SM (KiB)"
set ylabel "bandwidth (GB/s)"
set key bottom right noenhanced

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 6))
  set key font keyfont
  markfont = mark_font(ext)
  unset object
  eval marks_cmd
  plot for [i=1:words(files)] word(files, i) using (level("dram")):"value" \
         with points ls i pt 7 ps 0.9 title word(labels, i) . " DRAM", \
       for [i=1:words(files)] word(files, i) using (level("l2")):"value" \
         with points ls i pt 6 ps 0.9 title word(labels, i) . " L2" \
       @laws
}
