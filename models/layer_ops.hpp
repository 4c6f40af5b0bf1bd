// The work of one transformer layer (and of the embedding and the logits+loss head) on one
// tensor-parallel rank for one microbatch, op by op: FLOPs, bytes moved through HBM, and the
// activation bytes kept for backward. Counts are per rank: a TP rank holds a/t heads and f/t of
// the MLP; with sequence parallelism norms and dropouts run on s/t tokens. Communication (TP
// all-reduce, SP all-gather/reduce-scatter) is not here: sim/plan inserts it between ops.
//
// Backward is split as Zero Bubble needs it (Qi et al. 2024): bwd_input = gradients w.r.t. the
// op's inputs (B), bwd_weight = gradients w.r.t. its parameters (W). For a matmul each equals the
// forward FLOPs; ops without weights have bwd_weight == 0.
//
// Standard counts (Narayanan et al. SC'21, Korthikanti et al. 2022), per layer without TP:
// QKV 2·b·s·h·(h + 2·g·d); scores and context 2·b·s²·h each (×½ with causal_skip under flash
// attention); output 2·b·s·h²; MLP 4·b·s·h·f (GELU) or 6·b·s·h·f (SwiGLU); logits 2·b·s·h·V.
// Activation bytes per layer add up to Korthikanti's sbh(34 + 5as/h) for a GPT layer
// (tests/models/layer_ops_test.cpp checks every mode). Under context parallelism every count is
// for the rank's s/cp tokens; attention's queries are those tokens, its keys all s.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/model_spec.hpp"

namespace stepsim::models {

/// What is re-run in backward: none; selective = the modules RecomputeModules names (by default
/// the attention core, Korthikanti et al. 2022); full = the whole layer, keeping only its input.
enum class Recompute { none, selective, full };
const char* to_string(Recompute r);

/// The parts of a layer selective recompute re-runs: Megatron-Core's --recompute-modules
/// (megatron/core/transformer/transformer_config.py, default ["core_attn"]). core_attn is
/// checkpointed as a function of its inputs; the others discard a module's output once the op
/// after it has consumed it and re-create it before that op's backward (CheckpointWithoutOutput),
/// so the memory saved is what that next op kept.
struct RecomputeModules {
  bool core_attn = true;     ///< scores, softmax, dropout and context (or the fused attention)
  bool layernorm = false;    ///< the input and pre-MLP norms: their outputs
  bool moe_act = false;      ///< the routed experts' activation: its output, expert_down's input
  bool mla_up_proj = false;  ///< latent attention's up projections and rotary: queries, keys, values
  auto operator<=>(const RecomputeModules&) const = default;
};
/// "core_attn", "layernorm", … joined by "+", in the order above.
std::string to_string(const RecomputeModules& m);
/// Turns on the module Megatron-Core names `name` and returns true; false for any other text.
bool add_recompute_module(RecomputeModules& m, std::string_view name);
/// The names of RecomputeModules' modules, in its order.
std::vector<std::string> recompute_module_names();

/// Which ops `selective` recompute re-runs: Megatron-Core's modules (RecomputeModules), or
/// torchtitan's per-op policy (selective_ac_option = "op"): in each block the outputs of matmuls
/// and of the attention kernel are saved, except every second matmul, and everything else
/// re-runs from the block's input (recompute_policy.cpp apply_torch_op_policy).
enum class SelectivePolicy { modules, torch_ops };
const char* to_string(SelectivePolicy p);

/// Elementwise ops a framework runs as PyTorch eager ops, each a chain of kernels through fp32
/// intermediates, where TransformerEngine, Apex or torch.compile run one fused kernel: what
/// torchtitan's and HuggingFace transformers' Llama-style models run without torch.compile.
struct EagerOps {
  /// RMSNorm as at::rms_norm's composite (nn.RMSNorm, torchtitan and HF's RMSNorm alike): upcast
  /// to fp32, pow, mean, add eps, rsqrt, mul, downcast, weight mul. LayerNorm is one native
  /// kernel either way.
  bool norm = false;
  /// Rotary embedding as torchtitan's apply_rotary_emb: each of q and k upcast to fp32, multiplied
  /// as complex numbers by the frequencies, downcast.
  bool rotary = false;
  /// A gated activation as silu(gate), then its product with up: two kernels, three tensors kept.
  bool activation = false;
  auto operator<=>(const EagerOps&) const = default;
};
/// "norm", "rotary", "activation" joined by "+", in that order; "" when none.
std::string to_string(const EagerOps& e);
/// Turns on the op named `name` and returns true; false for any other text.
bool add_eager_op(EagerOps& e, std::string_view name);
/// The names of EagerOps' ops, in its order.
std::vector<std::string> eager_op_names();

/// FP8 training as NVIDIA Transformer Engine runs it (models/fp8_ops.cpp): the layers' linear
/// GEMMs in FP8 with the scaling recipe named, everything else in 16-bit.
enum class Fp8Recipe {
  none,        ///< every GEMM in 16-bit
  delayed,     ///< scales from an amax history, the amax taken inside the cast kernels
  tensorwise,  ///< current scaling: an amax pass over each tensor before its cast
};
const char* to_string(Fp8Recipe r);

enum class OpKind {
  matmul,           ///< a GEMM with weights: bwd_input (dX) and bwd_weight (dW)
  batched_matmul,   ///< a GEMM of two activations (attention scores/context): both grads are B
  flash_attention,  ///< fused scores+softmax+context (FlashAttention-2)
  cudnn_attention,  ///< the same work in cuDNN's fused attention (TransformerEngine on Hopper+)
  memory,           ///< bandwidth-bound: norms, softmax, activation, dropout+residual, loss
};
const char* to_string(OpKind k);

/// C[m×n] = A[m×k] · B[k×n], `batch` times (a batched GEMM shares the shape).
struct GemmShape {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * static_cast<double>(batch * m) * static_cast<double>(n * k); }
  auto operator<=>(const GemmShape&) const = default;
};

