// Internal to sim/plan: one simulate() call while it turns a strategy into tasks. Its parts:
// what it reads (PlanInputs, plan_inputs.hpp), the engine and the record of every task added
// (TaskRecorder, task_recorder.hpp), how each collective is timed (Collectives, collectives.cpp),
// and what the builders hand each other (pass markers, gradient-ready tasks). One Build owns one
// Engine; nothing here is shared between calls.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "hardware/router.hpp"
#include "sim/comm/collective.hpp"
#include "sim/comm/network.hpp"
#include "sim/core/engine.hpp"
#include "sim/plan/plan_inputs.hpp"
#include "sim/plan/step_result.hpp"
#include "sim/plan/task_recorder.hpp"

namespace stepsim::plan {

/// Start marker and last compute-stream task of one pass on one rank.
struct PassTasks {
  core::TaskId start, end;
};

class Build;
class OptimizerOffload;  // optimizer_offload.hpp

/// Creates collectives the way the fidelity allows (collectives.cpp).
class Collectives {
 public:
  explicit Collectives(Build& b) : b_(b) {}
  /// `group`: global ranks of the whole collective in rank order; `streams`: one per SIMULATED
  /// member (all of them in full mode). Returns the member holds, in the order of `streams`.
  std::vector<core::TaskId> add(CommClass cls, comm::Op op, const std::vector<int>& group, std::int64_t bytes,
                                const std::vector<core::StreamId>& streams, int stage);
  /// Members that finish `d` after the group arrives (no flows).
  std::vector<core::TaskId> timed(const std::vector<core::StreamId>& streams, core::Duration d);
  /// Time of one TP collective of `group` (in one server) on an idle machine, or the test hook's.
  core::Duration tp_time(comm::Op op, const std::vector<int>& group, std::int64_t bytes);

 private:
  /// Time of a collective as the Hockney α–β model splits it: `latency` (α, paid alone) and
  /// `bandwidth` (the rest, which concurrent collectives of the same group share).
  struct SplitTime {
    core::Duration latency, bandwidth;
  };
  core::Duration isolated_time(comm::Op op, const std::vector<int>& group, std::int64_t bytes);
  /// comm::add_collective of `request` (flows on the shared Network), its algorithm and protocol
  /// taken from an alike group's where the routes allow (collectives.cpp).
  std::vector<core::TaskId> add_flows(const comm::CollectiveRequest& request, const std::vector<core::StreamId>& streams);
  /// A tuner's choice and the route questions it asked, for add_flows() to reuse.
  struct TunedChoice {
    std::vector<int> gpus;
    std::vector<std::pair<int, int>> asked;
    comm::Algorithm algorithm = comm::Algorithm::ring;
    hw::Protocol protocol = hw::Protocol::simple;
  };
  // op, bytes, group size, coarse -> the choices tuned so far, each for a group no earlier one matched
  std::map<std::tuple<int, std::int64_t, std::size_t, bool>, std::vector<TunedChoice>> tuned_choices_;
  // Each kept plan add_flows() emitted, laid out once (kept plans never move), and the last
  // request: a pipeline channel sends one message after another on the same pair, which then
  // skips the plan lookup too.
  std::unordered_map<const comm::PlannedCollective*, comm::LaidOutCollective> laid_out_;
  comm::CollectiveRequest last_request_;
  const comm::LaidOutCollective* last_laid_out_ = nullptr;
  SplitTime concurrent_dp_time(comm::Op op, std::int64_t bytes, int stage, const std::vector<int>& group);
  /// Members that finish after `t.latency`, then `t.bandwidth` on the group's shared link.
  std::vector<core::TaskId> shared(const std::vector<core::StreamId>& streams, const std::vector<int>& group, SplitTime t);
  /// One request per group, for the tuner to pick (coarse as the cluster's size says).
  std::vector<comm::CollectiveRequest> requests_for(const std::vector<std::vector<int>>& groups, comm::Op op,
                                                   std::int64_t bytes) const;
  core::Duration concurrent_time(const std::vector<comm::CollectiveRequest>& requests,
                                 const std::vector<std::shared_ptr<const comm::PlannedCollective>>& tuned = {});
  Build& b_;
  /// Whether any route between members of `group` uses a link other than NVLink.
  bool leaves_nvlink(const std::vector<int>& group);
  // op, bytes -> the group's local GPU positions -> time; looked up with shape_, no key copied
  std::map<std::pair<int, std::int64_t>, std::map<std::vector<int>, core::Duration>> isolated_cache_;
  std::vector<int> shape_;
  std::vector<std::int8_t> leaves_nvlink_;  // [first global rank of a TP group]: −1 unknown, 0, 1
  // op, bytes, stage, DP indices, TP indices (a group folded over TP; else empty)
  std::map<std::tuple<int, std::int64_t, int, std::vector<int>, std::vector<int>>, SplitTime> concurrent_cache_;
  /// A concurrent_dp_time() solved for one stage, with what it asked the router: another stage's
  /// groups whose routes are the same up to renaming get the same time (route_equivalence.hpp).
  struct SolvedGroups {
    std::vector<int> gpus;                    ///< every group's GPUs, one after another
    std::vector<std::pair<int, int>> pairs;   ///< the GPU pairs whose routes the solve read
    SplitTime time;
  };
  // op, bytes, DP indices, TP indices -> the stages solved so far that no other stage matched
  std::map<std::tuple<int, std::int64_t, std::vector<int>, std::vector<int>>, std::vector<SolvedGroups>> solved_groups_;
  /// The tuner's choice for each of `requests` (alike groups of one stage), set in it: chosen for
  /// the first, and for each other where its routes are the first's up to renaming, else chosen
  /// again. Returns per request the tuner's coarse plan for it (plans index ranks, so alike
  /// groups share one), for concurrent_time() not to plan it again.
  std::vector<std::shared_ptr<const comm::PlannedCollective>> choose_for_all(std::vector<comm::CollectiveRequest>& requests);
  /// [DP/ZeRO group] -> the link its symmetric-fidelity collectives share (kSharedLinkBytesPerS).
  std::map<std::vector<int>, core::LinkId> shared_links_;
};

class Build {
 public:
  Build(const Scenario& sc, const Strategy& st, const SimOptions& opt);
  ~Build();
  Build(const Build&) = delete;
  Build& operator=(const Build&) = delete;
  /// ZeRO-Offload's copies and CPU step (optimizer_offload.hpp), made on first use.
  OptimizerOffload& offload();

