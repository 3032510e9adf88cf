# call 'plots/mark_level.gp' (i) "<parameter>" "<name>" (x) "<number format>" [(y scale)]
# Appends to marks_cmd a level run i inferred: "name value" at x beside the level, in the GPU's
# colour (y and the value written: the parameter / scale). Call before any log scale is set.
# level_just ('left' or 'right' of x) and level_side ('above': every GPU's label stacked above
# the level; 'around': odd GPUs above, even GPUs below, for curves that lie on one another)
# are style.gp's, and a script may set them before the call.
_ml_i = ARG1 + 0
_ml_scale = ARGC >= 6 ? ARG6 + 0.0 : 1.0
call 'plots/param_value.gp' param_file(_ml_i) ARG2
if (param_value == param_value) {
  _ml_dy = level_side eq "around" ? ((_ml_i % 2) ? 0.6 + 0.9 * int((_ml_i - 1) / 2) : -0.6 - 0.9 * int((_ml_i - 1) / 2)) : \
           0.6 + 0.9 * (_ml_i - 1)
  marks_tag = marks_tag + 1
  marks_cmd = marks_cmd . sprintf("set label %d '%s%s%s' at %g, %g %s offset 0, %g front tc rgb '%s' font markfont; ", \
      marks_tag, ARG3, ARG3 eq "" ? "" : " ", sprintf(ARG5, param_value / _ml_scale), ARG4 + 0.0, param_value / _ml_scale, \
      level_just, _ml_dy, mark_rgb(_ml_i))
}
