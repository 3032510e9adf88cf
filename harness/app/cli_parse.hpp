#pragma once
// CLI11 for every command's options: one way to parse, to print --help and to report a
// mistake (one line on stderr, exit 2).
#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe {

// Parses `args` (in order, without the command's name) with `app`, then runs `check`, which
// may throw UsageError. Returns nothing when the command goes on; otherwise its exit code: 0
// after printing the help asked for, 2 after one line "<prefix>: <mistake> (...)" on stderr.
std::optional<int> parse_subcommand(CLI::App& app, const std::vector<std::string>& args,
                                    const std::string& prefix,
                                    const std::function<void()>& check = {});

// CLI11's message for a parse error as one line, with where to read the command's options.
std::string one_line_error(const CLI::Error& e, const std::string& command);

// A value that must not be empty (a file or folder name).
CLI::Validator non_empty();
// A finite number above zero.
CLI::Validator finite_positive();

}  // namespace gpuprobe
