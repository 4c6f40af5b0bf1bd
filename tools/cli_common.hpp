// What every command shares: parsing its options with --help, the usage error, and printing.
#pragma once

#include <boost/program_options.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace stepsim::cli {

namespace po = boost::program_options;

/// A bad option or argument on the command line; main prints it and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses `args` (without the command name) against `options` and `positional`. On --help prints
/// "usage: stepsim COMMAND SYNOPSIS", the description and the options to stdout, and returns
/// nullopt: the command then returns 0. Unknown options and bad values throw UsageError.
std::optional<po::variables_map> parse_command_line(const std::string& command, const std::string& synopsis,
                                                    const std::string& description,
                                                    po::options_description options,
                                                    const po::positional_options_description& positional,
                                                    const std::vector<std::string>& args);

/// Splits "K/N" (`--shard 1/4`) and similar; throws UsageError naming the option.
std::pair<int, int> parse_fraction(const std::string& option, const std::string& text);

}  // namespace stepsim::cli
