// The discrete-event engine: a task DAG on streams, transfers as flows on a network of links with
// max-min fair sharing, groups (the shape of a collective) that record sync waits, and compute
// slowed while communication runs on the same device.
//
// Semantics (../shared/DESIGN.md, sim/core):
// - A task is *ready* when all its dependencies have finished. A task on a stream starts when it
//   is ready AND every task added to that stream before it has finished (CUDA stream order).
//   A task on no stream starts as soon as it is ready.
// - compute: runs `duration` of work on its stream; while any task is active on a communication
//   stream of the same device, it progresses at 1/(1 + device.comm_slowdown) of full speed.
// - transfer: a flow of `bytes` over `route`; it waits `latency`, then moves its bytes at the rate
//   max-min fairness gives it on every link of the route (progressive filling). Zero bytes finish
//   after the latency.
// - delay: takes `duration`, occupies no stream unless given one (then like compute, but never slowed).
// - marker: takes no time.
// - hold: occupies its stream from its start until every task named by hold_until() has finished
//   (at its start if none). A collective's member on a rank's communication stream is a hold.
// - group: members are tasks (usually holds). The group *arrives* when every member has started;
//   arrival_marker(group) is a task that finishes then, or a given time after (so that a
//   collective's launch latency needs no task of its own), so data flows depend on it.
//   Each member's sync wait is arrival time − its own start time.
// Events are ordered by (time, insertion sequence): same input, same timeline, bit for bit.
// No global or static mutable state: engines in separate threads are independent.
//
// Complexity: O((tasks + dependencies) log tasks) for the DAG; flow rates are recomputed once per
// timestamp, only for the flows connected (through shared links) to those that started or ended.
//
// Errors: adding a task on an unknown stream, a route that is empty or names an unknown link, a
// transfer over an unknown route, a link with capacity <= 0, a dependency on an unknown task throw
// std::invalid_argument at once; a task, link or route added after run() throws std::logic_error; a
// dependency cycle, or the event/time cap, makes run() throw SimulationError. Never a hang.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "sim/core/ids.hpp"
#include "sim/core/time.hpp"
#include "sim/core/trace_sink.hpp"

namespace stepsim::core {

class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The run reached EngineLimits::max_events: the caller's limit, not a fault of the task graph
/// (a cycle or a hold never released is a plain SimulationError).
class EventLimitReached : public SimulationError {
 public:
  using SimulationError::SimulationError;
};

struct EngineLimits {
  std::optional<std::uint64_t> max_events;   ///< stop with SimulationError past this many events
  std::optional<TimePoint> max_time;         ///< stop with SimulationError past this simulated time
  /// Called after every kCheckpointEvery-th task added and event processed, with the counts so
  /// far; it may throw to stop the build or the run (the caller's own resource limits: the engine
  /// does not know what the process may hold). Empty = never called.
  std::function<void(std::uint64_t tasks, std::uint64_t events)> checkpoint;
  static constexpr std::uint64_t kCheckpointEvery = 65'536;
};

enum class StreamKind { compute, communication };

/// When a task ran (after run()): what start_of, finish_of and sync_wait say, read at once.
struct TaskTimes {
  TimePoint start;
  TimePoint finish;
  Duration sync_wait;  ///< zero for a task in no group
};

struct RunStats {
  TimePoint makespan;           ///< finish time of the last task
  std::uint64_t events = 0;     ///< events processed
  std::uint64_t tasks = 0;      ///< tasks finished
  std::uint64_t rate_updates = 0;  ///< times max-min rates were recomputed
};

class Engine {
 public:
  explicit Engine(EngineLimits limits = {});
  ~Engine();
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // --- building -----------------------------------------------------------------------------------
  /// comm_slowdown: compute on this device takes (1 + comm_slowdown) times longer while a task is
  /// active on one of its communication streams. 0 = no interference.
  DeviceId add_device(double comm_slowdown = 0.0);
  StreamId add_stream(DeviceId device, StreamKind kind);
  /// A link of the flow network, before run() (comm::Network adds its cluster's as they are used).
  LinkId add_link(double capacity_bytes_per_s);
  /// Scales a link's capacity before run() (a degraded link); factor > 0.
  void scale_link(LinkId link, double factor);

  TaskId add_compute(StreamId stream, Duration duration);
  /// Keeps a route (a non-empty list of known links) for transfers to take: a collective repeated
  /// every layer keeps its routes once instead of once per transfer.
  RouteId add_route(std::span<const LinkId> route);
  /// `bytes` (>= 0) over a kept route after `latency` (>= 0), on `stream` if given.
  TaskId add_transfer(RouteId route, std::int64_t bytes, Duration latency, std::optional<StreamId> stream = std::nullopt);
  /// A transfer over a route taken by it alone: add_route(), then add_transfer() over it.
  TaskId add_transfer(std::span<const LinkId> route, std::int64_t bytes, Duration latency,
                      std::optional<StreamId> stream = std::nullopt);
  TaskId add_transfer(std::initializer_list<LinkId> route, std::int64_t bytes, Duration latency,
                      std::optional<StreamId> stream = std::nullopt) {
    return add_transfer(std::span<const LinkId>(route.begin(), route.size()), bytes, latency, stream);
  }
  TaskId add_delay(Duration duration, std::optional<StreamId> stream = std::nullopt);
  TaskId add_marker(std::optional<StreamId> stream = std::nullopt);
  TaskId add_hold(StreamId stream);

  /// `after` becomes ready only when `before` has finished. Requires: both exist, after != before.
  void add_dependency(TaskId before, TaskId after);
  /// `hold` finishes only when `task` has finished (and `hold` has started).
  void hold_until(TaskId hold, TaskId task);
  /// Its arrival marker finishes `after_arrival` after the last member starts.
  /// Requires: members non-empty, each an existing task in at most one group; after_arrival >= 0.
  GroupId add_group(const std::vector<TaskId>& members, Duration after_arrival = {});
  TaskId arrival_marker(GroupId group) const;

  std::size_t task_count() const;
  std::size_t link_count() const;

  // --- running ------------------------------------------------------------------------------------
  /// Runs to completion. The sink (may be null) sees every start, finish and rate change.
  /// Requires: run() not called before on this engine.
  RunStats run(TraceSink* sink = nullptr);

  // --- results (after run) ------------------------------------------------------------------------
  TimePoint start_of(TaskId task) const;
  TimePoint finish_of(TaskId task) const;
  /// Arrival of the group − start of this member; zero for tasks in no group.
  Duration sync_wait(TaskId member) const;
  /// The three above with one lookup and one check: the reports read every task's.
  TaskTimes times_of(TaskId task) const;
  TimePoint arrival_of(GroupId group) const;
  /// Total time the link carried at least one flow, and the bytes it carried.
  Duration link_busy(LinkId link) const;
  double link_bytes(LinkId link) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stepsim::core
