// Eager PyTorch elementwise ops (models::EagerOps): what torchtitan's and HuggingFace's Llama
// models run without torch.compile, each byte count derived from the kernels the op launches.
#include <doctest/doctest.h>

#include "models/layer_ops.hpp"
#include "models/model_yaml.hpp"
#include "tests/models/op_lookup.hpp"

namespace stepsim::models {
namespace {

using testing::op_named;

constexpr EagerOps kAll{.norm = true, .rotary = true, .activation = true};

LayerShape with_eager(LayerShape shape, EagerOps eager) {
  shape.eager = eager;
  return shape;
}

TEST_CASE("an eager RMSNorm moves 36 bytes per element forward and 92 backward, and keeps 6") {
  // Llama-2 7B (h 4096, RMSNorm), 2 x 4096 tokens, bf16. at::rms_norm's composite forward:
  // upcast 2+4, pow 4+4, mean 4, mul 4+4, downcast 4+2, weight mul 2+2 = 36 B; backward: weight
  // mul 2+2 and 2+2+2 then 2, downcast 2+4, rsqrt mul 4+4 and 4+4+4 then 4, mean 4, pow 4+4,
  // 4+4, 4+4+4, the sum of x's gradients 4+4+4, upcast 4+2 = 92 B; kept: the fp32 upcast and
  // the downcast output, 4 + 2 B. Fused: 4, 6 and 2 B.
  const ModelSpec llama = load_model("llama-2-7b");
  const LayerShape fused{.micro_batch = 2, .seq = 4096};
  const LayerShape eager = with_eager(fused, {.norm = true});
  const double elements = 2.0 * 4096 * 4096;
  const auto fused_ops = layer_ops(llama, fused);
  const OpCost& f = op_named(fused_ops, "input_norm");
  const auto ops = layer_ops(llama, eager);
  const OpCost& e = op_named(ops, "post_attn_norm");
  CHECK(f.fwd_bytes == doctest::Approx(4 * elements));
  CHECK(e.fwd_bytes == doctest::Approx(36 * elements));
  CHECK(e.bwd_input_bytes == doctest::Approx(92 * elements));
  CHECK(e.activation_bytes == static_cast<std::int64_t>(6 * elements));
  CHECK(e.fwd_kernels == 8);
  CHECK(e.fwd_host_calls == 8);  // one Python-level call per kernel
  CHECK(e.bwd_kernels == 16);
  CHECK(e.params == f.params);
  // Only the norm changed.
  CHECK(op_named(ops, "rotary").fwd_bytes == op_named(fused_ops, "rotary").fwd_bytes);
}

TEST_CASE("Qwen3's q and k norms run as two eager RMSNorm chains: 36 and 92 bytes per element, 16 and 32 kernels") {
  // Qwen3-30B-A3B: 32 query heads and 4 KV heads of 128 dims, each normed over its 128; 4096
  // tokens, bf16. The same per-element bytes as any eager RMSNorm (above), over
  // 4096 · (32 + 4) · 128 elements, and each of the two norms launches its own chain. Fused: two
  // kernels forward, two each backward, as a fused input norm.
  const ModelSpec qwen = load_model("qwen3-30b-a3b");
  REQUIRE(qwen.qk_norm);
  const LayerShape fused{.micro_batch = 1, .seq = 4096};
  const double elements = 4096.0 * (32 + 4) * 128;
  const auto fused_ops = layer_ops(qwen, fused);
  const OpCost& f = op_named(fused_ops, "qk_norm");
  CHECK(f.fwd_bytes == doctest::Approx(4 * elements));
  CHECK(f.fwd_kernels == 2);
  CHECK(f.bwd_kernels == 4);
  const auto ops = layer_ops(qwen, with_eager(fused, {.norm = true}));
  const OpCost& e = op_named(ops, "qk_norm");
  CHECK(e.fwd_bytes == doctest::Approx(36 * elements));
  CHECK(e.bwd_input_bytes == doctest::Approx(92 * elements));
  CHECK(e.activation_bytes == static_cast<std::int64_t>(6 * elements));
  CHECK(e.fwd_kernels == 16);
  CHECK(e.fwd_host_calls == 16);
  CHECK(e.bwd_kernels == 32);
  CHECK(e.params == 2 * 128);
}

TEST_CASE("LayerNorm is one native kernel: eager changes nothing for it") {
  const ModelSpec gpt = load_model("megatron-1.7b");
  const LayerShape fused{.micro_batch = 1, .seq = 2048};
  const LayerShape eager = with_eager(fused, kAll);
  CHECK(op_named(layer_ops(gpt, eager), "input_norm").fwd_bytes == op_named(layer_ops(gpt, fused), "input_norm").fwd_bytes);
  CHECK(op_named(layer_ops(gpt, eager), "gelu").fwd_bytes == op_named(layer_ops(gpt, fused), "gelu").fwd_bytes);
}

TEST_CASE("eager rotary: 20 bytes per query and key element each way, six kernels, nothing kept") {
  // Llama-3 8B: 32 query heads, 8 KV heads of 128 dims; 8192 tokens. Per element: upcast 2+4,
  // complex multiply 4+4, downcast 4+2.
  const ModelSpec llama = load_model("llama-3-8b");
  const LayerShape shape = with_eager({.micro_batch = 1, .seq = 8192}, {.rotary = true});
  const double elements = 8192.0 * (32 + 8) * 128;
  const auto ops = layer_ops(llama, shape);
  const OpCost& r = op_named(ops, "rotary");
  CHECK(r.fwd_bytes == doctest::Approx(20 * elements));
  CHECK(r.bwd_input_bytes == doctest::Approx(20 * elements));
  CHECK(r.activation_bytes == 0);
  CHECK(r.fwd_kernels == 6);
}

TEST_CASE("eager SwiGLU: silu then the product, 5f forward, 9f backward, three tensors kept") {
  // Llama-3 8B: ffn 14336 per rank at tp 1; 4096 tokens; f = tokens x ffn x 2 B.
  const ModelSpec llama = load_model("llama-3-8b");
  const LayerShape fused{.micro_batch = 1, .seq = 4096};
  const LayerShape eager = with_eager(fused, {.activation = true});
  const double f = 4096.0 * 14336 * 2;
  const auto eager_ops = layer_ops(llama, eager), fused_ops = layer_ops(llama, fused);
  const OpCost& e = op_named(eager_ops, "swiglu");
  const OpCost& k = op_named(fused_ops, "swiglu");
  CHECK(k.fwd_bytes == doctest::Approx(3 * f));  // fused: gate and up in, the product out
  CHECK(e.fwd_bytes == doctest::Approx(5 * f));
  CHECK(e.bwd_input_bytes == doctest::Approx(9 * f));
  CHECK(e.activation_bytes == static_cast<std::int64_t>(3 * f));
  CHECK(k.activation_bytes == static_cast<std::int64_t>(2 * f));
  CHECK(e.fwd_kernels == 2);
  CHECK(e.bwd_kernels == 3);
}

TEST_CASE("eager op names read back as they print") {
  EagerOps e;
  CHECK(to_string(e).empty());
  for (const auto& name : eager_op_names()) CHECK(add_eager_op(e, name));
  CHECK(e == kAll);
  CHECK(to_string(e) == "norm+rotary+activation");
  CHECK_FALSE(add_eager_op(e, "softmax"));
}

}  // namespace
}  // namespace stepsim::models
