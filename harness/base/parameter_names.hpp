#pragma once
// The name of every parameter as a symbol, from the catalog (base/parameter_list.hpp): code
// writes and reads a parameter as param::l1_hit_latency, never as the string, so that a name
// renamed in the catalog is renamed everywhere (or the compiler names the place). Pure C++ of
// constants, so that the CUDA sources include it too. A symbol is the name's characters
// (`const char[]`), usable wherever the string literal was.
#include <string>
#include <string_view>

namespace gpuprobe::param {

// `pattern` with its one <x> replaced by n ("l2_near_sm_count_<g>", 1 -> "l2_near_sm_count_1").
// Throws std::logic_error for a pattern without a placeholder or a negative n.
std::string numbered_name(std::string_view pattern, long n);

#define GPUPROBE_PARAMETER(name, unit, family, method, tolerance, meaning) \
  inline constexpr char name[] = #name;
#define GPUPROBE_NUMBERED(name, pattern, unit, family, method, tolerance, meaning) \
  inline std::string name(long n) { return numbered_name(pattern, n); }
#define GPUPROBE_PIPE_OP(op, results, instruction)                           \
  inline constexpr char op##_throughput_per_sm[] = #op "_throughput_per_sm"; \
  inline constexpr char op##_latency[] = #op "_latency";
#include "base/parameter_list.hpp"

// Names built from a part that code holds as data (a table of ops, pairs or modes): the name,
// checked against the catalog: std::logic_error when the catalog has no such parameter of that
// family (a part renamed on one side only; the family's tests build every part's name).
std::string pipe_throughput_per_sm(std::string_view op);  // pipes: <op>_throughput_per_sm
std::string pipe_latency(std::string_view op);            // pipes: <op>_latency
std::string dual_issue_pair(std::string_view pair);       // dual_issue: dual_issue_<a>_<b>
std::string p2p_bandwidth(std::string_view mode);         // p2p: p2p_<mode>_bandwidth
std::string collective_busbw(std::string_view c);         // collectives: <c>_busbw
std::string collective_latency(std::string_view c);       // collectives: <c>_latency
// energy: <op>_energy and <level>_energy_per_byte, "_zero" after either for all-zero operands
std::string op_energy(std::string_view op, bool zero_operands);
std::string level_energy_per_byte(std::string_view level, bool zero_operands);

}  // namespace gpuprobe::param
