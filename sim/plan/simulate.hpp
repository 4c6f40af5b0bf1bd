// simulate(): one strategy on one scenario becomes the tasks Megatron-LM / DeepSpeed would launch
// on every rank, the engine runs them, and the timeline is measured into a StepResult.
//
// Definitions (the numbers in StepResult mean exactly this):
// - Sync wait of a collective member: from its start to the group's arrival (every member has
//   started). For PP sends and receives that wait is pipeline bubble (a receive is posted when the
//   sender's data exists, so the receiver's waiting shows as an idle compute stream, i.e. bubble);
//   for TP, DP and ZeRO collectives it is a sync stall. sync_stall_s = mean over ranks of the
//   summed TP, DP and ZeRO sync waits.
// - Exposed communication of class X on a rank: the time X moves data (from its group's arrival to
//   its member's end) while the rank's compute stream is idle; reported as the mean over ranks.
// - bubble_fraction: mean over ranks of the time the compute stream is idle and none of the rank's
//   communication is moving data, divided by the step time. With free communication and uniform
//   stages it is the textbook (p−1)/(m+p−1) (tests/sim/plan/simulate_bubble_test.cpp).
// - MFU: model FLOPs (models::model_flops_per_token: 6N + attention, no recompute) per second per
//   GPU over the dtype's peak; HFU: MFU × executed / (executed − recomputed) FLOPs of the simulated
//   tasks, i.e. recompute included in MFU's counting convention, so HFU ≥ MFU.
//
// Thread safety: each call owns its Engine and caches; the one state calls may share,
// SimOptions::plans, locks itself, so a sweep may call simulate() from several threads.
#pragma once

#include <memory>
#include <optional>

#include "sim/config/log.hpp"

#include "sim/plan/scenario.hpp"
#include "sim/plan/step_result.hpp"

namespace stepsim::comm {
class PlanCache;
}

namespace stepsim::plan {

enum class Fidelity {
  /// symmetric above kSymmetricAboveGpus GPUs when there are no faults, else full
  automatic,
  full,       ///< every rank simulated
  /// One DP replica (all TP×PP ranks of dp index 0; with fused passes only tp index 0 of each
  /// stage, TP ranks being in lock step). DP/ZeRO collectives are timed on a scratch engine with
  /// all concurrent DP groups of the stage, cached by size, and collectives of one DP group that
  /// overlap in time (ZeRO-3's gather beside its reduce-scatter) share that time's bandwidth
  /// part; this misses contention between DP and PP traffic. Equal to full within 0.5 % on the
  /// cases of symmetric_test.cpp, ZeRO-3 and FSDP included.
  symmetric,
};

/// Above this many GPUs automatic fidelity simulates one DP replica.
inline constexpr int kSymmetricAboveGpus = 64;

/// Test hooks: replace physics by something a test can derive by hand.
struct TestHooks {
  /// Every collective (TP, PP, DP, ZeRO) takes bytes / this, no latency; +inf = free.
  std::optional<double> comm_bytes_per_s;
  bool skip_embedding_and_head = false;  ///< uniform stages: no embedding or logits work
  bool skip_optimizer = false;           ///< no optimizer step (and no ZeRO-1/2 re-gather)
  bool instant_host = false;             ///< the host issues every kernel at once (no host stream)
  /// A host task for every segment's calls, also those that cannot delay the GPU (HostThread
  /// leaves those out): the same timeline, for a test to compare.
  bool host_task_per_call = false;
};

struct SimOptions {
  bool detail = false;                   ///< fill StepResult::tasks and per-rank memory timelines
  Fidelity fidelity = Fidelity::automatic;
  TestHooks hooks;
  /// Debug: per plan, the fidelity it ran at, how its passes and rings were built, its size.
  config::Log log;
  /// Collective plans shared by every simulation of the scenario whose cluster it was made for
  /// (a sweep's plans): each distinct collective is tuned once, not once per plan. Results are the
  /// same with or without it.
  std::shared_ptr<comm::PlanCache> plans;
};

/// Requires: `strategy` passed check_strategy (simulate calls it again and throws its ConfigError).
StepResult simulate(const Scenario& scenario, const Strategy& strategy, const SimOptions& options = {});

}  // namespace stepsim::plan
