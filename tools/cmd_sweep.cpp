// stepsim sweep SCENARIO: try every sensible parallel plan of a scenario (narrowed by its `sweep:`
// section), rank the ones that fit by tokens/s; --shard K/N runs one slice, --merge joins slices,
// and under `mpirun -n N` the N processes run one slice each and rank 0 prints their merge.
// The library (sim/sweep) does the work; this file parses options, draws progress and handles Ctrl-C.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "sim/plan/simulate.hpp"
#include "sim/report/html_report.hpp"
#include "sim/sweep/sweep_json.hpp"
#include "sim/sweep/sweep_table.hpp"
#include "sim/sweep/sweep_yaml.hpp"
#include "tools/cli_allocator.hpp"
#include "tools/cli_common.hpp"
#include "tools/cli_log.hpp"
#include "tools/cli_mpi.hpp"
#include "tools/commands.hpp"
#include "tools/cli_sweep_progress.hpp"

namespace stepsim::cli {
namespace {

constexpr int kInterruptedExit = 130;  // 128 + SIGINT, what a shell reports for Ctrl-C

template <typename Write>
void write_to(const std::string& option, const std::string& path, Write write) {
  if (path == "-") return write(std::cout);
  std::ofstream out(path);
  if (!out) throw UsageError(option + ": cannot write '" + path + "'");
  write(out);
}

int print_outcome(const po::variables_map& vm, const sweep::SweepOutcome& o, const std::string& title) {
  const auto top = static_cast<std::size_t>(vm["top"].as<int>());
  const bool json_to_stdout = vm.count("json") && vm["json"].as<std::string>() == "-";
  if (!json_to_stdout) {
    std::cout << title << "\n" << sweep::format_counts(o) << "\n" << sweep::format_ranking(o, top);
    if (o.interrupted) std::cout << "interrupted: the ranking covers the plans finished so far\n";
  }
  if (vm.count("json"))
    write_to("--json", vm["json"].as<std::string>(), [&](std::ostream& out) { sweep::write_outcome_json(out, o); });
  if (vm.count("csv"))
    write_to("--csv", vm["csv"].as<std::string>(), [&](std::ostream& out) { sweep::write_ranking_csv(out, o); });
  if (vm.count("html"))
    write_to("--html", vm["html"].as<std::string>(), [&](std::ostream& out) {
      std::vector<plan::StepResult> results;
      for (const auto& p : o.results) results.push_back(p.result);
      out << report::render_sweep_html_report(o.scenario, results);
    });
  return o.interrupted ? kInterruptedExit : 0;
}

int merge(const po::variables_map& vm) {
  const auto files = vm["merge"].as<std::vector<std::string>>();
  std::vector<sweep::SweepOutcome> parts;
  for (const auto& f : files) parts.push_back(sweep::read_outcome_json(f));
  const auto merged = sweep::merge_outcomes(parts, files);
  return print_outcome(vm, merged, merged.scenario);
}

int sweep_scenario(const po::variables_map& vm) {
  const std::string path = vm["scenario"].as<std::string>();
  const auto scenario = plan::load_scenario(path);
  warn_unmodelled(scenario.model);
  const auto space = sweep::load_scenario_sweep(path);
  const auto candidates = sweep::enumerate_plans(scenario, space);
  sweep::RunOptions options;
  options.threads = vm["threads"].as<int>();
  if (options.threads < 1) throw UsageError("--threads: expected at least 1, found " + std::to_string(options.threads));
  const MpiWorld world = mpi_world();
  if (vm.count("shard")) {
    if (world.size > 1) throw UsageError("--shard: under mpirun the processes split the plans among them; give one or the other");
    const auto [k, n] = parse_fraction("--shard", vm["shard"].as<std::string>());
    options.shard = {k, n};
  }
  if (world.size > 1) options.shard = {world.rank + 1, world.size};
  SweepProgress progress(isatty(STDERR_FILENO) != 0 && world.rank == 0, options.threads);
  options.on_progress = [&progress](const sweep::Progress& p) { progress.update(p); };
  InterruptFlag interrupt;
  options.stop = &interrupt.flag();
  plan::SimOptions sim = sweep::sweep_sim_options(scenario);
  sim.log = cli_log();
  const auto valid = std::count_if(candidates.begin(), candidates.end(), [](const auto& c) { return c.valid; });
  sim.log.info(path + ": " + std::to_string(candidates.size()) + " candidate plans, " + std::to_string(valid) +
               " valid; " + std::to_string(options.threads) + " threads");
  const auto outcome = sweep::run_sweep(scenario, candidates, options, [&sim](const plan::Scenario& sc, const plan::Strategy& s) {
    return plan::simulate(sc, s, sim);
  });
  progress.finish(outcome.results.size());
  if (world.size == 1) return print_outcome(vm, outcome, scenario.name);
  // Every rank's outcome travels as the JSON --merge reads, so rank 0 prints what --merge of the
  // N shards prints: what one process prints.
  std::ostringstream json;
  sweep::write_outcome_json(json, outcome);
  const auto texts = gather_at_root(json.str());
  if (world.rank != 0) return outcome.interrupted ? kInterruptedExit : 0;
  std::vector<sweep::SweepOutcome> parts;
  std::vector<std::string> sources;
  for (std::size_t r = 0; r < texts.size(); ++r) {
    sources.push_back("rank " + std::to_string(r));
    parts.push_back(sweep::read_outcome_json_text(texts[r], sources.back()));
  }
  // The ranks covered every slice: the merge is the whole sweep, and says so as one process does.
  sweep::SweepOutcome whole = sweep::merge_outcomes(parts, sources);
  whole.shard_count = 1;
  whole.shards = {1};
  return print_outcome(vm, whole, scenario.name);
}

}  // namespace

int run_sweep(const Args& args) {
  keep_freed_memory_for_reuse();
  po::options_description options("Options");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.add_options()("scenario", po::value<std::string>(), "scenario YAML file (its sweep: section narrows the plans)")(
      "top", po::value<int>()->default_value(10), "print the best N plans")(
      "csv", po::value<std::string>(), "write every simulated plan as CSV to FILE, or - for stdout")(
      "html", po::value<std::string>(), "write an HTML page: tokens/s against memory for every plan, its Pareto front, the best")(
      "json", po::value<std::string>(), "write the outcome as JSON to FILE (for --merge), or - for stdout")(
      "threads", po::value<int>()->default_value(cores), "worker threads (default: the CPU cores)")(
      "shard", po::value<std::string>(), "run only slice K of N (K/N): plans whose index % N == K-1")(
      "merge", po::value<std::vector<std::string>>()->multitoken(), "merge the --json files of shards A.json B.json ...");
  po::positional_options_description positional;
  positional.add("scenario", 1);
  auto vm = parse_command_line(
      "sweep", "SCENARIO [--top N] [--csv FILE] [--json FILE] [--threads N] [--shard K/N]\n       stepsim sweep --merge A.json B.json ...",
      "Simulate every valid parallel plan of a scenario and rank those that fit in memory by tokens/s.\n"
      "Ctrl-C prints the ranking of the plans finished so far and exits 130.",
      options, positional, args);
  if (!vm) return 0;
  if (vm->count("top") && (*vm)["top"].as<int>() < 1) throw UsageError("--top: expected at least 1");
  if (vm->count("merge")) {
    if (vm->count("scenario") || vm->count("shard"))
      throw UsageError("stepsim sweep: --merge takes the JSON files of shards, not a scenario or --shard");
    return merge(*vm);
  }
  if (!vm->count("scenario")) throw UsageError("stepsim sweep: expected a SCENARIO file (see stepsim sweep --help)");
  return sweep_scenario(*vm);
}

}  // namespace stepsim::cli
