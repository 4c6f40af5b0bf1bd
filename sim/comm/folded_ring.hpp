// Coarse mode's folded ring: a whole ring phase (ring_phase.hpp) as one flow per ring, with the
// bandwidth and the latency of the step-by-step ring it replaces. Internal to sim/comm; used by
// the emitter (collective.cpp) and by estimate() so the two agree.
//
// Bandwidth. Step mode lets a position send step s as soon as step s−1 has arrived from its
// predecessor, so in steady state every hop of a ring moves one step per period of the slowest
// hop: the hops of a ring run at one common rate. One flow whose route is every hop's route in
// turn gets that rate from max-min sharing (a link that k hops use appears k times in the route,
// and FlowNetwork charges each appearance), against other rings and other traffic alike.
// A hop with equal-cost routes splits the ring into sub-rings, one flow each, as step mode
// splits each transfer over them.
//
// Latency. The step-by-step ring ends at the longest path through its step lattice (the max-plus
// form of the alpha-beta model: Thakur, Rabenseifner & Gropp 2005; NCCL's ring: 2(n−1) steps for
// all-reduce, n−1 for all-gather and reduce-scatter): step s of hop p starts d_p (its start
// latency) after step s−1 has arrived from hop p−1, then crosses the hop's links. Where several
// hops share a link (NVLink ports that every channel's ring crosses, a PCIe uplink, host memory)
// how long a crossing takes depends on which other crossings are on the link at that moment, so
// the lattices of all folded rings of the plan are solved together as one transfer DAG: each
// step of each hop is one fluid flow per route, and rates are max-min fair over the routes' links,
// as step mode's flows are in the engine, with its whole-picosecond rounding. Links that another
// link of every route crossing them implies are left out (exact for max-min). On a uniform idle
// ring this is T = S·(α + b/B), DESIGN.md's formula; on a ring whose NIC hop is slow, latencies
// along the ring overlap with the NIC's bytes, which a sum of every step's latency followed by
// every step's bytes does not. The folded flow carries S·b per hop at the ring rate (S·busy on an
// idle machine, busy = the busiest link's time for one step of every ring) after a latency of
// T − S·busy (the pipeline's fill and drain), T being the slowest ring's of its level, so that
// all of them end at T when idle, and only their bandwidth part stretches under contention.
// Cost: the lattice is a transfer DAG (core::finish_times) of J = Σ S·n jobs, one flow each per
// route, solved by refills, and only over one period of the plan's rotation symmetry where it has
// one (a ring over alike servers: one server's hops, lattice_symmetry.hpp), J·m/n jobs. Where that
// lattice has more than kDagFlowRanks / ranks flows (timing_method.hpp), a round-by-round walk
// on each hop's bottleneck links (O(J·k), k hops per link) that is a few % fast where latency and
// bytes weigh alike. Agreement with step mode: tests/sim/comm/timing_methods_test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hardware/router.hpp"
#include "sim/comm/step_plan.hpp"
#include "sim/comm/timing_method.hpp"

namespace stepsim::comm {

/// The routes of a planned transfer between the GPUs `gpus` (per rank): hop_routes() for a
/// point-to-point transfer, one concatenated route per sub-ring for a folded ring. None for a join.
std::vector<hw::Route> planned_routes(const hw::Router& router, const std::vector<int>& gpus, const PlannedTransfer& t);

struct FoldedTiming {
  /// Per transfer of the plan: the start latency of a folded ring (T − S·busy above, T the slowest
  /// end among the folded rings at its dependency level), nullopt for the others.
  std::vector<std::optional<std::int64_t>> latency_ps{};
  /// When the last folded ring's last step is in, from the plan's start on an idle machine, where
  /// the whole plan's lattice was solved as a transfer DAG (a plan of only folded rings and
  /// joins, idle_timing() dag): step mode's own time. The engine's folded flows end there too,
  /// except where phases overlap member by member in step mode (hierarchical on h100-pcie-nvlink:
  /// each phase's one flow per ring waits for the whole phase before, +9.5 % at 8 GiB).
  std::optional<std::int64_t> lattice_end_ps{};
};

/// The folded rings of `plan` timed by their step lattice, solved as idle_timing() says for its
/// size, or by `method` (dag or rounds) where given: tests compare both with step mode. With
/// IdleTiming::floor, latencies no larger than either method's, for the tuner's floor (estimate.cpp).
FoldedTiming fold_rings(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan,
                        std::optional<IdleTiming> method = std::nullopt);

/// fold_rings(...).latency_ps.
std::vector<std::optional<std::int64_t>> folded_ring_latencies(const hw::Router& router, const std::vector<int>& gpus,
                                                               const StepPlan& plan,
                                                               std::optional<IdleTiming> method = std::nullopt);

}  // namespace stepsim::comm
