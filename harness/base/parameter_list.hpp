// Every parameter gpuprobe writes, and every method label, defined once (the catalog). Include
// this file with those of the macros below defined that you need: it defines the others as
// nothing, includes the lists (base/parameters/*.hpp, one per part of the machine) and undefines
// them all again, so that it can be included more than once. No include guard, on purpose.
//
// GPUPROBE_METHOD(label, meaning)
//   A method label of the vocabulary that the parameters and the reference figures carry.
// GPUPROBE_PARAMETER(name, unit, family, method, tolerance, meaning)
//   One parameter: `name` is its symbol (param::name) and, spelled as written, its name in
//   parameters.csv; `method` a label above; `tolerance` what counts as right ("3 %", "exact");
//   `meaning` what the number is, in one line of plain words.
// GPUPROBE_NUMBERED(name, pattern, unit, family, method, tolerance, meaning)
//   One parameter per number: `pattern` is the name with the number as <x>
//   ("l2_near_sm_count_<g>"), and param::name(n) builds the name of number n.
// GPUPROBE_PIPE_OP(op, results, instruction)
//   A pipes op: <op>_throughput_per_sm (`results` per clock per SM) and <op>_latency (cycles from
//   one `instruction` to the next that depends on it), both of the pipes family.
// GPUPROBE_VARIANT(name, includes)
//   A method variant's twin: what one timed step of it holds.
// GPUPROBE_NOT_IN_QUICK(name, reason)
//   A parameter a --quick run leaves out, and why (quick against full, in numbers). `name` is
//   an expression in namespace param: a symbol, or a numbered name (`dram_load_warps_90pct_ilp(2)`).
// GPUPROBE_ALIAS(old, name, why)
//   A name committed runs wrote, read as `name` now (`old` a string: no code writes it).
#ifndef GPUPROBE_METHOD
#define GPUPROBE_METHOD(label, meaning)
#endif
#ifndef GPUPROBE_PARAMETER
#define GPUPROBE_PARAMETER(name, unit, family, method, tolerance, meaning)
#endif
#ifndef GPUPROBE_NUMBERED
#define GPUPROBE_NUMBERED(name, pattern, unit, family, method, tolerance, meaning)
#endif
#ifndef GPUPROBE_PIPE_OP
#define GPUPROBE_PIPE_OP(op, results, instruction)
#endif
#ifndef GPUPROBE_VARIANT
#define GPUPROBE_VARIANT(name, includes)
#endif
#ifndef GPUPROBE_NOT_IN_QUICK
#define GPUPROBE_NOT_IN_QUICK(name, reason)
#endif
#ifndef GPUPROBE_ALIAS
#define GPUPROBE_ALIAS(old, name, why)
#endif

#include "base/parameters/methods.hpp"
#include "base/parameters/memory.hpp"
#include "base/parameters/compute.hpp"
#include "base/parameters/chip.hpp"
#include "base/parameters/node.hpp"
#include "base/parameters/energy.hpp"

#undef GPUPROBE_METHOD
#undef GPUPROBE_PARAMETER
#undef GPUPROBE_NUMBERED
#undef GPUPROBE_PIPE_OP
#undef GPUPROBE_VARIANT
#undef GPUPROBE_NOT_IN_QUICK
#undef GPUPROBE_ALIAS
