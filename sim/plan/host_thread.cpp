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

void HostThread::start_pass(const std::vector<int>& ranks, std::vector<core::TaskId>& tail, const Pass& pass,
                            bool keeps_ahead) {
  pass_ = pass;
  keeps_ahead_ = keeps_ahead;
  first_call_ = true;
  for (int r : ranks) issued_[r].reset(), sync_[r].reset();
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

void HostThread::issue(int r, std::int64_t total_ps, int layer) {
  issued_[r].reset();
  const std::int64_t first_ps = std::min(b_.in.cost_in.host_call_ps, total_ps);
  if (keeps_ahead_) {
    if (!first_call_) return;
    total_ps = first_ps;
  }
  if (total_ps <= 0) return;
  Issue calls;
  calls.first = calls.all = b_.rec.host(r, first_ps, layer, pass_.microbatch, pass_.chunk);
  if (sync_[r]) b_.rec.depend(*sync_[r], calls.first);
  sync_[r].reset();
  if (total_ps > first_ps) calls.all = b_.rec.host(r, total_ps - first_ps, layer, pass_.microbatch, pass_.chunk);
  issued_[r] = calls;
}

void HostThread::after_first_call(int r, core::TaskId gpu_task) const {
  if (issued_[r]) b_.rec.depend(issued_[r]->first, gpu_task);
}

void HostThread::after_all_calls(int r, core::TaskId task) const {
  if (issued_[r]) b_.rec.depend(issued_[r]->all, task);
}

}  // namespace stepsim::plan
