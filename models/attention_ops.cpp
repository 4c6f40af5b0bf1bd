// The attention block of a transformer layer, per rank: the projections, the core attention as
// FlashAttention / cuDNN fused attention or Megatron-LM's unfused kernels, and the output
// projection.
#include <algorithm>

#include "models/op_builders.hpp"

namespace stepsim::models::detail {
namespace {

// Sizes of a head group's tensors on the rank, in bytes: queries, keys, values, output.
struct Qkvo {
  double q, k, v, o;
};

// Selective recompute re-runs the attention core unless its modules leave core_attn out.
bool core_attention_recomputed(const LayerShape& shape) {
  return shape.recompute == Recompute::selective && shape.recompute_modules.core_attn;
}

Qkvo qkvo(const Dims& x) {
  const double t = static_cast<double>(x.tokens) * x.e;
  return {t * static_cast<double>(x.q_heads * x.d), t * static_cast<double>(x.kv_heads * x.d),
          t * static_cast<double>(x.kv_heads * x.dv), t * static_cast<double>(x.q_heads * x.dv)};
}

// Rotary embedding over `elements` query and key elements: fused, one pass each way (read and
// write e bytes). Eager (EagerOps::rotary, torchtitan's apply_rotary_emb), per element: upcast
// (e → 4), complex multiply by the frequencies (4 → 4), downcast (4 → e), 2e + 16 bytes, three
// kernels for each of q and k; its autograd nodes move the same. It keeps nothing: the
// frequencies do not need a gradient, so the multiply saves only them.
OpCost rotary_op(const Dims& x, double elements) {
  if (x.eager.rotary) return memory_op("rotary", (2 * x.e + 16) * elements, (2 * x.e + 16) * elements, 0, 6);
  return memory_op("rotary", 2 * elements * x.e, 2 * elements * x.e, 0);
}

void add_flash_attention(std::vector<OpCost>& ops, const Dims& x, const LayerShape& shape) {
  const Qkvo t = qkvo(x);
  // Scores Q·Kᵀ and context P·V: 2·b·s²·(a/t)·d each (d_qk and d_v under latent attention);
  // FlashAttention-2 skips the masked half (Dao 2023). Its backward recomputes the scores: 5
  // GEMMs to the forward's 2, so 2.5×.
  // Under context parallelism the rank's s/cp queries meet all s keys, one K/V chunk per ring
  // step: cp blocks of (s/cp)² each, the causal half skipped on average, as the load-balanced
  // chunks give every rank the same share (Megatron-Core's get_batch_on_this_cp_rank).
  const double full = 2.0 * static_cast<double>(x.b * x.q_heads * (x.d + x.dv)) * static_cast<double>(x.s * x.s) / x.cp;
  // A causal window of w < s keys leaves w·s − w²/2 of the s² query-key pairs (s²/2 at w = s):
  // FlashAttention-2's window_size skips the blocks outside it, as it skips the masked half.
  const double s = static_cast<double>(x.s), w = static_cast<double>(shape.attention_window);
  const double causal = shape.attention_window > 0 && shape.attention_window < x.s ? (w * s - w * w / 2) / (s * s) : 0.5;
  const I64 block = x.s / x.cp;
  for (int step = 0; step < x.cp; ++step) {
    OpCost op;
    op.name = "attention";
    op.kind = shape.cudnn_attention ? OpKind::cudnn_attention : OpKind::flash_attention;
    op.gemm = {x.b * x.q_heads, block, block, x.d};
    op.fwd_flops = (shape.causal_skip ? full * causal : full) / x.cp;
    op.bwd_input_flops = 2.5 * op.fwd_flops;
    // Each block reads q and one K/V chunk and writes (corrects) o; its backward reads q, k, v,
    // o, do and writes dq, dk, dv.
    op.fwd_bytes = t.q + t.k + t.v + t.o;
    op.bwd_input_bytes = 2 * (t.q + 2 * t.o + t.k + t.v);
    // Keeps Q, K, V (6sbh/t for MHA); O is out_proj's stored input; no s² term (Korthikanti).
    // Ring attention keeps only the rank's own chunk: backward circulates K/V again.
    op.activation_bytes = step == 0 ? to_bytes(t.q + t.k + t.v) : 0;
    op.recompute = core_attention_recomputed(shape);
    // A ring step adds the softmax-statistics correction of the partial output
    // (TransformerEngine's flash_attn_fwd_softmax_lse_correction) and, backward, the
    // accumulation of the chunk's dK/dV.
    op.fwd_kernels = x.cp > 1 ? 2 : 1;
    op.bwd_kernels = x.cp > 1 ? 3 : 2;
    ops.push_back(op);
  }
}

// Megatron-LM's fused scale+mask+softmax kernel runs only where its CUDA kernel handles the
// shape (megatron/model/fused_softmax.py FusedScaleMaskSoftmax.is_kernel_available, 2022-23, as
// Megatron-DeepSpeed has it): 16-bit input, 16 < sk <= 4096, sq and sk multiples of 4, and the
// b·a/t attention batches a multiple of 4 and of the kernel's batches per block: 128 threads
// in warps of min(2^ceil(log2 sk), 32) threads, each warp taking 2 rows when 2^ceil(log2 sk) <=
// 128, else 1 (scaled_upper_triang_masked_softmax.h). Causal self-attention: sq = sk = s.
bool fused_softmax_available(const Dims& x) {
  const I64 batches = x.b * x.q_heads, s = x.s;
  if (x.e != 2 || s <= 16 || s > 4096 || s % 4 != 0 || batches % 4 != 0) return false;
  I64 pow2 = 1;
  while (pow2 < s) pow2 *= 2;
  const I64 warp = std::min<I64>(pow2, 32);
  const I64 per_block = (128 / warp) * (pow2 <= 128 ? 2 : 1);
  return batches % per_block == 0;
}

// The softmax of the S attention scores. Fused: one kernel reads and writes S 16-bit elements
// (backward reads output and gradient, writes the gradient) and keeps its output. Otherwise
// Megatron's forward_torch_softmax runs, in fp32 because query-key layer scaling (on by default)
// forces softmax_in_fp32: float(), × scale, masked_fill_, softmax, half() — 5 kernels moving
// 2→4, 4→4, 4→4, 4→4, 4→2 bytes per element (36 S), and their 5 autograd nodes backward
// (2→4, softmax 4+4→4, 4→4, 4→4, 4→2: 40 S); softmax keeps its fp32 output. An fp32 model has
// no casts: 3 kernels, 24 S forward and 28 S backward. Six framework calls forward (the casts,
// the scale, the mask, building and calling nn.Softmax).
OpCost softmax_op(const Dims& x, double scores, bool keep) {
  if (fused_softmax_available(x))
    return memory_op("attn_softmax", 2 * scores * x.e, 3 * scores * x.e, keep ? to_bytes(scores * x.e) : 0);
  const bool cast = x.e != 4;
  return memory_op("attn_softmax_torch", (cast ? 36 : 24) * scores, (cast ? 40 : 28) * scores,
                   keep ? to_bytes(4 * scores) : 0, cast ? 5 : 3);
}

// Megatron-LM's unfused core attention: baddbmm scores, scale+mask+softmax, dropout, bmm
// context, then a permute to [s, b, h]. Scores are S = b·(a/t)·s² elements.
void add_unfused_attention(std::vector<OpCost>& ops, const Dims& x, const LayerShape& shape) {
  const Qkvo t = qkvo(x);
  const double scores = static_cast<double>(x.b * x.q_heads) * static_cast<double>(x.s * x.s);
  const bool selective = core_attention_recomputed(shape);
  auto bmm = [&](std::string name, GemmShape g, double fwd_bytes, double bwd_bytes, double stored) {
    OpCost op;
    op.name = std::move(name);
    op.kind = OpKind::batched_matmul;
    op.gemm = g;
    op.fwd_flops = g.flops();
    op.bwd_input_flops = 2 * g.flops();  // gradients of both operands
    op.fwd_bytes = fwd_bytes;
    op.bwd_input_bytes = bwd_bytes;
    op.activation_bytes = to_bytes(stored);
    op.recompute = selective;
    op.bwd_kernels = 2;
    return op;
  };
  // Keeps Q and K (Korthikanti: 4sbh/t).
  ops.push_back(bmm("attn_scores", {x.b * x.q_heads, x.s, x.s, x.d}, t.q + t.k + scores * x.e,
                    scores * x.e + 2 * (t.q + t.k), t.q + t.k));
  // Keeps its output for the softmax backward (2as²b/t), unless recomputed.
  OpCost softmax = softmax_op(x, scores, !selective);
  softmax.recompute = selective;
  ops.push_back(softmax);
  if (x.dropout) {  // keeps the 1-byte mask (as²b/t)
    OpCost drop = memory_op("attn_dropout", 2 * scores * x.e + scores, 2 * scores * x.e + scores,
                            selective ? 0 : to_bytes(scores));
    drop.recompute = selective;
    ops.push_back(drop);
  }
  // Keeps V and the dropped-out probabilities (2sbh/t + 2as²b/t; the softmax output already
  // holds them when there is no dropout).
  const double probs_stored = x.dropout && !selective ? scores * x.e : 0;
  OpCost context = bmm("attn_context", {x.b * x.q_heads, x.s, x.dv, x.s}, scores * x.e + t.v + 3 * t.o,
                       2 * scores * x.e + 2 * t.o + 2 * t.v, t.v + probs_stored);
  context.fwd_kernels = 2;  // the bmm and the permute copy
  ops.push_back(context);
}

void add_attention_core(std::vector<OpCost>& ops, const Dims& x, const LayerShape& shape) {
  if (shape.flash_attention) add_flash_attention(ops, x, shape);
  else add_unfused_attention(ops, x, shape);
}
// DeepSeek-V2's multi-head latent attention as Megatron-Core's MLASelfAttention runs it
// (megatron/core/transformer/multi_latent_attention.py, TransformerEngine's layer spec): the
// down projections, duplicated on every TP rank, on the rank's norm_tokens (s/t under SP); the
// latents' RMSNorms; then, after the TP gather of the latents (sim/plan), the column-parallel up
// projections on all T tokens, rotary over the queries' and the one shared key's d_rope dims, the
// core attention with d_qk = d_nope + d_rope and d_v, and the row-parallel output projection.
// Without a query latent (V2-Lite) the query comes straight from the hidden state (q_proj).
void add_latent_attention(std::vector<OpCost>& ops, const ModelSpec& m, const Dims& x, const LayerShape& shape) {
  const MlaSpec& a = m.mla;
  const I64 n = x.norm_tokens, t = x.tokens, rope = a.qk_rope_head_dim;
  const double norm_out = static_cast<double>(n * x.h) * x.e;  // kept once, by the first GEMM that reads it
  const bool q_latent = a.q_lora_rank > 0;
  if (q_latent) ops.push_back(matmul("q_down", {1, n, a.q_lora_rank, x.h}, x.e, false, to_bytes(norm_out)));
  ops.push_back(matmul("kv_down", {1, n, a.kv_lora_rank + rope, x.h}, x.e, false, q_latent ? 0 : to_bytes(norm_out)));
  if (q_latent) ops.push_back(norm_op("q_norm", x, a.q_lora_rank, a.q_lora_rank, true));
  ops.push_back(norm_op("kv_norm", x, a.kv_lora_rank, a.kv_lora_rank, true));
  if (q_latent)
    ops.push_back(matmul("q_up", {1, t, x.q_heads * x.d, a.q_lora_rank}, x.e, false,
                         to_bytes(static_cast<double>(t * a.q_lora_rank) * x.e)));
  else
    ops.push_back(matmul("q_proj", {1, t, x.q_heads * x.d, x.h}, x.e, false, 0));
  ops.push_back(matmul("kv_up", {1, t, x.q_heads * (a.qk_nope_head_dim + x.dv), a.kv_lora_rank}, x.e, false, to_bytes(static_cast<double>(t * a.kv_lora_rank) * x.e)));
  ops.push_back(rotary_op(x, static_cast<double>(t * (x.q_heads + 1) * rope)));
  add_attention_core(ops, x, shape);
  ops.push_back(matmul("out_proj", {1, t, x.h, x.q_heads * x.dv}, x.e, false,
                       to_bytes(static_cast<double>(t * x.q_heads * x.dv) * x.e)));
}

}  // namespace

void add_attention(std::vector<OpCost>& ops, const ModelSpec& m, const Dims& x, const LayerShape& shape) {
  if (m.mla.enabled()) return add_latent_attention(ops, m, x, shape);
  const double stored_norm_out = static_cast<double>(x.norm_tokens * x.h) * x.e;
  const I64 qkv_width = (x.q_heads + 2 * x.kv_heads) * x.d;
  ops.push_back(matmul("qkv", {1, x.tokens, qkv_width, x.h}, x.e, m.qkv_bias, to_bytes(stored_norm_out)));
  if (m.qk_norm) {  // Qwen3: an RMSNorm over each query and key head; keeps its input
    OpCost op = norms_op("qk_norm", x, static_cast<double>(x.tokens * (x.q_heads + x.kv_heads) * x.d), 2, true);
    op.params = 2 * m.head_dim;
    op.param_tensors = 2;  // q_norm, k_norm
    ops.push_back(op);
  }
  if (m.position == Position::rotary) {
    ops.push_back(rotary_op(x, static_cast<double>(x.tokens * (x.q_heads + x.kv_heads) * x.d)));
  }
  add_attention_core(ops, x, shape);
  ops.push_back(matmul("out_proj", {1, x.tokens, x.h, x.q_heads * x.d}, x.e, m.linear_bias,
                       to_bytes(static_cast<double>(x.tokens * x.q_heads * x.d) * x.e)));
}

}  // namespace stepsim::models::detail
