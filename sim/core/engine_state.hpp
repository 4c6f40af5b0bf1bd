// Internal to sim/core: what an Engine holds. Plain flat vectors indexed by the ids of ids.hpp, so
// a graph of millions of tasks is a few contiguous arrays (40 bytes per task), not a web of objects.
//
// Invariants: tasks on a stream start in the order they were added (task id order); a stream runs
// at most one task at a time; kNone marks "no stream" / "no active task" inside these records only
// (the public API uses std::optional).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/engine.hpp"
#include "sim/core/flow_network.hpp"
#include "sim/core/pod_vector.hpp"

namespace stepsim::core {

inline constexpr std::uint32_t kNone = 0xffffffffu;
/// Set on the target of an edge that releases a hold (hold_until) rather than a dependency.
inline constexpr std::uint32_t kHoldEdge = 0x80000000u;
inline constexpr std::uint32_t kMaxTasks = kHoldEdge - 1;
inline constexpr std::uint32_t kMaxRouteLinks = 0xfffffffeu;  ///< RouteSpan indexes them in 32 bits

enum class TaskKind : std::uint8_t { compute, transfer, delay, marker, hold };
enum class TaskState : std::uint8_t { waiting, ready, running, finished };

struct TaskRecord {
  std::int64_t work_ps = 0;      ///< compute and delay: duration at full speed
  std::int64_t start_ps = 0;
  std::int64_t finish_ps = 0;
  std::uint32_t stream = kNone;
  std::uint32_t pending = 0;     ///< unfinished dependencies; +1 on an arrival marker until arrival
  std::uint32_t aux = 0;         ///< transfer: index into transfers; hold: targets not yet finished
  TaskKind kind = TaskKind::marker;
  TaskState state = TaskState::waiting;
  bool in_group = false;
};
static_assert(sizeof(TaskRecord) == 40, "the file comment counts 40 bytes a task: keep records that small");

/// A kept route: TaskGraph::routes[begin, end).
struct RouteSpan {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
};

struct TransferSpec {
  std::uint32_t route_begin = 0;  ///< its route's RouteSpan, copied: the run reads no second table
  std::uint32_t route_end = 0;
  std::int64_t bytes = 0;
  std::int64_t latency_ps = 0;
};

struct GroupRecord {
  std::uint32_t size = 0;         ///< members
  std::uint32_t marker = 0;       ///< the arrival marker task
  std::uint32_t not_started = 0;  ///< members that have not started yet (run time)
  std::int64_t arrival_ps = 0;
};

struct Edge {
  std::uint32_t before = 0;
  std::uint32_t after = 0;  ///< | kHoldEdge where it releases a hold
};

// PodVector, not std::vector: these grow to hundreds of MB by push_back (pod_vector.hpp).
struct TaskGraph {
  PodVector<TaskRecord> tasks;
  PodVector<TransferSpec> transfers;
  PodVector<LinkId> routes;  ///< every kept route's links, flat
  PodVector<RouteSpan> route_spans;  ///< by RouteId
  PodVector<Edge> edges;
  PodVector<GroupRecord> groups;
  PodVector<std::uint32_t> group_of;  ///< task -> its group where TaskRecord::in_group, sized as groups are added
};

struct StreamRecord {
  std::uint32_t device = 0;
  StreamKind kind = StreamKind::compute;
  std::uint32_t task_count = 0;   ///< tasks added on it (counted as they are added)
  // Run time: the stream's tasks are order[next, end) of the Simulation's stream order array.
  std::uint32_t next = 0;
  std::uint32_t end = 0;
  std::uint32_t active = kNone;   ///< the task running on it
  // The active compute task's progress under interference: work left (full-speed ps) at last_ps,
  // and the divisor of its speed since then (1, or 1 + slowdown while comm runs on the device).
  double remaining_ps = 0;
  std::int64_t last_ps = 0;
  double divisor = 1;
  std::uint32_t version = 0;      ///< bumped on each re-key; older finish events are stale
};

struct DeviceRecord {
  double comm_slowdown = 0;
  std::vector<std::uint32_t> compute_streams;
  std::uint32_t active_comm = 0;  ///< tasks running on its communication streams (run time)
};

struct EngineState {
  EngineLimits limits;
  TaskGraph graph;
  std::vector<StreamRecord> streams;
  std::vector<DeviceRecord> devices;
  FlowNetwork network;
  bool ran = false;
};

}  // namespace stepsim::core
