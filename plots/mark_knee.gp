# call 'plots/mark_knee.gp' (i) "<parameter>" "<name>" [(x scale)]
# Appends to marks_cmd a knee run i inferred: a dotted line at its value, its interval shaded,
# and "name value" up the line (knee_rotate = 0: across, left of it), in the GPU's colour (x:
# the value / scale). The value is written by knee_text (style.gp: a size in bytes; a script
# may redefine it). Labels hang from the top, GPU i's knee_step lower than GPU 1's; knee_slot
# > 0 sets that row instead (several knees of one GPU at one x). Sets knee_value (NaN where the
# run has no such parameter). Name '-': the line and band only (the script writes the value).
# Call before any log scale is set.
_mk_i = ARG1 + 0
_mk_scale = ARGC >= 4 ? ARG4 + 0.0 : 1.0
call 'plots/param_value.gp' param_file(_mk_i) ARG2
knee_value = param_value
if (param_value == param_value) {
  _mk_lo = param_low / _mk_scale
  _mk_hi = param_high / _mk_scale
  _mk_hi = _mk_hi > _mk_lo * 1.02 ? _mk_hi : _mk_lo * 1.02
  _mk_row = knee_slot > 0 ? knee_slot : _mk_i
  # Tagged, so that evaluating marks_cmd again for the next format replaces them.
  marks_tag = marks_tag + 1
  marks_cmd = marks_cmd . sprintf("set object %d rect from %g, graph 0 to %g, graph 1 behind fc rgb '%s' fs transparent solid 0.12 noborder; ", \
      marks_tag, _mk_lo, _mk_hi, mark_rgb(_mk_i))
  marks_cmd = marks_cmd . sprintf("set arrow %d from %g, graph 0 to %g, graph 1 nohead back lc rgb '%s' dt 3 lw 0.8; ", \
      marks_tag, param_value / _mk_scale, param_value / _mk_scale, mark_rgb(_mk_i))
  if (ARG3 ne "-") { marks_cmd = marks_cmd . sprintf("set label %d '%s %s' at %g, graph %g %s front tc rgb '%s' font markfont; ", \
      marks_tag, ARG3, knee_text(param_value), param_value / _mk_scale, 0.97 - knee_step * (_mk_row - 1), \
      knee_rotate ? "rotate by 90 right offset -0.9, 0" : "right offset -0.5, -0.6", mark_rgb(_mk_i)) }
}
