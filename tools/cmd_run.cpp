// stepsim run SCENARIO: simulate each strategy of a scenario (or the one named by --strategy) and
// print the comparison; --json writes the headline metrics for scripts.
#include <fstream>
#include <iostream>

#include "sim/config/yaml_field.hpp"
#include "sim/plan/simulate.hpp"
#include "sim/report/result_formats.hpp"
#include "sim/report/validation.hpp"
#include "sim/sweep/sweep_yaml.hpp"
#include "tools/cli_common.hpp"
#include "tools/cli_log.hpp"
#include "tools/cli_report.hpp"
#include "tools/commands.hpp"

namespace stepsim::cli {
namespace {

plan::Fidelity parse_fidelity(const std::string& text) {
  if (text == "auto") return plan::Fidelity::automatic;
  if (text == "full") return plan::Fidelity::full;
  if (text == "symmetric") return plan::Fidelity::symmetric;
  throw UsageError("--fidelity: expected auto, full or symmetric, found '" + text + "'");
}

}  // namespace

int run_run(const Args& args) {
  po::options_description options("Options");
  std::vector<std::string> sets;
  options.add_options()("scenario", po::value<std::string>()->required(), "scenario YAML file")(
      "strategy", po::value<std::string>(), "simulate only the strategy with this name")(
      "set", po::value<std::vector<std::string>>(&sets), "override a scalar: --set training.global_batch=128")(
      "json", po::value<std::string>(), "write results as JSON to FILE, or - for stdout")(
      "fidelity", po::value<std::string>()->default_value("auto"), "auto, full or symmetric");
  add_report_options(options);
  po::positional_options_description positional;
  positional.add("scenario", 1);
  auto vm = parse_command_line("run", "SCENARIO [--strategy NAME] [--set key=value ...] [--json FILE|-]",
                               "Simulate one training step of each strategy in a scenario.", options, positional, args);
  if (!vm) return 0;
  const auto sc = plan::load_scenario((*vm)["scenario"].as<std::string>(), sets);
  // The sections `sweep` and `validate` read are checked here too: a typo in them would
  // otherwise pass `run` unnoticed.
  const auto doc = config::YamlDocument::load_file((*vm)["scenario"].as<std::string>());
  if (doc.root().has("sweep")) sweep::read_scenario_sweep(doc);
  if (doc.root().has("validation")) report::read_validation(doc.root());
  warn_unmodelled(sc);
  plan::SimOptions opt;
  opt.log = cli_log();
  opt.log.info("read " + sc.file + ": " + std::to_string(sc.strategies.size()) + " strategies on " +
               std::to_string(sc.cluster.gpu_count()) + " GPUs of " + sc.cluster.name);
  opt.fidelity = parse_fidelity((*vm)["fidelity"].as<std::string>());
  opt.detail = reports_need_detail(*vm);
  if (vm->count("json") && (*vm)["json"].as<std::string>() == "-")
    for (const char* text : {"explain", "ascii"})
      if (vm->count(text))
        throw UsageError(std::string("--json - writes JSON to stdout; --") + text +
                         " would print text into it (write the JSON to a file: --json FILE)");
  std::vector<plan::StepResult> results;
  bool found = false;
  for (const auto& s : sc.strategies) {
    if (vm->count("strategy") && s.name != (*vm)["strategy"].as<std::string>()) continue;
    found = true;
    results.push_back(plan::simulate(sc, s, opt));
  }
  if (!found && !vm->count("strategy"))  // a sweep scenario lists a search space, not strategies
    throw UsageError(sc.file + ": no strategies to run (expected a 'strategies:' list; a 'sweep:' scenario runs with "
                     "`stepsim sweep " + sc.file + "`)");
  if (!found) throw UsageError("--strategy: no strategy named '" + (*vm)["strategy"].as<std::string>() + "' in " + sc.file);
  const bool json_to_stdout = vm->count("json") && (*vm)["json"].as<std::string>() == "-";
  if (!json_to_stdout) {
    std::cout << sc.name << "\n\n";
    print_run_reports(*vm, sc, results);
    if (sc.cluster.gpu.fitted_to.empty())
      std::cout << "\nCaveat: " << sc.cluster.gpu.name
                << "'s efficiency parameters are not fitted to measurements of it; the defaults fitted on A100 and "
                   "H100 apply (hardware/gpus.yaml), so its times are less checked than those GPUs'.\n";
  }
  write_run_files(*vm, sc, results);
  if (vm->count("json")) {
    const std::string path = (*vm)["json"].as<std::string>();
    if (json_to_stdout) {
      report::write_results_json(results, std::cout, sc.name);
    } else {
      std::ofstream out(path);
      if (!out) throw UsageError("--json: cannot write '" + path + "'");
      report::write_results_json(results, out, sc.name);
    }
  }
  return 0;
}

}  // namespace stepsim::cli
