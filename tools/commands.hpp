// The list of commands `stepsim` dispatches to. Each command lives in its own tools/cmd_*.cpp and
// takes its arguments without the command name; it returns the exit code (0 ok, 2 bad input) or
// throws (ConfigError and UsageError mean bad input, anything else is an internal error).
#pragma once

#include <string>
#include <vector>

namespace stepsim::cli {

using Args = std::vector<std::string>;

struct Command {
  const char* name;
  const char* summary;  ///< one line for `stepsim --help`
  int (*run)(const Args& args);
};

/// Every command, in the order `stepsim --help` lists them. Defined in commands.cpp.
const std::vector<Command>& all_commands();

}  // namespace stepsim::cli