struct LayerShape {
  std::int64_t micro_batch = 1;     ///< b, sequences per microbatch
  std::int64_t seq = 2048;          ///< s, tokens per sequence
  int tp = 1;                       ///< t, tensor-parallel ranks sharing the layer
  bool sequence_parallel = false;   ///< norms/dropouts on s/t tokens (Korthikanti et al.)
  Recompute recompute = Recompute::none;
  RecomputeModules recompute_modules{};  ///< what `selective` re-runs
  SelectivePolicy selective_policy = SelectivePolicy::modules;
  bool flash_attention = true;      ///< fused attention core; false = Megatron's unfused path
  bool cudnn_attention = false;     ///< the fused core is cuDNN's (GpuSpec::cudnn_attention_*)
  /// Flash attention skips the masked upper half of the causal score matrix (FlashAttention-2
  /// does); Megatron's FLOP formula counts the full s². The unfused path always computes all s².
  bool causal_skip = true;
  int bytes_per_element = 2;        ///< activations and weights in 16-bit
  /// Expert-parallel ranks sharing a MoE layer's experts: each holds E/ep of them and receives
  /// the tokens routed to them from the ep ranks of its group (all-to-all, placed by sim/plan).
  int ep = 1;
  /// Expert tensor-parallel degree: 0 = tp (each expert split like the dense MLP), or 1 under
  /// expert parallelism (whole experts; the EP group takes each rank's own s/t tokens).
  int etp = 0;
  /// Context-parallel ranks sharing each sequence (Megatron-Core --context-parallel-size): each
  /// holds s/cp of its tokens (two chunks of s/(2·cp), load-balanced for the causal mask), runs
  /// every op on them, and its attention in cp blocks, one per K/V chunk arriving round the ring
  /// (TransformerEngine's ring attention; the exchange is placed by sim/plan). Requires flash
  /// attention and 2·cp dividing s.
  int cp = 1;
  /// Keys each query attends to in a local-attention layer (sliding window: Mistral, Phi-3,
  /// Gemma-2's even layers; models::attention_window); 0 = every earlier token. Flash and cuDNN
  /// attention skip the blocks outside the window; the unfused path masks them and computes s².
  std::int64_t attention_window = 0;
  /// A MoE model's layer that keeps its dense MLP of width ffn_hidden (models::is_moe_layer false:
  /// DeepSeek's first layers).
  bool dense_mlp = false;
  /// The layer's linear GEMMs (not the router, attention core, embedding or logits) in FP8, with
  /// their input and gradient casts; none = all in 16-bit.
  Fp8Recipe fp8 = Fp8Recipe::none;
  /// FP8 GEMMs need transposed FP8 copies of their inputs (hw::GpuSpec::fp8_transposes).
  bool fp8_transposes = true;
  /// Norms, rotary and the gated activation as eager kernel chains rather than fused kernels.
  EagerOps eager{};

  auto operator<=>(const LayerShape&) const = default;
};

