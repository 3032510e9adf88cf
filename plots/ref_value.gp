# call 'plots/ref_value.gp' "<gpu as named in the reference>" "<quantity>" ["<measured method label>"]
# Sets ref_value to the documented figure, or NaN where none is documented or where it is not
# one number (a range such as "32768-131072", or text); ref_text holds the value as written
# ("" when none), ref_method the figure's method label (ref_method_text: with spaces). ref_other_method is 1 where the third
# argument names the method of the measurement drawn beside the figure and the figure's differs
# (the rule of methods_comparable in harness/app/reference.cpp: "unknown" never matches); a figure
# drawn as a reference level then says "other method". The lookup is the one harness/app/reference.cpp makes for a representative
# part (style.gp's ref_gpu_*): the part's own first row; else the first row of its architecture
# naming its chip, the text in parentheses ("cc 7.x (GV100)"); else the first row of its
# architecture documented for every part of a compute capability listing the part's
# ("cc 5.0/5.2 (GM10x/GM20x)"), never another product's row.
_rv_gpu = ARG1
_rv_q = ARG2
_rv_o = strstrt(_rv_gpu, "(")
_rv_c = strstrt(_rv_gpu, ")")
_rv_chip = (_rv_o > 0 && _rv_c > _rv_o + 1) ? _rv_gpu[_rv_o + 1:_rv_c - 1] : _rv_gpu
_rv_arch = ""
_rv_cc = ""
stats ref using ((_rv_arch eq "" && strcol("gpu") eq _rv_gpu) ? \
                 (_rv_arch = strcol("arch"), _rv_cc = strcol("cc"), 1) : 0) nooutput
_rv_ccx = strstrt(_rv_cc, ".") > 0 ? _rv_cc[1:strstrt(_rv_cc, ".")] . "x" : "-"
_rv_cc_ok(cc) = _rv_cc ne "" && (strstrt(cc, _rv_cc) > 0 || strstrt(cc, _rv_ccx) > 0)
_rv_generic(g) = g eq "all" || strstrt(g, "cc ") == 1 || strstrt(g, "(cc ") > 0 || \
                 strstrt(g, "(all ") > 0 || strstrt(g, " all ") > 0
# 1: the part itself, 2: its chip, 3: its compute capability, 4: no match
_rv_level(q, g, a, cc) = q ne _rv_q ? 4 : g eq _rv_gpu ? 1 : \
    (_rv_arch eq "" || a ne _rv_arch) ? 4 : strstrt(g, _rv_chip) > 0 ? 2 : (_rv_generic(g) && _rv_cc_ok(cc)) ? 3 : 4
_rv_best = 4
ref_text = ""
ref_method = ""
_rv_unit = ""
stats ref using (_rv_l = _rv_level(strcol("quantity"), strcol("gpu"), strcol("arch"), strcol("cc")), \
                 _rv_l < _rv_best ? (_rv_best = _rv_l, ref_text = strcol("value"), ref_method = strcol("method"), \
                                     _rv_unit = strcol("unit"), 1) : 0) nooutput
# A specification of a size, count or rate compares whatever the method (is_specification).
_rv_spec = (ref_method eq "vendor_spec" || ref_method eq "theoretical_bound") && _rv_unit ne "cycles" && _rv_unit ne "ns"
ref_other_method = (ARGC >= 3 && ref_text ne "" && !_rv_spec && (ref_method ne ARG3 || ref_method eq "unknown")) ? 1 : 0
_rv_number(s) = strlen(s) == 0 ? 1 : (strstrt("0123456789.eE+", s[1:1]) > 0 ? _rv_number(s[2:]) : 0)
ref_value = (ref_text ne "" && _rv_number(ref_text)) ? real(ref_text) : NaN
# The method as figure text: "index chase" (enhanced text would read '_' as a subscript).
_rv_words(s) = strlen(s) == 0 ? "" : (s[1:1] eq "_" ? " " : s[1:1]) . _rv_words(s[2:])
ref_method_text = _rv_words(ref_method)
