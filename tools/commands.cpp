#include "tools/commands.hpp"

namespace stepsim::cli {

// One declaration and one row per command; a command that does not work yet is not listed.
int run_version(const Args& args);

const std::vector<Command>& all_commands() {
  static const std::vector<Command> kCommands{
      {"version", "print the version", run_version},
  };
  return kCommands;
}

}  // namespace stepsim::cli
