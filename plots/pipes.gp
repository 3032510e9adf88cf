# family: pipes
# title: Throughput and latency of each execution pipe
# read: Top: results per clock per SM (log); bottom: dependent-issue latency in cycles.
load 'plots/style.gp'
set datafile missing NaN

ops = "fp32_fma fp32_add fp32_mul fp64_fma fp16x2_fma bf16x2_fma int32_add int32_mad int32_logic " . \
      "sfu_sin sfu_ex2 sfu_rsqrt sfu_rcp conversion shuffle ldst ld_global " . \
      "tensor_mma_f16 tensor_mma_bf16 tensor_mma_tf32 tensor_mma_int8 tensor_mma_fp64 " . \
      "tensor_wgmma_f16 tensor_wgmma_bf16 tensor_wgmma_tf32 tensor_wgmma_fp8_e4m3 tensor_wgmma_int8"
nops = words(ops)
op_index(s, i) = i > nops ? NaN : (word(ops, i) eq s ? i : op_index(s, i + 1))
# Throughput from the per-SM cycle counts; latency in cycles (not its ns row).
is_row(mode) = strcol("mode") eq mode && \
               (mode eq "throughput" ? strcol("timing") eq "cycles" : is_unit("cycles"))

# Documented figures: for the first file's GPU, the rows of its compute capability (as the
# run's metadata gives it); for K80, M60 and V100, the lookup of ref_value.gp.
cc = system(sprintf("sed -n 's/^# compute_capability=//p' '%s' | head -n 1", word(files, 1)))
is_number(s) = strlen(s) > 0 && strstrt("0123456789.", s[1:1]) > 0 && (strlen(s) == 1 || is_number_tail(s[2:]))
is_number_tail(s) = strlen(s) == 0 ? 1 : (strstrt("0123456789.eE+-", s[1:1]) > 0 ? is_number_tail(s[2:]) : 0)
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array t_doc[4 * nops]
array l_doc[4 * nops]
# A documented latency found another way than gpuprobe's dependent chain (Jia's stall count)
# names its method in that series' title.
array l_method[4] = ["", "", "", ""]
do for [k=1:nops] {
  do for [kind in "throughput_per_sm latency"] {
    q = word(ops, k) . "_" . kind
    _dv = ""
    if (cc ne "") {
      stats ref using ((_dv eq "" && strcol("cc") eq cc && strcol("quantity") eq q) ? (_dv = strcol("value"), 1) : 0) nooutput
    }
    v = is_number(_dv) ? real(_dv) : NaN
    if (kind eq "latency") { l_doc[k] = v } else { t_doc[k] = v }
    do for [g=1:3] {
      call 'plots/ref_value.gp' (arch_gpu[g]) (q) (kind eq "latency" ? "dependent_chain" : "throughput_loop")
      if (kind eq "latency") { l_doc[g * nops + k] = ref_value } else { t_doc[g * nops + k] = ref_value }
      if (kind eq "latency" && ref_value == ref_value && ref_other_method) { l_method[g + 1] = ref_method_text }
    }
  }
}
# One group of bars per op: each GPU measured, then the four documented series.
nfiles = words(files)
nseries = nfiles + 4
bw = 0.84 / nseries
off(s) = -0.42 + (s - 0.5) * bw
array doc_color[4] = ["#404040", kepler_color, maxwell_color, volta_color]
array doc_title[4] = [cc ne "" ? sprintf("cc %s (documented)", cc) : "this GPU (documented)", \
                      "K80 (documented)", "M60 (documented)", "V100 (documented)"]
do for [s=2:4] { if (l_method[s] ne "") { doc_title[s] = doc_title[s][1:strlen(doc_title[s]) - 1] . "; latency by " . l_method[s] . ")" } }
# Documented bars come from the arrays through the '+' pseudo-file; its first sample is read
# as the column header (style.gp), so sampling starts at 0, which draws nothing.
doc_t(s, k) = k >= 1 ? t_doc[(s - 1) * nops + int(k)] : NaN
doc_l(s, k) = k >= 1 ? l_doc[(s - 1) * nops + int(k)] : NaN

