#pragma once
// Keeping the compiler honest: does the code a probe times hold the instructions it means to
// time, as many as it assumes, and does a dependent chain stay dependent? Pure C++ over the
// text of PTX (`nvcc -ptx`, checked in CI) and SASS (`cuobjdump -sass`, checked on the GPU
// machine by harness/gpu/sass_check.hpp before a probe is measured).
//
// How a family declares what its kernels must hold
// ------------------------------------------------
// In any file of the analysis floor (harness/analysis/<family>.cpp is the natural place), so that
// both the CI test (tests/test_code_checks.cpp) and the binary's SASS check see it:
//
//   static std::vector<gpuprobe::CodeExpectation> my_expectations() {
//     gpuprobe::CodeExpectation e;
//     e.source = "latency";                        // microbench/latency.cu -> <build>/ptx/latency.ptx
//     e.kernel = "latency::chase<4>";              // see kernel_name() below
//     e.probe = "l1_hit";                          // marked invalid when the check fails
//     e.ptx = {{R"(^ld\.global\.ca\.u64 )", 16, true}};   // 16 loads, each on the previous
//     e.sass = {{R"(^LDG\.E\.64)", 16, true}};
//     return {e};
//   }
//   GPUPROBE_REGISTER_CODE_EXPECTATIONS(my_expectations);
//
// Then, in the family's run(), before measuring: `if (!sass_allows(ctx, "l1_hit",
// {"latency::chase<4>"})) return;` (harness/gpu/sass_check.hpp).
//
// What is checked: a kernel that reads the clock (clock64(), clock()) is checked between its
// first and its last clock read (the timed region, where the loop is); any other kernel as a
// whole. Counts are static: instructions in the code, not executed ones. Every kernel of a
// source file with at least one expectation must have one (the CI test says which lack it).
#include <string>
#include <vector>

namespace gpuprobe {

enum class CodeDialect { ptx, sass };

struct Instruction {
  std::string text;    // opcode and operands, no guard, no ';': "fma.rn.f32 %f5, %f4, %f1, %f2"
  std::string opcode;  // with its modifiers: "fma.rn.f32", "IMAD.IADD"
  std::string guard;   // "@%p1", "@!P0", or ""
  std::vector<std::string> defs, uses;  // registers written and read
};

struct KernelCode {
  std::string symbol;  // as in the file (mangled)
  std::string name;    // kernel_name(symbol)
  std::vector<Instruction> code;
};

// A kernel's name as `c++filt` prints it, without its return type, its parameter list and
// every "gpuprobe::" qualifier: `_ZN8gpuprobe5pipes10throughputINS0_7Fp32FmaELi8ELi64EEEvNS0_6OpArgsE...`
// -> "pipes::throughput<pipes::Fp32Fma, 8, 64>". A name that does not demangle is returned as is.
std::string kernel_name(const std::string& symbol);

// Every .entry of a PTX file.
std::vector<KernelCode> parse_ptx(const std::string& text);
// Every function of `cuobjdump -sass` output compiled for `arch` ("sm_90"); all of them when
// `arch` is empty.
std::vector<KernelCode> parse_sass(const std::string& text, const std::string& arch = "");
// Architectures present in `cuobjdump -sass` output ("sm_90", ...).
std::vector<std::string> sass_architectures(const std::string& text);

const KernelCode* find_kernel(const std::vector<KernelCode>& kernels, const std::string& name);

// The instructions a check looks at: between the first and the last clock read when the
// kernel reads the clock at least twice, the whole kernel otherwise.
std::vector<Instruction> timed_region(const KernelCode& kernel, CodeDialect dialect);

struct InstructionRule {
  std::string pattern;  // ECMAScript regex searched in Instruction::text; anchor it with ^
  int count = -1;       // exact static count in the region; -1: at least one
  bool chained = false; // every match reads what the previous match wrote (directly or
                        // through the instructions between them): a dependent chain
};

struct CodeExpectation {
  std::string source;  // stem of microbench/<source>.cu, and of <build>/ptx/<source>.ptx
  std::string kernel;  // kernel_name() of the kernel
  std::string probe;   // the probe it times
  std::vector<InstructionRule> ptx, sass;
  int min_arch = 0;    // lowest architecture (70 = sm_70) whose code has the instructions;
                       // below it the kernel is compiled empty and the probe is gated
};

struct CheckOutcome {
  bool ok = true;
  std::string why;  // what failed, readable on its own
};

int count_matches(const std::vector<Instruction>& code, const std::string& pattern);
// Whether each match of `pattern` depends on the previous match; `why` says where not.
bool chain_is_dependent(const std::vector<Instruction>& code, const std::string& pattern,
                        std::string* why = nullptr);
CheckOutcome check_code(const KernelCode& kernel, const std::vector<InstructionRule>& rules,
                        CodeDialect dialect);

std::vector<CodeExpectation>& code_expectations();
// The expectation registered for a kernel, or nullptr.
const CodeExpectation* find_expectation(const std::string& kernel);

struct RegisterCodeExpectations {
  explicit RegisterCodeExpectations(std::vector<CodeExpectation> (*make)());
};

}  // namespace gpuprobe

#define GPUPROBE_REGISTER_CODE_EXPECTATIONS(fn) \
  static ::gpuprobe::RegisterCodeExpectations gpuprobe_code_expectations_##fn(fn)
