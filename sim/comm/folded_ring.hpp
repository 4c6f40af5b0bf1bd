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
// Latency. On an idle machine the step-by-step ring ends at the longest path through its step
// lattice (the max-plus form of the alpha-beta model: Thakur, Rabenseifner & Gropp 2005; NCCL's
// ring: 2(n−1) steps for all-reduce, n−1 for all-gather and reduce-scatter). Per hop p: d_p the
// start latency of one step, busy_p the time p's busiest link needs for one step of every ring
// that shares it, cross_p the time one step takes to cross p while those others come and go
// (processor sharing, folded_ring.cpp crossing_times):
//   F(0, p) = d_p + cross_p
//   F(s, p) = max(F(s−1, p−1) + d_p + cross_p,   // step s's data arrives from p−1, then crosses p
//                 F(s−1, p)   + busy_p)          // p's link is still busy with step s−1
//   T = max_p F(S−1, p)
// On a uniform ring T = S·(α + b/B), DESIGN.md's formula; on a ring whose NIC hop is slow,
// latencies along the ring overlap with the NIC's bytes, which a sum of every step's latency
// followed by every step's bytes does not. The folded flow carries S·b per hop at the ring rate
// (S·max busy on an idle machine) after a latency of T − S·max busy (the pipeline's fill and
// drain), so it ends at T when idle, and only its bandwidth part stretches under contention.
// Agreement with step mode: tests/sim/comm/folded_ring_test.cpp (exact on rings of like hops;
// rings that mix NVLink/PCIe and NIC hops are the known gap named there).
// Cost: O(S·n) arithmetic per ring, against S·n engine flows in step mode.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hardware/router.hpp"
#include "sim/comm/step_plan.hpp"

namespace stepsim::comm {

/// The routes of a planned transfer between the GPUs `gpus` (per rank): hop_routes() for a
/// point-to-point transfer, one concatenated route per sub-ring for a folded ring. None for a join.
std::vector<hw::Route> planned_routes(const hw::Router& router, const std::vector<int>& gpus, const PlannedTransfer& t);

/// Per transfer of `plan`: the start latency of a folded ring (T − S·t_max above, with t_p from
/// the per-step loads of every folded ring at the same dependency level), nullopt for the others.
std::vector<std::optional<std::int64_t>> folded_ring_latencies(const hw::Router& router, const std::vector<int>& gpus,
                                                               const StepPlan& plan);

}  // namespace stepsim::comm
