// Megatron-Core's --recompute-modules (models::RecomputeModules): which ops re-run in backward and
// what memory each module frees, derived from the tensors the op after it keeps.
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

TEST_CASE("layernorm re-runs both norms and frees their outputs: 2·s·b·h·e less kept") {
  // Korthikanti's GPT layer, TP 1, no SP: qkv and mlp_up each keep their norm's output, s·b·h
  // 16-bit elements; with the norms recomputed neither is kept, and nothing else changes.
  const ModelSpec m = load_model("korthikanti-22b");  // h 6144
  const LayerShape plain{.micro_batch = 2, .seq = 2048, .flash_attention = true};
  const auto kept = layer_ops(m, plain);
  const auto discarded = layer_ops(m, selective(plain, {.core_attn = false, .layernorm = true}));
  const double sbh = 2.0 * 2048 * 6144;
  CHECK(static_cast<double>(sum_ops(kept).activation_bytes - sum_ops(discarded).activation_bytes) == 2 * sbh * 2);
  CHECK(op_named(discarded, "input_norm").recompute);
  CHECK(op_named(discarded, "post_attn_norm").recompute);
  CHECK(op_named(discarded, "qkv").activation_bytes == 0);
  CHECK(op_named(discarded, "mlp_up").activation_bytes == 0);
  // The attention core is not listed, so it is neither re-run nor freed.
  CHECK_FALSE(op_named(discarded, "attention").recompute);
  CHECK(op_named(discarded, "attention").activation_bytes == op_named(kept, "attention").activation_bytes);
  // Norms have no FLOPs: recompute adds time, not model FLOPs.
  CHECK(sum_ops(discarded).recompute_flops == 0);
}

TEST_CASE("selective recompute without modules is core_attn alone, as before") {
  const ModelSpec m = load_model("llama-3-8b");
  const LayerShape plain{.micro_batch = 1, .seq = 4096, .tp = 2, .sequence_parallel = true};
  const auto by_default = layer_ops(m, selective(plain, {}));
  const auto listed = layer_ops(m, selective(plain, {.core_attn = true}));
  CHECK(op_named(by_default, "attention").recompute);
  CHECK_FALSE(op_named(by_default, "input_norm").recompute);
  CHECK(sum_ops(by_default).activation_bytes == sum_ops(listed).activation_bytes);
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
  // Their inputs, the latents, stay kept.
  CHECK(op_named(discarded, "kv_up").activation_bytes == op_named(kept, "kv_up").activation_bytes);
}

TEST_CASE("a shared expert keeps nothing of its own: its input is the norm output the router keeps") {
  const ModelSpec m = load_model("qwen1.5-moe-a2.7b");
  const auto ops = layer_ops(m, {.micro_batch = 2, .seq = 2048});
  CHECK(op_named(ops, "shared_up").activation_bytes == 0);
  CHECK(op_named(ops, "shared_gate").activation_bytes == 0);
  CHECK(op_named(ops, "router").activation_bytes == std::int64_t{2} * 2048 * 2048 * 2);
}

TEST_CASE("the modules' names, in Megatron-Core's spelling") {
  CHECK(to_string(RecomputeModules{}) == "core_attn");
  CHECK(to_string(RecomputeModules{.core_attn = false, .layernorm = true, .moe_act = true}) == "layernorm+moe_act");
}

}  // namespace
}  // namespace stepsim::models
