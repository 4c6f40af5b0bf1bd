// The dependency side of coarse mode's two walkers (lattice_walk.cpp, flow_walk.cpp): which job
// of a WalkGraph is released when, and how many flows each route of it moves. Internal to sim/comm.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <numeric>
#include <vector>

#include "sim/comm/lattice_walk.hpp"

namespace stepsim::comm {

class WalkJobs {
 public:
  explicit WalkJobs(const WalkGraph& graph)
      : graph_(graph), waiting_(graph.jobs.size(), 0), flows_left_(graph.jobs.size(), 0), finish_(graph.jobs.size(), 0.0),
        released_(graph.jobs.size(), 0.0) {
    for (const auto n : graph.next) ++waiting_[static_cast<std::size_t>(n)];
    // Max-min rates do not change when every job's flow count is multiplied alike, so slices
    // common to all jobs (a ring alone: 4 each above 2 MiB per step) are walked as one flow.
    for (const auto& job : graph.jobs)
      if (job.routes >= 0) common_slices_ = std::gcd(common_slices_, job.slices);
    common_slices_ = std::max(common_slices_, 1);
    for (std::size_t j = 0; j < graph.jobs.size(); ++j)
      if (waiting_[j] == 0) queued_.push_back(static_cast<std::int64_t>(j));
  }

  /// Flows a job moves per route: its slices less those common to every job.
  int flows_per_route(const WalkJob& job) const { return job.slices / common_slices_; }
  /// Flows the whole graph moves (routes that cross no link move none).
  std::int64_t total_flows() const {
    std::int64_t total = 0;
    for (const auto& job : graph_.jobs)
      if (job.routes >= 0)
        for (const auto& route : graph_.routes[static_cast<std::size_t>(job.routes)])
          if (!route.links.empty()) total += flows_per_route(job);
    return total;
  }

  /// Releases the queued jobs first in, first out: start_flow(job, route index, at) is called
  /// for each flow a job moves (`at`: its release plus the route's latency); a job that moves
  /// none (a join) finishes at its release, which may queue more.
  template <class StartFlow>
  void release(StartFlow&& start_flow) {
    while (!queued_.empty()) {
      const std::int64_t j = queued_.front();
      queued_.pop_front();
      const auto uj = static_cast<std::size_t>(j);
      const WalkJob& job = graph_.jobs[uj];
      if (job.routes >= 0) {
        const auto& kind = graph_.routes[static_cast<std::size_t>(job.routes)];
        const auto flows = kind.size() * static_cast<std::size_t>(flows_per_route(job));
        for (std::size_t f = 0; f < flows; ++f) {
          const WalkRoute& route = kind[f % kind.size()];
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
  std::int64_t jobs_done() const { return jobs_done_; }
  std::vector<double>& finish_times() { return finish_; }

 private:
  // Records the job's end and queues the successors it was the last to wait for.
  void finish(std::int64_t job, double at) {
    const auto uj = static_cast<std::size_t>(job);
    finish_[uj] = at;
    ++jobs_done_;
    for (auto k = graph_.next_begin[uj]; k < graph_.next_begin[uj + 1]; ++k) {
      const auto n = static_cast<std::size_t>(graph_.next[static_cast<std::size_t>(k)]);
      released_[n] = std::max(released_[n], at);
      if (--waiting_[n] == 0) queued_.push_back(static_cast<std::int64_t>(n));
    }
  }

  const WalkGraph& graph_;
  std::vector<int> waiting_, flows_left_;
  std::vector<double> finish_, released_;
  std::deque<std::int64_t> queued_;
  int common_slices_ = 0;
  std::int64_t jobs_done_ = 0;
};

}  // namespace stepsim::comm