  const PlanInputs in;
  TaskRecorder rec;
  hw::Router router;
  std::unique_ptr<comm::Network> network;
  Collectives collectives{*this};

  std::vector<int> global_of;                       ///< local -> global rank
  std::vector<int> local_of;                        ///< global -> local, −1 if not simulated
  std::vector<std::vector<PassTasks>> passes;       ///< [local rank][pass index in schedule]
  std::vector<double> executed_flops;               ///< per local rank
  std::vector<double> recompute_flops;              ///< per local rank: the part of executed_flops that recomputes
  /// Per local rank: GPU time of the kernels accumulating weight gradients over microbatches
  /// (LayerCost::accumulate), as emitted.
  std::vector<std::int64_t> accumulate_ps;
  /// [local][layer index within the stage] -> the task after its last backward (weight gradient
  /// ready for the DP reduce); filled by build_stage_passes.
  std::vector<std::vector<core::TaskId>> grad_ready;
  /// [local][layer index within the stage] -> the layer's first compute in the step (with fused
  /// passes, only a chunk's first layer: its pass); Megatron-Core's overlapped parameter
  /// all-gathers gate these. Filled by build_stage_passes.
  std::vector<std::vector<std::optional<core::TaskId>>> first_forward;
  std::vector<core::TaskId> backward_end;           ///< [local] last backward/weight pass end
  std::int64_t engine_makespan_ps = 0;              ///< after run

  /// The part of `global`'s DP group a sharded collective runs over: all of it, its shard group
  /// (PlanInputs::shard_degree consecutive members), or its replicas (the members at its place in
  /// every shard group).
  enum class DpPart { all, shard, replicas };
  std::vector<int> dp_part(int global, DpPart part) const;
  /// Simulated local ranks of stage `pp`, as TP groups (one per simulated dp index).
  std::vector<std::vector<int>> stage_tp_groups(int pp) const;
  bool is_simulated(int global) const { return local_of[static_cast<std::size_t>(global)] >= 0; }

 private:
  std::unique_ptr<OptimizerOffload> offload_;
};

// Builders, one file per concern.
void build_stage_passes(Build& b, int stage);      // task_builder_layers.cpp
/// Fused pass: compute and TP time of one pass of `kind` on virtual stage u (task_builder_fused.cpp).
struct FusedPass {
  std::int64_t compute_ps = 0;
  core::Duration tp;
  std::int64_t host_ps = 0;  ///< host time to issue the pass
};
FusedPass fused_pass(Build& b, PassKind kind, int vstage, const std::vector<int>& tp_group);
void build_pipeline_transfers(Build& b);           // task_builder_pp.cpp
void build_gradient_sync(Build& b, int stage);     // task_builder_dp.cpp (DP buckets, ZeRO-1/2, optimizer)
void build_embedding_sync(Build& b);               // task_builder_dp.cpp


}  // namespace stepsim::plan
