// The framework's CPU thread of each simulated rank (Slot::host, hw::CommParams::
// host_call_overhead): it issues a pass's kernels and TP collectives in program order. A GPU task
// cannot start before its segment's first call is made, and whatever is issued after a segment
// (its collective, the next segment) waits for all of the segment's calls.
//
// Megatron-LM times every forward and backward pass with timers that synchronize the device
// (megatron/global_vars.py _Timer.start/stop: torch.cuda.synchronize(); schedules.py
// forward_step / backward_step), so the host starts a pass only when the GPU has finished the
// one before: it never runs ahead across passes. Megatron-Core's schedule timers are off at the
// default --timing-log-level 0, so there the host runs ahead except where its non-interleaved
// pipeline synchronizes after each batched p2p (PlanInputs::passes_sync_device).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/plan/task_graph.hpp"

namespace stepsim::plan {

/// One pass's segments in program order (an embedding's or logits', then each layer's, …).
using PassSegments = std::vector<const std::vector<Segment>*>;

/// Whether the host stays ahead of the GPU through the whole pass: after each segment its calls
/// so far take no longer than the GPU work so far, which starts one call late and only ever
/// waits longer (for a collective or a receive). Then the host delays the pass by its first call
/// and nothing else, and only that call need be simulated (exact, and ~3x fewer tasks).
bool host_keeps_ahead(const PassSegments& pass);

class HostThread {
 public:
  explicit HostThread(Build& b) : b_(b), issued_(b.global_of.size()), sync_(b.global_of.size()) {}

  /// A forward or backward pass starts on `ranks`, whose compute streams end at `tail`: each host
  /// waits for its GPU to get there, then pays the PP pass overhead (Megatron's p2p
  /// `_communicate` waits for its transfers), which the GPU waits for in turn (`tail` moves).
  /// `keeps_ahead`: host_keeps_ahead() of the pass.
  void start_pass(const std::vector<int>& ranks, std::vector<core::TaskId>& tail, const Pass& pass,
                  bool keeps_ahead);
  /// The calls of rank r's next segment, `total_ps` of host time; its first call (one
  /// host_call_overhead) lets the GPU start. Only the pass's first call where the host keeps ahead.
  void issue(int r, std::int64_t total_ps, int layer);
  /// After every rank's issue() of a segment with calls: the next call is not the pass's first.
  void end_segment() { first_call_ = false; }
  void after_first_call(int r, core::TaskId gpu_task) const;
  void after_all_calls(int r, core::TaskId task) const;

 private:
  struct Issue {
    core::TaskId first, all;
  };
  Build& b_;
  std::vector<std::optional<Issue>> issued_;  // the calls of the segment being emitted, per rank
  std::vector<std::optional<core::TaskId>> sync_;  // per rank: the GPU task the pass's first call waits for
  Pass pass_;
  bool keeps_ahead_ = true, first_call_ = true;
};

}  // namespace stepsim::plan
