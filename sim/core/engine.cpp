// Engine: building the task graph and reading results. The event loop is in simulation.cpp.
#include "sim/core/engine.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/core/engine_state.hpp"
#include "sim/core/simulation.hpp"

namespace stepsim::core {

struct Engine::Impl : EngineState {};

namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(what); }

std::string str(std::uint64_t v) { return std::to_string(v); }

}  // namespace

Engine::Engine(EngineLimits limits) : impl_(std::make_unique<Impl>()) { impl_->limits = limits; }
Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

DeviceId Engine::add_device(double comm_slowdown) {
  if (!(comm_slowdown >= 0.0) || !std::isfinite(comm_slowdown))
    fail("add_device: comm_slowdown must be a finite number >= 0, got " + std::to_string(comm_slowdown));
  DeviceRecord device;
  device.comm_slowdown = comm_slowdown;
  impl_->devices.push_back(std::move(device));
  return DeviceId{static_cast<std::uint32_t>(impl_->devices.size() - 1)};
}

StreamId Engine::add_stream(DeviceId device, StreamKind kind) {
  if (device.value >= impl_->devices.size())
    fail("add_stream: unknown device " + str(device.value) + " (there are " + str(impl_->devices.size()) + ")");
  const auto id = static_cast<std::uint32_t>(impl_->streams.size());
  StreamRecord stream;
  stream.device = device.value;
  stream.kind = kind;
  impl_->streams.push_back(stream);
  if (kind == StreamKind::compute) impl_->devices[device.value].compute_streams.push_back(id);
  return StreamId{id};
}

LinkId Engine::add_link(double capacity_bytes_per_s) {
  // A link added after the run would join a network whose flows have all been solved.
  if (impl_->ran) throw std::logic_error("add_link: the engine has already run");
  return impl_->network.add_link(capacity_bytes_per_s);
}

void Engine::scale_link(LinkId link, double factor) {
  if (impl_->ran) throw std::logic_error("scale_link: the engine has already run");
  impl_->network.scale_link(link, factor);
}

namespace {

// What adding a task on `stream` requires, checked before anything is added.
void check_append(const EngineState& s, std::optional<StreamId> stream, const char* who) {
  if (stream && stream->value >= s.streams.size())
    fail(std::string(who) + ": unknown stream " + str(stream->value) + " (there are " + str(s.streams.size()) + ")");
  if (s.graph.tasks.size() >= kMaxTasks) fail(std::string(who) + ": too many tasks");
  if (s.ran) throw std::logic_error(std::string(who) + ": the engine has already run");
}

std::uint32_t append_task(EngineState& s, TaskKind kind, std::optional<StreamId> stream, const char* who) {
  check_append(s, stream, who);
  TaskRecord t;
  t.kind = kind;
  t.stream = stream ? stream->value : kNone;
  s.graph.tasks.push_back(t);
  if (stream) ++s.streams[stream->value].task_count;
  const std::uint64_t count = s.graph.tasks.size();
  if (s.limits.checkpoint && count % EngineLimits::kCheckpointEvery == 0) s.limits.checkpoint(count, 0);
  return static_cast<std::uint32_t>(count - 1);
}

void check_duration(Duration d, const char* who) {
  if (d.ps < 0) fail(std::string(who) + ": duration must be >= 0 ps, got " + std::to_string(d.ps) + " ps");
}

}  // namespace

TaskId Engine::add_compute(StreamId stream, Duration duration) {
  check_duration(duration, "add_compute");
  const std::uint32_t id = append_task(*impl_, TaskKind::compute, stream, "add_compute");
  impl_->graph.tasks[id].work_ps = duration.ps;
  return TaskId{id};
}

