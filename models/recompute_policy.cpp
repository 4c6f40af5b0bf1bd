// What selective recompute re-runs and keeps, per policy (models::SelectivePolicy): Megatron-Core's
// recompute modules (the attention core is marked where it is built, attention_ops.cpp; the
// output-discarding modules here) and torchtitan's per-op checkpointing policy.
#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "models/op_builders.hpp"

namespace stepsim::models::detail {
namespace {

// Selective recompute's output-discarding modules (Megatron-Core's CheckpointWithoutOutput in
// transformer_layer.py, experts.py, multi_latent_attention.py): the module's ops re-run in
// backward, and the tensors its consumers saved of its output are freed. A norm is recomputed only
// where it is a module of its own (not an IdentityOp): TransformerEngine's layer spec fuses the
// input norm of standard attention into linear_qkv and a dense MLP's into linear_fc1
// (LayerNormLinear), so those stay kept; latent attention's input norm and a MoE layer's pre-MLP
// norm are TENorm. Latent attention's q/kv norms are fused into the up projections and re-run
// with them.
void discard_module_outputs(std::vector<OpCost>& ops, const ModelSpec& m, const LayerShape& shape) {
  const RecomputeModules& modules = shape.recompute_modules;
  auto rerun = [&ops](std::initializer_list<std::string_view> names) {
    for (auto& op : ops)
      if (std::find(names.begin(), names.end(), op.name) != names.end()) op.recompute = true;
  };
  auto free_saved = [&ops](std::initializer_list<std::string_view> keepers) {
    for (auto& op : ops)
      if (std::find(keepers.begin(), keepers.end(), op.name) != keepers.end()) op.activation_bytes = 0;
  };
  const bool moe_layer = m.moe.enabled() && !shape.dense_mlp;
  if (modules.layernorm && m.mla.enabled()) {
    rerun({"input_norm"});
    free_saved({"q_down", "kv_down"});
  }
  if (modules.layernorm && moe_layer) {
    rerun({"post_attn_norm"});
    free_saved({"router", "shared_up", "shared_gate"});
  }
  if (modules.moe_act && moe_layer) {
    const std::string act = "expert_" + std::string(to_string(m.activation));
    rerun({act});
    free_saved({"expert_down"});
  }
  if (modules.mla_up_proj && m.mla.enabled()) {
    rerun({"q_norm", "kv_norm", "q_up", "q_proj", "kv_up", "rotary"});
    free_saved({"attention"});
  }
}

// torchtitan's per-op selective activation checkpointing (SelectivePolicy::torch_ops;
// torchtitan/models/llama3/parallelize_llama.py _custom_policy, torchtitan @9dec370): inside a
// block the outputs of aten.mm and of the SDPA kernel are saved, except every second mm, and every
// other op re-runs from the block's input before its backward. The mms in forward order, a fused
// op standing for several (qkv: wq, wk, wv; a gated mlp_up: w1, w3): of a Llama block's wq, wk,
// wv, wo, w1, w3, w2 the outputs of wq, wv, w1 and w2 are saved and wk, wo and w3 re-run. Kept
// per block: its input, those outputs, the attention output and its fp32 softmax statistics (one
// per SDPA call: each ring step's under context parallelism), and under TP with sequence
// parallelism the reduce-scatters' outputs after wo and w2 (the policy saves
// reduce_scatter_tensor too).
void apply_torch_op_policy(std::vector<OpCost>& ops, const Dims& x) {
  const double t = static_cast<double>(x.tokens);
  int mm = 0;
  // (output elements per token, forward FLOPs) of each mm an op stands for.
  auto sub_mms = [&x](const OpCost& op) -> std::vector<std::pair<double, double>> {
    const double q = static_cast<double>(x.q_heads * x.d), k = static_cast<double>(x.kv_heads * x.d),
                 v = static_cast<double>(x.kv_heads * x.dv);
    if (op.name == "qkv") return {{q, q}, {k, k}, {v, v}};  // FLOPs ∝ output width (same k, m)
    if (op.name == "mlp_up" && op.gemm.n == 2 * x.ffn) return {{static_cast<double>(x.ffn), 1}, {static_cast<double>(x.ffn), 1}};
    if (op.kind == OpKind::matmul) return {{static_cast<double>(op.gemm.n), 1}};
    return {};
  };
  for (auto& op : ops) {
    const auto parts = sub_mms(op);
    if (op.name == "attention") {
      op.recompute = false;
      op.activation_bytes = to_bytes(t * static_cast<double>(x.q_heads) * (static_cast<double>(x.dv) * x.e + 4));
      continue;
    }
    if (parts.empty()) {  // norms, rotary, activation, residual adds: re-run, keep nothing
      op.recompute = true;
      op.activation_bytes = 0;
      continue;
    }
    double saved = 0, rerun = 0, all = 0;
    for (const auto& [width, flops] : parts) {
      ++mm;
      if (mm % 2 == 0) rerun += flops;
      else saved += width;
      all += flops;
    }
    op.recompute = rerun > 0;
    op.recompute_share = rerun / all;
    op.activation_bytes = to_bytes(t * saved * x.e);
    const bool scattered = x.norm_tokens < x.tokens && (op.name == "out_proj" || op.name == "mlp_down");
    if (scattered) op.activation_bytes += to_bytes(static_cast<double>(x.norm_tokens * x.h) * x.e);
  }
  // The block's input, which the checkpoint keeps to re-run the rest from.
  ops.front().activation_bytes = to_bytes(static_cast<double>(x.norm_tokens * x.h) * x.e);
}

}  // namespace

void apply_selective_recompute(std::vector<OpCost>& ops, const ModelSpec& m, const Dims& x, const LayerShape& shape) {
  if (shape.recompute != Recompute::selective) return;
  if (shape.selective_policy == SelectivePolicy::torch_ops) apply_torch_op_policy(ops, x);
  else discard_module_outputs(ops, m, shape);
}

}  // namespace stepsim::models::detail
