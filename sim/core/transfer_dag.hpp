// A DAG of transfers on links, solved as the engine solves its flows: each transfer (a job) is
// released when every job before it has finished; each of its routes then starts `slices` flows
// of bytes / (routes · slices) after that route's latency, and the job finishes when all its flows
// have. The flows share links max-min fairly, as the engine's flows do (flow_network.hpp), their
// ends rounded up to whole picoseconds (rounding.hpp), so a DAG of a collective's steps gives step
// mode's time without the engine's streams, holds and traces. sim/comm writes collectives as such
// DAGs (comm/plan_dag.hpp) and chooses when to solve one, and with which solver
// (comm/timing_method.hpp).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace stepsim::core {

struct DagCrossing {
  int link = 0;            ///< any numbering; only the links some route crosses enter the solve
  double ps_per_byte = 0;  ///< at the link's effective rate: the same for every crossing of a link
};

struct DagRoute {
  double latency_ps = 0;  ///< from the job's release to its first byte
  std::vector<DagCrossing> links{};
};

/// The routes a kind of job takes (a ring's hop, a tree's edge): jobs share it by index.
using DagRoutes = std::vector<DagRoute>;

struct DagJob {
  int routes = -1;   ///< index into TransferDag::routes; -1 moves nothing (a join)
  double bytes = 0;  ///< split evenly over the routes and slices
  int slices = 1;    ///< flows per route, moving at once (step mode's slices of a ring step)
};

struct TransferDag {
  std::vector<DagRoutes> routes{};
  std::vector<DagJob> jobs{};
  /// Successors in CSR form: job j's are next[next_begin[j] .. next_begin[j + 1]).
  std::vector<std::int64_t> next_begin{0};
  std::vector<std::int64_t> next{};

  std::int64_t add_job(DagJob job) {
    jobs.push_back(job);
    return static_cast<std::int64_t>(jobs.size()) - 1;
  }
  /// Sets the successors from (before, after) pairs of job indices; throws std::invalid_argument
  /// for an index outside the jobs.
  void set_edges(const std::vector<std::pair<std::int64_t, std::int64_t>>& edges);
};

/// Drops from every route the links whose max-min constraint another link of the same route
/// implies (every route that crosses A also crosses B, and B is no faster): exact, and on most
/// machines it leaves only the links that are shared or slowest. Of links that imply each other
/// the first stays. Link numbers must be below link_count.
void drop_implied_links(std::vector<DagRoutes>& routes, std::size_t link_count);

/// The flows solving `dag` starts: per job, its routes that cross a link × its slices, less the
/// slices common to every job (max-min rates do not change when every job's flow count is
/// multiplied alike, so a ring alone, 4 slices a step above 2 MiB, is solved as one flow a step).
/// What a solve costs grows with it (comm/timing_method.hpp bounds it).
std::int64_t flow_count(const TransferDag& dag);

/// Two solvers give the same max-min answer and differ in cost and in how near-ties fall.
enum class DagSolver {
  /// At every instant where flows start or end, every flow connected to them through shared links
  /// is re-filled (Bertsekas & Gallager, Data Networks §6.5.2, progressive filling), links that
  /// fill at one level settled together, so symmetric flows keep exactly equal rates and end
  /// together, as step mode's ring steps do. Cheap where a change touches a few flows.
  refills,
  /// On the engine's FlowNetwork, which re-solves only what a change can move: several times
  /// faster where every flow shares links with many others (a tree over single-GPU servers);
  /// near-ties between symmetric flows can fall either way and move a ring lattice's end by up to
  /// a few percent.
  flow_network,
};

/// When each job of `dag` finishes, in ps after the first is released. Requires a DAG (every job
/// reachable from one with no predecessor) of at most 2^32 jobs, successors in range, and every
/// crossing's ps_per_byte > 0; throws std::invalid_argument otherwise.
std::vector<double> finish_times(const TransferDag& dag, DagSolver solver);

}  // namespace stepsim::core
