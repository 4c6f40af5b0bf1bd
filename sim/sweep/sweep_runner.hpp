// Running the candidates of a sweep (sweep_space.hpp): simulate each valid plan of this shard on
// a pool of threads and keep every result under its candidate index, so the outcome does not
// depend on the thread count or the order in which plans finish.
//
// Threads: `threads` std::thread workers pull positions from one atomic counter; each call of the
// simulate function builds its own engine (plan::simulate is thread-safe), and a worker writes
// only its own result slot. Shards: shard K of N (1-based) takes the candidates whose index
// satisfies index % N == K − 1, so N machines split a sweep without talking, and merge_outcomes
// (sweep_outcome.hpp) joins their outcomes into the one a single run would have produced.
// Stopping: when `*stop` becomes true (a SIGINT handler sets it), workers take no new plan; the
// plans already finished are kept and the outcome is marked interrupted.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <vector>

#include "sim/plan/scenario.hpp"
#include "sim/plan/simulate.hpp"
#include "sim/plan/step_result.hpp"
#include "sim/sweep/sweep_outcome.hpp"
#include "sim/sweep/sweep_space.hpp"

namespace stepsim::sweep {

/// What simulates one checked plan; plan::simulate in production, a fake in tests.
using SimulateFn = std::function<plan::StepResult(const plan::Scenario&, const plan::Strategy&)>;

/// Called from worker threads (serialized by the runner) after each finished plan.
struct Progress {
  std::size_t done = 0;   ///< plans simulated so far in this run
  std::size_t total = 0;  ///< valid plans of this shard
};

struct RunOptions {
  int threads = 1;
  Shard shard;                                   ///< 1/1 = everything
  const std::atomic<bool>* stop = nullptr;       ///< may be null
  std::function<void(const Progress&)> on_progress;  ///< may be empty
};

/// The options a sweep simulates every plan of `scenario` with: one comm::PlanCache of its cluster
/// shared by all of them (SimOptions::plans), so each distinct collective is planned once.
plan::SimOptions sweep_sim_options(const plan::Scenario& scenario);

/// True when candidate `index` belongs to `shard`.
bool in_shard(std::size_t index, const Shard& shard);

/// Simulates the valid candidates of the shard. Requires: threads ≥ 1, 1 ≤ shard.index ≤ shard.count.
/// An exception thrown by `simulate` stops the sweep and is rethrown here (after joining).
SweepOutcome run_sweep(const plan::Scenario& scenario, const std::vector<Candidate>& candidates,
                       const RunOptions& options, const SimulateFn& simulate);

}  // namespace stepsim::sweep