RouteId Engine::add_route(std::span<const LinkId> route) {
  if (impl_->ran) throw std::logic_error("add_route: the engine has already run");
  if (route.empty()) fail("add_route: the route is empty; a transfer needs at least one link");
  for (const LinkId l : route)
    if (!impl_->network.has_link(l))
      fail("add_route: unknown link " + str(l.value) + " in the route (there are " + str(impl_->network.link_count()) + ")");
  TaskGraph& g = impl_->graph;
  if (g.routes.size() + route.size() > kMaxRouteLinks) fail("add_route: too many route links");
  const auto begin = static_cast<std::uint32_t>(g.routes.size());
  g.routes.append(route.data(), route.data() + route.size());
  g.route_spans.push_back(RouteSpan{begin, static_cast<std::uint32_t>(g.routes.size())});
  return RouteId{static_cast<std::uint32_t>(g.route_spans.size() - 1)};
}

TaskId Engine::add_transfer(RouteId route, std::int64_t bytes, Duration latency, std::optional<StreamId> stream) {
  TaskGraph& g = impl_->graph;
  if (route.value >= g.route_spans.size())
    fail("add_transfer: unknown route " + str(route.value) + " (there are " + str(g.route_spans.size()) + ")");
  if (bytes < 0) fail("add_transfer: bytes must be >= 0, got " + std::to_string(bytes));
  if (latency.ps < 0) fail("add_transfer: latency must be >= 0 ps, got " + std::to_string(latency.ps));
  const std::uint32_t id = append_task(*impl_, TaskKind::transfer, stream, "add_transfer");
  g.tasks[id].aux = static_cast<std::uint32_t>(g.transfers.size());
  const RouteSpan span = g.route_spans[route.value];
  g.transfers.push_back(TransferSpec{span.begin, span.end, bytes, latency.ps});
  return TaskId{id};
}

TaskId Engine::add_transfer(std::span<const LinkId> route, std::int64_t bytes, Duration latency,
                            std::optional<StreamId> stream) {
  // Checked before the route is kept, so a transfer refused leaves no route behind.
  check_append(*impl_, stream, "add_transfer");
  if (bytes < 0) fail("add_transfer: bytes must be >= 0, got " + std::to_string(bytes));
  if (latency.ps < 0) fail("add_transfer: latency must be >= 0 ps, got " + std::to_string(latency.ps));
  return add_transfer(add_route(route), bytes, latency, stream);
}

TaskId Engine::add_delay(Duration duration, std::optional<StreamId> stream) {
  check_duration(duration, "add_delay");
  const std::uint32_t id = append_task(*impl_, TaskKind::delay, stream, "add_delay");
  impl_->graph.tasks[id].work_ps = duration.ps;
  return TaskId{id};
}

TaskId Engine::add_marker(std::optional<StreamId> stream) {
  return TaskId{append_task(*impl_, TaskKind::marker, stream, "add_marker")};
}

TaskId Engine::add_hold(StreamId stream) { return TaskId{append_task(*impl_, TaskKind::hold, stream, "add_hold")}; }

namespace {

void check_task(const EngineState& s, TaskId t, const char* who) {
  if (t.value >= s.graph.tasks.size())
    fail(std::string(who) + ": unknown task " + str(t.value) + " (there are " + str(s.graph.tasks.size()) + ")");
}

}  // namespace

void Engine::add_dependency(TaskId before, TaskId after) {
  check_task(*impl_, before, "add_dependency");
  check_task(*impl_, after, "add_dependency");
  if (before == after) fail("add_dependency: task " + str(before.value) + " cannot depend on itself");
  impl_->graph.edges.emplace_back(before.value, after.value);
  ++impl_->graph.tasks[after.value].pending;
}

void Engine::hold_until(TaskId hold, TaskId task) {
  check_task(*impl_, hold, "hold_until");
  check_task(*impl_, task, "hold_until");
  if (impl_->graph.tasks[hold.value].kind != TaskKind::hold)
    fail("hold_until: task " + str(hold.value) + " is not a hold (make it with add_hold)");
  if (hold == task) fail("hold_until: hold " + str(hold.value) + " cannot wait for itself");
  impl_->graph.edges.emplace_back(task.value, hold.value | kHoldEdge);
  ++impl_->graph.tasks[hold.value].aux;
}

