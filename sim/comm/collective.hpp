// A collective over a group of GPUs as engine tasks: what sim/plan calls.
//
// add_collective() adds one hold per rank on that rank's stream (its part of the collective),
// groups them (Engine::add_group, so each rank's wait for the slowest peer is a recorded sync
// wait), and the algorithm's transfers as flows on the Network: the first ones depend on the
// group's arrival marker plus the launch latency, later ones on the steps before them. Rank i's
// hold finishes when its own part is done. The caller adds dependencies into the members ("after
// this layer's backward") and out of them.
//
// Latency model (NCCL src/graph/tuning.cc, baseLat and hwLat): a collective costs its protocol's
// launch latency once (NCCL's baseLat: ring Simple 8.4 us, LL 6.6 us, LL128 14 us) and every step
// of the algorithm costs the protocol's step latency (hwLat per hop: ring Simple 3.4 us over
// NVLink, 5.7 us over PCIe, LL 0.6 and 1.0 us; plus the network step latency when the step leaves
// the server), and moves 1/share wire bytes per payload byte (LL 4, LL128 1/0.92). A ring
// all-reduce on an idle ring of bandwidth B therefore takes launch + 2(n−1)·(α + S/(n·B·share)).
// The tuner picks the algorithm and protocol (choose_algorithm); a request may name either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/comm/network.hpp"
#include "sim/comm/ops.hpp"
#include "sim/comm/timing_method.hpp"
#include "sim/core/ids.hpp"
#include "sim/core/time.hpp"

