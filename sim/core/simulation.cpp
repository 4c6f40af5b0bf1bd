#include "sim/core/simulation.hpp"

#include <limits>
#include <span>
#include <string>

namespace stepsim::core {

RunStats Simulation::run() {
  build_successors();
  std::vector<std::uint32_t> ready;
  build_stream_orders(ready);
  for (GroupRecord& g : s_.graph.groups) g.not_started = g.size;
  for (const std::uint32_t t : ready)
    if (s_.graph.tasks[t].state == TaskState::waiting) make_ready(t);
  while (step()) {
  }
  check_all_finished();
  stats_.rate_updates = s_.network.rate_updates();
  return stats_;
}

// Counting sort of the edges by source, stable, so successors are visited in the order the
// dependencies were added. Each task's cursor is its own begin, which then ends where the next
// task's list begins: shifted back by one place, they are the begins again, with no second array
// of millions of cursors.
void Simulation::build_successors() {
  const std::size_t n = s_.graph.tasks.size();
  succ_begin_.assign(n + 1, 0);
  for (const auto& [before, after] : s_.graph.edges) ++succ_begin_[before + 1];
  for (std::size_t t = 0; t < n; ++t) succ_begin_[t + 1] += succ_begin_[t];
  succ_.resize(s_.graph.edges.size());
  for (const auto& [before, after] : s_.graph.edges) succ_[succ_begin_[before]++] = after;
  for (std::size_t t = n; t > 0; --t) succ_begin_[t] = succ_begin_[t - 1];
  succ_begin_[0] = 0;
  s_.graph.edges.release();
}

// A counting sort by stream whose counts were kept as the tasks were added; in the same pass over
// the tasks, those with no dependency, in id order (what the first make_ready calls take).
void Simulation::build_stream_orders(std::vector<std::uint32_t>& ready) {
  std::uint32_t begin = 0;
  for (StreamRecord& st : s_.streams) {
    st.next = st.end = begin;
    begin += st.task_count;
  }
  stream_order_.resize(begin);
  for (std::uint32_t t = 0; t < s_.graph.tasks.size(); ++t) {
    const TaskRecord& task = s_.graph.tasks[t];
    if (task.stream != kNone) stream_order_[s_.streams[task.stream].end++] = t;
    if (task.pending == 0) ready.push_back(t);
  }
}

void Simulation::make_ready(std::uint32_t task) {
  TaskRecord& t = s_.graph.tasks[task];
  t.state = TaskState::ready;
  if (t.stream == kNone) {
    start(task);
    return;
  }
  const StreamRecord& st = s_.streams[t.stream];
  if (st.active == kNone && stream_order_[st.next] == task) start(task);
}

void Simulation::try_start_head(std::uint32_t stream) {
  const StreamRecord& st = s_.streams[stream];
  if (st.next < st.end && s_.graph.tasks[stream_order_[st.next]].state == TaskState::ready)
    start(stream_order_[st.next]);
}

void Simulation::start(std::uint32_t task) {
  TaskRecord& t = s_.graph.tasks[task];
  t.state = TaskState::running;
  t.start_ps = now_ps_;
  if (sink_) sink_->on_task_start(TaskId{task}, TimePoint{now_ps_});
  if (t.stream != kNone) {
    StreamRecord& st = s_.streams[t.stream];
    st.active = task;
    // finish() will look at the stream's next task: fetch its record now, while this one runs.
    if (st.next + 1 < st.end) __builtin_prefetch(&s_.graph.tasks[stream_order_[st.next + 1]]);
    if (st.kind == StreamKind::communication) comm_changed(st.device, true);
  }
  // Its successors' records are scattered over the task array; release_successors() will need them
  // when it finishes, so their cache misses are started now and overlap with the work in between.
  for (std::uint32_t i = succ_begin_[task]; i < succ_begin_[task + 1]; ++i)
    __builtin_prefetch(&s_.graph.tasks[succ_[i] & ~kHoldEdge]);
  begin_work(task);
  if (t.in_group) arrive(s_.graph.group_of[task]);
}

void Simulation::begin_work(std::uint32_t task) {
  const TaskRecord& t = s_.graph.tasks[task];
  switch (t.kind) {
    case TaskKind::compute:
      if (t.stream != kNone) start_compute(task);
      break;
    case TaskKind::delay: schedule(task, t.work_ps); break;
    case TaskKind::marker: schedule(task, 0); break;
    case TaskKind::hold:
      if (t.aux == 0) schedule(task, 0);  // nothing to wait for: finishes at its start
      break;
    case TaskKind::transfer:
      if (sink_) sink_->on_flow_rate(TaskId{task}, TimePoint{now_ps_}, 0.0);
      schedule(task, s_.graph.transfers[t.aux].latency_ps);
      break;
  }
}

void Simulation::arrive(std::uint32_t group) {
  GroupRecord& g = s_.graph.groups[group];
  if (--g.not_started > 0) return;
  g.arrival_ps = now_ps_;
  if (--s_.graph.tasks[g.marker].pending == 0) make_ready(g.marker);
}

void Simulation::finish(std::uint32_t task) {
  TaskRecord& t = s_.graph.tasks[task];
  t.state = TaskState::finished;
  t.finish_ps = now_ps_;
  ++stats_.tasks;
  if (now_ps_ > stats_.makespan.ps) stats_.makespan = TimePoint{now_ps_};
  if (sink_) sink_->on_task_finish(TaskId{task}, TimePoint{now_ps_});
  if (t.stream != kNone) {
    StreamRecord& st = s_.streams[t.stream];
    st.active = kNone;
    ++st.next;
    if (st.kind == StreamKind::communication) comm_changed(st.device, false);
    try_start_head(t.stream);
  }
  release_successors(task);
}

void Simulation::release_successors(std::uint32_t task) {
  for (std::uint32_t i = succ_begin_[task]; i < succ_begin_[task + 1]; ++i) {
    const std::uint32_t target = succ_[i];
    if (target & kHoldEdge) {
      TaskRecord& hold = s_.graph.tasks[target & ~kHoldEdge];
      if (--hold.aux == 0 && hold.state == TaskState::running) schedule(target & ~kHoldEdge, 0);
    } else if (--s_.graph.tasks[target].pending == 0) {
      make_ready(target);
    }
  }
}

void Simulation::schedule(std::uint32_t task, std::int64_t delay_ps, std::uint32_t version) {
  if (delay_ps > std::numeric_limits<std::int64_t>::max() - now_ps_)
    throw SimulationError("task " + std::to_string(task) + " would end past the largest representable time");
  const TaskEvent event{EventKey{now_ps_ + delay_ps, ++seq_}, task, version};
  if (delay_ps == 0) queue_.push_now(event);
  else queue_.push(event);
}

// One step of the loop: the earliest of the next task event and the next flow completion, or a
// rate recomputation once every event of the current time is done. False when nothing is left.
bool Simulation::step() {
  FlowNetwork& net = s_.network;
  const bool has_flow = net.has_completion();
  if (queue_.empty() && !has_flow) {
    if (!net.has_changes()) return false;
    net.recompute(now_ps_, seq_, sink_);
    return true;
  }
  const bool flow_first = has_flow && (queue_.empty() || net.next_key() < queue_.top().key);
  const EventKey key = flow_first ? net.next_key() : queue_.top().key;
  if (key.time_ps > now_ps_ && net.has_changes()) {
    net.recompute(now_ps_, seq_, sink_);  // may add completions at now_ps_: look again
    return true;
  }
  if (flow_first) {
    const std::uint32_t flow = net.next_flow();
    count_event(key.time_ps);
    const TaskId task = net.task_of(flow);
    net.finish_flow(flow, now_ps_);
    finish(task.value);
    return true;
  }
  const TaskEvent event = queue_.pop();
  // The next event's task record was last touched long ago: start its cache miss now.
  if (!queue_.empty()) __builtin_prefetch(&s_.graph.tasks[queue_.top().task]);
  if (is_stale(event)) return true;
  count_event(key.time_ps);
  dispatch(event);
  return true;
}

bool Simulation::is_stale(const TaskEvent& event) const {
  const TaskRecord& t = s_.graph.tasks[event.task];
  return t.kind == TaskKind::compute && s_.streams[t.stream].kind == StreamKind::compute &&
         event.version != s_.streams[t.stream].version;
}

void Simulation::count_event(std::int64_t time_ps) {
  ++stats_.events;
  const EngineLimits& limits = s_.limits;
  if (limits.max_events && stats_.events > *limits.max_events)
    throw EventLimitReached("stopped after " + std::to_string(*limits.max_events) +
                          " events (EngineLimits::max_events) at t=" + std::to_string(now_ps_) + " ps with " +
                          std::to_string(s_.graph.tasks.size() - stats_.tasks) + " tasks unfinished");
  if (limits.max_time && time_ps > limits.max_time->ps)
    throw SimulationError("stopped at t=" + std::to_string(time_ps) + " ps, past EngineLimits::max_time=" +
                          std::to_string(limits.max_time->ps) + " ps, with " +
                          std::to_string(s_.graph.tasks.size() - stats_.tasks) + " tasks unfinished");
  if (limits.checkpoint && stats_.events % EngineLimits::kCheckpointEvery == 0)
    limits.checkpoint(s_.graph.tasks.size(), stats_.events);
  now_ps_ = time_ps;
}

void Simulation::dispatch(const TaskEvent& event) {
  const std::uint32_t task = event.task;
  const TaskRecord& t = s_.graph.tasks[task];
  if (t.kind != TaskKind::transfer) {
    finish(task);
    return;
  }
  // A transfer's only task event is the end of its latency; its bytes then start to move.
  const TransferSpec& spec = s_.graph.transfers[t.aux];
  if (spec.bytes == 0) {
    finish(task);
    return;
  }
  const std::span<const LinkId> route(s_.graph.routes.data() + spec.route_begin, spec.route_end - spec.route_begin);
  s_.network.start_flow(route, static_cast<double>(spec.bytes), TaskId{task}, now_ps_);
}

// The loop ran dry with tasks left: something waits for something that can never happen.
void Simulation::check_all_finished() const {
  const std::size_t total = s_.graph.tasks.size();
  if (stats_.tasks == total) return;
  std::uint32_t example = 0;
  while (s_.graph.tasks[example].state == TaskState::finished) ++example;
  const TaskRecord& t = s_.graph.tasks[example];
  std::string why = t.state == TaskState::waiting
                        ? std::to_string(t.pending) + " unfinished dependencies"
                        : t.state == TaskState::ready ? "ready, queued behind an unfinished task on its stream"
                                                      : "started, waiting for the tasks it holds for";
  throw SimulationError(std::to_string(total - stats_.tasks) + " of " + std::to_string(total) +
                        " tasks can never finish (a dependency cycle, or a hold or group that is never "
                        "released); e.g. task " + std::to_string(example) + ": " + why);
}

}  // namespace stepsim::core
