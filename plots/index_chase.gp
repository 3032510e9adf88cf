# family: index_chase
# title: Index chase j = a[j]: cycles per step by level, as the papers time it
# read: One thread, address arithmetic in every step; inferred values written; open marks: documented K80, M60, V100 (Jia et al. 2018).
load 'plots/style.gp'

probes = "shared l1 l2 dram atomic_shared_pair atomic_global_pair"
probe_x(p) = p eq "shared" ? 1 : p eq "l1" ? 2 : p eq "l2" ? 3 : p eq "dram" ? 4 : \
             p eq "atomic_shared_pair" ? 5 : p eq "atomic_global_pair" ? 6 : NaN
sel(u) = is_unit(u) ? probe_x(strcol("probe")) : NaN
nfiles = words(files)
off(i) = (i - (nfiles + 1) / 2.0) * 0.12

# Documented index chases (method-matched: ref_value.gp with "index_chase"); the pairs have
# no documented twin (docs/parameters.md, result_pair).
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["K80", "M60", "V100"]
quantities = "shared_latency_index_chase l1_hit_latency_index_chase l2_hit_latency_index_chase dram_latency_index_chase"
marks = ""
do for [g=1:3] {
  do for [k=1:4] {
    call 'plots/ref_value.gp' (arch_gpu[g]) (word(quantities, k)) "index_chase"
    if (ref_value == ref_value && !ref_other_method) {
      marks = marks . sprintf(", '+' using (%g):(%g) every ::0::0 with points ls %d pt %d ps 1.4 %s", \
              k + 0.3, ref_value, 10 + g, 3 + 2 * g, k == 1 ? sprintf("title '%s (documented)'", arch_name[g]) : "notitle")
    }
  }
}

# What the run inferred: each level's value written beside its point (the pairs' parameters
# are derived from the pair, not the pair's own time: not written here).
do for [i=1:nfiles] {
  do for [k=1:4] {
    call 'plots/mark_level.gp' (i) (word(quantities, k)) "" (k - 0.42) "%.1f"
  }
}

set xrange [0.4 : 6.6]
set xtics ("shared" 1, "L1" 2, "L2" 3, "DRAM" 4, "pair, shared" 5, "pair, global" 6)
set logscale y 10
set yrange [5 : 2000]
set ytics (5, 10, 20, 50, 100, 200, 500, 1000, 2000)
set ylabel "cycles per dependent step (pair: atomic + load)"
set grid ytics

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 9 : 6))
  set key top left font keyfont
  markfont = mark_font(ext)
  eval marks_cmd
  plot for [i=1:nfiles] word(files, i) using (sel("cycles") + off(i)):"value" with points ls i ps 1.3 title word(labels, i) @marks
}
