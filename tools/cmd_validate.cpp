// stepsim validate [DIR] [--json]: runs every validation scenario (a published run with its measured
// figure) and prints predicted vs measured, the signed error per row and per-source summaries.
// Exits 3 when a row's |error| exceeds the tolerance stated in its file.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <exception>
#include <iostream>
#include <mutex>
#include <numeric>
#include <thread>

#include "sim/config/yaml_field.hpp"
#include "sim/plan/simulate.hpp"
#include "sim/report/validation.hpp"
#include "tools/cli_common.hpp"
#include "tools/cli_log.hpp"
#include "tools/commands.hpp"

namespace stepsim::cli {
namespace {

struct ValidationCase {
  std::string file;
  plan::Scenario scenario;
  report::ValidationSpec spec;
};

std::vector<ValidationCase> load_cases(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw UsageError("stepsim validate: '" + dir + "' is not a directory");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw UsageError("stepsim validate: no .yaml files in '" + dir + "'");
  std::vector<ValidationCase> cases;
  for (const auto& file : files) {
    const auto doc = config::YamlDocument::load_file(file);
    auto scenario = plan::read_scenario(doc);
    if (scenario.strategies.size() != 1)
      throw config::ConfigError(doc.root().required("strategies").pos(), "strategies",
                                "a validation scenario has exactly one strategy, the published one");
    cases.push_back({file, std::move(scenario), report::read_validation(doc.root())});
  }
  return cases;
}

// The work of simulating a case, to weigh validate's progress by (its cases differ a thousandfold
// in cost, so a count of cases says little of the time left): ranks simulated × microbatches ×
// layers per stage. Above kSymmetricAboveGpus automatic fidelity simulates one data-parallel
// replica and times each collective over the dp ranks of its group, so both count there. 0 where
// the strategy is unusable (simulate will say why).
double work_of(const plan::Scenario& sc) {
  const plan::Strategy& st = sc.strategies.front();
  const int gpus = sc.cluster.gpu_count(), model_parallel = st.tp * st.pp * st.cp;
  if (model_parallel <= 0 || gpus < model_parallel || st.pp <= 0) return 0;
  const bool symmetric = gpus > plan::kSymmetricAboveGpus && sc.faults.empty();
  const double ranks = symmetric ? model_parallel + gpus / model_parallel : gpus;
  return ranks * std::max(1, plan::microbatches(sc, st)) * (static_cast<double>(sc.model.layers) / st.pp + 2);
}

std::string duration_text(double s) {
  if (s < 60) return std::to_string(static_cast<int>(s + 0.5)) + " s";
  const int whole = static_cast<int>(s + 0.5);
  return std::to_string(whole / 60) + " min " + std::to_string(whole % 60) + " s";
}

// "validate: [######........]  212/529 scenarios, 38 % of the work  ETA 52 s": the bar and the
// time left go by simulated work done; no ETA before 2 % of it.
std::string progress_line(std::size_t done, std::size_t total, double work_done, double work_total, double elapsed_s) {
  const double fraction = work_total > 0 ? std::min(1.0, work_done / work_total) : 1.0;
  constexpr std::size_t kWidth = 20;
  const auto filled = static_cast<std::size_t>(fraction * kWidth);
  std::string line = "validate: [" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "]  " +
                     std::to_string(done) + "/" + std::to_string(total) + " scenarios, " +
                     std::to_string(static_cast<int>(100 * fraction)) + " % of the work  ETA ";
  return line + (fraction >= 0.02 ? duration_text(elapsed_s * (1 - fraction) / fraction) : std::string("--"));
}

// Simulates every case on `threads` workers; results land by index, so the output does not depend
// on the thread count.
std::vector<report::ValidationRow> run_cases(const std::vector<ValidationCase>& cases, int threads) {
  std::vector<report::ValidationRow> rows(cases.size());
  std::atomic<std::size_t> next{0}, done{0};
  const bool progress = isatty(STDERR_FILENO);
  std::vector<double> work(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) work[i] = work_of(cases[i].scenario);
  const double work_total = std::accumulate(work.begin(), work.end(), 0.0);
  double work_done = 0;  // under error_mutex
  const auto start = std::chrono::steady_clock::now();
  plan::SimOptions opt;
  opt.log = cli_log();
  opt.log.info(std::to_string(cases.size()) + " validation scenarios on " + std::to_string(threads) + " threads");
  // A case's error is kept by its index and the first case's rethrown here, on the calling thread
  // (an exception leaving a std::thread would end the process): the same error whatever the
  // thread count.
  std::vector<std::exception_ptr> errors(cases.size());
  std::mutex error_mutex;
  // The largest clusters first: they take the longest, and started last they would leave the
  // other threads idle at the end. Rows still land by their file's index.
  std::vector<std::size_t> order(cases.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return cases[a].scenario.cluster.gpu_count() > cases[b].scenario.cluster.gpu_count();
  });
  auto worker = [&] {
    for (std::size_t n = next++; n < cases.size(); n = next++) try {
      const std::size_t i = order[n];
      const auto& c = cases[i];
      const auto result = plan::simulate(c.scenario, c.scenario.strategies.front(), opt);
      auto& row = rows[i];
      row.name = c.scenario.name;
      row.file = c.file;
      row.source = c.spec.source;
      row.metric = c.spec.metric;
      row.group = c.spec.group;
      row.measured = c.spec.measured;
      row.predicted = report::predicted_metric(c.spec.metric, c.scenario, result);
      row.error = (row.predicted - row.measured) / row.measured;
      row.tolerance = c.spec.tolerance;
      row.tp = c.scenario.strategies.front().tp;
      row.fits = result.fits;
      row.memory_note = result.memory_note;
      const std::size_t finished = ++done;
      if (progress) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        work_done += work[i];
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::cerr << "\r" << progress_line(finished, cases.size(), work_done, work_total, elapsed) << "\033[K" << std::flush;
      }
    } catch (...) {
      errors[order[n]] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (progress) std::cerr << "\r\033[K";
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return rows;
}

}  // namespace

int run_validate(const Args& args) {
  po::options_description options("Options");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.add_options()("dir", po::value<std::string>()->default_value(std::string(STEPSIM_DATA_DIR) + "/scenarios/validation"),
                        "folder of validation scenarios")(
      "json", "print JSON instead of the table")(
      "threads", po::value<int>()->default_value(cores), "scenarios simulated at once");
  po::positional_options_description positional;
  positional.add("dir", 1);
  auto vm = parse_command_line("validate", "[DIR] [--json] [--threads N]",
                               "Simulate published training runs and compare with their measured figures.\n"
                               "Exit status 3 when a row misses the tolerance stated in its file.",
                               options, positional, args);
  if (!vm) return 0;
  const int threads = (*vm)["threads"].as<int>();
  if (threads < 1) throw UsageError("--threads: expected a positive integer, found " + std::to_string(threads));
  const auto cases = load_cases((*vm)["dir"].as<std::string>());
  const auto rows = run_cases(cases, threads);
  if (vm->count("json")) report::write_validation_json(rows, std::cout);
  else std::cout << report::format_validation(rows);
  const bool all_within = std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.within(); });
  return all_within ? 0 : 3;
}

}  // namespace stepsim::cli
