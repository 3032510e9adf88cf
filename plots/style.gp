# Shared style for every gpuprobe figure. Each figure script is called as
#   gnuplot -e "files='a.csv b.csv'; labels='H100 H200'; ref='documented_figures.csv'; out='dir/name'" plots/name.gp
# from the directory holding plots/, and writes out.svg, out.png and out.pdf. `files` holds
# one observations file per GPU (one curve each, `ls i` for the i-th); `labels` names them
# (one word each: no spaces, no '_' or '^', which enhanced text would read as markup).
if (!exists("files")) { print "set files='run/x.csv ...'"; exit status 2 }
if (!exists("labels")) { labels = files }
if (!exists("ref")) { ref = "results/reference/documented_figures.csv" }
if (!exists("out")) { out = "figure" }
# params: one parameters.csv per file ('-' where a run has none), for marking inferred values.
if (!exists("params")) { params = "" }
param_file(i) = i <= words(params) ? word(params, i) : "-"
# style='paper' (gpuprobe report --style paper): vector PDF at a paper's column widths.
if (!exists("style")) { style = "web" }
# A figure of several panels sets wide = 1 after loading this file: double column in a paper.
if (!exists("wide")) { wide = 0 }

set datafile separator comma
set datafile columnheaders
# Rows that a filter turns into NaN (is_probe, is_unit below) are skipped, not gaps in a line.
set datafile missing NaN

# One colour and point type per GPU across all figures (Okabe-Ito, safe for colour blindness
# and distinct in greyscale by point type); documented architectures keep theirs, dashed.
# A compare of more than 8 runs reuses them in turn (indexed up to max_gpus; past 8 runs a
# figure is hard to read anyway, and compare.md says which colour is which run).
array palette8[8] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]
array points8[8] = [7, 5, 9, 11, 13, 15, 4, 6]
max_gpus = 64
array gpu_color[max_gpus]
array gpu_point[max_gpus]
do for [i=1:max_gpus] {
  gpu_color[i] = palette8[(i - 1) % 8 + 1]
  gpu_point[i] = points8[(i - 1) % 8 + 1]
  set style line i lc rgb gpu_color[i] lw 1.5 pt gpu_point[i] ps 0.7
}
# One colour per series: with several GPUs a colour is a GPU (its sub-series told apart by
# dashes and points); a figure of one GPU gives its k-th sub-series (ILP, copy path, atomic)
# the k-th colour instead. Marks take the colour of the series they were read from: a script
# sets mark_color around its mark_*.gp calls ("" : the GPU's).
series_color(i, k) = words(files) > 1 ? gpu_color[i] : gpu_color[(k - 1) % 8 + 1]
mark_color = ""
mark_rgb(i) = mark_color ne "" ? mark_color : gpu_color[i]
# Text that sums up several series of one GPU: the GPU's colour, dark grey where one GPU's
# series have colours of their own.
text_color(i) = words(files) > 1 ? gpu_color[i] : "#333333"
# A key entry for the k-th sub-series (its dashes and points): grey where colour is the GPU.
key_color(k) = words(files) > 1 ? "#333333" : series_color(1, k)
# The position of word w in a list of words (0: not in it), for sub-series numbers.
word_index(list, w, i) = i > words(list) ? 0 : (word(list, i) eq w ? i : word_index(list, w, i + 1))
# Documented figures are context, not data: light, thin and dashed, told apart by the dashes.
kepler_color = "#b0b0b0"; maxwell_color = "#a89080"; volta_color = "#a898c0"
set style line 11 lc rgb kepler_color lw 0.8 dt 2
set style line 12 lc rgb maxwell_color lw 0.8 dt 3
set style line 13 lc rgb volta_color lw 0.8 dt 4
# Maps (l2_topology): viridis, ordered in lightness and safe for colour blindness, where a
# rainbow's bands would read as steps that are not in the data.
palette_cmd = "set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')"
# Marks of inferred values: a level's value, a capacity's interval (shaded), in the GPU's colour.
mark_font(ext) = ext eq "png" ? ",18" : ext eq "svg" ? ",9" : ",6"
markfont = ",9"
marks_cmd = ""
marks_tag = 100  # tags of the marks (plots/mark_knee.gp), clear of a script's own
# mark_knee.gp and mark_level.gp: how a knee's value is written, how far apart the GPUs' knee
# labels hang, and where a level's label sits (see those files).
knee_text(v) = size_text(v)
knee_step = 0.22
knee_slot = 0
knee_rotate = 1
level_just = "left"
level_side = "above"
size_text(b) = b >= 1073741824 ? sprintf("%.3g GiB", b / 1073741824.) : b >= 1048576 ? sprintf("%.3g MiB", b / 1048576.) : \
               b >= 1024 ? sprintf("%.3g KiB", b / 1024.) : sprintf("%g B", b)
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

# The web style: the SVG for report.md, the PNG (twice its pixels) for slides and README, the
# PDF at about a column's width. The paper style: the PDF at a paper's single column
# (3.5 in) or double column (7 in, wide = 1) at 8 pt, fonts embedded by cairo in the PDF.
paper_w(ext) = wide ? 7.0 : 3.5
paper_h(ext) = wide ? 3.2 : 2.4
term_web(ext) = ext eq "svg" ? sprintf("svg size %d,%d dynamic enhanced font 'Helvetica,13' linewidth 1.2 background rgb 'white'", wide ? 1000 : 680, wide ? 560 : 460) : \
            ext eq "png" ? sprintf("pngcairo size %d,%d enhanced font 'Helvetica,26' linewidth 2.4 pointscale 2 background rgb 'white'", wide ? 2000 : 1360, wide ? 1120 : 920) : \
                           sprintf("pdfcairo size %.1fin,%.1fin enhanced font 'Helvetica,8' linewidth 0.8 pointscale 0.8", wide ? 6.8 : 3.4, wide ? 3.8 : 2.3)
# The scripts size their fonts for each format: the paper style changes the PDF's page only,
# and keeps the SVG and PNG previews of the web style.
term_paper(ext) = ext ne "pdf" ? term_web(ext) : \
    sprintf("pdfcairo size %.1fin,%.1fin enhanced font 'Helvetica,8' linewidth 0.8 pointscale 0.7", paper_w(ext), paper_h(ext))
term(ext) = style eq "paper" ? term_paper(ext) : term_web(ext)
set_output(ext) = sprintf("set terminal %s; set output '%s.%s'", term(ext), out, ext)

# Row filters: a column's value where the row matches, NaN (skipped) elsewhere.
is_probe(p) = strcol("probe") eq p
is_unit(u) = strcol("unit") eq u
