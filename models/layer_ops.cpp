#include "models/layer_ops.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace stepsim::models {

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::matmul: return "matmul";
    case OpKind::batched_matmul: return "batched_matmul";
    case OpKind::flash_attention: return "flash_attention";
    case OpKind::cudnn_attention: return "cudnn_attention";
    case OpKind::memory: return "memory";
  }
  return "?";
}

namespace {

using I64 = std::int64_t;

// The sizes every op of a layer needs, per TP rank.
struct Dims {
  double e;       // bytes per element
  I64 b, s;       // s: the whole sequence (attention's keys)
  int cp;         // context-parallel ranks sharing it
  I64 tokens;     // T = b·s/cp, rows of every GEMM
  I64 norm_tokens;  // T/t with sequence parallelism, else T: rows of norms and dropouts
  I64 h, d;
  I64 q_heads;    // a/t
  I64 kv_heads;   // g/t (at least one: KV heads are replicated when g < t)
  I64 ffn;        // f/t
  bool dropout;
  int tp;
};

Dims dims_of(const ModelSpec& m, const LayerShape& shape) {
  if (shape.tp < 1 || m.heads % shape.tp != 0 || m.ffn_hidden % shape.tp != 0 ||
      m.moe.expert_ffn % shape.tp != 0 || m.moe.shared_ffn % shape.tp != 0 || shape.ep < 1 ||
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
  x.d = m.head_dim;
  x.q_heads = m.heads / shape.tp;
  x.kv_heads = std::max<I64>(1, m.kv_heads / shape.tp);
  x.ffn = m.ffn_hidden / shape.tp;
  x.dropout = m.dropout;
  x.tp = shape.tp;
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
  op.bwd_kernels = 2;
  return op;
}

// A bandwidth-bound op: `fwd` and `bwd` bytes moved, `stored` bytes kept for backward.
OpCost memory_op(std::string name, double fwd, double bwd, I64 stored, int kernels = 1) {
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
OpCost norm_op(std::string name, const ModelSpec& m, const Dims& x) {
  const double elements = static_cast<double>(x.norm_tokens * x.h);
  OpCost op = memory_op(std::move(name), 2 * elements * x.e, 3 * elements * x.e,
                        to_bytes(elements * x.e));
  op.params = norm_params(m);
  op.bwd_kernels = 2;
  return op;
}

// Residual add with hidden dropout (Megatron's fused bias-dropout-add). Keeps the 1-byte mask.
OpCost dropout_add_op(std::string name, const Dims& x) {
  const double elements = static_cast<double>(x.norm_tokens * x.h);
  const double mask = x.dropout ? elements : 0;
  return memory_op(std::move(name), 3 * elements * x.e + mask, 3 * elements * x.e + mask,
                   to_bytes(mask));
}

void add_attention_core(std::vector<OpCost>& ops, const Dims& x, const LayerShape& shape);
void add_mlp(std::vector<OpCost>& ops, const ModelSpec& m, const Dims& x, const LayerShape& shape);

// Calls the framework's CPU thread makes in one op's forward, read off Megatron-LM's
// ParallelTransformerLayer (megatron/model/transformer.py, 2021-23, as Megatron-DeepSpeed runs it):
// every torch op, view, copy and autograd-function entry costs host time whether or not it
// launches a kernel. E.g. qkv = copy_to_tensor_model_parallel_region, linear, view, split (2);
// attn_scores = 3 views, the global buffer, baddbmm, 2 transposes; mlp_residual = the two
// torch.tensor(0.0) placeholders, expand_as, bias_dropout_add. The TP collective call sits in
// out_proj and mlp_down, and is made (returning at once) without TP too.
int framework_calls(const std::string& name) {
  static const std::vector<std::pair<std::string, int>> kCalls{
      {"input_norm", 1}, {"qkv", 5}, {"rotary", 4}, {"attention", 4}, {"attn_scores", 7},
      {"attn_softmax", 3}, {"attn_softmax_torch", 6}, {"attn_dropout", 4}, {"attn_context", 7}, {"out_proj", 2},
      {"attn_residual", 3}, {"post_attn_norm", 1}, {"mlp_up", 2}, {"gelu", 1}, {"swiglu", 2}, {"geglu", 2},
      {"mlp_down", 2}, {"mlp_residual", 5}, {"embedding", 4}, {"final_norm", 1}, {"logits", 3},
      // Megatron's vocab-parallel cross entropy: max, its all-reduce, subtract, exp, sum, its
      // all-reduce, the target gather (mask, index, view), log, mean.
      {"cross_entropy", 12},
      // Megatron-Core's MoE (megatron/core/transformer/moe): the router's linear and view; its
      // topk_softmax_with_capacity (topk, softmax, zeros_like, scatter, bool) and the load-balancing
      // loss (softmax, two sums, mul, scale, the autograd scaler); moe_utils.permute (bool, T,
      // contiguous, arange, unsqueeze, expand, masked_select, index_select) and unpermute (zeros,
      // masked_select of the gates, mul, scatter_add, view).
      {"qk_norm", 2}, {"router", 2}, {"router_topk", 11}, {"moe_permute", 8}, {"moe_unpermute", 5}};
  for (const auto& [op, calls] : kCalls)
    if (op == name) return calls;
  return 1;
}

std::vector<OpCost> with_host_calls(std::vector<OpCost> ops) {
  for (auto& op : ops) op.fwd_host_calls = framework_calls(op.name);
  return ops;
}

}  // namespace

std::vector<OpCost> layer_ops(const ModelSpec& m, const LayerShape& shape) {
  const Dims x = dims_of(m, shape);
  const double stored_norm_out = static_cast<double>(x.norm_tokens * x.h) * x.e;
  const I64 qkv_width = (x.q_heads + 2 * x.kv_heads) * x.d;
  std::vector<OpCost> ops;
  ops.push_back(norm_op("input_norm", m, x));
  ops.push_back(matmul("qkv", {1, x.tokens, qkv_width, x.h}, x.e, m.qkv_bias, to_bytes(stored_norm_out)));
  if (m.qk_norm) {  // Qwen3: an RMSNorm over each query and key head; keeps its input
    const double normed = static_cast<double>(x.tokens * (x.q_heads + x.kv_heads) * x.d) * x.e;
    OpCost op = memory_op("qk_norm", 2 * normed, 3 * normed, to_bytes(normed), 2);
    op.params = 2 * m.head_dim;
    ops.push_back(op);
  }
  if (m.position == Position::rotary) {
    const double rotated = static_cast<double>(x.tokens * (x.q_heads + x.kv_heads) * x.d) * x.e;
    ops.push_back(memory_op("rotary", 2 * rotated, 2 * rotated, 0));
  }
  add_attention_core(ops, x, shape);
  ops.push_back(matmul("out_proj", {1, x.tokens, x.h, x.q_heads * x.d}, x.e, m.linear_bias,
                       to_bytes(static_cast<double>(x.tokens * x.q_heads * x.d) * x.e)));
  // Sandwich norms (Gemma-2) run on the reduced output of out_proj and mlp_down, before the add.
  if (m.sandwich_norm) ops.push_back(norm_op("attn_out_norm", m, x));
  ops.push_back(dropout_add_op("attn_residual", x));
  ops.push_back(norm_op("post_attn_norm", m, x));
  add_mlp(ops, m, x, shape);
  if (m.sandwich_norm) ops.push_back(norm_op("mlp_out_norm", m, x));
  ops.push_back(dropout_add_op("mlp_residual", x));
  // Row-parallel biases (out_proj, mlp_down: n = h) are replicated, column-parallel ones split;
  // matmul() counts n biases either way, which is right for both.
  if (shape.recompute == Recompute::full) {
    // Korthikanti et al. 2022 §4: full recompute keeps only the layer input (2sbh, /t with SP).
    for (auto& op : ops) {
      op.recompute = true;
      op.activation_bytes = 0;
    }
    ops.front().activation_bytes = to_bytes(stored_norm_out);
  }
  return with_host_calls(std::move(ops));
}

namespace {

void add_flash_attention(std::vector<OpCost>& ops, const Dims& x, const LayerShape& shape) {
  const double q = static_cast<double>(x.tokens * x.q_heads * x.d) * x.e;
  const double kv = static_cast<double>(x.tokens * x.kv_heads * x.d) * x.e;
  // Scores Q·Kᵀ and context P·V: 2·b·s²·(a/t)·d each; FlashAttention-2 skips the masked half
  // (Dao 2023). Its backward recomputes the scores: 5 GEMMs to the forward's 2, so 2.5×.
  // Under context parallelism the rank's s/cp queries meet all s keys, one K/V chunk per ring
  // step: cp blocks of (s/cp)² each, the causal half skipped on average, as the load-balanced
  // chunks give every rank the same share (Megatron-Core's get_batch_on_this_cp_rank).
  const double full = 4.0 * static_cast<double>(x.b * x.q_heads * x.d) * static_cast<double>(x.s * x.s) / x.cp;
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
    op.fwd_bytes = 2 * q + 2 * kv;
    op.bwd_input_bytes = 2 * (3 * q + 2 * kv);
    // Keeps Q, K, V (6sbh/t for MHA); O is out_proj's stored input; no s² term (Korthikanti).
    // Ring attention keeps only the rank's own chunk: backward circulates K/V again.
    op.activation_bytes = step == 0 ? to_bytes(q + 2 * kv) : 0;
    op.recompute = shape.recompute == Recompute::selective;  // Megatron checkpoints core attention
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
  const double q = static_cast<double>(x.tokens * x.q_heads * x.d) * x.e;
  const double kv = static_cast<double>(x.tokens * x.kv_heads * x.d) * x.e;
  const double scores = static_cast<double>(x.b * x.q_heads) * static_cast<double>(x.s * x.s);
  const bool selective = shape.recompute == Recompute::selective;
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
  ops.push_back(bmm("attn_scores", {x.b * x.q_heads, x.s, x.s, x.d}, q + kv + scores * x.e,
                    scores * x.e + 2 * (q + kv), q + kv));
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
  OpCost context = bmm("attn_context", {x.b * x.q_heads, x.s, x.d, x.s}, scores * x.e + kv + 3 * q,
                       2 * scores * x.e + 2 * q + 2 * kv, kv + probs_stored);
  context.fwd_kernels = 2;  // the bmm and the permute copy
  ops.push_back(context);
}

void add_attention_core(std::vector<OpCost>& ops, const Dims& x, const LayerShape& shape) {
  if (shape.flash_attention) add_flash_attention(ops, x, shape);
  else add_unfused_attention(ops, x, shape);
}

// An MLP of width `ffn` (per TP rank) over `groups` × `rows` tokens: up (and gate), activation,
// down. `prefix` names its ops: "mlp" for the dense MLP, "expert", "shared".
void add_mlp_ops(std::vector<OpCost>& ops, const ModelSpec& m, const Dims& x, const std::string& prefix,
                 I64 groups, I64 rows, I64 ffn, double stored_input) {
  const bool gated = is_gated(m.activation);
  const I64 up_width = gated ? 2 * ffn : ffn;
  const double ffn_elements = static_cast<double>(groups * rows * ffn);
  ops.push_back(matmul(prefix + "_up", {groups, rows, up_width, x.h}, x.e, m.linear_bias, to_bytes(stored_input)));
  // GELU (fused with the bias): reads and writes f; keeps its input (8sbh/t for f = 4h).
  // SwiGLU / GeGLU: reads gate and up, writes act(gate)·up; keeps both inputs.
  const double in = (gated ? 2 : 1) * ffn_elements * x.e, out = ffn_elements * x.e;
  const std::string act = to_string(m.activation);
  ops.push_back(memory_op(prefix == "mlp" ? act : prefix + "_" + act, in + out, 2 * in + out, to_bytes(in)));
  ops.push_back(matmul(prefix + "_down", {groups, rows, x.h, ffn}, x.e, m.linear_bias, to_bytes(out)));
}

// A MoE MLP as Megatron-Core runs it without expert parallelism (megatron/core/transformer/moe:
// TopKRouter, MoEAllGatherTokenDispatcher, GroupedMLP). The router scores the rank's own tokens
// (s/t of them under SP, before the dispatcher's all-gather; sim/plan puts the TP gather after
// "router_topk"); every TP rank then runs its 1/t slice of every expert on all T tokens routed
// to it: permute copies each token's input to its k experts (T·k rows), one grouped GEMM per
// matrix runs the E experts, unpermute sums each token's k outputs weighted by its gates.
// Under expert parallelism (MoEAlltoAllTokenDispatcher) the rank permutes only its own tokens,
// the all-to-all sends them to the ranks of their experts, and with TP they are then gathered
// over TP (sequence parallelism is required); the rank runs its E/ep experts on the rows that
// arrive from the ep ranks, ep·T·k/E each, and the way back mirrors it.
void add_moe(std::vector<OpCost>& ops, const ModelSpec& m, const Dims& x, int ep) {
  const MoeSpec& moe = m.moe;
  const I64 experts = moe.experts, local_experts = experts / ep, routed = x.tokens * moe.top_k * ep;
  // Rows each local expert runs: the mean, T·k·ep/E, dropless — at the busiest rank's load under
  // EP (without it the rank runs every expert and the sum is T·k) — or its padded buffer of
  // capacity_factor times the mean (tokens past it are dropped, so imbalance cannot exceed it).
  const double mean = static_cast<double>(routed) / static_cast<double>(experts);
  const double load = moe.capacity_factor > 0 ? moe.capacity_factor : ep > 1 ? moe.load_imbalance : 1.0;
  const I64 rows = load == 1.0 ? (routed + experts - 1) / experts : static_cast<I64>(std::ceil(load * mean));
  const double h_bytes = static_cast<double>(x.h) * x.e;
  const double local_in = static_cast<double>(x.norm_tokens) * h_bytes;
  OpCost router = matmul("router", {1, x.norm_tokens, experts, x.h}, x.e, false, to_bytes(local_in));
  ops.push_back(router);
  // Softmax over E logits and top-k in fp32 (moe_router_dtype defaults aside, the scores are
  // upcast): reads the logits, writes scores and k gates with their indices; keeps the scores.
  const double scores = static_cast<double>(x.norm_tokens * experts);
  ops.push_back(memory_op("router_topk", scores * (x.e + 4 + 4), scores * (4 + 4 + x.e), to_bytes(4 * scores), 2));
  const double input = static_cast<double>(x.tokens) * h_bytes;
  if (moe.shared_ffn > 0) {
    add_mlp_ops(ops, m, x, "shared", 1, x.tokens, moe.shared_ffn / x.tp, input);
    if (moe.shared_gate) ops.push_back(matmul("shared_gate", {1, x.tokens, 1, x.h}, x.e, false, to_bytes(input)));
  }
  // What this rank permutes and unpermutes: all T tokens' k copies after the TP gather without
  // EP; its own (s/t under SP) tokens' copies before the all-to-all with it.
  const double own = ep > 1 ? local_in : input;
  const double own_copies = static_cast<double>(moe.top_k) * own;
  const double arrived = static_cast<double>(local_experts * rows) * h_bytes;
  const double permuted = ep > 1 ? own_copies : arrived;
  ops.push_back(memory_op("moe_permute", own + permuted, permuted + own, 0));
  const std::size_t first_expert_op = ops.size();
  add_mlp_ops(ops, m, x, "expert", local_experts, rows, moe.expert_ffn / x.tp, arrived);
  for (std::size_t i = first_expert_op; i < ops.size(); ++i) ops[i].expert = true;
  // Backward needs the expert outputs for the gates' gradient (d gate = <d out, expert out>).
  ops.push_back(memory_op("moe_unpermute", permuted + own, own + 2 * permuted, to_bytes(permuted)));
}

void add_mlp(std::vector<OpCost>& ops, const ModelSpec& m, const Dims& x, const LayerShape& shape) {
  if (m.moe.enabled() && !shape.dense_mlp) return add_moe(ops, m, x, shape.ep);
  const double stored_norm_out = static_cast<double>(x.norm_tokens * x.h) * x.e;
  add_mlp_ops(ops, m, x, "mlp", 1, x.tokens, x.ffn, stored_norm_out);
}

}  // namespace

std::vector<OpCost> embedding_ops(const ModelSpec& m, const LayerShape& shape) {
  const Dims x = dims_of(m, shape);
  const double out = static_cast<double>(x.norm_tokens * x.h) * x.e;
  const int tables = m.position == Position::learned ? 2 : 1;
  // Gathers `tables` rows per token and writes their sum; the dropout mask is kept.
  OpCost op = memory_op("embedding", (tables + 1) * out, 0, x.dropout ? to_bytes(out / x.e) : 0);
  op.bwd_weight_bytes = (2 * tables + 1) * out;  // scatter-add of the output gradient into the tables
  op.params = (m.vocab / x.tp + (tables == 2 ? m.max_seq : 0)) * m.hidden;
  return with_host_calls({op});
}

std::vector<OpCost> logits_ops(const ModelSpec& m, const LayerShape& shape) {
  const Dims x = dims_of(m, shape);
  std::vector<OpCost> ops{norm_op("final_norm", m, x)};
  const I64 vocab_shard = m.vocab / x.tp;
  // With tied embeddings this is the embedding matrix again (a copy on the last stage under PP).
  ops.push_back(matmul("logits", {1, x.tokens, vocab_shard, x.h}, x.e, false,
                       to_bytes(static_cast<double>(x.norm_tokens * x.h) * x.e)));
  // Megatron's vocab-parallel cross entropy: logits cast to fp32 (4sbV/t kept, Korthikanti §4.3),
  // a max and a sum-exp pass; backward writes softmax − one-hot in 16-bit.
  const double elements = static_cast<double>(x.tokens * vocab_shard);
  ops.push_back(memory_op("cross_entropy", elements * (x.e + 4 + 2 * 4), elements * (4 + x.e),
                          to_bytes(4 * elements), 3));
  return with_host_calls(std::move(ops));
}

std::int64_t moe_dispatch_bytes(const ModelSpec& m, const LayerShape& shape) {
  if (!m.moe.enabled() || shape.dense_mlp || shape.ep == 1) return 0;
  const Dims x = dims_of(m, shape);
  const double copies = static_cast<double>(x.norm_tokens * m.moe.top_k * x.h) * x.e;
  return static_cast<I64>(std::ceil(copies * (m.moe.capacity_factor > 0 ? 1.0 : m.moe.load_imbalance)));
}

std::int64_t cp_kv_bytes(const ModelSpec& m, const LayerShape& shape) {
  if (shape.cp == 1) return 0;
  const Dims x = dims_of(m, shape);
  return 2 * x.tokens * x.kv_heads * x.d * static_cast<I64>(x.e);
}

OpTotals sum_ops(const std::vector<OpCost>& ops) {
  OpTotals t;
  for (const auto& op : ops) {
    t.fwd_flops += op.fwd_flops;
    t.bwd_input_flops += op.bwd_input_flops;
    t.bwd_weight_flops += op.bwd_weight_flops;
    if (op.recompute) t.recompute_flops += op.fwd_flops;
    t.fwd_bytes += op.fwd_bytes;
    t.bwd_bytes += op.bwd_input_bytes + op.bwd_weight_bytes;
    t.activation_bytes += op.activation_bytes;
    t.params += op.params;
    if (op.expert) t.expert_params += op.params;
  }
  return t;
}

}  // namespace stepsim::models
