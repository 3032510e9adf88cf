# family: carveout
# title: L1 capacity against the shared-memory carve-out
# read: Bars span the last footprint that fitted and the first that did not; L1 shrinks as shared grows.
load 'plots/style.gp'

kib(x) = x / 1024.0
sized(x) = is_probe("l1_size") && is_unit("bytes") ? x : NaN

# Documented: a fixed L1 size (a level), or a unified array of L1 and shared memory (the line
# L1 = total - shared, drawn over the carve-outs that part offered: up to its largest shared).
array arch_gpu[3] = [ref_gpu_kepler, ref_gpu_maxwell, ref_gpu_volta]
array arch_name[3] = ["K80", "M60", "V100"]
refs = ""
do for [g=1:3] {
  call 'plots/ref_value.gp' (arch_gpu[g]) "l1_shared_combined_per_sm"
  total = ref_value
  # A fixed L1 size found another way than the chase of l1_size_no_miss names its method.
  call 'plots/ref_value.gp' (arch_gpu[g]) "l1_size" "pointer_chase"
  fixed = ref_value
  text = ref_text
  note = ref_other_method ? ", " . ref_method_text : ""
  if (total == total) {
    # The smallest documented L1 is what the largest shared carve-out leaves.
    low = strstrt(text, "-") > 0 ? real(text[1:strstrt(text, "-") - 1]) / 1024 : 0
    refs = refs . sprintf(", (x >= 0 && x <= %g ? %g - x : NaN) with lines ls %d title '%s: L1 = %g KiB - shared (documented)'", \
        total - low, total, 10 + g, arch_name[g], total)
  } else {
    if (fixed == fixed) {
      refs = refs . sprintf(", %g with lines ls %d title '%s: L1 %g KiB (documented%s)'", \
          fixed / 1024, 10 + g, arch_name[g], fixed / 1024, note)
    }
  }
}

# What the run inferred: the largest L1 without misses (l1_size_no_miss), written at its level.
do for [i=1:words(files)] {
  call 'plots/mark_level.gp' (i) "l1_size_no_miss" "largest L1 without misses:" (0) "%.0f KiB" (1024)
}

set xlabel "shared memory the preference asks for (KiB per SM)"
set ylabel "L1 data cache (KiB)"
set xrange [-8 : *]
set yrange [0 : *]
set samples 400
set bars 0.5

do for [ext in "svg png pdf"] {
  eval set_output(ext)
  keyfont = sprintf(",%d", ext eq "png" ? 14 : (ext eq "svg" ? 8 : 5))
  pscale = ext eq "pdf" ? 0.4 : 0.8
  set key top right font keyfont
  markfont = mark_font(ext)
  eval marks_cmd
  plot for [i=1:words(files)] word(files, i) \
         using (sized(kib(column("shared_request_bytes")))):(kib(column("value"))):(kib(column("p05"))):(kib(column("p95"))) \
         with yerrorlines ls i pt 7 ps pscale title word(labels, i) @refs
}
