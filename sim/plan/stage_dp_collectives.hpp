// The data-parallel collectives one pipeline stage issues inside its passes (StageEmitter,
// task_builder_layers.cpp): ZeRO-3 / FSDP parameter all-gathers, which a layer's first compute
// waits for, the gradient reduce-scatters of ZeRO-3 (all-reduced over replicas under
// HYBRID_SHARD) and ZeRO-2's per-micro-step ones. Each starts after its rank's current tail on
// the compute stream, which the emitter owns and this class only reads. Where the strategy's ZeRO-3
// collectives take one tensor per rank (Strategy::zero3_list_collectives), each also costs the
// host thread a view and a copy call per rank and the GPU the copies.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "sim/plan/task_graph.hpp"

namespace stepsim::plan {

class StageDpCollectives {
 public:
  /// `groups`: the stage's TP groups of simulated ranks; `tail`: each rank's last compute-stream
  /// task, kept current by the emitter.
  StageDpCollectives(Build& b, int stage, const std::vector<std::vector<int>>& groups, const std::vector<core::TaskId>& tail);

  /// The pass whose microbatch and chunk the collectives issued next belong to.
  void set_pass(const Pass& pass) { pass_ = pass; }

  /// Every all-gather of `layer`'s parameters (zero3_gathers.hpp), resident until released.
  void gather(int layer);
  /// One all-gather of `bytes` for `layer`, which the layer's next compute waits for; `resident`:
  /// it adds to the gathered memory (a re-gather refills what the recompute's use released).
  void fetch(int layer, std::int64_t bytes, bool resident);
  /// ZeRO-3's gradient reduce-scatter of one layer; under HYBRID_SHARD over the shard group, then
  /// the shard all-reduced over its replicas. Returns the reduce-scatter's (local rank, member) pairs.
  std::vector<std::pair<int, core::TaskId>> reduce_gradients(int layer);
  /// A collective over each DP group of the stage (one per TP index), or over each of its parts
  /// (Build::dp_part), on the dp or zero stream. `list_tensors` > 0: it is that many list-based
  /// calls (Strategy::zero3_list_collectives), an all-gather's or a reduce-scatter's. Returns
  /// (local rank, member) pairs.
  std::vector<std::pair<int, core::TaskId>> dp_collective(CommClass cls, comm::Op op, std::int64_t bytes, int layer,
                                                          Build::DpPart part = Build::DpPart::all, int list_tensors = 0);
  /// Makes `t`, rank r's first compute of `layer`, wait for the layer's pending all-gathers, and
  /// rank r's next compute wait for its host thread to return from the list copies it was making.
  void consume_gathers(int r, int layer, core::TaskId t);
  /// What the layer's all-gathers bring in, in bytes (DeepSpeed leaves persistent parameters out).
  std::int64_t gathered_total(int layer) const;
  /// Every parameter of the layer's gradient, in bytes: what its reduce-scatter carries.
  std::int64_t gradient_bytes(int layer) const;

 private:
  std::int64_t extra_params(int layer) const;
  int extra_tensors(int layer) const;
  /// GPU time of copying `bytes` in `kernels` kernels (a memory-bound op, models::time_op).
  std::int64_t copy_ps(std::int64_t bytes, std::int64_t kernels) const;

  Build& b_;
  int stage_;
  const std::vector<std::vector<int>>& groups_;
  const std::vector<core::TaskId>& tail_;
  Pass pass_{};
  std::vector<std::vector<std::pair<int, core::TaskId>>> pending_;  // per rank: (layer, gather member)
  std::vector<std::optional<core::TaskId>> host_busy_;  // per rank: list copies its next compute waits for
};

}  // namespace stepsim::plan
