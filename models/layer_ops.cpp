#include "models/layer_ops.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>

#include "models/op_builders.hpp"

namespace stepsim::models {

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

namespace {
// Each flag of a set of named switches beside its name: RecomputeModules' Megatron-Core module
// names, EagerOps' op names.
template <typename Modules>
auto named_flags(Modules& m) requires std::is_same_v<std::remove_const_t<Modules>, RecomputeModules> {
  return std::array{std::pair{&m.core_attn, std::string_view("core_attn")}, std::pair{&m.layernorm, std::string_view("layernorm")},
                    std::pair{&m.moe_act, std::string_view("moe_act")}, std::pair{&m.mla_up_proj, std::string_view("mla_up_proj")}};
}
template <typename Ops>
auto named_flags(Ops& e) requires std::is_same_v<std::remove_const_t<Ops>, EagerOps> {
  return std::array{std::pair{&e.norm, std::string_view("norm")}, std::pair{&e.rotary, std::string_view("rotary")},
                    std::pair{&e.activation, std::string_view("activation")}};
}

template <typename Set>
std::string joined(const Set& set) {
  std::string out;
  for (const auto& [on, name] : named_flags(set))
    if (*on) out += (out.empty() ? "" : "+") + std::string(name);
  return out;
}

template <typename Set>
std::vector<std::string> names() {
  Set set;
  std::vector<std::string> out;
  for (const auto& [flag, name] : named_flags(set)) out.emplace_back(name);
  return out;
}

template <typename Set>
bool turn_on(Set& set, std::string_view name) {
  for (const auto& [flag, known] : named_flags(set))
    if (name == known) return *flag = true;
  return false;
}
}  // namespace

std::string to_string(const EagerOps& e) { return joined(e); }
std::vector<std::string> eager_op_names() { return names<EagerOps>(); }
bool add_eager_op(EagerOps& e, std::string_view name) { return turn_on(e, name); }

std::string to_string(const RecomputeModules& m) { return joined(m); }
std::vector<std::string> recompute_module_names() { return names<RecomputeModules>(); }
bool add_recompute_module(RecomputeModules& m, std::string_view name) { return turn_on(m, name); }

const char* to_string(SelectivePolicy p) { return p == SelectivePolicy::modules ? "modules" : "torch_ops"; }

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

using detail::Dims;
using detail::dims_of;
using detail::I64;
using detail::matmul;
using detail::memory_op;
using detail::norm_op;
using detail::to_bytes;

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
  // An eager op chain (EagerOps) makes one call per kernel it launches.
  for (auto& op : ops) op.fwd_host_calls = std::max(framework_calls(op.name), op.fwd_kernels);
  return ops;
}

}  // namespace

std::vector<OpCost> layer_ops(const ModelSpec& m, const LayerShape& shape) {
  const Dims x = dims_of(m, shape);
  const double stored_norm_out = static_cast<double>(x.norm_tokens * x.h) * x.e;
  std::vector<OpCost> ops;
  ops.push_back(norm_op("input_norm", m, x));
  detail::add_attention(ops, m, x, shape);
  // Sandwich norms (Gemma-2) run on the reduced output of out_proj and mlp_down, before the add.
  if (m.sandwich_norm) ops.push_back(norm_op("attn_out_norm", m, x));
  ops.push_back(detail::dropout_add_op("attn_residual", x));
  ops.push_back(norm_op("post_attn_norm", m, x));
  add_mlp(ops, m, x, shape);
  if (m.sandwich_norm) ops.push_back(norm_op("mlp_out_norm", m, x));
  ops.push_back(detail::dropout_add_op("mlp_residual", x));
  detail::apply_selective_recompute(ops, m, x, shape);
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
  ops = with_host_calls(std::move(ops));
  detail::apply_fp8(ops, x.e, shape.fp8, shape.fp8_transposes);
  return ops;
}

namespace {


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
  // Eager (EagerOps::activation): silu reads the gate and writes f, the product reads that and
  // up and writes f (5f fwd); backward, the product's two gradients (read 2f, write f each) and
  // silu's (read 2f, write f): 9f; kept: the gate (silu's input), silu's output and up (3f).
  const double in = (gated ? 2 : 1) * ffn_elements * x.e, out = ffn_elements * x.e;
  const std::string act = to_string(m.activation);
  const std::string name = prefix == "mlp" ? act : prefix + "_" + act;
  if (gated && x.eager.activation) {
    ops.push_back(memory_op(name, 5 * out, 9 * out, to_bytes(3 * out), 2));
    ops.back().bwd_kernels = 3;
  } else {
    ops.push_back(memory_op(name, in + out, 2 * in + out, to_bytes(in)));
  }
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
void add_moe(std::vector<OpCost>& ops, const ModelSpec& m, const Dims& x, int ep, bool fp8) {
  const MoeSpec& moe = m.moe;
  // Tokens an EP group gathers per rank: all T of its TP group (the TP all-gather after the
  // all-to-all, each rank 1/t of every expert), or, with whole experts (etp 1, MoE parallel
  // folding), each rank's own s/t.
  const I64 gathered = x.etp < x.tp ? x.norm_tokens : x.tokens;
  const I64 experts = moe.experts, local_experts = experts / ep, routed = gathered * moe.top_k * ep;
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
    // The shared expert reads the layer's norm output, the tensor the router already keeps (under
    // SP its column-parallel linear saves the rank's own s/t tokens and gathers them again in
    // backward, as every Megatron linear does): in 16-bit it keeps nothing of its own. In FP8,
    // TransformerEngine keeps its quantized copy of that input (apply_fp8 sizes it).
    add_mlp_ops(ops, m, x, "shared", 1, x.tokens, moe.shared_ffn / x.tp, fp8 ? local_in : 0);
    if (moe.shared_gate) ops.push_back(matmul("shared_gate", {1, x.tokens, 1, x.h}, x.e, false, 0));
  }
  // What this rank permutes and unpermutes: all T tokens' k copies after the TP gather without
  // EP; its own (s/t under SP) tokens' copies before the all-to-all with it.
  const double own = ep > 1 ? local_in : input;
  const double own_copies = static_cast<double>(moe.top_k) * own;
  const double arrived = static_cast<double>(local_experts * rows) * h_bytes;
  const double permuted = ep > 1 ? own_copies : arrived;
  ops.push_back(memory_op("moe_permute", own + permuted, permuted + own, 0));
  const std::size_t first_expert_op = ops.size();
  add_mlp_ops(ops, m, x, "expert", local_experts, rows, moe.expert_ffn / x.etp, arrived);
  for (std::size_t i = first_expert_op; i < ops.size(); ++i) ops[i].expert = true;
  // Backward needs the expert outputs for the gates' gradient (d gate = <d out, expert out>).
  ops.push_back(memory_op("moe_unpermute", permuted + own, own + 2 * permuted, to_bytes(permuted)));
}