struct OpCost {
  std::string name;                  ///< "qkv", "attention", "mlp_down", …
  OpKind kind = OpKind::memory;
  GemmShape gemm;                    ///< forward GEMM of (batched_)matmul ops; empty otherwise
  double fwd_flops = 0;
  double bwd_input_flops = 0;        ///< B: gradients of the op's inputs
  double bwd_weight_flops = 0;       ///< W: gradients of its parameters
  double fwd_bytes = 0;              ///< HBM bytes read + written
  double bwd_input_bytes = 0;
  double bwd_weight_bytes = 0;
  std::int64_t activation_bytes = 0; ///< kept from forward until this op's backward
  std::int64_t params = 0;           ///< parameters this rank holds for the op
  /// Tensors those parameters are held in (a weight, its bias; one weight per expert): where a
  /// framework issues a collective per parameter tensor, one each.
  int param_tensors = 0;
  bool recompute = false;            ///< forward re-runs before backward (recompute mode)
  /// The part of its forward FLOPs (and time) that re-runs: below 1 where a fused op stands for
  /// several GEMMs and a per-op policy re-runs only some of them.
  double recompute_share = 1.0;
  bool expert = false;               ///< its parameters are routed experts' (split over EP)
  bool fp8 = false;                  ///< a GEMM that runs at the FP8 rate (LayerShape::fp8)
  bool fp8_cast = false;             ///< a cast or amax kernel of FP8 training
  int fwd_kernels = 1;               ///< kernel launches, for launch overhead
  int bwd_kernels = 1;               ///< B and W launches together
  /// Framework calls the host thread makes to issue the forward (torch ops, views, autograd
  /// function entries; framework_calls() in layer_ops.cpp). Backward issues one autograd node
  /// per kernel, so its calls are bwd_kernels.
  int fwd_host_calls = 1;

  bool is_matmul() const { return kind == OpKind::matmul || kind == OpKind::batched_matmul; }
};

/// Requires: shape.tp divides heads and ffn_hidden; micro_batch, seq >= 1.
std::vector<OpCost> layer_ops(const ModelSpec& m, const LayerShape& shape);
/// First stage: token (+ learned position) embedding lookup and its dropout.
std::vector<OpCost> embedding_ops(const ModelSpec& m, const LayerShape& shape);
/// Last stage: final norm, logits GEMM (vocab split over TP), cross-entropy loss.
std::vector<OpCost> logits_ops(const ModelSpec& m, const LayerShape& shape);
/// One multi-token-prediction depth's ops before its transformer layer (Megatron-Core
/// multi_token_prediction.py MultiTokenPredictionLayer; DeepSeek-V3 report §2.2): the next
/// tokens' embedding lookup, enorm and hnorm, and eh_proj (2h → h over both). Its layer is
/// layer_ops() of the last layer's shape; its output head and loss are logits_ops() again.
std::vector<OpCost> mtp_input_ops(const ModelSpec& m, const LayerShape& shape);

/// The kernels that add one microbatch's weight gradients into the gradients kept across a step's
/// microbatches, where the framework runs them apart from the weight-gradient GEMM: `params`
/// elements in `tensors` tensors (one elementwise add each), each reading the new `grad_bytes`
/// gradient and reading and writing the kept `kept_bytes` one. `cast_first`: the new gradient is
/// first cast to the kept dtype by a kernel of its own, as DeepSpeed's BF16_Optimizer does
/// (bf16_optimizer.py: hp_grad.add_(lp.grad.to(fp32))): that kernel reads `grad_bytes` and writes
/// `kept_bytes`, and the add reads the copy at `kept_bytes`. A backward-only memory op.
OpCost gradient_accumulation_op(std::int64_t params, int tensors, int grad_bytes, int kept_bytes,
                                bool cast_first = false);

/// Bytes one rank sends in a MoE layer's token dispatch all-to-all under expert parallelism (the
/// nccl-tests size of the alltoall): its (s/t with SP) tokens, k copies each, h wide, at the
/// busiest rank's load_imbalance. The combine all-to-all moves the same back. 0 when ep == 1.
std::int64_t moe_dispatch_bytes(const ModelSpec& m, const LayerShape& shape);
/// The chance that a token routes at least one of its top_k experts to a given one of `servers`
/// servers, each holding E/servers experts, under uniform routing: 1 − C(E − E/servers, k)/C(E, k).
double moe_server_share(const ModelSpec& m, int servers);

/// Bytes one rank sends in one step of ring attention under context parallelism: the K and V of
/// its s/cp tokens, its (g/t) KV heads wide. 0 when cp == 1.
std::int64_t cp_kv_bytes(const ModelSpec& m, const LayerShape& shape);
/// Payload of latent attention's TP collective before the up projections: the rank's b·s/cp
/// tokens of the query latent (the hidden state without one), the KV latent and the shared
/// rotary key — all-gathered under SP, their gradients all-reduced without it. 0 without MLA.
std::int64_t mla_latent_bytes(const ModelSpec& m, const LayerShape& shape);

/// Sums over ops (one layer's, or a stage's concatenated lists).
struct OpTotals {
  double fwd_flops = 0, bwd_input_flops = 0, bwd_weight_flops = 0, recompute_flops = 0;
  double fwd_bytes = 0, bwd_bytes = 0;
  std::int64_t activation_bytes = 0, params = 0;
  std::int64_t expert_params = 0;  ///< of params, the routed experts' (OpCost::expert)
};
OpTotals sum_ops(const std::vector<OpCost>& ops);

}  // namespace stepsim::models
