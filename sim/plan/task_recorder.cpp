#include "sim/plan/task_recorder.hpp"

#include <cmath>

namespace stepsim::plan {

int TaskRecorder::add_rank(double comm_slowdown, double slowdown) {
  const auto device = engine_.add_device(comm_slowdown);
  std::array<core::StreamId, kSlots> s{};
  s[0] = engine_.add_stream(device, core::StreamKind::compute);
  for (int k = 1; k < kSlots; ++k) s[k] = engine_.add_stream(device, core::StreamKind::communication);
  s[static_cast<int>(Slot::host)] = engine_.add_stream(engine_.add_device(), core::StreamKind::compute);
  streams_.push_back(s);
  slowdown_.push_back(slowdown);
  last_on_dp_.emplace_back();
  return static_cast<int>(streams_.size()) - 1;
}

void TaskRecorder::depend(core::TaskId before, core::TaskId after) {
  engine_.add_dependency(before, after);
  if (keep_dependencies_) dependencies_.emplace_back(before, after);
}

core::TaskId TaskRecorder::work(int local, Slot slot, std::int64_t ps, TaskCategory cat, int layer, int mb, int chunk) {
  const core::TaskId id = engine_.add_compute(stream(local, slot), core::Duration{ps});
  meta_.push_back({id, local, layer, mb, 0, cat, slot, static_cast<std::int8_t>(chunk), false, 0, -1});
  return id;
}

std::int64_t TaskRecorder::slowed(int local, std::int64_t ps) const {
  const double slow = slowdown_[local];
  return slow == 1.0 ? ps : static_cast<std::int64_t>(std::llround(static_cast<double>(ps) * slow));
}

core::TaskId TaskRecorder::compute(int local, std::int64_t ps, TaskCategory cat, int layer, int mb, int chunk) {
  return work(local, Slot::compute, slowed(local, ps), cat, layer, mb, chunk);
}

core::TaskId TaskRecorder::comm_work(int local, Slot slot, std::int64_t ps, CommClass cls, int layer, int mb, int chunk) {
  return work(local, slot, slowed(local, ps), category_of(cls), layer, mb, chunk);
}

core::TaskId TaskRecorder::host(int local, std::int64_t ps, int layer, int mb, int chunk, TaskCategory cat) {
  return work(local, Slot::host, ps, cat, layer, mb, chunk);
}

core::TaskId TaskRecorder::transfer(int local, Slot slot, core::RouteId route, std::int64_t bytes,
                                   core::Duration latency, TaskCategory cat, int layer, int mb, bool to_host) {
  const core::TaskId id = engine_.add_transfer(route, bytes, latency, stream(local, slot));
  meta_.push_back({id, local, layer, mb, bytes, cat, slot, 0, false, to_host ? kToHost : std::int8_t{0}, -1});
  return id;
}

core::TaskId TaskRecorder::delay(int local, Slot slot, std::int64_t ps, TaskCategory cat) {
  const core::TaskId id = engine_.add_delay(core::Duration{ps}, stream(local, slot));
  meta_.push_back({id, local, -1, -1, 0, cat, slot, 0, false, 0, -1});
  return id;
}

int TaskRecorder::record_members(const std::vector<core::TaskId>& members, const std::vector<int>& locals,
                                 CommClass cls, comm::Op op, std::int64_t bytes, int layer, int mb, int chunk, Slot slot,
                                 int group) {
  if (group < 0) group = collectives_++;
  for (std::size_t k = 0; k < members.size(); ++k) {
    meta_.push_back({members[k], locals[k], layer, mb, bytes, category_of(cls), slot, static_cast<std::int8_t>(chunk),
                     true, static_cast<std::int8_t>(op), -1, group});
    if (slot == Slot::dp) last_on_dp_[locals[k]] = members[k];
  }
  return group;
}

CommClass class_of(TaskCategory c) {
  switch (c) {
    case TaskCategory::tp_comm: return CommClass::tp;
    case TaskCategory::pp_comm: return CommClass::pp;
    case TaskCategory::zero_comm: return CommClass::zero;
    case TaskCategory::ep_comm: return CommClass::ep;
    case TaskCategory::cp_comm: return CommClass::cp;
    default: return CommClass::dp;
  }
}

TaskCategory category_of(CommClass c) {
  switch (c) {
    case CommClass::tp: return TaskCategory::tp_comm;
    case CommClass::pp: return TaskCategory::pp_comm;
    case CommClass::dp: return TaskCategory::dp_comm;
    case CommClass::zero: return TaskCategory::zero_comm;
    case CommClass::ep: return TaskCategory::ep_comm;
    case CommClass::cp: return TaskCategory::cp_comm;
  }
  return TaskCategory::other;
}

}  // namespace stepsim::plan