GroupId Engine::add_group(const std::vector<TaskId>& members, Duration after_arrival) {
  if (members.empty()) fail("add_group: a group needs at least one member");
  check_duration(after_arrival, "add_group");
  TaskGraph& g = impl_->graph;
  const auto group = static_cast<std::uint32_t>(g.groups.size());
  for (const TaskId m : members) {
    check_task(*impl_, m, "add_group");
    if (g.tasks[m.value].in_group)
      fail("add_group: task " + str(m.value) + " is already in group " + str(g.group_of[m.value]));
  }
  if (g.group_of.size() < g.tasks.size()) g.group_of.resize(g.tasks.size() + g.tasks.size() / 2, kNone);
  // Marked as they are read, so a member listed twice finds itself marked; the marks made before
  // it are undone, and the graph is as it was.
  for (std::size_t i = 0; i < members.size(); ++i) {
    TaskRecord& t = g.tasks[members[i].value];
    if (t.in_group) {
      for (std::size_t j = 0; j < i; ++j) g.tasks[members[j].value].in_group = false;
      fail("add_group: task " + str(members[i].value) + " is listed twice");
    }
    t.in_group = true;
    g.group_of[members[i].value] = group;
  }
  // A delay where the arrival is followed by a wait, else a marker.
  const std::uint32_t marker =
      append_task(*impl_, after_arrival.ps > 0 ? TaskKind::delay : TaskKind::marker, std::nullopt, "add_group");
  g.tasks[marker].work_ps = after_arrival.ps;
  g.tasks[marker].pending = 1;  // released when the last member starts
  g.groups.push_back(GroupRecord{.size = static_cast<std::uint32_t>(members.size()), .marker = marker});
  return GroupId{group};
}

TaskId Engine::arrival_marker(GroupId group) const {
  if (group.value >= impl_->graph.groups.size()) fail("arrival_marker: unknown group " + str(group.value));
  return TaskId{impl_->graph.groups[group.value].marker};
}

std::size_t Engine::task_count() const { return impl_->graph.tasks.size(); }
std::size_t Engine::link_count() const { return impl_->network.link_count(); }

RunStats Engine::run(TraceSink* sink) {
  if (impl_->ran) throw std::logic_error("run: the engine has already run");
  impl_->ran = true;
  return Simulation(*impl_, sink).run();
}

namespace {

const TaskRecord& finished_task(const EngineState& s, TaskId t, const char* who) {
  check_task(s, t, who);
  const TaskRecord& r = s.graph.tasks[t.value];
  if (r.state != TaskState::finished)
    throw std::logic_error(std::string(who) + ": task " + str(t.value) + " has not finished (did run() succeed?)");
  return r;
}

}  // namespace

TimePoint Engine::start_of(TaskId task) const { return {finished_task(*impl_, task, "start_of").start_ps}; }
TimePoint Engine::finish_of(TaskId task) const { return {finished_task(*impl_, task, "finish_of").finish_ps}; }

Duration Engine::sync_wait(TaskId member) const { return times_of(member).sync_wait; }

TaskTimes Engine::times_of(TaskId task) const {
  const TaskRecord& r = finished_task(*impl_, task, "times_of");
  const std::int64_t wait = r.in_group ? impl_->graph.groups[impl_->graph.group_of[task.value]].arrival_ps - r.start_ps : 0;
  return {.start = {r.start_ps}, .finish = {r.finish_ps}, .sync_wait = {wait}};
}

TimePoint Engine::arrival_of(GroupId group) const {
  const TaskId marker = arrival_marker(group);
  (void)finished_task(*impl_, marker, "arrival_of");
  return {impl_->graph.groups[group.value].arrival_ps};
}

Duration Engine::link_busy(LinkId link) const {
  if (!impl_->network.has_link(link)) fail("link_busy: unknown link " + str(link.value));
  return impl_->network.link_busy(link);
}

double Engine::link_bytes(LinkId link) const {
  if (!impl_->network.has_link(link)) fail("link_bytes: unknown link " + str(link.value));
  return impl_->network.link_bytes(link);
}

}  // namespace stepsim::core
