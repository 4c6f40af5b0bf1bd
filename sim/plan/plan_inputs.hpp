// Internal to sim/plan: what one simulate() call reads and never changes once made — the scenario,
// the checked strategy, and what follows from them alone (rank grid, schedule, per-layer costs,
// the layer split, the fidelity choices). Builders read it; nothing writes it after make_inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "models/memory.hpp"
#include "sim/plan/rank_grid.hpp"
#include "sim/plan/schedule.hpp"
#include "sim/plan/simulate.hpp"
#include "sim/plan/stage_costs.hpp"

namespace stepsim::plan {

struct PlanInputs {
  const Scenario& sc;
  Strategy st;                       ///< after check_strategy (dp resolved)
  SimOptions opt;
  RankGrid grid;
  PipelineSchedule schedule;
  /// One DP replica simulated (Fidelity::symmetric, or automatic above kSymmetricAboveGpus).
  bool symmetric = false;
  /// More than kSymmetricAboveGpus GPUs: DP rings fold (comm's coarse mode) even in small groups.
  bool large_cluster = false;
  /// Large clusters: each pass is one compute task plus one TP collective of the summed time
  /// (task_builder_fused.cpp); exact while a TP group runs in lock step.
  bool fused = false;
  CostInputs cost_in{};
  /// The cost of each kind of layer the model has — one for most models; a local- and a
  /// global-attention kind where sliding windows alternate (models::attention_window) — and the
  /// kind of each layer, so a builder never assumes the layers of a stage are alike.
  std::vector<LayerCost> layer_kinds{};
  std::vector<int> kind_of_layer{};  ///< [global layer] index into layer_kinds
  LayerCost embedding{}, logits{};
  /// Of logits.params, those the last stage holds as its own: a tied LM head is the embedding's
  /// matrix, one tensor where both sit on one stage (pp = 1); under PP Megatron-LM keeps a copy on
  /// the last stage (its gradient all-reduced with the first's: build_embedding_sync).
  std::int64_t logits_own_params = 0;
  std::int64_t tp_bytes = 0, pp_bytes = 0;
  /// Multi-token-prediction depths trained: Strategy::mtp_layers, else the model's.
  int mtp_layers = 0;
  /// Bytes per gradient element of the DP reduction: 2, or 4 where Megatron-LM (generic below
  /// ZeRO-3) or Megatron-Core reduces a bf16 model's gradients in fp32
  /// (Strategy::grad_reduce_in_bf16), or FSDP with fsdp_reduce_fp32.
  int grad_bytes = 2;
  /// DeepSpeed with bf16 and no ZeRO runs BF16_Optimizer (engine.py _do_optimizer_sanity_check:
  /// without ZeRO get_data_types makes a bf16 model's grad_accum_dtype fp32): it adds each
  /// microbatch's gradients into a full fp32 buffer (bf16_optimizer.py backward, update_hp_grads),
  /// all-reduces them at the step in the model's bf16 (engine.allreduce_gradients,
  /// communication_data_type; a tied weight's under PP in fp32), steps its DP partition of the fp32
  /// master and Adam states and all-gathers the bf16 parameters (all_gather_dp_groups). make_inputs
  /// records it in `st` as ZeRO-1's sharded optimizer (distributed_optimizer) and main_grad
  /// accumulation; the builders take the all-reduce and the 6-byte gradients from here.
  bool bf16_optimizer = false;
  /// The dtype the gradients are held in between microbatches, for the model states in memory.
  models::GradPrecision held_gradients = models::GradPrecision::bf16;
  /// Whether each rank's host waits for its GPU at every pass start (host_thread.hpp): Megatron-LM's
  /// per-pass timers synchronize; Megatron-Core's do not (--timing-log-level 0), and only its
  /// non-interleaved pipeline's batched p2p synchronizes the device (batch_p2p_sync).
  bool passes_sync_device = true;
  /// Ranks that shard the model states among them: dp·cp, or under FSDP's HYBRID_SHARD the DP ranks
  /// of one server (consecutive in the DP group), the shard group; the rest are its replicas.
  int shard_degree = 1;
  std::vector<int> layers_of_vstage{}, first_layer_of_vstage{};  ///< [virtual stage]
  std::vector<std::int64_t> stage_params{};                  ///< [stage] parameters one rank of it holds
  /// [stage] of stage_params, the routed experts' (E/ep per MoE layer): their gradients are
  /// reduced, and their optimizer states sharded, over the dp/ep ranks holding the same experts.
  std::vector<std::int64_t> stage_expert_params{};
  /// [stage] of stage_params, those of GEMMs that run in FP8 (0 unless precision fp8), and the
  /// time of the stage's FP8 cast and amax kernels per microbatch.
  std::vector<std::int64_t> stage_fp8_params{}, stage_fp8_cast_ps{};

  const LayerCost& layer(int global_layer) const {
    return layer_kinds[static_cast<std::size_t>(kind_of_layer[static_cast<std::size_t>(global_layer)])];
  }
  /// `field` summed over the layers [first, first + count).
  template <class T>
  T sum_layers(int first, int count, T LayerCost::*field) const {
    T total{};
    for (int l = first; l < first + count; ++l) total += layer(l).*field;
    return total;
  }
};

/// Checks the strategy (check_strategy's ConfigError) and works out everything above.
PlanInputs make_inputs(const Scenario& sc, const Strategy& st, const SimOptions& opt);
/// Time one rank of `stage` spends per step casting its FP8 GEMMs' weights: read 16-bit, write
/// the FP8 copy and its transpose where the GPU needs one (e + 2 bytes per parameter; the
/// transpose alone, 2, with FP8 parameters), once per step where Transformer
/// Engine caches them over the microbatches (TE's is_first_microbatch), once per microbatch where
/// the parameters are sharded and gathered for each forward. 0 without FP8.
std::int64_t fp8_weight_cast_ps(const PlanInputs& in, int stage);

}  // namespace stepsim::plan
