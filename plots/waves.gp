# family: concurrency
# title: The tail effect: run time against grid size in waves
# read: A staircase: each partial wave costs a whole block time.
load 'plots/style.gp'
set datafile missing NaN

waves(u) = is_probe("waves") && is_unit(u) ? column("waves") : NaN
set xlabel "grid size (waves of resident blocks)"
set ylabel "run time (block times)"
set xrange [0:*]
set autoscale xfixmax
set yrange [0:*]
set xtics 1
set samples 1000
set key top left noenhanced

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 6))
  set key font keyfont
  plot for [i=1:words(files)] word(files, i) using (waves("us")):(column("value") / column("block_us")) \
         smooth unique with linespoints ls i title word(labels, i), \
       ceil(x) with lines lc rgb "#999999" dt 3 title "ceil(waves)"
}
