// The report options `stepsim run` shares with any command that prints StepResults: --explain,
// --trace FILE, --trace-ranks LIST, --svg FILE, --ascii, --price-per-gpu-hour. The command adds
// them to its options, asks whether the timeline is needed, and hands its results over.
#pragma once

#include <vector>

#include "sim/plan/scenario.hpp"
#include "sim/plan/step_result.hpp"
#include "tools/cli_common.hpp"

namespace stepsim::cli {

void add_report_options(po::options_description& options);
/// True when an option needs the per-task timeline (SimOptions::detail).
bool reports_need_detail(const po::variables_map& vm);
/// Prints the table, the explanation, days and cost (when the scenario has training.tokens), the
/// critical path (--explain) and ASCII diagrams (--ascii) to stdout.
void print_run_reports(const po::variables_map& vm, const plan::Scenario& scenario,
                       const std::vector<plan::StepResult>& results);
/// Writes the files --svg, --trace and --html ask for (also when the JSON goes to stdout). The SVG or trace
/// of several strategies goes to FILE with the strategy name before the extension. Throws
/// UsageError for a bad --trace-ranks or a file that cannot be written.
void write_run_files(const po::variables_map& vm, const plan::Scenario& sc, const std::vector<plan::StepResult>& results);

}  // namespace stepsim::cli
