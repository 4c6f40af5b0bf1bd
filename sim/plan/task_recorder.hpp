// Internal to sim/plan: the engine of one simulate() call and the record of every task the
// builders add to it. Adding a compute task, a host call or a collective's members goes through
// here, which writes down what the task is (rank, category, layer, microbatch, chunk, slot, group)
// as it is made, and every explicit dependency when detail is asked for; metrics and reports read
// these records. The engine itself is reachable for comm::Network (collectives add their own
// flows and holds, which record_members then records) and for reading times after the run.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "sim/comm/ops.hpp"
#include "sim/core/engine.hpp"
#include "sim/core/pod_vector.hpp"
#include "sim/plan/step_result.hpp"

namespace stepsim::plan {

/// Streams per rank (CUDA streams of Megatron-LM / DeepSpeed): compute (layer kernels, and the
/// blocking TP collectives, which Megatron runs on the compute stream), dp (gradient buckets,
/// ZeRO reduce-scatter, ZeRO-1/2 re-gather), zero (ZeRO-3 parameter prefetch), one per PP
/// direction (send to next, send to previous, receive from previous, receive from next) so a send
/// never queues behind a receive, tp (the backward TP collectives Megatron overlaps with
/// weight-gradient GEMMs), and host: the framework's CPU thread, which issues the compute-stream
/// kernels and TP collectives in program order (hw::CommParams::host_call_overhead); its own
/// device, so it is never slowed.
enum class Slot : std::uint8_t { compute, dp, zero, send_next, send_prev, recv_prev, recv_next, tp, host };
inline constexpr int kSlots = 9;

/// What a memory event holds: stored activations, gathered ZeRO-3 parameters, recompute buffers,
/// or gradients accumulated unsharded across microbatches (FSDP's deferred reduction).
enum class MemKind : std::uint8_t { activations, gathered, buffers, gradients };

enum class CommClass : std::uint8_t { tp, pp, dp, zero, ep, cp };
inline constexpr int kCommClasses = 6;
CommClass class_of(TaskCategory c);
TaskCategory category_of(CommClass c);

/// TaskMeta::op of a host transfer that moves data from the GPU to host memory.
inline constexpr std::int8_t kToHost = 1;

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
  std::int8_t op = 0;           ///< comm::Op for members; kToHost or 0 for host transfers; else 0
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

class TaskRecorder {
 public:
  /// `keep_dependencies`: log every depend() for the detailed report (SimOptions::detail); the
  /// engine runs under `limits` (resource_guard.hpp).
  TaskRecorder(bool keep_dependencies, core::EngineLimits limits)
      : engine_(std::move(limits)), keep_dependencies_(keep_dependencies) {}

  /// A simulated rank: its GPU (with `comm_slowdown`, hw::GpuSpec) and streams, and `slowdown`
  /// of its compute (faults). Returns its local index.
  int add_rank(double comm_slowdown, double slowdown);
  std::size_t ranks() const { return streams_.size(); }
  core::StreamId stream(int local, Slot s) const { return streams_[local][static_cast<int>(s)]; }

  /// `ps` of compute on the rank's compute stream, times its slowdown.
  core::TaskId compute(int local, std::int64_t ps, TaskCategory cat, int layer, int mb, int chunk);
  /// `ps` of GPU work that belongs to a collective but is not one of its members (the copies a
  /// list-based collective makes on its stream), on the rank's `slot` stream, times its slowdown.
  core::TaskId comm_work(int local, Slot slot, std::int64_t ps, CommClass cls, int layer, int mb, int chunk);
  /// `ps` of the host thread's time on its stream (Slot::host), recorded as `cat` (host or
  /// host_copies).
  core::TaskId host(int local, std::int64_t ps, int layer, int mb, int chunk, TaskCategory cat = TaskCategory::host);
  /// `bytes` over `route` (kept by the engine) after `latency`, on the rank's `slot` stream, recorded
  /// as `cat`: ZeRO-Offload's copies between GPU and host memory.
  core::TaskId transfer(int local, Slot slot, core::RouteId route, std::int64_t bytes, core::Duration latency,
                        TaskCategory cat, int layer, int mb, bool to_host);
  /// `ps` on the rank's `slot` stream that is not GPU work (its faults do not slow it), recorded as
  /// `cat`: the host CPU's optimizer step under ZeRO-Offload.
  core::TaskId delay(int local, Slot slot, std::int64_t ps, TaskCategory cat);
  /// Records the members of one collective; `group`: the id of a collective already recorded in
  /// part (a PP transfer's receive after its send), or −1 for a new one. Returns the id.
  int record_members(const std::vector<core::TaskId>& members, const std::vector<int>& locals, CommClass cls,
                     comm::Op op, std::int64_t bytes, int layer, int mb, int chunk, Slot slot, int group = -1);
  /// `peer` (a global rank) of the member recorded last: the other end of a PP transfer.
  void set_last_peer(int peer) { meta_.back().peer = peer; }
  void depend(core::TaskId before, core::TaskId after);
  /// `ps` of GPU work on the rank, times its slowdown (faults): what compute() makes of it.
  std::int64_t slowed(int local, std::int64_t ps) const;
  void memory(MemEvent event) { mem_.push_back(event); }
  /// The latest member recorded on the rank's dp stream.
  std::optional<core::TaskId> last_on_dp(int local) const { return last_on_dp_[local]; }

  core::Engine& engine() { return engine_; }
  const core::Engine& engine() const { return engine_; }
  const core::PodVector<TaskMeta>& meta() const { return meta_; }
  const core::PodVector<MemEvent>& mem() const { return mem_; }
  /// Explicit dependencies, (before, after), when kept.
  const std::vector<std::pair<core::TaskId, core::TaskId>>& dependencies() const { return dependencies_; }

 private:
  /// A task of `ps` on the rank's `slot` stream, recorded as `cat`.
  core::TaskId work(int local, Slot slot, std::int64_t ps, TaskCategory cat, int layer, int mb, int chunk);

  core::Engine engine_;
  bool keep_dependencies_;
  std::vector<std::array<core::StreamId, kSlots>> streams_;
  std::vector<double> slowdown_;
  std::vector<std::optional<core::TaskId>> last_on_dp_;
  core::PodVector<TaskMeta> meta_;  // millions of records: grown by realloc (pod_vector.hpp)
  core::PodVector<MemEvent> mem_;
  std::vector<std::pair<core::TaskId, core::TaskId>> dependencies_;
  int collectives_ = 0;
};

}  // namespace stepsim::plan
