#include "sim/sweep/sweep_runner.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "sim/comm/network.hpp"

namespace stepsim::sweep {

bool in_shard(std::size_t index, const Shard& shard) {
  return index % static_cast<std::size_t>(shard.count) == static_cast<std::size_t>(shard.index - 1);
}

namespace {

// The shared state of one run: the work list, the result slots (one per job, each written by
// exactly one worker), and what the workers report back.
class Pool {
 public:
  Pool(const plan::Scenario& sc, const std::vector<const Candidate*>& jobs, const RunOptions& options,
       const SimulateFn& simulate)
      : sc_(sc), jobs_(jobs), options_(options), simulate_(simulate), slots_(jobs.size()) {}

  void run() {
    std::vector<std::thread> workers;
    const int extra = std::max(0, options_.threads - 1);
    for (int t = 0; t < extra; ++t) workers.emplace_back([this] { work(); });
    work();  // the calling thread is worker 0
    for (auto& w : workers) w.join();
    if (error_) std::rethrow_exception(error_);
  }

  std::vector<std::optional<plan::StepResult>>& slots() { return slots_; }
  bool stopped() const { return stopped_.load(); }

 private:
  bool should_stop() const {
    return failed_.load() || (options_.stop != nullptr && options_.stop->load());
  }

  void work() {
    while (true) {
      if (should_stop()) {
        stopped_ = true;
        return;
      }
      const std::size_t job = next_.fetch_add(1);
      if (job >= jobs_.size()) return;
      try {
        slots_[job] = simulate_(sc_, jobs_[job]->strategy);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
        failed_ = true;
        return;
      }
      report();
    }
  }

  void report() {
    const std::size_t done = done_.fetch_add(1) + 1;
    if (!options_.on_progress) return;
    std::lock_guard<std::mutex> lock(mutex_);
    options_.on_progress(Progress{done, jobs_.size()});
  }

  const plan::Scenario& sc_;
  const std::vector<const Candidate*>& jobs_;
  const RunOptions& options_;
  const SimulateFn& simulate_;
  std::vector<std::optional<plan::StepResult>> slots_;
  std::atomic<std::size_t> next_{0}, done_{0};
  std::atomic<bool> failed_{false}, stopped_{false};
  std::mutex mutex_;
  std::exception_ptr error_;
};

}  // namespace

plan::SimOptions sweep_sim_options(const plan::Scenario& scenario) {
  plan::SimOptions options;
  options.plans = std::make_shared<comm::PlanCache>(scenario.cluster);
  return options;
}

SweepOutcome run_sweep(const plan::Scenario& scenario, const std::vector<Candidate>& candidates,
                       const RunOptions& options, const SimulateFn& simulate) {
  SweepOutcome out;
  out.scenario = scenario.name;
  out.fingerprint = space_fingerprint(candidates);
  out.enumerated = candidates.size();
  out.shard_count = options.shard.count;
  out.shards = {options.shard.index};
  std::vector<const Candidate*> jobs;
  for (const Candidate& c : candidates) {
    if (!in_shard(c.index, options.shard)) continue;
    ++out.tried;
    if (c.valid) jobs.push_back(&c);
    else ++out.invalid;
  }
  Pool pool(scenario, jobs, options, simulate);
  pool.run();
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (!pool.slots()[j]) {
      ++out.not_run;
      continue;
    }
    PlanResult p{jobs[j]->index, std::move(*pool.slots()[j])};
    p.result.name = jobs[j]->strategy.name;
    p.result.tasks.clear();  // headline metrics only: what the JSON carries and a merge restores
    p.result.ranks.clear();
    p.result.links.clear();
    out.results.push_back(std::move(p));
  }
  out.interrupted = pool.stopped() && out.not_run > 0;
  return out;
}

}  // namespace stepsim::sweep
