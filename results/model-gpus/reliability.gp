# Reliability of the confidence column on the model-GPU bench: for each bin of stated
# confidence, the fraction of answers that were right (tests/test_model_gpus.cpp writes
# calibration_bins.csv). Render: gnuplot results/model-gpus/reliability.gp (from the repository root).
set terminal svg size 640,480 font "sans,12"
set output 'results/model-gpus/reliability.svg'
set datafile separator ","
set key top left
set xrange [0:1]
set yrange [0:1.05]
set xlabel "stated confidence (bin)"
set ylabel "fraction right"
set y2label "answers in bin"
set y2tics
set ytics nomirror
set grid
set title "Model-GPU bench: 15 models x 20 seeds (latency ladder and bandwidth)"
set style fill solid 0.25
plot 'results/model-gpus/calibration_bins.csv' skip 1 using (($1+$2)/2):3 axes x1y2 with boxes lc rgb "#999999" title "answers", \
     '' skip 1 using (($1+$2)/2):(column(3) > 0 ? column(5) : NaN) with linespoints pt 7 lc rgb "#1f77b4" title "fraction right", \
     x with lines dt 2 lc rgb "#000000" title "calibrated"
