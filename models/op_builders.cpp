#include "models/op_builders.hpp"

#include <algorithm>
#include <stdexcept>

namespace stepsim::models::detail {

Dims dims_of(const ModelSpec& m, const LayerShape& shape) {
  if (shape.tp < 1 || m.heads % shape.tp != 0 || m.ffn_hidden % shape.tp != 0 ||
      m.moe.expert_ffn % (shape.etp > 0 ? shape.etp : shape.tp) != 0 || m.moe.shared_ffn % shape.tp != 0 || shape.ep < 1 ||
      (shape.etp > 0 && shape.etp != shape.tp && (shape.etp != 1 || shape.ep == 1)) ||
      (m.moe.enabled() ? m.moe.experts % shape.ep != 0 : shape.ep != 1))
    throw std::invalid_argument("tp=" + std::to_string(shape.tp) + " does not divide the " +
                                std::to_string(m.heads) + " heads and ffn " +
                                std::to_string(m.ffn_hidden) + " of " + m.name);
  if (shape.cp < 1 || (shape.cp > 1 && (!shape.flash_attention || shape.seq % (2 * shape.cp) != 0)))
    throw std::invalid_argument("cp=" + std::to_string(shape.cp) + " needs flash attention and 2·cp dividing s = " +
                                std::to_string(shape.seq));
  if (shape.cp > 1 && shape.attention_window > 0 && shape.attention_window < shape.seq)
    throw std::invalid_argument("cp=" + std::to_string(shape.cp) + " with a sliding window of " +
                                std::to_string(shape.attention_window) + " tokens is not modelled");
  Dims x{};
  x.e = shape.bytes_per_element;
  x.b = shape.micro_batch;
  x.s = shape.seq;
  x.cp = shape.cp;
  x.tokens = x.b * x.s / x.cp;
  x.norm_tokens = shape.sequence_parallel ? x.tokens / shape.tp : x.tokens;
  x.h = m.hidden;
  x.d = qk_head_dim(m);
  x.dv = v_head_dim(m);
  x.q_heads = m.heads / shape.tp;
  // Latent attention expands every head's own key and value from the latent.
  x.kv_heads = m.mla.enabled() ? x.q_heads : std::max<I64>(1, m.kv_heads / shape.tp);
  x.ffn = m.ffn_hidden / shape.tp;
  x.etp = shape.etp > 0 ? shape.etp : shape.tp;
  x.dropout = m.dropout;
  x.tp = shape.tp;
  x.eager = shape.eager;
  return x;
}

// A GEMM with weights W[k×n]: dX = dY·Wᵀ and dW = Xᵀ·dY each cost the forward FLOPs.
// Bytes: forward reads X and W and writes Y; dX reads dY and W, writes dX; dW reads X and dY
// and reads+writes the gradient buffer (plus dY again for the bias gradient).
// A grouped GEMM (`batch` > 1: one weight matrix per group, the experts of a MoE layer) moves
// each group's X, W and Y.
OpCost matmul(std::string name, GemmShape g, double e, bool bias, I64 stored_input_bytes) {
  OpCost op;
  op.name = std::move(name);
  op.kind = OpKind::matmul;
  op.gemm = g;
  const double groups = static_cast<double>(g.batch);
  const double x = groups * static_cast<double>(g.m * g.k), w = groups * static_cast<double>(g.k * g.n),
               y = groups * static_cast<double>(g.m * g.n);
  op.fwd_flops = op.bwd_input_flops = op.bwd_weight_flops = g.flops();
  op.fwd_bytes = (x + w + y) * e;
  op.bwd_input_bytes = (y + w + x) * e;
  op.bwd_weight_bytes = (x + y + 2 * w + (bias ? y : 0)) * e;
  op.activation_bytes = stored_input_bytes;
  op.params = g.batch * (g.k * g.n + (bias ? g.n : 0));
  op.param_tensors = static_cast<int>(g.batch) * (bias ? 2 : 1);
  op.bwd_kernels = 2;
  return op;
}

// A bandwidth-bound op: `fwd` and `bwd` bytes moved, `stored` bytes kept for backward.
OpCost memory_op(std::string name, double fwd, double bwd, I64 stored, int kernels) {
  OpCost op;
  op.name = std::move(name);
  op.fwd_bytes = fwd;
  op.bwd_input_bytes = bwd;
  op.activation_bytes = stored;
  op.fwd_kernels = op.bwd_kernels = kernels;
  return op;
}

I64 to_bytes(double v) { return static_cast<I64>(v); }

// LayerNorm/RMSNorm: forward reads x, writes y; backward reads dy and x, writes dx (the weight
// gradient is reduced in the same pass). Keeps its input (Korthikanti: 2sbh per norm).
// An eager RMSNorm (EagerOps::norm) is at::rms_norm's composite, per element of e bytes: upcast
// (e → 4), pow (4 → 4), mean (reads 4), mul by the rsqrt (4 → 4), downcast (4 → e), weight mul
// (e → e): 28 + 4e bytes in 8 kernels (add eps and rsqrt are per row). Its autograd nodes
// (torch/csrc/autograd/FunctionsManual.cpp) move 8e + 76: the weight mul's input gradient (2e)
// and its weight gradient, the full product then its sum over rows (4e); the downcast's (e + 4);
// the rsqrt mul's input gradient (8) and the rsqrt's, again a full product and its sum (16);
// mean's expanded division (4); pow_backward's grad·(2·x^1): x^1, ·2, ·grad (28); the sum of x's
// two gradients (12); the upcast's (4 + e); 16 kernels (the rsqrt's own backward is three per-row
// ones). It keeps the fp32 upcast (pow and mul share it) and the downcast output for the
// weight's gradient: 4 + e bytes where a fused norm keeps e.
OpCost norms_op(std::string name, const Dims& x, double elements, int norms, bool rms) {
  const bool eager = x.eager.norm && rms;
  OpCost op = eager ? memory_op(std::move(name), (28 + 4 * x.e) * elements, (76 + 8 * x.e) * elements,
                                to_bytes((4 + x.e) * elements), 8 * norms)
                    : memory_op(std::move(name), 2 * elements * x.e, 3 * elements * x.e, to_bytes(elements * x.e), norms);
  op.bwd_kernels = (eager ? 16 : 2) * norms;
  return op;
}

OpCost norm_op(std::string name, const Dims& x, I64 width, I64 params, bool rms) {
  OpCost op = norms_op(std::move(name), x, static_cast<double>(x.norm_tokens * width), 1, rms);
  op.params = params;
  op.param_tensors = static_cast<int>(params / width);  // LayerNorm's weight and bias, RMSNorm's weight
  return op;
}

OpCost norm_op(std::string name, const ModelSpec& m, const Dims& x) {
  return norm_op(std::move(name), x, x.h, norm_params(m), m.norm == Norm::rmsnorm);
}

// Residual add with hidden dropout (Megatron's fused bias-dropout-add). Keeps the 1-byte mask.
OpCost dropout_add_op(std::string name, const Dims& x) {
  const double elements = static_cast<double>(x.norm_tokens * x.h);
  const double mask = x.dropout ? elements : 0;
  return memory_op(std::move(name), 3 * elements * x.e + mask, 3 * elements * x.e + mask,
                   to_bytes(mask));
}

}  // namespace stepsim::models::detail
