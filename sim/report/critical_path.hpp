// The critical path of a simulated step: the chain of tasks that set the step time, and the time
// along it summed by category ("where did the time go").
//
// Walk (from the last-finishing task back to the step start at t = 0): a task's predecessor is,
// among its dependencies (TaskRecord::deps) and the task before it on its own stream, the one that
// finished last by its start. Time between that predecessor's end and the task's start is
// "waiting"; time before the first task of the chain is waiting too. A collective member that
// waited for peers (TaskRecord::sync_wait_ps > 0, TaskRecord::group set) hands the walk to the
// member of its collective on another rank that arrived last, at the moment it arrived: the wait
// is that rank's path (a PP receive's sender, a DP bucket's slowest rank), and only the member's
// time after arrival is booked as its communication class. Without such a peer (one simulated
// member) the sync wait is booked as "sync stall". The parts therefore add up exactly to the end
// of the last task (critical_path_test.cpp checks this).
// Complexity: O(T log T) for T tasks. Input: a StepResult with its task timeline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/plan/step_result.hpp"

namespace stepsim::report {

struct CriticalStep {
  std::uint32_t task = 0;             ///< index into StepResult::tasks
  std::int64_t wait_before_ps = 0;    ///< idle time between the predecessor's end and this start
};

struct CategoryTime {
  std::string label;                  ///< "forward mlp", "TP communication", "waiting", …
  std::int64_t ps = 0;
};

struct CriticalPath {
  std::vector<CriticalStep> chain;    ///< first task to last, in time order
  std::vector<CategoryTime> by_category;  ///< largest first; ties by label
  std::int64_t total_ps = 0;          ///< = the end of the last task = sum of by_category
  int rank_changes = 0;               ///< times the chain crosses from one rank to another
};

/// The label a task's own time is summed under: compute as "<phase> <op>" (forward mlp,
/// backward attention, weight-gradient qkv, recompute mlp), then "optimizer step",
/// "TP communication", "PP send/recv", "DP communication", "ZeRO communication", "other".
std::string critical_path_label(const plan::TaskRecord& task);

/// Empty path (total 0) when the result has no tasks.
CriticalPath critical_path(const plan::StepResult& result);

/// "Critical path: 412.3 ms …" then one aligned row per category with time and share.
std::string format_critical_path(const CriticalPath& path, const plan::StepResult& result);

}  // namespace stepsim::report
