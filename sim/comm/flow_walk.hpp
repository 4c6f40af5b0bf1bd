// Coarse mode's second walker: a WalkGraph (lattice_walk.hpp) run on the engine's own flow network
// (sim/core/flow_network.hpp) instead of walk_max_min's refills. The flow network re-solves only
// what a change can move (flows coupled through saturated links, above the level of the change),
// so where every refill of walk_max_min spans the whole collective (a tree whose edges all share
// NICs or PCIe uplinks with others) it is 3-20x faster: a 64 MiB tree over 32 single-GPU DGX A100
// servers 1.2 s against 5.9 s, a 256 MiB tree over 8 a100-pcie servers 2.3 s against 6.6 s.
//
// It is the fallback, not the first choice. Both walkers are max-min fair and differ only in float
// arithmetic (rates in bytes/s here, bytes/ps there; their tolerances), so only in which near-tie
// goes first; where rounding decides near-ties, that moves the end by percents. Measured against
// step mode at 512 MiB with the ring step latency 3.4 us and ±1 ps, ±10 ps (which move step mode
// itself by up to 1.1 %): on the dgx-a100 16x8 ring lattice walk_max_min was within 0.6 %, this
// within 4.1 %; on a dgx-2 tree at 128 MiB (step mode moves 1.7 %) within 1.5 % and 2.2 %.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/comm/lattice_walk.hpp"

namespace stepsim::comm {

/// When each job of `graph` finishes (ps after the walk starts), as walk_max_min() says but on
/// the engine's flow network; nullopt once the work done (the network's solve_work() plus 100 per
/// finished flow, ~10 ns a unit) exceeds budget.total, or, past budget.allowance, once the work so
/// far scaled up to all the graph's flows would (budget.per_job is not used).
std::optional<std::vector<double>> walk_on_flow_network(const WalkGraph& graph, std::size_t link_count, const WalkBudget& budget = {});

}  // namespace stepsim::comm
