// How a collective is timed, chosen in this one place from the structure of its plan (how many
// ranks, whether its rings fold, how many flows solving it takes), never from CPU time spent.
//
// - In a training step (sim/plan), a collective shares the machine with other traffic, so it runs
//   in the engine: every ring step as its own flows (step mode, the reference), or, in coarse
//   mode, each ring as one flow over all its hops whose latency comes from the ring's step
//   lattice (folded_ring.hpp). Coarse mode is for groups above kCoarseAboveRanks ranks, or above
//   2 in a large cluster: a step-by-step ring is 2(n−1)·n flows per collective (a 128-rank
//   all-reduce: 32,512 flows per channel and size), which made a 32-GPU ZeRO-3 step take minutes.
// - A folded ring's step lattice, and, alone on an idle machine (the nccl-tests table), a whole
//   coarse plan, is solved as a transfer DAG (core::finish_times: step mode's max-min without the
//   engine's streams and holds) within kDagFlowRanks: a ring lattice by refills, so that its
//   symmetric steps tie as step mode's do, a plan of point-to-point transfers (trees, chains,
//   direct sends) on the flow network, which is fast where its flows share links with many
//   others. Above that bound, ring lattices are walked round by round on each hop's bottleneck
//   links (a few % fast where latency and bytes weigh alike: folded_ring.hpp), and other plans are
//   timed on paper by estimate(), as the tuner times them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sim/comm/ops.hpp"
#include "sim/core/transfer_dag.hpp"

namespace stepsim::comm {

/// How finely a collective's rings are simulated: every ring step as its own flows (step, the
/// reference), rings folded into one flow each (folded), or folded where use_coarse_mode() says.
/// Not plan::Fidelity, which says which ranks of a step are simulated.
enum class RingMode { automatic, step, folded };

/// Groups above this many ranks fold their rings by default.
constexpr std::size_t kCoarseAboveRanks = 8;

/// Whether a collective over `ranks` ranks should run in coarse mode: above kCoarseAboveRanks, or
/// above 2 when the caller simulates a large cluster (sim/plan). Two ranks have no ring to fold.
bool use_coarse_mode(std::size_t ranks, bool cluster_is_large = false);
/// Resolves RingMode::automatic with use_coarse_mode().
bool use_coarse_mode(RingMode rings, std::size_t ranks);

/// Whether coarse mode has a folded form of this op and algorithm (ring_phase.hpp: ring AR, AG,
/// RS; hierarchical). A tree, a broadcast chain or direct sends over hundreds of ranks stay
/// thousands of slices × ranks flows, which the engine re-solves at every event, so alone on the
/// machine those are solved as a transfer DAG (plan_dag.hpp), step mode's time without the engine,
/// or timed on paper where idle_timing() finds the DAG too large, as the tuner times them.
bool has_folded_form(Op op, Algorithm algorithm);

/// The most flows × ranks a transfer DAG is solved with: 2^26. Each start or end re-solves the
/// flows coupled to it through shared links, and how many those are grows with the ranks (a tree
/// over single-GPU servers couples them all through the fabric), so a solve costs about flows
/// (core::flow_count) × ranks. The bound keeps one collective shape to seconds: a 128-rank,
/// 8-channel ring all-reduce lattice (260,096 flows) is solved, a 256 MiB tree over 32 single-GPU
/// servers (1.7 M flows) too, the same tree over 64 is not. A ring lattice counts as solved: over
/// one period of its rotation symmetry (lattice_symmetry.hpp), flows and ranks both n/m times
/// fewer, so a 1,024-rank ring over alike 8-GPU servers is solved on 8 hops, exactly.
inline constexpr std::int64_t kDagFlowRanks = std::int64_t{1} << 26;

/// How an idle-machine time is found outside the engine.
enum class IdleTiming {
  dag,     ///< solved as a transfer DAG: step mode's own time
  rounds,  ///< a ring lattice, round by round on each hop's bottleneck links
  paper,   ///< estimate()
  /// Not a time: a ring lattice taken to end S steps of its quickest hop's latency after it
  /// starts, which no method's end comes before (every step waits its hop's latency after the
  /// step before it), so that the paper with it is a floor under the paper's time (the tuner
  /// skips a ring whose floor is slower than its best so far).
  floor,
};

/// The method for a coarse plan or ring lattice of `dag_flows` flows over `ranks` ranks; `rings`:
/// whether what is timed is folded rings' lattice (which has a round-by-round form) rather than a
/// step plan.
IdleTiming idle_timing(std::int64_t dag_flows, std::size_t ranks, bool rings);

/// The solver for a DAG that idle_timing() sends to one: refills for a ring lattice, whose
/// symmetric steps must tie as step mode's do (on the flow network near-ties fall either way and
/// move its end by percents), the flow network for a step plan, whose
/// flows share links with many others (a tree over single-GPU servers), where re-filling all
/// that a change touches costs several times more.
core::DagSolver dag_solver(bool rings);

}  // namespace stepsim::comm
