// Interference: while any task runs on a communication stream of a device, compute tasks on that
// device's compute streams progress at 1 / (1 + comm_slowdown) of full speed (../shared/DESIGN.md,
// "Interference"). A compute task's state lives on its stream (a stream runs one task at a time):
// work left in full-speed picoseconds at last_ps, and the divisor of its speed since then. When
// comm activity on the device starts or stops, the work done so far is booked and the finish is
// re-keyed; the old event stays in the queue and is skipped by its version (lazy deletion).
// Compute on a communication stream, delays and everything else run at full speed.

#include "sim/core/rounding.hpp"
#include "sim/core/simulation.hpp"

namespace stepsim::core {

namespace {

double divisor_of(const DeviceRecord& d) { return d.active_comm > 0 ? 1.0 + d.comm_slowdown : 1.0; }

std::int64_t slowed_ps(double work_ps, double divisor) {
  if (divisor == 1.0) return ceil_ps(work_ps);
  return ceil_ps(work_ps * divisor);
}

}  // namespace

void Simulation::start_compute(std::uint32_t task) {
  const TaskRecord& t = s_.graph.tasks[task];
  StreamRecord& st = s_.streams[t.stream];
  if (st.kind != StreamKind::compute) {
    schedule(task, t.work_ps);
    return;
  }
  st.remaining_ps = static_cast<double>(t.work_ps);
  st.last_ps = now_ps_;
  st.divisor = divisor_of(s_.devices[st.device]);
  ++st.version;
  schedule(task, st.divisor == 1.0 ? t.work_ps : slowed_ps(st.remaining_ps, st.divisor), st.version);
}

void Simulation::comm_changed(std::uint32_t device, bool started) {
  DeviceRecord& d = s_.devices[device];
  const std::uint32_t before = d.active_comm;
  d.active_comm = started ? before + 1 : before - 1;
  if (d.comm_slowdown == 0.0 || (before > 0) == (d.active_comm > 0)) return;
  for (const std::uint32_t stream : d.compute_streams) {
    const std::uint32_t active = s_.streams[stream].active;
    if (active != kNone && s_.graph.tasks[active].kind == TaskKind::compute) rekey_compute(stream);
  }
}

void Simulation::rekey_compute(std::uint32_t stream) {
  StreamRecord& st = s_.streams[stream];
  st.remaining_ps -= static_cast<double>(now_ps_ - st.last_ps) / st.divisor;
  if (st.remaining_ps < 0.0) st.remaining_ps = 0.0;
  st.last_ps = now_ps_;
  st.divisor = divisor_of(s_.devices[st.device]);
  ++st.version;
  schedule(st.active, slowed_ps(st.remaining_ps, st.divisor), st.version);
}

}  // namespace stepsim::core