# Plot clauses for the documented series that have at least one figure (an empty series would
# only draw a warning); the measured GPU's own documented figures are hatched.
t_docs = ""
l_docs = ""
do for [s=1:4] {
  style = s == 1 ? "fs pattern 4 border rgb '#000000' fc rgb '#000000'" : sprintf("fc rgb doc_color[%d]", s)
  nt = 0
  nl = 0
  do for [k=1:nops] {
    nt = nt + (t_doc[(s - 1) * nops + k] == t_doc[(s - 1) * nops + k])
    nl = nl + (l_doc[(s - 1) * nops + k] == l_doc[(s - 1) * nops + k])
  }
  if (nt > 0) { t_docs = t_docs . sprintf(", [k=0:%d:1] '+' using (k + off(%d)):(doc_t(%d, k)) with boxes %s title doc_title[%d]", nops, nfiles + s, s, style, s) }
  if (nl > 0) { l_docs = l_docs . sprintf(", [k=0:%d:1] '+' using (k + off(%d)):(doc_l(%d, k)) with boxes %s notitle", nops, nfiles + s, s, style) }
}

# What the run inferred: each op's rate and latency (parameters.csv), written up from the top
# of its group of bars, one value per GPU in the GPUs' order ("127 / 128").
value_text(v) = v >= 100 ? sprintf("%.0f", v) : v >= 10 ? sprintf("%.1f", v) : sprintf("%.2f", v)
t_values = ""
l_values = ""
do for [k=1:nops] {
  do for [kind in "throughput_per_sm latency"] {
    text = ""
    top = 0
    do for [i=1:nfiles] {
      call 'plots/param_value.gp' param_file(i) (word(ops, k) . "_" . kind)
      text = text . (i > 1 ? " / " : "") . (param_value == param_value ? value_text(param_value) : "-")
      top = param_value > top ? param_value : top
    }
    do for [g=1:4] {
      v = kind eq "latency" ? l_doc[(g - 1) * nops + k] : t_doc[(g - 1) * nops + k]
      top = v > top ? v : top
    }
    if (top > 0) {
      marks_tag = marks_tag + 1
      cmd = sprintf("set label %d '%s' at %g, %g rotate by 90 left offset 0, 0.3 front tc rgb '%s' font valuefont; ", \
          marks_tag, text, k, top, nfiles > 1 ? "#404040" : gpu_color[1])
      if (kind eq "latency") { l_values = l_values . cmd } else { t_values = t_values . cmd }
    }
  }
}

set xrange [0.4 : nops + 0.6]
set style fill solid 0.85 border -1
set boxwidth bw absolute
set grid noxtics ytics
set logscale y 10

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 13 : (ext eq "svg" ? 8 : 6))
  ticfont = sprintf(",%d", ext eq "png" ? 12 : (ext eq "svg" ? 7 : 5))
  set multiplot
  set lmargin at screen 0.14
  set rmargin at screen 0.985
  set key at screen 0.985, screen 0.995 right top horizontal maxrows 2 noenhanced font keyfont
  set tmargin at screen 0.88
  set bmargin at screen 0.56
  set xtics () scale 0 norotate
  do for [k=1:nops] { set xtics add ("" k) }
  set yrange [1:50000]
  set ylabel "results/clk/SM"
  valuefont = ticfont
  unset label
  eval t_values
  plot for [i=1:nfiles] word(files, i) \
         using (is_row("throughput") ? op_index(strcol("probe"), 1) + off(i) : NaN):"value" \
         with boxes fc rgb gpu_color[i] title word(labels, i) @t_docs
  unset key
  set tmargin at screen 0.53
  set bmargin at screen 0.20
  set xtics () scale 0 rotate by 40 right noenhanced font ticfont
  do for [k=1:nops] { set xtics add (word(ops, k) k) }
  set yrange [1:3000]
  set ylabel "latency (cycles)"
  unset label
  eval l_values
  plot for [i=1:nfiles] word(files, i) \
         using (is_row("latency") ? op_index(strcol("probe"), 1) + off(i) : NaN):"value" \
         with boxes fc rgb gpu_color[i] notitle @l_docs
  unset multiplot
}
