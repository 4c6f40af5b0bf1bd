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
//
// Where the host falls behind, its calls within a pass are made back to back, so the time of
// each from the pass's first is a sum known while building. The GPU cannot be earlier than a
// floor built from the same sums (each segment starts no earlier than the call it waited for, and
// takes at least its compute). A call the GPU is already past when it is made cannot delay it:
// such calls get no task of their own, and their time joins the next host task that something
// waits for (or the pass's remainder), so the host stream keeps its place and the timeline is
// the same as with a task per segment's calls (TestHooks::host_task_per_call).
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
/// and nothing else, and the calls after it are left out of the host stream altogether.
bool host_keeps_ahead(const PassSegments& pass);

class HostThread {
 public:
  explicit HostThread(Build& b);

  /// A forward or backward pass starts on `ranks`, whose compute streams end at `tail`: each host
  /// waits for its GPU to get there, then pays the PP pass overhead (Megatron's p2p
  /// `_communicate` waits for its transfers), which the GPU waits for in turn (`tail` moves).
  /// `keeps_ahead`: host_keeps_ahead() of the pass.
  void start_pass(const std::vector<int>& ranks, std::vector<core::TaskId>& tail, const Pass& pass,
                  bool keeps_ahead);
  /// The calls of rank r's next segment, `total_ps` of host time, before `gpu_ps` of compute that
  /// waits for its first call (one host_call_overhead); `collective_after`: a collective follows
  /// that waits for all of them (after_all_calls).
  void issue(int r, std::int64_t total_ps, std::int64_t gpu_ps, bool collective_after, int layer);
  void after_first_call(int r, core::TaskId gpu_task) const;
  void after_all_calls(int r, core::TaskId task) const;
  /// After the pass: its calls not yet on the host stream go there in one task, so that the next
  /// pass's calls start where the host really is (not where the host keeps ahead: those calls are
  /// left out, as before).
  void end_pass(const std::vector<int>& ranks);

 private:
  struct Issue {
    std::optional<core::TaskId> first, all;
  };
  /// Where one rank's host and GPU stand in the pass, in ps from the pass's first call.
  struct Clock {
    std::int64_t called = 0;                ///< the calls issued so far end here
    std::int64_t segment_start = 0;         ///< the current segment's calls start here
    std::int64_t on_stream = 0;             ///< the host stream's tasks of this pass end here
    bool first_made = false;                ///< where the host keeps ahead: the pass's one call is made
    std::optional<std::int64_t> gpu_floor;  ///< the GPU's work so far ends no earlier (unknown
                                            ///< until a call has gated it)
  };
  /// A host task from the stream's end to `at` (> on_stream); the pass's first waits for sync_.
  core::TaskId call_until(int r, std::int64_t at, int layer);

  Build& b_;
  std::vector<std::optional<Issue>> issued_;  // the calls of the segment being emitted, per rank
  std::vector<std::optional<core::TaskId>> sync_;  // per rank: the GPU task the pass's first call waits for
  std::vector<Clock> clock_;
  Pass pass_;
  bool keeps_ahead_ = true;
  // ZeRO-3's list-based collectives put calls of their own on the host stream between segments,
  // after GPU events (stage_dp_collectives.cpp): the host's place is then no sum of this
  // thread's calls, and where it falls behind every segment's calls get their tasks.
  bool calls_are_sums_ = true;
};

}  // namespace stepsim::plan
