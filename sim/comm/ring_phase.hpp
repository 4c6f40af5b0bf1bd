// One ring phase (reduce-scatter, all-gather or both) over an ordered list of ranks, appended to a
// plan: the building block of the ring and hierarchical algorithms. Internal to sim/comm.
//
// Step mode: step s, slice j, position p sends step_bytes/slices from members[p] to members[p+1]
// once slice j of step s−1 has arrived at p (and p's own entry has finished). Slices of a step
// share the link; they matter when hops run at different speeds. On an idle ring this takes
//   steps · (α + step_bytes / B)                   (DESIGN.md; Patarasuk & Yuan 2009)
// Coarse mode folds the whole phase into one flow per ring (folded_ring.hpp): same bytes per hop,
// the ring's common rate, and the step lattice's latency; every member is done when it ends.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/comm/step_plan.hpp"

namespace stepsim::comm {

struct RingPhase {
  std::vector<int> members{};               ///< ranks in ring order
  int steps = 0;                            ///< n−1 for RS or AG, 2(n−1) for AR
  std::int64_t step_bytes = 0;              ///< bytes each position sends per step
  std::vector<std::vector<int>> entry{};    ///< per member: transfers its first send waits for
  std::int64_t step_latency_ps = 0;
  int max_slices = 1;
  bool coarse = false;
};

/// Returns, per member, the transfers after which its part of the phase is done.
std::vector<std::vector<int>> append_ring_phase(StepPlan& plan, const RingPhase& phase, const hw::CommParams& params);

/// The ranks of each server, servers in order of first appearance, ranks in rank order.
std::vector<std::vector<int>> ranks_by_server(const std::vector<int>& server_of);

}  // namespace stepsim::comm
