// Internal to sim/plan: the state of one simulate() call while it turns a strategy into tasks.
// One Build owns one Engine; nothing here is shared between calls.
//
// Streams per rank (CUDA streams of Megatron-LM / DeepSpeed): compute (layer kernels, and the
// blocking TP collectives, which Megatron runs on the compute stream), dp (gradient buckets,
// ZeRO reduce-scatter, ZeRO-1/2 re-gather), zero (ZeRO-3 parameter prefetch), and one stream per
// PP direction (send to next, send to previous, receive from previous, receive from next) so a
// send never queues behind a receive; each PP channel is FIFO on both ends; and tp, for the
// backward TP collectives Megatron overlaps with weight-gradient GEMMs.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "hardware/router.hpp"
#include "sim/comm/collective.hpp"
#include "sim/comm/network.hpp"
#include "sim/core/engine.hpp"
#include "sim/plan/rank_grid.hpp"
#include "sim/plan/schedule.hpp"
#include "sim/plan/simulate.hpp"
#include "sim/plan/stage_costs.hpp"
#include "sim/plan/step_result.hpp"

namespace stepsim::plan {

/// host: the framework's CPU thread, which issues the compute-stream kernels and TP collectives in
/// program order (hw::CommParams::host_call_overhead); its own device, so it is never slowed.
enum class Slot : std::uint8_t { compute, dp, zero, send_next, send_prev, recv_prev, recv_next, tp, host };
inline constexpr int kSlots = 9;

enum class MemKind : std::uint8_t { activations, gathered, buffers };

/// What a task was; kept small (no strings) because a 1,024-GPU step has millions of tasks.
struct TaskMeta {
  core::TaskId id;
  std::int32_t rank = 0;        ///< local rank index
  std::int32_t layer = -1;
  std::int32_t microbatch = -1;
  std::int64_t bytes = 0;
  TaskCategory category = TaskCategory::other;
  Slot slot = Slot::compute;
  std::int8_t chunk = 0;
  bool member = false;          ///< a collective member: has a sync wait
  std::int8_t op = 0;           ///< comm::Op for members, else 0
  std::int32_t peer = -1;       ///< PP send/recv: the other end's global rank
  std::int32_t group = -1;      ///< members: the collective's id, shared by all its members
};

/// +bytes or −bytes on a rank when a task starts or finishes.
struct MemEvent {
  core::TaskId task;
  bool at_start = false;
  std::int32_t rank = 0;
  std::int64_t delta = 0;
  MemKind kind = MemKind::activations;
};

/// Start marker and last compute-stream task of one pass on one rank.
struct PassTasks {
  core::TaskId start, end;
};

enum class CommClass : std::uint8_t { tp, pp, dp, zero };

class Build;

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
  core::Duration isolated_time(comm::Op op, const std::vector<int>& group, std::int64_t bytes);
  core::Duration concurrent_dp_time(comm::Op op, std::int64_t bytes, int stage, const std::vector<int>& group);
  core::Duration concurrent_time(const std::vector<std::vector<int>>& groups, comm::Op op, std::int64_t bytes);
  Build& b_;
  std::map<std::tuple<int, std::int64_t, std::vector<int>>, core::Duration> isolated_cache_;
  std::map<std::tuple<int, std::int64_t, int>, core::Duration> concurrent_cache_;
};

class Build {
 public:
  Build(const Scenario& sc, const Strategy& st, const SimOptions& opt);

  const Scenario& sc;
  Strategy st;
  SimOptions opt;
  RankGrid grid;
  PipelineSchedule schedule;
  bool symmetric = false;
  std::int64_t engine_makespan_ps = 0;  ///< after run
  /// Large clusters: each pass is one compute task plus one TP collective of the summed time
  /// (task_builder_fused.cpp); exact while a TP group runs in lock step.
  bool fused = false;
  bool coarse = false;               ///< comm's coarse ring mode for DP groups (large clusters)
  core::Engine engine;
  hw::Router router;
  std::unique_ptr<comm::Network> network;
  Collectives collectives{*this};

  CostInputs cost_in;
  LayerCost layer, embedding, logits;
  std::int64_t tp_bytes = 0, pp_bytes = 0;
  std::vector<int> layers_of_vstage, first_layer_of_vstage;

  std::vector<int> global_of;                       ///< local -> global rank
  std::vector<int> local_of;                        ///< global -> local, −1 if not simulated
  std::vector<std::array<core::StreamId, kSlots>> streams;
  std::vector<double> slowdown;                     ///< compute time factor per local rank
  std::vector<std::vector<PassTasks>> passes;       ///< [local rank][pass index in schedule]
  std::vector<TaskMeta> meta;
  std::vector<MemEvent> mem;
  std::vector<std::pair<core::TaskId, core::TaskId>> dep_log;  ///< explicit deps (detail only)
  std::vector<double> executed_flops;               ///< per local rank
  std::vector<double> recompute_flops;              ///< per local rank: the part of executed_flops that recomputes
  /// [local][layer index within the stage] -> the task after its last backward (weight gradient
  /// ready for the DP reduce); filled by build_stage_passes.
  std::vector<std::vector<core::TaskId>> grad_ready;
  std::vector<core::TaskId> backward_end;           ///< [local] last backward/weight pass end
  std::vector<std::optional<core::TaskId>> last_on_dp;  ///< [local] latest member on the dp stream
  std::vector<std::int64_t> stage_params;           ///< [stage] parameters one rank of it holds
  int collectives_recorded = 0;                     ///< the next collective's group id

  core::StreamId stream(int local, Slot s) const { return streams[local][static_cast<int>(s)]; }
  void depend(core::TaskId before, core::TaskId after);
  core::TaskId compute(int local, std::int64_t ps, TaskCategory cat, int layer, int mb, int chunk);
  /// `ps` of the host thread's time on its stream (Slot::host), recorded as TaskCategory::host.
  core::TaskId host(int local, std::int64_t ps, int layer, int mb, int chunk);
  /// Records the members of one collective; `group`: the id of a collective already recorded in
  /// part (a PP transfer's receive after its send), or −1 for a new one. Returns the id.
  int record_members(const std::vector<core::TaskId>& members, const std::vector<int>& locals, CommClass cls,
                     comm::Op op, std::int64_t bytes, int layer, int mb, int chunk, Slot slot, int group = -1);
  /// Simulated local ranks of stage `pp`, as TP groups (one per simulated dp index).
  std::vector<std::vector<int>> stage_tp_groups(int pp) const;
  bool is_simulated(int global) const { return local_of[static_cast<std::size_t>(global)] >= 0; }
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


CommClass class_of(TaskCategory c);
TaskCategory category_of(CommClass c);

}  // namespace stepsim::plan
