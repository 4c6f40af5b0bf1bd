// The part of sim/core's transfer-DAG solvers they share: which job is released when, and how
// many flows each route of it moves. Internal to sim/core (transfer_dag.cpp, dag_refills.cpp,
// dag_flow_network.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <numeric>
#include <vector>

#include "sim/core/transfer_dag.hpp"

namespace stepsim::core {

/// Slices every job that moves bytes has in common (at least 1).
inline int common_slices(const TransferDag& dag) {
  int common = 0;
  for (const auto& job : dag.jobs)
    if (job.routes >= 0) common = std::gcd(common, job.slices);
  return std::max(common, 1);
}

/// Which job is released when, and how many flows each route of it moves.
class Release {
 public:
  explicit Release(const TransferDag& dag)
      : dag_(dag),
        waiting_(dag.jobs.size(), 0),
        flows_left_(dag.jobs.size(), 0),
        finish_(dag.jobs.size(), std::numeric_limits<double>::quiet_NaN()),
        released_(dag.jobs.size(), 0.0),
        common_slices_(common_slices(dag)) {
    for (const auto n : dag.next) ++waiting_[static_cast<std::size_t>(n)];
    for (std::size_t j = 0; j < dag.jobs.size(); ++j)
      if (waiting_[j] == 0) queued_.push_back(static_cast<std::int64_t>(j));
  }

  int flows_per_route(const DagJob& job) const { return job.slices / common_slices_; }

  /// Releases the queued jobs first in, first out: start_flow(job, route index, at) for each flow
  /// a job moves (`at`: its release plus the route's latency); a job that moves none (a join)
  /// finishes at its release, which may queue more.
  template <class StartFlow>
  void release(StartFlow&& start_flow) {
    while (!queued_.empty()) {
      const std::int64_t j = queued_.front();
      queued_.pop_front();
      const auto uj = static_cast<std::size_t>(j);
      const DagJob& job = dag_.jobs[uj];
      if (job.routes >= 0) {
        const auto& kind = dag_.routes[static_cast<std::size_t>(job.routes)];
        const auto flows = kind.size() * static_cast<std::size_t>(flows_per_route(job));
        for (std::size_t f = 0; f < flows; ++f) {
          const DagRoute& route = kind[f % kind.size()];
          if (route.links.empty()) continue;
          ++flows_left_[uj];
          start_flow(j, static_cast<std::uint32_t>(f % kind.size()), released_[uj] + route.latency_ps);
        }
      }
      if (flows_left_[uj] == 0) finish(j, released_[uj]);
    }
  }

  /// One flow of `job` ended at `at`; its last finishes the job.
  void flow_done(std::int64_t job, double at) {
    if (--flows_left_[static_cast<std::size_t>(job)] == 0) finish(job, at);
  }
  std::size_t jobs_done() const { return jobs_done_; }
  /// Per job, when it finished; NaN for a job never released (a cycle).
  std::vector<double>& finish_times() { return finish_; }

 private:
  // Records the job's end and queues the successors it was the last to wait for.
  void finish(std::int64_t job, double at) {
    const auto uj = static_cast<std::size_t>(job);
    finish_[uj] = at;
    ++jobs_done_;
    for (auto k = dag_.next_begin[uj]; k < dag_.next_begin[uj + 1]; ++k) {
      const auto n = static_cast<std::size_t>(dag_.next[static_cast<std::size_t>(k)]);
      released_[n] = std::max(released_[n], at);
      if (--waiting_[n] == 0) queued_.push_back(static_cast<std::int64_t>(n));
    }
  }

  const TransferDag& dag_;
  std::vector<int> waiting_, flows_left_;
  std::vector<double> finish_, released_;
  std::deque<std::int64_t> queued_;
  int common_slices_ = 1;
  std::size_t jobs_done_ = 0;
};

/// The two solvers finish_times() chooses between; `dag` already checked.
std::vector<double> solve_by_refills(const TransferDag& dag);
std::vector<double> solve_on_flow_network(const TransferDag& dag);

}  // namespace stepsim::core
