# family: concurrency
# title: Concurrent kernels and launch overhead
# read: Left: kernels running at once level off at the limit (marked); right: what one launch costs.
load 'plots/style.gp'
set datafile missing NaN

running(u) = is_probe("concurrent_kernels") && is_unit(u) ? column("streams") : NaN
# Launch costs and priorities as categories on x: 1 stream, 2 graph, 3 round trip;
# 1 higher priority, 2 same priority. GPUs side by side within a category.
cost_x(i) = (is_probe("launch") ? (strcol("mode") eq "stream" ? 1 : 2) : is_probe("launch_latency") ? 3 : NaN) \
            + 0.15 * (i - (words(files) + 1) / 2.0)
prio_x(i) = (is_probe("priority") ? (strcol("second") eq "higher_priority" ? 1 : 2) : NaN) \
            + 0.15 * (i - (words(files) + 1) / 2.0)

# Documented: the talk's Kepler (cc 3.5) limit, asked for by the name it is documented under.
call 'plots/ref_value.gp' "Kepler (cc 3.5)" "max_concurrent_kernels"
kepler = ref_value
marks = kepler == kepler ? sprintf(", %g with lines ls 11 title 'Kepler (cc 3.5) documented'", kepler) : ""

# What the run inferred: how many kernels run at once, written at its level.
do for [i=1:words(files)] {
  call 'plots/mark_level.gp' (i) "max_concurrent_kernels" "at most" (1) "%.0f kernels at once"
}

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 13 : (ext eq "svg" ? 8 : 6))
  set multiplot
  # Left: the concurrency step.
  set lmargin at screen 0.11
  set rmargin at screen 0.58
  set tmargin at screen 0.97
  set bmargin at screen 0.15
  set key bottom right noenhanced font keyfont
  set logscale x 2
  set logscale y 2
  set xrange [0.8:*]
  set yrange [0.8:*]
  set xlabel "kernels launched (one per stream)"
  set ylabel "kernels running at once"
  markfont = mark_font(ext)
  eval marks_cmd
  plot for [i=1:words(files)] word(files, i) using (running("kernels")):"value" \
         with linespoints ls i title word(labels, i), \
       x with lines lc rgb "#aaaaaa" dt 3 title "all at once" @marks
  unset label
  unset logscale
  # Right top: launch costs.
  set lmargin at screen 0.70
  set rmargin at screen 0.98
  set tmargin at screen 0.97
  set bmargin at screen 0.62
  set xrange [0.5:3.5]
  set yrange [0:*]
  set xtics ("stream" 1, "graph" 2, "round\ntrip" 3)
  set xlabel ""
  set ylabel "us per launch"
  set key top left noenhanced font keyfont
  plot for [i=1:words(files)] word(files, i) using (cost_x(i)):"value":"p05":"p95" \
         with yerrorbars ls i pt 7 title word(labels, i)
  # Right bottom: priorities.
  set tmargin at screen 0.48
  set bmargin at screen 0.15
  set xrange [0.5:2.5]
  set yrange [0:1.05]
  set xtics ("higher\npriority" 1, "same\npriority" 2)
  set ylabel "blocks overtaken"
  unset key
  plot for [i=1:words(files)] word(files, i) using (prio_x(i)):"value":"p05":"p95" \
         with yerrorbars ls i pt 7 notitle
  unset multiplot
  set xtics autofreq
}
