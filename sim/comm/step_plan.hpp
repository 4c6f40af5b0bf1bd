// A collective as pure data: the point-to-point transfers an algorithm makes, between ranks, with
// the order it makes them in. Algorithms (algorithm.hpp) write plans; the emitter (collective.cpp)
// turns a plan into engine flows, and estimate() times it on paper. No engine, no routes here.
//
// Invariants (checked by CollectiveAlgorithm::plan): every `after` index is smaller than the
// transfer's own index (a plan is written in dependency order, so it is a DAG by construction);
// src/dst are valid ranks; rank_done has one entry per rank.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "hardware/comm_params.hpp"
#include "sim/comm/ops.hpp"

namespace stepsim::comm {

/// Which part of the route between two GPUs a transfer uses. NVLS moves data between a GPU and
/// the NVSwitch, not GPU to GPU: `up` is the first link of the route src→dst (GPU→switch),
/// `down` the last link of it (switch→dst).
enum class Hop { full, up, down };

struct PlannedTransfer {
  int src = 0;                  ///< rank
  int dst = 0;                  ///< rank
  std::int64_t bytes = 0;       ///< payload
  Hop hop = Hop::full;
  /// Per-step latency of the algorithm and protocol (CommParams) for one step; the emitter adds
  /// network_step_latency_ps when the route leaves the server, and the links' own latencies.
  std::int64_t step_latency_ps = 0;
  int latency_steps = 1;        ///< steps it stands for: a folded ring's S (folded_ring.hpp)
  /// A folded ring's: the slices step mode cuts each step into, which move at once and share
  /// links as so many flows (ring_phase.hpp), so its lattice moves them so too.
  int slices = 1;
  /// Coarse mode: the ranks of a folded ring in ring order. Then the transfer is one flow around
  /// all its hops, `bytes` is what each hop carries over all S steps, src/dst are ring[0], ring[1].
  std::vector<int> ring{};
  /// A folded ring's: per member, the transfers its first step waits for (`after` is their union,
  /// which the engine's one flow waits for; the step lattice starts each member on its own).
  std::vector<std::vector<int>> ring_entry{};
  /// A join that stands for member `ring_member` (its position in `ring`) of the folded ring
  /// `after[0]` having the ring's last step in: what the next phase of that member waits for.
  int ring_member = -1;
  /// Bytes on the wire per payload byte beyond the link's protocol efficiency (NVLS runs at its
  /// own efficiency: nvlink_efficiency / nvls_efficiency).
  double wire_factor = 1.0;
  std::vector<int> after{};     ///< indices of transfers that must finish first; none = at launch
  /// A join moves nothing and takes no time: a point where many dependencies meet, so n ranks
  /// waiting on n transfers cost 2n dependencies, not n².
  bool is_join = false;
  /// The protocol's network step latency, set on every transfer by CollectiveAlgorithm::plan().
  std::int64_t network_step_latency_ps = 0;
  bool operator==(const PlannedTransfer&) const = default;
};

struct StepPlan {
  /// With copies > 1, the first copy only (expanded() writes them all out).
  std::vector<PlannedTransfer> transfers;
  /// The protocol the plan runs under and its cost once per collective (NCCL's baseLat), set by
  /// CollectiveAlgorithm::plan().
  hw::Protocol protocol = hw::Protocol::simple;
  std::int64_t launch_latency_ps = 0;
  /// Per rank: the transfers after which that rank's part of the collective is done. Empty =
  /// done at launch (a broadcast root with one rank, a send/recv to itself). With copies > 1,
  /// rank r's part of the first copy (indices into `transfers`).
  std::vector<std::vector<int>> rank_done;
  /// A plan of alike parts, each the one before with its ranks renamed (a tree's channels are
  /// each other's rotations inside every server), may be kept as its first part only: copy g's
  /// transfer i is transfers[i] with every rank r as copy_rank applied g times to r, and every
  /// index a as a + g·transfers.size(); its transfers come after copy g − 1's. Timing on paper
  /// needs only the first part where the routes rename as the ranks do (paper.cpp); everything
  /// else takes expanded().
  int copies = 1;
  std::vector<int> copy_rank{};  ///< per rank: its counterpart in the next copy (copies > 1)

  int add(PlannedTransfer transfer) {
    transfers.push_back(std::move(transfer));
    return static_cast<int>(transfers.size()) - 1;
  }
  bool operator==(const StepPlan&) const = default;
};

/// `plan` with its copies written out (StepPlan::copies): the plan the algorithm writes when not
/// asked for copies, transfer for transfer. A plan of one copy is returned as it is.
StepPlan expanded(StepPlan plan);
/// Throws std::logic_error, naming `who`, for a plan in copies: for everything but the paper,
/// which takes expanded() plans.
void require_whole(const StepPlan& plan, const char* who);

/// What an algorithm needs to know to write its plan.
struct PlanInput {
  Op op = Op::all_reduce;
  int ranks = 0;
  std::int64_t bytes = 0;        ///< nccl-tests size: the full buffer for all-reduce/gather/scatter
  int root = 0;                  ///< broadcast root (rank)
  bool coarse = false;
  std::vector<int> server_of{};  ///< server of each rank, from the Cluster
  /// The cluster's CommParams with Simple's latencies replaced by `protocol`'s (plan_input()), so
  /// that algorithms read one set of step latencies whatever the protocol.
  hw::CommParams params;
  hw::Protocol protocol = hw::Protocol::simple;
  double bandwidth_share = 1.0;  ///< the protocol's share of Simple's bandwidth
  /// The ranks are GPUs of one server joined pairwise by links of their own (hw::Cluster::gpu_mesh).
  bool mesh = false;
  /// The caller takes a plan of copies (StepPlan::copies): it times it on paper, or expands it.
  bool copies = false;
};

/// How many pipeline slices a transfer of `bytes` is cut into: one per
/// params.pipeline_chunk_bytes (NCCL's Simple protocol moves a buffer slot per step), at most
/// `max_slices` (a cost cap on the simulation, not physics), at least 1.
int slice_count(std::int64_t bytes, const hw::CommParams& params, int max_slices);

/// Splits `bytes` into `parts` near-equal integers that add up to `bytes`.
std::vector<std::int64_t> split_bytes(std::int64_t bytes, int parts);

}  // namespace stepsim::comm
