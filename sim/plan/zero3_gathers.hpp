// How a framework fetches one layer's ZeRO-3 parameters: which all-gathers, and which of them the
// backward repeats. Plain functions of the strategy and the layer's parameter counts, so each rule
// is tested by itself (tests/sim/plan/zero3_gathers_test.cpp); task_builder_layers.cpp issues them.
//
// - generic and fsdp (FSDP: each transformer block a wrapped unit, torch.distributed.fsdp docs;
//   FSDP1 gathers a unit's flat parameter, FSDP2 a unit's parameters in one foreach all-gather):
//   one all-gather of the whole block per pass; the backward's, recompute included, is one more.
// - deepspeed (deepspeed/runtime/zero/parameter_offload.py, partitioned_param_coordinator.py): a
//   forward pre-hook on every submodule fetches that submodule's parameters in one all-gather;
//   parameters of at most stage3_param_persistence_threshold elements are never partitioned, so
//   never fetched. Under full recompute the hook fires again in the recompute (DeepSpeed issue
//   #4784), and a parameter is released after a use unless it is used again before
//   stage3_max_reuse_distance elements of other parameters are fetched
//   (PartitionedParameterCoordinator.__params_to_release), so the backward fetches again those
//   whose recompute use lies too far before their backward use.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/plan/strategy.hpp"

namespace stepsim::plan {

/// The all-gathers, in parameters each and forward order, that fetch a layer whose ops hold
/// `op_params` (forward order, ops with parameters only), plus `extra` parameters fetched with it
/// (the embedding before the first layer, the head after the last; 0 elsewhere).
std::vector<std::int64_t> zero3_gathers(const Strategy& st, const std::vector<std::int64_t>& op_params, std::int64_t extra);

/// Under DeepSpeed with full recompute: of a layer's submodule all-gathers `gathers` (forward
/// order, as zero3_gathers() without extra), those its backward fetches again after the recompute.
/// Between submodule k's recompute use and its backward use the trace fetches every later
/// submodule twice (its recompute, then its backward, which runs in reverse), so k is released
/// when 2·Σ_{j>k} gathers[j] ≥ stage3_max_reuse_distance. Empty for generic, without full
/// recompute, or without ZeRO-3.
std::vector<std::int64_t> zero3_backward_regathers(const Strategy& st, const std::vector<std::int64_t>& gathers);

/// Layers fetched ahead in a forward or a backward pass: zero_prefetch, none where every gather
/// blocks (zero3_blocking_gathers); FSDP's backward one unit (BACKWARD_PRE / _POST) or none.
int zero3_prefetch_layers(const Strategy& st, bool backward);
/// FSDP's BACKWARD_POST: the backward's next all-gather is issued after this layer's gradients,
/// before their reduce-scatter (_post_backward_reshard, then _reduce_grad), not before them.
bool zero3_prefetch_after_gradients(const Strategy& st);

}  // namespace stepsim::plan
