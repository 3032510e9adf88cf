# call 'plots/param_value.gp' "<parameters.csv of a run, or '-'>" "<parameter>"
# Sets param_value, param_low and param_high to what the run inferred, NaN where it has no such
# parameter (or no parameters.csv: '-'). Figures mark inferred values with it.
param_value = NaN; param_low = NaN; param_high = NaN
if (ARG1 ne "-") {
  stats ARG1 using (strcol("parameter") eq ARG2 ? \
        (param_value = column("value"), param_low = column("low"), param_high = column("high"), 1) : 0) nooutput
}
