#include "sim/plan/host_thread.hpp"

#include <algorithm>

namespace stepsim::plan {

bool host_keeps_ahead(const PassSegments& pass) {
  std::int64_t host = 0, gpu = 0;
  for (const auto* segs : pass)
    for (const Segment& s : *segs) {
      host += s.host_ps;
      gpu += s.compute_ps;
      if (host > gpu) return false;
    }
  return true;
}

HostThread::HostThread(Build& b)
    : b_(b),
      issued_(b.global_of.size()),
      sync_(b.global_of.size()),
      clock_(b.global_of.size()),
      calls_are_sums_(!b.in.st.zero3_list_collectives && !b.in.opt.hooks.host_task_per_call) {}

void HostThread::start_pass(const std::vector<int>& ranks, std::vector<core::TaskId>& tail, const Pass& pass,
                            bool keeps_ahead) {
  pass_ = pass;
  keeps_ahead_ = keeps_ahead;
  for (int r : ranks) issued_[r].reset(), sync_[r].reset(), clock_[r] = Clock{};
  if (pass.kind == PassKind::weight) return;
  // The sync is a dependency of the pass's first host task (not a marker on the host stream),
  // so that reports following recorded dependencies see what the host waited for.
  const bool syncs = b_.in.passes_sync_device;
  if (b_.in.cost_in.host_call_ps > 0 && syncs)
    for (int r : ranks) sync_[r] = tail[r];
  const std::int64_t overhead = b_.in.sc.cluster.comm.pipeline_pass_overhead_ps;
  // Test hooks that make communication ideal remove the p2p handshake too.
  if (overhead <= 0 || b_.in.grid.pp() < 2 || b_.in.opt.hooks.comm_bytes_per_s) return;
  for (int r : ranks) {
    // Without a device sync the overhead is host time only (Megatron-Core's interleaved schedule
    // posts its p2p and moves on): the GPU waits for it only if the host has fallen behind.
    const core::TaskId t = b_.rec.host(r, overhead, -1, pass.microbatch, pass.chunk);
    if (syncs) b_.rec.depend(tail[r], t);
    sync_[r].reset();
    const core::TaskId resume = b_.rec.engine().add_marker(b_.rec.stream(r, Slot::compute));
    b_.rec.depend(t, resume);
    tail[r] = resume;
  }
}

core::TaskId HostThread::call_until(int r, std::int64_t at, int layer) {
  Clock& c = clock_[r];
  // A task that also makes calls of earlier segments belongs to no one layer.
  const int of = c.on_stream >= c.segment_start ? layer : -1;
  const core::TaskId t = b_.rec.host(r, at - c.on_stream, of, pass_.microbatch, pass_.chunk);
  if (sync_[r]) b_.rec.depend(*sync_[r], t);
  sync_[r].reset();
  c.on_stream = at;
  return t;
}

void HostThread::issue(int r, std::int64_t total_ps, std::int64_t gpu_ps, bool collective_after, int layer) {
  issued_[r].reset();
  Clock& c = clock_[r];
  // The compute the first call lets start takes at least this long (a fault may change it).
  const std::int64_t gpu_floor_ps = gpu_ps > 0 ? b_.rec.slowed(r, gpu_ps) : 0;
  if (total_ps <= 0) {
    if (c.gpu_floor) *c.gpu_floor += gpu_floor_ps;
    return;
  }
  const std::int64_t first_at = c.called + std::min(b_.in.cost_in.host_call_ps, total_ps);
  const std::int64_t all_at = c.called + total_ps;
  c.segment_start = c.called;
  c.called = all_at;
  Issue calls;
  if (keeps_ahead_) {
    // Only the pass's first call can delay the GPU (host_keeps_ahead); the rest are left out.
    if (c.first_made) return;
    c.first_made = true;
    calls.first = calls.all = call_until(r, first_at, layer);
    issued_[r] = calls;
    return;
  }
  if (!calls_are_sums_) {
    calls.first = call_until(r, first_at, layer);
    calls.all = all_at > first_at ? call_until(r, all_at, layer) : *calls.first;
    issued_[r] = calls;
    return;
  }
  // Each call is made at its sum; one the GPU has certainly passed needs no task (header).
  if (gpu_ps > 0 && (!c.gpu_floor || first_at > *c.gpu_floor)) {
    calls.first = call_until(r, first_at, layer);
    c.gpu_floor = first_at;
  }
  if (c.gpu_floor) *c.gpu_floor += gpu_floor_ps;
  if (collective_after && (!c.gpu_floor || all_at > *c.gpu_floor)) {
    calls.all = all_at > c.on_stream ? call_until(r, all_at, layer) : calls.first;  // equal: the first call ended there
    c.gpu_floor = all_at;
  }
  if (calls.first || calls.all) issued_[r] = calls;
}

void HostThread::after_first_call(int r, core::TaskId gpu_task) const {
  if (issued_[r] && issued_[r]->first) b_.rec.depend(*issued_[r]->first, gpu_task);
}

void HostThread::after_all_calls(int r, core::TaskId task) const {
  if (issued_[r] && issued_[r]->all) b_.rec.depend(*issued_[r]->all, task);
}

void HostThread::end_pass(const std::vector<int>& ranks) {
  if (keeps_ahead_) return;
  for (int r : ranks)
    if (clock_[r].called > clock_[r].on_stream) call_until(r, clock_[r].called, -1);
}

}  // namespace stepsim::plan
