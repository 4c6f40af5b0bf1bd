// Memory per GPU: model states of mixed-precision Adam under ZeRO, and activation memory per
// transformer layer per microbatch after Korthikanti et al. 2022. Bytes throughout.
//
// Model states (Rajbhandari et al. 2020, ZeRO §3): 16-bit parameters (2 B), gradients (2 B, or
// 4 B in Megatron-LM's fp32 main-grad variant, 6 B under DeepSpeed's BF16_Optimizer: GradPrecision)
// and Adam's fp32 master weights, momentum and
// variance (12 B, OptimizerStates) per parameter. ZeRO-1 shards the 12, ZeRO-2 also the gradients,
// ZeRO-3 also the parameters, each over the data-parallel group.
#pragma once

#include <cstdint>

#include "models/layer_ops.hpp"

namespace stepsim::models {

enum class GradPrecision {
  bf16,           ///< 2 + 2 + 12 bytes per parameter (DeepSpeed, FSDP)
  fp32,           ///< 2 + 4 + 12 (Megatron-LM accumulates gradients in fp32 main_grad)
  bf16_and_fp32,  ///< 2 + 6 + 12: DeepSpeed's BF16_Optimizer keeps the bf16 .grad autograd fills
                  ///< beside the full fp32 buffer it adds each microbatch's into
};

/// Bytes per parameter of Adam's states. Mixed-precision Adam keeps an fp32 master copy, momentum
/// and variance (4 + 4 + 4). Megatron-Core's precision-aware optimizer (--main-params-dtype,
/// --exp-avg-dtype, --exp-avg-sq-dtype) narrows them; Apex's DistributedFusedAdam with dtype equal
/// to the model's (NeMo 1's `optim.dtype: bf16`) keeps no master copy at all (store_params off:
/// the 16-bit parameters are the master) and its moments in that dtype.
struct OptimizerStates {
  int master = 4;      ///< 0: the 16-bit parameters are the master copy
  int exp_avg = 4;
  int exp_avg_sq = 4;
  int total() const { return master + exp_avg + exp_avg_sq; }
  /// HBM bytes one parameter's fused Adam step moves (apex FusedAdam, Megatron's fused optimizer:
  /// each tensor touched once): the gradient read (`grad_bytes`: 2, or 4 for an fp32 main_grad)
  /// and the 16-bit parameter written, every state read and written, and the 16-bit parameter
  /// read too where it is the master.
  int step_bytes(int grad_bytes = 2) const { return grad_bytes + 2 + 2 * total() + (master == 0 ? 2 : 0); }
  auto operator<=>(const OptimizerStates&) const = default;
};

struct ModelStateBytes {
  std::int64_t params = 0, grads = 0, optimizer = 0;
  std::int64_t total() const { return params + grads + optimizer; }
  auto operator<=>(const ModelStateBytes&) const = default;
};

/// Per GPU, for `n_params` held by this model-parallel rank, sharded over `dp` ranks by stage.
/// A shard is rounded up. Requires: 0 <= zero_stage <= 3, dp >= 1.
ModelStateBytes model_state_bytes(std::int64_t n_params, int zero_stage, int dp,
                                  GradPrecision grads = GradPrecision::bf16, OptimizerStates states = {});

/// Korthikanti et al. 2022 (arXiv 2205.05198) §4, 16-bit activations of one transformer layer
/// per microbatch on one TP rank; s sequence, b micro-batch, h hidden, a heads, t TP size:
///   no parallelism                 sbh(34 + 5as/h)
///   TP, no SP                      sbh(10 + 24/t + 5as/(ht))
///   TP + SP                        sbh(34/t + 5as/(ht))
///   selective recompute, SP        34sbh/t;  without SP: sbh(10 + 24/t)
///   full recompute                 2sbh
/// (t = 1 makes the TP forms the first.) Exact, as a double: 24/t need not be whole.
double korthikanti_activation_bytes(double s, double b, double h, double a, double t,
                                    bool sequence_parallel, Recompute recompute);

}  // namespace stepsim::models
