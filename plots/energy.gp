# family: energy
# title: Energy per operation and per byte moved, with intervals
# read: Left: pJ per operation of each pipe (tensor: per multiply-add); right: pJ per byte at each level. Filled: random operands; open: all zero.
load 'plots/style.gp'
set datafile missing NaN

# The items the energy family can measure, in the order drawn; those no run has are left out.
all_ops = "fp32_fma fp64_fma int32_mad sfu_sin tensor_mma_f16 tensor_mma_bf16 tensor_mma_tf32 " . \
          "tensor_mma_int8 tensor_wgmma_f16 tensor_wgmma_bf16 tensor_wgmma_tf32 " . \
          "tensor_wgmma_fp8_e4m3 tensor_wgmma_int8"
all_bytes = "shared_read shared_write l1_read l2_near_read l2_far_read dram_read dram_write " . \
            "host_link_read host_link_write nvlink_write"
nfiles = words(files)
pname(item, kind, zero) = item . (kind == 1 ? "_energy" : "_energy_per_byte") . (zero ? "_zero" : "")

# Present items per panel, and every run's value, low and high for both operand sets.
max_items = 16
array v[2 * 2 * max_items * nfiles]
array lo[2 * 2 * max_items * nfiles]
array hi[2 * 2 * max_items * nfiles]
at(kind, zero, k, i) = (((kind - 1) * 2 + zero) * max_items + (k - 1)) * nfiles + i
present1 = ""
present2 = ""
do for [kind=1:2] {
  list = kind == 1 ? all_ops : all_bytes
  n = 0
  do for [w=1:words(list)] {
    item = word(list, w)
    found = 0
    do for [i=1:nfiles] {
      call 'plots/param_value.gp' param_file(i) pname(item, kind, 0)
      found = found || param_value == param_value
    }
    if (found && n < max_items) {
      n = n + 1
      if (kind == 1) { present1 = present1 . " " . item } else { present2 = present2 . " " . item }
      do for [i=1:nfiles] {
        do for [zero=0:1] {
          call 'plots/param_value.gp' param_file(i) pname(item, kind, zero)
          v[at(kind, zero, n, i)] = param_value
          lo[at(kind, zero, n, i)] = param_low
          hi[at(kind, zero, n, i)] = param_high
        }
      }
    }
  }
}
if (words(present1) + words(present2) == 0) { print "no energy parameters in this run's parameters.csv"; exit status 1 }

# One GPU's points side by side with the next's; all-zero operands just right of random.
off(i, zero) = (i - (nfiles + 1) / 2.) * 0.3 / nfiles + zero * 0.12
val(kind, zero, k, i) = k >= 1 ? v[at(kind, zero, int(k), i)] : NaN
low(kind, zero, k, i) = k >= 1 ? lo[at(kind, zero, int(k), i)] : NaN
high(kind, zero, k, i) = k >= 1 ? hi[at(kind, zero, int(k), i)] : NaN

set logscale y 10
set grid noxtics ytics
do for [ext in "svg png pdf"] {
  eval set_output(ext)
  ticfont = sprintf(",%d", ext eq "png" ? 12 : (ext eq "svg" ? 7 : 5))
  set multiplot layout 1, 2
  do for [kind=1:2] {
    list = kind == 1 ? present1 : present2
    n = words(list)
    set xrange [0.4 : (n > 0 ? n : 1) + 0.6]
    set xtics () scale 0 rotate by 40 right noenhanced font ticfont
    do for [k=1:n] { set xtics add (word(list, k) k) }
    set ylabel (kind == 1 ? "pJ per operation" : "pJ per byte")
    if (kind == 1) { set key at screen 0.5, screen 0.995 center top horizontal noenhanced } else { unset key }
    set tmargin at screen 0.88
    if (n == 0) { set yrange [1:10]; plot NaN notitle } else {
      set autoscale y
      plot for [i=1:nfiles] [k=0:n:1] '+' using (k + off(i, 0)):(val(kind, 0, k, i)):(low(kind, 0, k, i)):(high(kind, 0, k, i)) \
             with yerrorbars ls i pt 7 title word(labels, i) . " random", \
           for [i=1:nfiles] [k=0:n:1] '+' using (k + off(i, 1)):(val(kind, 1, k, i)):(low(kind, 1, k, i)):(high(kind, 1, k, i)) \
             with yerrorbars ls i pt 6 title word(labels, i) . " zero"
    }
  }
  unset multiplot
}
