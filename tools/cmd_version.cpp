#include <iostream>

#include "tools/cli_common.hpp"
#include "tools/cli_mpi.hpp"
#include "tools/commands.hpp"

namespace stepsim::cli {

int run_version(const Args& args) {
  po::options_description options("Options");
  if (!parse_command_line("version", "", "Print the stepsim version.", options, {}, args)) return 0;
  std::cout << "stepsim " << STEPSIM_VERSION << (mpi_built_in() ? " (MPI sweeps)" : "") << "\n";
  return 0;
}

}  // namespace stepsim::cli
