# Shared style for every gpuprobe figure. Each figure script is called as
#   gnuplot -e "files='a.csv b.csv'; labels='H100 H200'; ref='documented_figures.csv'; out='dir/name'" plots/name.gp
# from the directory holding plots/, and writes out.svg, out.png and out.pdf. `files` holds
# one observations file per GPU (one curve each, `ls i` for the i-th); `labels` names them
# (one word each: no spaces, no '_' or '^', which enhanced text would read as markup).
if (!exists("files")) { print "set files='run/x.csv ...'"; exit status 2 }
if (!exists("labels")) { labels = files }
if (!exists("ref")) { ref = "results/reference/documented_figures.csv" }
if (!exists("out")) { out = "figure" }

set datafile separator comma
set datafile columnheaders
# Rows that a filter turns into NaN (is_probe, is_unit below) are skipped, not gaps in a line.
set datafile missing NaN

# One colour and point type per GPU across all figures (Okabe-Ito, safe for colour blindness
# and distinct in greyscale by point type); documented architectures keep theirs, dashed.
array gpu_color[8] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
array gpu_point[8] = [7, 5, 9, 11, 13, 15, 4, 6]
do for [i=1:8] { set style line i lc rgb gpu_color[i] lw 1.5 pt gpu_point[i] ps 0.7 }
kepler_color = "#7f7f7f"; maxwell_color = "#8c564b"; volta_color = "#9467bd"
set style line 11 lc rgb kepler_color lw 1.2 dt 2
set style line 12 lc rgb maxwell_color lw 1.2 dt 3
set style line 13 lc rgb volta_color lw 1.2 dt 4
# Representative GPU of each documented architecture, as named in results/reference/.
ref_gpu_kepler = "Tesla K80 (GK210)"
ref_gpu_maxwell = "Tesla M60 (GM204)"
ref_gpu_volta = "Tesla V100 PCIe (GV100)"

set grid back lc rgb "#e0e0e0" lw 0.8
set border 3 lw 1
set tics nomirror out scale 0.6
set mxtics default
set key top left Left reverse opaque box lc rgb "#c0c0c0" samplen 2.5 spacing 1.1 width 1
set bars small

# Column width of a two-column paper is about 3.4 in: the PDF is drawn at that size with an
# 8 pt font, so it is placed unscaled; the SVG (web, report.md) and the PNG (twice the SVG's
# pixels, for slides and README) keep the same proportions and relative sizes.
term(ext) = ext eq "svg" ? "svg size 680,460 dynamic enhanced font 'Helvetica,13' linewidth 1.2 background rgb 'white'" : \
            ext eq "png" ? "pngcairo size 1360,920 enhanced font 'Helvetica,26' linewidth 2.4 pointscale 2 background rgb 'white'" : \
                           "pdfcairo size 3.4in,2.3in enhanced font 'Helvetica,8' linewidth 0.8 pointscale 0.8"
set_output(ext) = sprintf("set terminal %s; set output '%s.%s'", term(ext), out, ext)

# Row filters: a column's value where the row matches, NaN (skipped) elsewhere.
is_probe(p) = strcol("probe") eq p
is_unit(u) = strcol("unit") eq u
