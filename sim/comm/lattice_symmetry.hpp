// The DAG routes of a plan's folded rings, hop by hop, reduced by the plan's rotation symmetry
// where it has one. Internal to sim/comm (folded_ring.cpp).
//
// A ring over alike servers repeats every m hops (the hops of one server: NVLink hops then a NIC
// hop). When turning every ring of the plan on by m hops maps the lattice onto itself (every hop's
// routes as hop p − m's: same latencies, and links that carry the same crossings), the step
// lattice, started from the same instant everywhere, stays the same around each ring every m hops
// at every step, by induction on the steps; so does the max-min fair share (it is unique). The
// lattice is then solved on hops 0..m−1 only, hop 0 after hop m−1, each link standing for every
// link that carries the same crossings (its class): a route crosses its class as many times as
// the class's links carry that route's turned copies, which keeps each link's load as in the full
// lattice. n/m times fewer jobs and flows; the ends are the full lattice's up to float rounding.
#pragma once

#include <vector>

#include "hardware/router.hpp"
#include "sim/comm/step_plan.hpp"
#include "sim/core/transfer_dag.hpp"

namespace stepsim::comm {

struct LatticeHops {
  /// Per transfer (empty but for folded rings), per hop solved (m of them; all n without symmetry):
  /// its routes.
  std::vector<std::vector<core::DagRoutes>> routes{};
  std::size_t link_count = 0;  ///< links (or classes) the routes number
};

/// Per hop p of a folded ring (ring[p] → ring[p + 1]): its equal-cost routes, read where the
/// router keeps them (it never drops a pair's routes).
using HopRoutes = std::vector<const std::vector<hw::Route>*>;

/// The routes of `plan`'s folded rings, `*hops[i][p]` being ring i's hop p's equal-cost routes,
/// reduced by the smallest rotation that maps the plan's lattice onto itself. No reduction where
/// the rings differ in length or a ring's members wait for different things before their first
/// step (ring_entry: a phase of a hierarchical plan after the one before).
LatticeHops lattice_hops(const hw::Cluster& cluster, const StepPlan& plan, const std::vector<HopRoutes>& hops);

}  // namespace stepsim::comm
