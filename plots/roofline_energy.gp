# The energy roofline of `gpuprobe roofline` (Choi, Czechowski and Vuduc 2013): GFLOP per
# joule against flops per DRAM byte, the arch line of each pipe over DRAM with static power,
# its interval shaded (the energies at their high and low bounds), the kernels measured
# (filled) and predicted (hollow). The data's layout is the time roofline's: drawn by it.
ylabel_text = "GFLOP per joule"
load 'plots/roofline_time.gp'
