#include "sim/comm/timing_method.hpp"

#include <algorithm>

namespace stepsim::comm {

bool use_coarse_mode(std::size_t ranks, bool cluster_is_large) {
  return ranks > 2 && (cluster_is_large || ranks > kCoarseAboveRanks);
}

bool use_coarse_mode(RingMode rings, std::size_t ranks) {
  return rings == RingMode::automatic ? use_coarse_mode(ranks) : rings == RingMode::folded;
}

IdleTiming idle_timing(std::int64_t dag_flows, std::size_t ranks, bool rings) {
  const auto n = static_cast<std::int64_t>(std::max<std::size_t>(ranks, 1));
  if (dag_flows <= kDagFlowRanks / n) return IdleTiming::dag;
  return rings ? IdleTiming::rounds : IdleTiming::paper;
}

bool has_folded_form(Op op, Algorithm algorithm) {
  return (algorithm == Algorithm::ring && op != Op::broadcast) || algorithm == Algorithm::hierarchical;
}

core::DagSolver dag_solver(bool rings) { return rings ? core::DagSolver::refills : core::DagSolver::flow_network; }

}  // namespace stepsim::comm
