// Coarse mode's walker: a DAG of transfers run as fluid flows with max-min fair rates, as the
// engine runs step mode's flows, but without the engine's generality (streams, holds, traces), so
// that a collective's own dynamics cost a fraction of an engine run. Internal to sim/comm; used by
// folded_ring.cpp (a ring's step lattice) and by walk_step_plan() (trees, chains, direct sends).
//
// A job is released when all its predecessors have finished; each of its routes then starts
// `slices` flows of bytes / (routes · slices) after that route's latency, and the job finishes
// when all its flows have. Rates are max-min fair on bytes over the flows' links (Bertsekas & Gallager, Data
// Networks §6.5.2, progressive filling), refilled at every instant at which flows start or end,
// over the flows connected to them through shared links; ends are rounded up to whole picoseconds
// as the engine's are (sim/core/rounding.hpp), so both tie, and break near-ties, alike.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace stepsim::comm {

struct WalkCrossing {
  int link = 0;
  double ps_per_byte = 0;  ///< at the link's effective rate
};

struct WalkRoute {
  double latency_ps = 0;               ///< from the job's release to its first byte
  std::vector<WalkCrossing> links{};
};

/// The routes a kind of job takes (a ring's hop, a tree's edge): jobs share it by index.
using WalkRoutes = std::vector<WalkRoute>;

struct WalkJob {
  int routes = -1;   ///< index into WalkGraph::routes; -1 moves nothing (a join)
  double bytes = 0;  ///< split evenly over the routes and slices
  int slices = 1;    ///< flows per route, moving at once (step mode's slices of a ring step)
};

struct WalkGraph {
  std::vector<WalkRoutes> routes{};
  std::vector<WalkJob> jobs{};
  /// Successors in CSR form: job j's are next[next_begin[j] .. next_begin[j + 1]).
  std::vector<std::int64_t> next_begin{};
  std::vector<std::int64_t> next{};
};

/// Drops from every route the links whose max-min constraint another link of the same route
/// implies (every route that crosses A also crosses B, and B is no faster): exact, and on most
/// machines it leaves only the links that are shared or slowest. Of links that imply each other
/// the first stays.
void drop_implied_links(std::vector<WalkRoutes>& routes, std::size_t link_count);

/// What a walk may cost, in flow-links touched by refills: in all, and per finished job beyond a
/// first allowance (a walk whose every refill spans the whole collective is given up early).
struct WalkBudget {
  std::int64_t total = INT64_MAX;
  std::int64_t allowance = INT64_MAX;
  std::int64_t per_job = 0;
};

/// When each job finishes (ps after the walk starts), or nullopt once refills have cost more
/// than `budget` allows (then the caller takes a cheaper way).
std::optional<std::vector<double>> walk_max_min(const WalkGraph& graph, std::size_t link_count, const WalkBudget& budget = {});

}  // namespace stepsim::comm
