// Megatron-Core's --recompute-modules (models::RecomputeModules) and torchtitan's per-op policy
// (SelectivePolicy::torch_ops): which ops re-run in backward and what memory each keeps or frees,
// derived from the tensors the ops keep.
#include <doctest/doctest.h>

#include "models/layer_ops.hpp"
#include "models/model_yaml.hpp"
#include "tests/models/op_lookup.hpp"

namespace stepsim::models {
namespace {

using testing::op_named;

LayerShape selective(LayerShape shape, RecomputeModules modules) {
  shape.recompute = Recompute::selective;
  shape.recompute_modules = modules;
  return shape;
}

TEST_CASE("layernorm re-runs the norms that are modules of their own and frees the output their consumers kept") {
  // A MoE layer's pre-MLP norm is a TENorm: the router kept its output, s·b·h 16-bit elements.
  // The input norm before standard attention is fused into linear_qkv (TE's LayerNormLinear) and
  // is not recomputed.
  const ModelSpec mixtral = load_model("mixtral-8x7b");  // h 4096
  const LayerShape plain{.micro_batch = 2, .seq = 4096};
  const auto kept = layer_ops(mixtral, plain);
  const auto discarded = layer_ops(mixtral, selective(plain, {.core_attn = false, .layernorm = true}));
  CHECK(sum_ops(kept).activation_bytes - sum_ops(discarded).activation_bytes == std::int64_t{2} * 4096 * 4096 * 2);
  CHECK(op_named(discarded, "post_attn_norm").recompute);
  CHECK(op_named(discarded, "router").activation_bytes == 0);
  CHECK_FALSE(op_named(discarded, "input_norm").recompute);
  CHECK(op_named(discarded, "qkv").activation_bytes == op_named(kept, "qkv").activation_bytes);
  CHECK_FALSE(op_named(discarded, "attention").recompute);
  CHECK(sum_ops(discarded).recompute_flops == 0);  // norms have no FLOPs
  // Latent attention's input norm is a TENorm too: q_down kept its output (s/t tokens under SP).
  const ModelSpec v3 = load_model("deepseek-v3");  // h 7168
  const LayerShape sp{.micro_batch = 1, .seq = 4096, .tp = 2, .sequence_parallel = true, .ep = 8, .etp = 1};
  const auto mla = layer_ops(v3, selective(sp, {.core_attn = false, .layernorm = true}));
  CHECK(op_named(mla, "input_norm").recompute);
  CHECK(sum_ops(layer_ops(v3, sp)).activation_bytes - sum_ops(mla).activation_bytes ==
        std::int64_t{4096} / 2 * 7168 * 2 * 2);  // q_down's and the router's
  // A dense layer has neither: both norms are fused into the next linear, nothing changes.
  const ModelSpec dense = load_model("llama-3-8b");
  const LayerShape one{.micro_batch = 1, .seq = 4096};
  CHECK(sum_ops(layer_ops(dense, selective(one, {.core_attn = false, .layernorm = true}))).activation_bytes ==
        sum_ops(layer_ops(dense, one)).activation_bytes);
}

TEST_CASE("selective recompute without modules named is Megatron-Core's default, core_attn alone") {
  const ModelSpec m = load_model("llama-3-8b");
  const LayerShape plain{.micro_batch = 1, .seq = 4096, .tp = 2, .sequence_parallel = true};
  const auto ops = layer_ops(m, selective(plain, {}));
  for (const auto& op : ops) CHECK(op.recompute == (op.name == "attention"));
}

TEST_CASE("moe_act re-runs the experts' SwiGLU and frees expert_down's input: rows·(f/etp)·e per local expert") {
  // Mixtral 8x7B: 8 experts of f 14336, top 2; one 4,096-token sequence, no EP: every expert on
  // ceil(4096·2/8) = 1024 rows; the activation's output is 8·1024·14336 16-bit elements.
  const ModelSpec m = load_model("mixtral-8x7b");
  const LayerShape plain{.micro_batch = 1, .seq = 4096};
  const auto kept = layer_ops(m, plain);
  const auto discarded = layer_ops(m, selective(plain, {.core_attn = false, .moe_act = true}));
  CHECK(sum_ops(kept).activation_bytes - sum_ops(discarded).activation_bytes == std::int64_t{8} * 1024 * 14336 * 2);
  CHECK(op_named(discarded, "expert_swiglu").recompute);
  CHECK(op_named(discarded, "expert_down").activation_bytes == 0);
  // The activation keeps its own input (gate and up) to re-run from.
  CHECK(op_named(discarded, "expert_swiglu").activation_bytes == op_named(kept, "expert_swiglu").activation_bytes);
}

TEST_CASE("mla_up_proj re-runs the up projections and rotary and frees the queries, keys and values") {
  // DeepSeek-V3: 128 heads of d_qk 192 (128 + 64 rotary) and d_v 128, TP 2 (64 heads a rank),
  // one 4,096-token sequence. Flash attention keeps Q, K, V: 4096·64·(192 + 192 + 128)·2 B.
  const ModelSpec m = load_model("deepseek-v3");
  const LayerShape plain{.micro_batch = 1, .seq = 4096, .tp = 2, .sequence_parallel = true, .ep = 8, .etp = 1};
  const auto kept = layer_ops(m, plain);
  const auto discarded = layer_ops(m, selective(plain, {.core_attn = false, .mla_up_proj = true}));
  const std::int64_t qkv = std::int64_t{4096} * 64 * (192 + 192 + 128) * 2;
  CHECK(op_named(kept, "attention").activation_bytes == qkv);
  CHECK(sum_ops(kept).activation_bytes - sum_ops(discarded).activation_bytes == qkv);
  // Re-run: the two up projections' forward FLOPs (rotary is a memory op).
  CHECK(sum_ops(discarded).recompute_flops ==
        doctest::Approx(op_named(kept, "q_up").fwd_flops + op_named(kept, "kv_up").fwd_flops));
  CHECK(op_named(discarded, "rotary").recompute);
  CHECK(op_named(discarded, "kv_norm").recompute);  // fused into the up projection (TE spec)
  // Their inputs, the latents, stay kept.
  CHECK(op_named(discarded, "kv_up").activation_bytes == op_named(kept, "kv_up").activation_bytes);
}

TEST_CASE("a shared expert keeps nothing of its own in 16-bit (the router keeps its input), its FP8 copy in FP8") {
  const ModelSpec m = load_model("qwen1.5-moe-a2.7b");  // h 2048
  const auto ops = layer_ops(m, {.micro_batch = 2, .seq = 2048});
  CHECK(op_named(ops, "shared_up").activation_bytes == 0);
  CHECK(op_named(ops, "shared_gate").activation_bytes == 0);
  CHECK(op_named(ops, "router").activation_bytes == std::int64_t{2} * 2048 * 2048 * 2);
  const auto fp8 = layer_ops(m, {.micro_batch = 2, .seq = 2048, .fp8 = Fp8Recipe::tensorwise});
  CHECK(op_named(fp8, "shared_up").activation_bytes == std::int64_t{2} * 2048 * 2048 * 1);
}

TEST_CASE("the modules' names, in Megatron-Core's spelling") {
  CHECK(to_string(RecomputeModules{}) == "core_attn");
  CHECK(to_string(RecomputeModules{.core_attn = false, .layernorm = true, .moe_act = true}) == "layernorm+moe_act");
}

TEST_CASE("torchtitan's per-op policy keeps wq, wv, w1, w2 and attention outputs and re-runs the rest") {
  // Llama-3 8B (h 4096, 32 query and 8 KV heads of 128, ffn 14336), 8192 tokens, bf16. The mms in
  // order wq wk wv wo w1 w3 w2: the even ones (wk, wo, w3) re-run, the odd ones' outputs are kept.
  const ModelSpec llama = load_model("llama-3-8b");
  LayerShape shape{.micro_batch = 1, .seq = 8192};
  shape.recompute = Recompute::selective;
  shape.selective_policy = SelectivePolicy::torch_ops;
  const auto ops = layer_ops(llama, shape);
  const double t = 8192, e = 2;
  const OpCost& qkv = op_named(ops, "qkv");
  CHECK(qkv.recompute);
  CHECK(qkv.recompute_share == doctest::Approx(1024.0 / (4096 + 1024 + 1024)));  // wk of wq|wk|wv
  CHECK(qkv.activation_bytes == static_cast<std::int64_t>(t * (4096 + 1024) * e));  // q and v
  CHECK(op_named(ops, "out_proj").recompute);
  CHECK(op_named(ops, "out_proj").activation_bytes == 0);
  const OpCost& up = op_named(ops, "mlp_up");
  CHECK(up.recompute_share == doctest::Approx(0.5));  // w3 of w1|w3
  CHECK(up.activation_bytes == static_cast<std::int64_t>(t * 14336 * e));
  CHECK_FALSE(op_named(ops, "mlp_down").recompute);  // w2, the 7th
  CHECK(op_named(ops, "mlp_down").activation_bytes == static_cast<std::int64_t>(t * 4096 * e));
  const OpCost& attention = op_named(ops, "attention");
  CHECK_FALSE(attention.recompute);
  CHECK(attention.activation_bytes == static_cast<std::int64_t>(t * 32 * (128 * e + 4)));  // output + fp32 lse
  for (const char* name : {"rotary", "swiglu", "post_attn_norm", "attn_residual", "mlp_residual"}) {
    CHECK(op_named(ops, name).recompute);
    CHECK(op_named(ops, name).activation_bytes == 0);
  }
  CHECK(op_named(ops, "input_norm").activation_bytes == static_cast<std::int64_t>(t * 4096 * e));  // the block input
  // Re-run FLOPs: wk + wo + w3 forward, 2·T·h·(1024 + 4096 + 14336).
  CHECK(sum_ops(ops).recompute_flops == doctest::Approx(2 * t * 4096 * (1024 + 4096 + 14336)));
  // TP 2 with sequence parallelism: the reduce-scatters after wo and w2 are saved too, T/2 rows.
  LayerShape tp = shape;
  tp.tp = 2;
  tp.sequence_parallel = true;
  const auto split = layer_ops(llama, tp);
  CHECK(op_named(split, "out_proj").activation_bytes == static_cast<std::int64_t>(t / 2 * 4096 * e));
  CHECK(op_named(split, "mlp_down").activation_bytes == static_cast<std::int64_t>(t * 4096 * e + t / 2 * 4096 * e));
  CHECK(op_named(split, "input_norm").activation_bytes == static_cast<std::int64_t>(t / 2 * 4096 * e));
}

}  // namespace
}  // namespace stepsim::models
