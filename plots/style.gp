# Shared style for every gpuprobe figure. Each figure script is called as
#   gnuplot -e "files='a.csv b.csv'; labels='H100 H200'; ref='documented_figures.csv'; out='dir/name'" plots/name.gp
# and writes out.svg, out.png and out.pdf. `files` holds one observations file per GPU
# (one curve each); `labels` names them (no spaces inside a label).
if (!exists("files")) { print "set files='run/x.csv ...'"; exit status 2 }
if (!exists("labels")) { labels = files }
if (!exists("ref")) { ref = "results/reference/documented_figures.csv" }
if (!exists("out")) { out = "figure" }

set datafile separator comma
set datafile columnheaders
set datafile missing "nan"

# One colour and point type per GPU across all figures; documented architectures keep theirs.
array gpu_color[8] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
array gpu_point[8] = [7, 5, 9, 11, 13, 15, 4, 6]
do for [i=1:8] { set style line i lc rgb gpu_color[i] lw 2 pt gpu_point[i] ps 0.8 }
kepler_color = "#7f7f7f"; maxwell_color = "#8c564b"; volta_color = "#9467bd"
set style line 11 lc rgb kepler_color lw 1.5 dt 2
set style line 12 lc rgb maxwell_color lw 1.5 dt 3
set style line 13 lc rgb volta_color lw 1.5 dt 4
# Representative GPU of each documented architecture, as named in results/reference/.
ref_gpu_kepler = "Tesla K80 (GK210)"
ref_gpu_maxwell = "Tesla M60 (GM204)"
ref_gpu_volta = "Tesla V100 PCIe (GV100)"

set grid back lc rgb "#dddddd" lw 1
set border 3 lw 1.2
set tics nomirror out
set key top left box opaque samplen 2 spacing 1.1 font ",9"

# Column width of a two-column paper is about 3.4 in; figures are drawn at that aspect.
term(ext) = ext eq "svg" ? "svg size 720,450 dynamic enhanced font 'Helvetica,13' background rgb 'white'" : \
            ext eq "png" ? "pngcairo size 1440,900 enhanced font 'Helvetica,22'" : \
                           "pdfcairo size 5in,3.125in enhanced font 'Helvetica,10'"
set_output(ext) = sprintf("set terminal %s; set output '%s.%s'", term(ext), out, ext)

# Row filters: a column's value where the row matches, NaN (skipped) elsewhere.
is_probe(p) = strcol("probe") eq p
is_unit(u) = strcol("unit") eq u
