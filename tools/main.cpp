// stepsim: dispatches to one command and turns errors into exit codes. It does nothing else.
// Exit codes: 0 success, 2 bad input (file, option or value), 1 internal error.
#include <spdlog/common.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include "sim/config/config_error.hpp"
#include "sim/config/limits.hpp"
#include "sim/config/resident_memory.hpp"
#include "tools/cli_common.hpp"
#include "tools/cli_log.hpp"
#include "tools/commands.hpp"

namespace {

using stepsim::cli::all_commands;
using stepsim::cli::set_up_logging;

void print_help() {
  std::cout << "stepsim " << STEPSIM_VERSION
            << " — a discrete-event simulator of one LLM training step on a GPU cluster\n\n"
               "usage: stepsim [-v|-q] [--limit NAME=N] <command> [options]\n\ncommands:\n";
  for (const auto& c : all_commands()) std::printf("  %-12s %s\n", c.name, c.summary);
  std::cout << "\nglobal options:\n"
               "  -h, --help     this help; `stepsim <command> --help` for a command's options\n"
               "  --version      print the version\n"
               "  -v, --verbose  log what each command decides and simulates (to stderr)\n"
               "  -q, --quiet    log only errors (to stderr; warnings are logged by default)\n"
               "  --limit NAME=N raise (or lower) one of stepsim's limits for this run: gpus (65,536),\n"
               "                 seq_len (4,194,304 tokens), microbatches (4,096 per step), events\n"
               "                 (1,000,000,000 per simulated step), memory_gib (8 GiB held while\n"
               "                 simulating), trace_slices (4,000,000 in one --trace file); runs past\n"
               "                 them take longer and more memory\n";
}

// "--limit NAME=N": sets the limit, or says what is wrong (exit 2).
std::optional<std::string> apply_limit(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) return "--limit: expected NAME=N (e.g. gpus=131072), found '" + text + "'";
  const std::string value = text.substr(eq + 1);
  std::int64_t n = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (value.empty() || error != std::errc{} || end != value.data() + value.size())
    return "--limit " + text.substr(0, eq) + ": expected a whole number, found '" + value + "'";
  return stepsim::config::set_limit(text.substr(0, eq), n);
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::level::level_enum level = spdlog::level::warn;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::optional<std::string> limit;
    if (a == "--limit") limit = i + 1 < argc ? std::string(argv[++i]) : std::string();
    else if (a.rfind("--limit=", 0) == 0) limit = a.substr(8);
    if (limit) {
      if (const auto wrong = apply_limit(*limit)) {
        std::cerr << *wrong << "\n";
        return 2;
      }
    } else if (a == "-v" || a == "--verbose") {
      level = spdlog::level::debug;
    } else if (a == "-q" || a == "--quiet") {
      level = spdlog::level::err;
    } else {
      args.push_back(a);
    }
  }
  set_up_logging(level);

  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_help();
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "stepsim " << STEPSIM_VERSION << "\n";
    return 0;
  }
  const auto& commands = all_commands();
  const auto it = std::find_if(commands.begin(), commands.end(),
                               [&](const auto& c) { return args[0] == c.name; });
  if (it == commands.end()) {
    std::vector<std::string> names;
    for (const auto& c : commands) names.push_back(c.name);
    std::string message = "stepsim: unknown command '" + args[0] + "'";
    const std::string suggestion = stepsim::config::closest_match(args[0], names);
    if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
    std::cerr << message << " (see stepsim --help)\n";
    return 2;
  }
  try {
    return it->run(std::vector<std::string>(args.begin() + 1, args.end()));
  } catch (const stepsim::config::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const stepsim::cli::UsageError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const stepsim::config::MemoryLimitExceeded& e) {
    // Outside a plan (stepsim collective, topo): no strategy to point at, the same limit and flag.
    std::cerr << "stepsim: " << e.message() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "stepsim: internal error: " << e.what() << "\n";
    return 1;
  }
}