namespace stepsim::comm {

struct PaperMemo;  // paper.hpp

struct CollectiveRequest {
  Op op = Op::all_reduce;
  std::vector<int> gpus{};        ///< the ranks' GPU ids, in rank order
  std::int64_t bytes = 0;         ///< nccl-tests size: the full buffer for AR/AG/RS, per rank for broadcast
  Algorithm algorithm = Algorithm::automatic;
  std::optional<hw::Protocol> protocol{};  ///< none: the tuner picks, as NCCL does without NCCL_PROTO
  int root = 0;                   ///< broadcast root (a rank, not a GPU)
  bool coarse = false;            ///< fold ring steps into one flow per rank (large groups)
  bool operator==(const CollectiveRequest&) const = default;
};

struct CollectiveTasks {
  std::vector<core::TaskId> members;  ///< one hold per rank, on member_streams[i]
  core::GroupId group;
  Algorithm chosen = Algorithm::ring;
  hw::Protocol protocol = hw::Protocol::simple;
};

/// Requires: member_streams.size() == gpus.size() >= 1, distinct valid GPUs, bytes >= 0, root a
/// rank, send_recv with >= 2 ranks, and an algorithm that supports the op on this group; throws
/// std::invalid_argument otherwise.
CollectiveTasks add_collective(Network& network, const CollectiveRequest& request,
                               const std::vector<core::StreamId>& member_streams);

/// add_collective()'s tasks for a plan already kept under key_of(request) (Network::planned), which
/// the caller has looked up: no second lookup, no second check of a group planned before.
CollectiveTasks emit_collective(Network& network, const CollectiveRequest& request, const PlannedCollective& planned,
                                const std::vector<core::StreamId>& member_streams);

/// A kept plan laid out on one group's GPUs: each transfer's flows as engine routes with their
/// wire bytes and start latencies. emit_collective() lays the plan out at every call; a caller
/// that emits the same collective many times (a pipeline channel's sends) lays it out once.
struct LaidOutCollective {
  struct Flow {
    core::RouteId route;  ///< kept by the engine when laid out, taken by every emit of this layout
    std::int64_t bytes = 0;
    core::Duration latency{};
  };
  const PlannedCollective* planned = nullptr;  ///< kept by the Network (or its PlanCache), never moved
  std::vector<std::vector<Flow>> transfers;    ///< per plan transfer; a join has none
};
LaidOutCollective lay_out(const Network& network, const CollectiveRequest& request, const PlannedCollective& planned);
/// emit_collective() of a laid-out plan. Requires: member_streams.size() == the group's size.
CollectiveTasks emit_collective(Network& network, const LaidOutCollective& laid_out,
                                const std::vector<core::StreamId>& member_streams);

/// The key under which a Network keeps the plan add_collective() makes for `request`.
CollectiveKey key_of(const CollectiveRequest& request);

/// Whether a plan may come as one copy of several alike ones (StepPlan::copies), for a caller that
/// only times it on paper (estimate()) or takes expanded() of it, or must come whole.
enum class PlanForm { whole, copies };

/// The plan of `request` under its algorithm (not automatic) and protocol (Simple when none),
/// its folded rings timed by their lattice (folded_ring.hpp) when request.coarse.
PlannedCollective plan_collective(const hw::Router& router, const CollectiveRequest& request,
                                  PlanForm form = PlanForm::whole);
/// plan_collective() of `plan`, made for `request` by its algorithm: its folded rings timed.
PlannedCollective with_folded_rings(const hw::Router& router, const CollectiveRequest& request, StepPlan plan);
/// `planned` with its plan expanded() (copies have no folded rings: none of their latencies to copy).
PlannedCollective expanded(PlannedCollective planned);

/// Time of the collective on an idle machine, on paper: each transfer takes its latency plus the
/// time every link on its route needs for all the transfers of its dependency level (equal
/// shares, as max-min gives equal flows), along the longest dependency chain. Matches the engine
/// on symmetric idle topologies; cheap (no engine). Automatic algorithm or no protocol = the best
/// choice's time.
core::Duration estimate(const hw::Router& router, const CollectiveRequest& request);
/// The same, kept in `net` under key_of(request) like a plan, so that the simulations sharing
/// its PlanCache (a sweep's plans) estimate each collective once. `net` only keeps it: the time is
/// the idle cluster's, not that of links scaled on net's engine (faults). A kept one asks the
/// router nothing, so a Router::record_pairs recording around it sees no pairs.
core::Duration estimate(Network& net, const CollectiveRequest& request);
/// estimate()'s paper for a plan already made, without folded rings (its ranks index `gpus`):
/// what several collectives merged into one plan take together (concurrent.hpp).
core::Duration estimate_plan(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan);
/// Whether estimate() times a plan of copies (StepPlan::copies) from its first copy alone: where
/// the routes of each copy are the copy before's with their links renamed by one map (paper.cpp).
/// Elsewhere it times the expanded() plan.
bool paper_uses_copies(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan);

/// NCCL's tuner in spirit (src/graph/tuning.cc, ncclTopoGetAlgoTime): of every supported
/// algorithm and protocol (those the request leaves open), the pair with the smallest estimate()
/// for this op, size and group. Ties go to the earlier of Simple, LL128, LL, then of ring, tree,
/// nvls, hierarchical, direct. LL128 is a candidate only where consecutive GPUs of the group in
/// one server talk over NVLink, as NCCL enables it by default only there; a protocol whose
/// bandwidth alone would be slower than the best so far is not planned.
Algorithm choose_algorithm(const hw::Router& router, const CollectiveRequest& request);

/// choose_algorithm() with the winner's estimate(), for callers that need both (one estimate each),
/// and the winner's coarse-mode plan with its folded rings' latencies (the tuner plans every
/// candidate in coarse mode, estimate.cpp): what add_collective() would compute again for a
/// coarse request, its costliest part being the ring lattices. The tuner times every candidate
/// in copies where it has them; `form` says whether the winner's plan comes whole.
struct AlgorithmChoice {
  Algorithm algorithm = Algorithm::ring;
  hw::Protocol protocol = hw::Protocol::simple;
  core::Duration time{};
  PlannedCollective coarse_plan{};
};
/// `memo`: what papers over this group keep for the next (paper.hpp), where the caller times
/// it again (an nccl-tests sweep's sizes); else the call keeps one for its own candidates.
AlgorithmChoice choose_with_estimate(const hw::Router& router, const CollectiveRequest& request,
                                     PlanForm form = PlanForm::whole, PaperMemo* memo = nullptr);

/// The protocols the tuner tries for `request`: the one it names, else Simple, LL128 (only where
/// NCCL enables it, as choose_algorithm() says) and LL; less those its algorithm, when it names
/// one, cannot run.
std::vector<hw::Protocol> tuner_protocols(const hw::Router& router, const CollectiveRequest& request);
/// The algorithms that can run this request's op on its group.
std::vector<Algorithm> supported_algorithms(const hw::Cluster& cluster, const CollectiveRequest& request);

}  // namespace stepsim::comm
