#include "tools/cli_common.hpp"

#include <iostream>

namespace stepsim::cli {

std::optional<po::variables_map> parse_command_line(const std::string& command, const std::string& synopsis,
                                                    const std::string& description,
                                                    po::options_description options,
                                                    const po::positional_options_description& positional,
                                                    const std::vector<std::string>& args) {
  options.add_options()("help,h", "show this help");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: stepsim " << command << " " << synopsis << "\n\n"
                << description << "\n\n"
                << options << "\n";
      return std::nullopt;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError("stepsim " + command + ": " + e.what() + " (see stepsim " + command + " --help)");
  }
  return vm;
}

std::pair<int, int> parse_fraction(const std::string& option, const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    std::size_t used_k = 0, used_n = 0;
    const int k = std::stoi(text.substr(0, slash), &used_k);
    const int n = std::stoi(text.substr(slash + 1), &used_n);
    if (used_k != slash || used_n != text.size() - slash - 1 || n < 1 || k < 1 || k > n)
      throw std::invalid_argument("range");
    return {k, n};
  } catch (const std::exception&) {
    throw UsageError(option + ": expected K/N with 1 <= K <= N, found '" + text + "'");
  }
}

}  // namespace stepsim::cli
