# call 'plots/ref_value.gp' "<gpu as named in the reference>" "<quantity>"
# Sets ref_value to the documented figure (the mean where several rows agree on it), or NaN.
# Counting matches as x keeps stats from failing on a quantity that is not documented.
_m(g, q) = strcol("gpu") eq g && strcol("quantity") eq q
stats ref using (_m(ARG1, ARG2) ? 1 : 0):(_m(ARG1, ARG2) ? column("value") : 0) nooutput
ref_value = STATS_sum_x > 0 ? STATS_sum_y / STATS_sum_x : NaN
