# call 'plots/mark_level.gp' (i) "<parameter>" "<name>" (x) "<number format>" [(y scale)]
# Appends to marks_cmd a level run i inferred: "name value" just above it at x, in the GPU's
# colour (y and the value written: the parameter / scale). Call before any log scale is set.
_ml_i = ARG1 + 0
_ml_scale = ARGC >= 6 ? ARG6 + 0.0 : 1.0
call 'plots/param_value.gp' param_file(_ml_i) ARG2
if (param_value == param_value) {
  marks_tag = marks_tag + 1
  marks_cmd = marks_cmd . sprintf("set label %d '%s %s' at %g, %g left offset 0, %g front tc rgb '%s' font markfont; ", \
      marks_tag, ARG3, sprintf(ARG5, param_value / _ml_scale), ARG4 + 0.0, param_value / _ml_scale, \
      0.6 + 0.9 * (_ml_i - 1), gpu_color[_ml_i])
}