void add_mlp(std::vector<OpCost>& ops, const ModelSpec& m, const Dims& x, const LayerShape& shape) {
  if (m.moe.enabled() && !shape.dense_mlp) return add_moe(ops, m, x, shape.ep, shape.fp8 != Fp8Recipe::none);
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
  op.param_tensors = tables;
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

std::vector<OpCost> mtp_input_ops(const ModelSpec& m, const LayerShape& shape) {
  const Dims x = dims_of(m, shape);
  const double out = static_cast<double>(x.norm_tokens * x.h) * x.e;
  // The next tokens' rows of the embedding table, as embedding_ops gathers them (no positions,
  // no dropout); the table is the model's, its parameters counted once by the plan.
  OpCost lookup = memory_op("mtp_embedding", 2 * out, 0, 0);
  lookup.bwd_weight_bytes = 3 * out;
  std::vector<OpCost> ops{lookup, norm_op("mtp_enorm", m, x), norm_op("mtp_hnorm", m, x)};
  // eh_proj: a column-parallel 2h → h linear over the two normed inputs side by side, keeping
  // that 2h-wide input; a TransformerEngine linear, so in FP8 under FP8 training.
  ops.push_back(matmul("mtp_eh_proj", {1, x.tokens, x.h / x.tp, 2 * x.h}, x.e, false, to_bytes(2 * out)));
  ops = with_host_calls(std::move(ops));
  detail::apply_fp8(ops, x.e, shape.fp8, shape.fp8_transposes);
  return ops;
}

std::int64_t moe_dispatch_bytes(const ModelSpec& m, const LayerShape& shape) {
  if (!m.moe.enabled() || shape.dense_mlp || shape.ep == 1) return 0;
  const Dims x = dims_of(m, shape);
  const double copies = static_cast<double>(x.norm_tokens * m.moe.top_k * x.h) * x.e;
  return static_cast<I64>(std::ceil(copies * (m.moe.capacity_factor > 0 ? 1.0 : m.moe.load_imbalance)));
}

double moe_server_share(const ModelSpec& m, int servers) {
  const double experts = m.moe.experts, elsewhere = experts - experts / servers;
  double none = 1;  // C(E − E/S, k) / C(E, k) = ∏_{i<k} (E − E/S − i) / (E − i)
  for (int i = 0; i < m.moe.top_k; ++i) none *= std::max(0.0, elsewhere - i) / (experts - i);
  return 1 - none;
}

std::int64_t cp_kv_bytes(const ModelSpec& m, const LayerShape& shape) {
  if (shape.cp == 1) return 0;
  const Dims x = dims_of(m, shape);
  return x.tokens * x.kv_heads * (x.d + x.dv) * static_cast<I64>(x.e);
}

std::int64_t mla_latent_bytes(const ModelSpec& m, const LayerShape& shape) {
  if (!m.mla.enabled()) return 0;
  const Dims x = dims_of(m, shape);
  const I64 query = m.mla.q_lora_rank > 0 ? m.mla.q_lora_rank : x.h;
  return x.tokens * (query + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * static_cast<I64>(x.e);
}

OpCost gradient_accumulation_op(std::int64_t params, int tensors, int grad_bytes, int kept_bytes, bool cast_first) {
  const double per_param = cast_first ? grad_bytes + 4.0 * kept_bytes : grad_bytes + 2.0 * kept_bytes;
  const int kernels = std::max(1, tensors) * (cast_first ? 2 : 1);
  OpCost op = memory_op("grad_accumulate", 0, static_cast<double>(params) * per_param, 0, kernels);
  op.fwd_kernels = 0;
  op.fwd_host_calls = 0;
  return op;
}

OpTotals sum_ops(const std::vector<OpCost>& ops) {
  OpTotals t;
  for (const auto& op : ops) {
    t.fwd_flops += op.fwd_flops;
    t.bwd_input_flops += op.bwd_input_flops;
    t.bwd_weight_flops += op.bwd_weight_flops;
    if (op.recompute) t.recompute_flops += op.fwd_flops * op.recompute_share;
    t.fwd_bytes += op.fwd_bytes;
    t.bwd_bytes += op.bwd_input_bytes + op.bwd_weight_bytes;
    t.activation_bytes += op.activation_bytes;
    t.params += op.params;
    if (op.expert) t.expert_params += op.params;
  }
  return t;
}

}  // namespace stepsim::models
