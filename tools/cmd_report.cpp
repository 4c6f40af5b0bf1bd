// stepsim report SCENARIO -o FILE: `stepsim run SCENARIO --html FILE` under the name a user looks
// for; every other option of run (--strategy, --set, --fidelity, --trace, ...) passes through.
#include <string>

#include "tools/cli_common.hpp"
#include "tools/commands.hpp"

namespace stepsim::cli {

int run_run(const Args& args);  // cmd_run.cpp

int run_report(const Args& args) {
  Args run_args;
  bool has_output = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      run_args = {"--help"};
      break;
    }
    if (a == "-o" || a == "--output") {
      if (i + 1 >= args.size()) throw UsageError("stepsim report: " + a + ": expected the HTML file to write");
      run_args.insert(run_args.end(), {"--html", args[++i]});
      has_output = true;
      continue;
    }
    if (a.rfind("--output=", 0) == 0) {
      run_args.insert(run_args.end(), {"--html", a.substr(9)});
      has_output = true;
      continue;
    }
    run_args.push_back(a);
  }
  if (!has_output && (run_args.empty() || run_args.front() != "--help"))
    throw UsageError("stepsim report: expected -o FILE, the HTML report to write (stepsim report SCENARIO -o report.html)");
  return run_run(run_args);
}

}  // namespace stepsim::cli
