#include <doctest/doctest.h>

#include "models/flops.hpp"
#include "models/layer_ops.hpp"
#include "models/memory.hpp"
#include "models/model_yaml.hpp"
#include "tests/models/op_lookup.hpp"

namespace stepsim::models {
namespace {

// A GPT layer as in Megatron/Korthikanti: h 6144, a 64, f 4h, V 51200, dropout, biases.
ModelSpec gpt22b() { return load_model("korthikanti-22b"); }

double op_flops(const std::vector<OpCost>& ops, const std::string& name) {
  for (const auto& op : ops)
    if (op.name == name) return op.fwd_flops;
  FAIL("no op " << name);
  return 0;
}

TEST_CASE("a GPT layer's F, B and W FLOPs are Zero Bubble's Table 1 formulas") {
  // Qi et al. 2024 Table 1: F = sbh(24h + 4s), B = sbh(24h + 8s), W = sbh(24h) per layer
  // (Megatron's unfused attention computes all s² scores).
  const ModelSpec m = gpt22b();
  const double s = 2048, b = 4, h = 6144;
  const OpTotals t = sum_ops(layer_ops(m, {.micro_batch = 4, .seq = 2048, .flash_attention = false}));
  CHECK(t.fwd_flops == doctest::Approx(s * b * h * (24 * h + 4 * s)).epsilon(1e-12));
  CHECK(t.bwd_input_flops == doctest::Approx(s * b * h * (24 * h + 8 * s)).epsilon(1e-12));
  CHECK(t.bwd_weight_flops == doctest::Approx(s * b * h * 24 * h).epsilon(1e-12));
}

TEST_CASE("standard per-op FLOP counts: GQA, SwiGLU, causal flash attention, logits") {
  const ModelSpec m = load_model("llama-3-8b");  // h 4096, a 32, g 8, d 128, f 14336, V 128256
  const double b = 2, s = 4096, h = 4096, g = 8, d = 128, f = 14336, V = 128256;
  const LayerShape shape{.micro_batch = 2, .seq = 4096, .tp = 2};
  const auto ops = layer_ops(m, shape);
  // Per TP rank (t = 2): QKV 2bsh(h + 2gd)/t, output 2bsh²/t, MLP 6bshf/t (SwiGLU).
  CHECK(op_flops(ops, "qkv") == doctest::Approx(2 * b * s * h * (h + 2 * g * d) / 2));
  CHECK(op_flops(ops, "out_proj") == doctest::Approx(2 * b * s * h * h / 2));
  CHECK(op_flops(ops, "mlp_up") + op_flops(ops, "mlp_down") == doctest::Approx(6 * b * s * h * f / 2));
  // Scores + context 4bs²h/t, halved by FlashAttention-2's causal block skipping; backward 2.5×.
  CHECK(op_flops(ops, "attention") == doctest::Approx(4 * b * s * s * h / 2 / 2));
  LayerShape full_scores = shape;
  full_scores.causal_skip = false;
  const auto full_ops = layer_ops(m, full_scores);
  CHECK(op_flops(full_ops, "attention") == doctest::Approx(4 * b * s * s * h / 2));
  for (const auto& op : full_ops)
    if (op.name == "attention") {
      CHECK(op.bwd_input_flops == doctest::Approx(2.5 * op.fwd_flops));
      CHECK(op.bwd_weight_flops == 0);
    }
  // Logits 2bshV over V/t columns.
  CHECK(op_flops(logits_ops(m, shape), "logits") == doctest::Approx(2 * b * s * h * V / 2));
}

TEST_CASE("a sliding window of w keys leaves w·s − w²/2 of the s² query-key pairs to flash attention") {
  // Query i meets min(i+1, w) keys: Σ ≈ w·s − w²/2 pairs against the causal s²/2. s 8192, w 4096:
  // (4096·8192 − 4096²/2) / (8192²/2) = 0.75 of the causal count; w ≥ s is no window at all.
  const ModelSpec m = load_model("mistral-7b");
  const LayerShape causal{.micro_batch = 1, .seq = 8192};
  LayerShape local = causal;
  local.attention_window = 4096;
  const double full = op_flops(layer_ops(m, causal), "attention");
  CHECK(op_flops(layer_ops(m, local), "attention") == doctest::Approx(0.75 * full).epsilon(1e-12));
  local.attention_window = 8192;
  CHECK(op_flops(layer_ops(m, local), "attention") == doctest::Approx(full).epsilon(1e-12));
  // Megatron's unfused path masks the scores and still computes all s² of them.
  LayerShape unfused = causal;
  unfused.flash_attention = false;
  LayerShape unfused_local = unfused;
  unfused_local.attention_window = 4096;
  CHECK(op_flops(layer_ops(m, unfused_local), "attn_scores") == op_flops(layer_ops(m, unfused), "attn_scores"));
}

TEST_CASE("per-op activation bytes add up to Korthikanti's per-layer formulas") {
  const ModelSpec m = gpt22b();
  const double s = 2048, b = 4, h = 6144, a = 64;
  struct Case {
    int t;
    bool sp;
    Recompute r;
  };
  for (const Case c : {Case{1, false, Recompute::none}, Case{8, false, Recompute::none}, Case{8, true, Recompute::none},
                       Case{8, true, Recompute::selective}, Case{8, false, Recompute::selective},
                       Case{1, false, Recompute::full}}) {
    CAPTURE(c.t);
    CAPTURE(c.sp);
    CAPTURE(std::string(to_string(c.r)));
    const LayerShape shape{.micro_batch = 4, .seq = 2048, .tp = c.t, .sequence_parallel = c.sp, .recompute = c.r,
                           .flash_attention = false};
    const double formula = korthikanti_activation_bytes(s, b, h, a, c.t, c.sp, c.r);
    // Equal up to the rounding of 5as/(ht) in doubles (the per-op bytes are whole numbers).
    CHECK(static_cast<double>(sum_ops(layer_ops(m, shape)).activation_bytes) == doctest::Approx(formula).epsilon(1e-14));
  }
  // Flash attention keeps no s² term: the selective figure 34sbh/t with SP.
  const LayerShape flash{.micro_batch = 4, .seq = 2048, .tp = 8, .sequence_parallel = true};
  CHECK(static_cast<double>(sum_ops(layer_ops(m, flash)).activation_bytes) == 34 * s * b * h / 8);
}

const OpCost& find_op(const std::vector<OpCost>& ops, const std::string& prefix) {
  for (const auto& op : ops)
    if (op.name.rfind(prefix, 0) == 0) return op;
  FAIL("no op " << prefix);
  return ops.front();
}

TEST_CASE("Megatron's fused softmax runs only where its kernel takes the shape; else five fp32 kernels") {
  // korthikanti-22b: a 64. Attention batches b·a/t must be a multiple of 4 and of the kernel's
  // batches per block: 4 when 2^ceil(log2 s) > 128 (4 warps of 32 threads, one row each), 8 when
  // s <= 128 (two rows per warp). sk must lie in (16, 4096].
  const ModelSpec m = gpt22b();
  auto softmax = [&](std::int64_t b, std::int64_t s, int t, Recompute r = Recompute::none) {
    return find_op(layer_ops(m, {.micro_batch = b, .seq = s, .tp = t, .recompute = r, .flash_attention = false}), "attn_softmax");
  };
  CHECK(softmax(1, 2048, 16).name == "attn_softmax");        // 4 batches
  CHECK(softmax(1, 2048, 32).name == "attn_softmax_torch");  // 2 batches
  CHECK(softmax(2, 2048, 32).name == "attn_softmax");        // 4 again
  CHECK(softmax(1, 128, 16).name == "attn_softmax_torch");   // 4 batches, 8 per block
  CHECK(softmax(1, 128, 8).name == "attn_softmax");          // 8 batches
  CHECK(softmax(1, 4096, 1).name == "attn_softmax");
  CHECK(softmax(1, 4100, 1).name == "attn_softmax_torch");   // sk > 4096
  CHECK(softmax(1, 16, 1).name == "attn_softmax_torch");     // sk <= 16

  // Bytes per score element: fused 2+2 forward, 2+2+2 backward; the torch path 36 and 40.
  const double scores = 1.0 * 2 * 2048 * 2048;  // b·a/t·s² at b 1, t 32
  const OpCost& torch = softmax(1, 2048, 32);
  CHECK(torch.fwd_bytes == 36 * scores);
  CHECK(torch.bwd_input_bytes == 40 * scores);
  CHECK(torch.fwd_kernels == 5);
  CHECK(torch.bwd_kernels == 5);
  CHECK(torch.activation_bytes == static_cast<std::int64_t>(4 * scores));  // the fp32 output
  CHECK(torch.fwd_host_calls == 6);
  const OpCost& fused = softmax(2, 2048, 32);
  CHECK(fused.fwd_bytes == 4 * (2 * scores));
  CHECK(fused.activation_bytes == static_cast<std::int64_t>(2 * (2 * scores)));
  CHECK(softmax(1, 2048, 32, Recompute::selective).activation_bytes == 0);
}

TEST_CASE("Korthikanti's activation formulas, evaluated by hand") {
  // s 2048, b 1, h 12288, a 96 (GPT-3 175B), t 8: sbh = 2048·12288 = 25,165,824;
  // 5as/h = 5·96·2048/12288 = 80, so 5as/(ht) = 10; 24/t = 3; 34/t = 4.25.
  const double sbh = 25'165'824;
  CHECK(korthikanti_activation_bytes(2048, 1, 12288, 96, 1, false, Recompute::none) == sbh * (34 + 80));
  CHECK(korthikanti_activation_bytes(2048, 1, 12288, 96, 8, false, Recompute::none) == sbh * (10 + 3 + 10));
  CHECK(korthikanti_activation_bytes(2048, 1, 12288, 96, 8, true, Recompute::none) == sbh * (4.25 + 10));
  CHECK(korthikanti_activation_bytes(2048, 1, 12288, 96, 8, true, Recompute::selective) == sbh * 4.25);
  CHECK(korthikanti_activation_bytes(2048, 1, 12288, 96, 8, false, Recompute::selective) == sbh * 13);
  CHECK(korthikanti_activation_bytes(2048, 1, 12288, 96, 8, true, Recompute::full) == 2 * sbh);
}

TEST_CASE("Megatron's FLOP formulas equal the per-op counts") {
  const ModelSpec m = load_model("gpt3-175b");
  const double B = 3, L = 96, s = 2048, h = 12288, V = 51200;
  const LayerShape shape{.micro_batch = 3, .seq = 2048, .flash_attention = false};
  const OpTotals layer = sum_ops(layer_ops(m, shape));
  const double logits = sum_ops(logits_ops(m, shape)).fwd_flops;
  // Model FLOPs (MFU): forward + backward = 3 × forward for every matmul, attention included.
  CHECK(megatron_model_flops(B, L, s, h, V) == doctest::Approx(3 * (L * layer.fwd_flops + logits)).epsilon(1e-12));
  // Full recompute (HFU, SC'21 eq. 3): one more forward of every layer, not of the logits.
  CHECK(megatron_hardware_flops_full_recompute(B, L, s, h, V) ==
        doctest::Approx(4 * L * layer.fwd_flops + 3 * logits).epsilon(1e-12));
  // Selective (HFU): our ops re-run the attention core's forward once, 4·B·s²·h per layer ...
  LayerShape selective = shape;
  selective.recompute = Recompute::selective;
  CHECK(sum_ops(layer_ops(m, selective)).recompute_flops == doctest::Approx(4 * B * s * s * h).epsilon(1e-12));
  // ... while Korthikanti's appendix-A formula adds 72·B·L·s²·h/(6h)·h = 12·B·L·s²·h, three times
  // that: the paper's HFU counts more than the recompute we model (its s/(3h) doubles s/(6h)).
  CHECK(megatron_hardware_flops_selective(B, L, s, h, V) - megatron_model_flops(B, L, s, h, V) ==
        doctest::Approx(12 * B * L * s * s * h).epsilon(1e-9));
  // Per token this is 6N + 12·L·h·s with N ≈ 174.6e9 (within 1 %: 6N also counts the embeddings).
  CHECK(megatron_model_flops(1, 96, 2048, 12288, 51200) / 2048 == doctest::Approx(6 * 174.6e9 + 12.0 * 96 * 12288 * 2048).epsilon(0.01));
}

TEST_CASE("6N + attention FLOPs per token (MosaicML's MFU formula)") {
  // MPT-7B at s 2048: 6·N + 12·L·h·s = 6·6,657,355,776 + 12·32·4096·2048.
  const ModelSpec m = load_model("mpt-7b");
  const double n = static_cast<double>(total_params(m));
  CHECK(model_flops_per_token(m, 2048) == doctest::Approx(6 * n + 12.0 * 32 * 4096 * 2048));
  CHECK(hardware_flops_per_token_full_recompute(m, 2048) == doctest::Approx(8 * n + 16.0 * 32 * 4096 * 2048));
}

TEST_CASE("MFU's attention term counts a local layer's window of keys instead of s") {
  // Gemma-2 9B at s 8192: 42 layers of a·d = 16·256, 21 local (w 4096) and 21 global:
  // 6N + 3·4·a·d·(21·4096 + 21·8192) per token.
  const ModelSpec m = load_model("gemma-2-9b");
  const double n = static_cast<double>(total_params(m));
  CHECK(model_flops_per_token(m, 8192) == doctest::Approx(6 * n + 12.0 * 16 * 256 * (21 * 4096 + 21 * 8192)));
  // At s ≤ w every layer sees the whole sequence.
  CHECK(model_flops_per_token(m, 4096) == doctest::Approx(6 * n + 12.0 * 42 * 16 * 256 * 4096));
}

TEST_CASE("latent attention: down projections on every TP rank, up projections split, d_qk 192 and d_v 128") {
  // DeepSeek-V2: h 5120, 128 heads, query latent 1536, KV latent 512 (+ 64 rotary), heads of
  // 128 + 64 query/key dims and 128 value dims. TP 8, one 4,096-token sequence, no SP: the down
  // projections run on all T tokens on every rank, the up projections on 16 heads.
  const ModelSpec m = load_model("deepseek-v2");
  const double t = 4096, h = 5120;
  const LayerShape shape{.micro_batch = 1, .seq = 4096, .tp = 8};
  const auto ops = layer_ops(m, shape);
  CHECK(op_flops(ops, "q_down") == doctest::Approx(2 * t * 1536 * h));
  CHECK(op_flops(ops, "kv_down") == doctest::Approx(2 * t * (512 + 64) * h));
  CHECK(op_flops(ops, "q_up") == doctest::Approx(2 * t * 16 * 192 * 1536));
  CHECK(op_flops(ops, "kv_up") == doctest::Approx(2 * t * 16 * 256 * 512));
  CHECK(op_flops(ops, "out_proj") == doctest::Approx(2 * t * h * 16 * 128));
  // Scores over 192 dims and context over 128, causal half: 2·s²·16·(192 + 128) / 2.
  CHECK(op_flops(ops, "attention") == doctest::Approx(t * t * 16 * (192 + 128)));
  // What the ops hold is the rank's share: a MoE layer (the last) and the dense first one.
  CHECK(sum_ops(ops).params == params_per_layer_per_rank(m, 59, 8));
  CHECK(sum_ops(layer_ops(m, {.micro_batch = 1, .seq = 4096, .tp = 8, .dense_mlp = true})).params ==
        params_per_layer_per_rank(m, 0, 8));
  // With SP the down projections run on the rank's s/t tokens.
  LayerShape sp = shape;
  sp.sequence_parallel = true;
  CHECK(op_flops(layer_ops(m, sp), "q_down") == doctest::Approx(2 * t / 8 * 1536 * h));
  // The TP collective before the up projections carries the latents: 4096·(1536 + 512 + 64)·2 B.
  CHECK(mla_latent_bytes(m, shape) == 4096 * (1536 + 512 + 64) * 2);
  // MFU counts scores and context at their own widths: 12·L·a·(d_qk + d_v)/2·s per token.
  const ModelSpec v3 = load_model("deepseek-v3");
  CHECK(model_flops_per_token(v3, 4096) ==
        doctest::Approx(6.0 * static_cast<double>(active_params(v3)) + 12.0 * 61 * 128 * 160 * 4096));
}

TEST_CASE("model states of mixed-precision Adam per ZeRO stage") {
  // 1e9 parameters over dp 8: 2 + 2 + 12 bytes each; stage 1 shards the 12, stage 2 the grads,
  // stage 3 the parameters too.
  const std::int64_t n = 1'000'000'000;
  CHECK(model_state_bytes(n, 0, 8).total() == 16 * n);
  CHECK(model_state_bytes(n, 1, 8).total() == 4 * n + 12 * n / 8);
  CHECK(model_state_bytes(n, 2, 8).total() == 2 * n + 14 * n / 8);
  CHECK(model_state_bytes(n, 3, 8).total() == 16 * n / 8);
  // Megatron's fp32 main gradients: 2 + 4 + 12.
  CHECK(model_state_bytes(n, 0, 8, GradPrecision::fp32).total() == 18 * n);
  CHECK(model_state_bytes(n, 2, 8, GradPrecision::fp32).total() == 2 * n + 16 * n / 8);
  // Narrowed states: Apex DistributedFusedAdam in bf16 keeps no master, its moments 2 + 2 bytes.
  const OptimizerStates bf16_adam{.master = 0, .exp_avg = 2, .exp_avg_sq = 2};
  CHECK(model_state_bytes(n, 1, 8, GradPrecision::bf16, bf16_adam).optimizer == 4 * n / 8);
  // An Adam step: the gradient read and the parameter written (2 + 2), each state read and
  // written, the parameter read where it is the master: 4 + 2·12 = 28 bytes; 4 + 2·4 + 2 = 14.
  CHECK(OptimizerStates{}.step_bytes() == 28);
  CHECK(bf16_adam.step_bytes() == 14);
  // An fp32 main_grad is read at 4 bytes: two more.
  CHECK(OptimizerStates{}.step_bytes(4) == 30);
}

TEST_CASE("parameters per TP rank: matrices split, norms and row-parallel biases replicated") {
  const ModelSpec m = gpt22b();
  const std::int64_t h = 6144;
  // 12h² + 7h split over 8 (QKV and fc1 biases are column-parallel: 3h + 4h), 6h replicated
  // (two LayerNorms 4h, out_proj and fc2 biases 2h).
  CHECK(params_per_layer_per_rank(m, 8) == (12 * h * h + 7 * h) / 8 + 6 * h);
  CHECK(params_per_layer_per_rank(m, 1) == params_per_layer(m));
  CHECK(sum_ops(layer_ops(m, {.tp = 8})).params == params_per_layer_per_rank(m, 8));
}

using testing::op_named;

int param_tensors(const std::vector<OpCost>& ops) {
  int n = 0;
  for (const auto& op : ops) {
    CHECK_MESSAGE((op.params > 0) == (op.param_tensors > 0), op.name);
    n += op.param_tensors;
  }
  return n;
}

TEST_CASE("parameter tensors: a weight and a bias per linear and LayerNorm; a weight per RMSNorm; one per expert") {
  // GPT: two LayerNorms (weight, bias) and four biased linears (QKV, out_proj, fc1, fc2).
  CHECK(param_tensors(layer_ops(gpt22b(), {.tp = 8})) == 2 * 2 + 4 * 2);
  // Llama 2: two RMSNorms and four linears without bias (gate and up fused in one weight).
  CHECK(param_tensors(layer_ops(load_model("llama-2-7b"), {.tp = 1})) == 2 + 4);
  // Mixtral: two RMSNorms, QKV and out_proj, the router, and an up and a down weight per expert.
  CHECK(param_tensors(layer_ops(load_model("mixtral-8x7b"), {.tp = 1})) == 2 + 2 + 1 + 8 * 2);
  // Learned positions are a second embedding table.
  CHECK(param_tensors(embedding_ops(gpt22b(), {.tp = 1})) == 2);
}

TEST_CASE("a MoE layer runs k experts per token: FLOPs, grouped GEMM shapes, parameters") {
  const ModelSpec m = load_model("mixtral-8x7b");  // h 4096, E 8, k 2, expert f 14336
  const double b = 1, s = 4096, h = 4096, f = 14336, E = 8, k = 2;
  const LayerShape shape{.micro_batch = 1, .seq = 4096, .tp = 2, .sequence_parallel = true};
  const auto ops = layer_ops(m, shape);
  // Each token runs k SwiGLU experts: 6·T·k·h·f/t, as a dense MLP of width k·f would.
  CHECK(op_flops(ops, "expert_up") + op_flops(ops, "expert_down") == doctest::Approx(6 * b * s * k * h * f / 2));
  // One grouped GEMM over the E experts, T·k/E rows each (balanced, dropless).
  CHECK(op_named(ops, "expert_up").gemm == GemmShape{8, 1024, 14336, 4096});
  CHECK(op_named(ops, "expert_down").gemm == GemmShape{8, 1024, 4096, 7168});
  // The router scores this rank's s/t tokens under SP: 2·(T/t)·h·E.
  CHECK(op_flops(ops, "router") == doctest::Approx(2 * b * s / 2 * h * E));
  // Parameters: every expert, split over TP; the router whole on each rank.
  CHECK(sum_ops(ops).params == params_per_layer_per_rank(m, 2));
  CHECK(params_per_layer_per_rank(m, 1) == params_per_layer(m));
  // Model FLOPs per token count the active parameters: 6·N_active + 12·L·h·s.
  CHECK(model_flops_per_token(m, 4096) ==
        doctest::Approx(6.0 * static_cast<double>(active_params(m)) + 12.0 * 32 * h * s));
}

TEST_CASE("a MoE model's first dense layers count a dense MLP, in total and in active parameters") {
  // Mixtral 8x7B with its first 2 layers dense (as DeepSeek's first_k_dense_replace would have
  // them): each such layer swaps 8 experts of 3·h·f and the h·8 router for one 3·h·f MLP, and a
  // token runs that MLP instead of 2 experts and the router.
  ModelSpec m = load_model("mixtral-8x7b");
  const std::int64_t h = m.hidden, f = m.ffn_hidden;
  const std::int64_t total = total_params(m), active = active_params(m);
  m.moe.dense_layers = 2;
  CHECK(!is_moe_layer(m, 1));
  CHECK(is_moe_layer(m, 2));
  CHECK(total_params(m) == total - 2 * (7 * 3 * h * f + 8 * h));
  CHECK(active_params(m) == active - 2 * (3 * h * f + 8 * h));
  CHECK(params_per_layer(m, 0) == params_per_layer(m) - 7 * 3 * h * f - 8 * h);
  CHECK(sum_ops(layer_ops(m, {.dense_mlp = true})).params == params_per_layer(m, 0));
}

TEST_CASE("a capacity factor pads every expert's buffer to capacity_factor·T·k/E rows") {
  ModelSpec m = load_model("mixtral-8x7b");
  m.moe.capacity_factor = 1.25;
  const auto ops = layer_ops(m, {.micro_batch = 1, .seq = 4096});
  // T·k/E = 1024 rows; × 1.25 = 1280, whether or not the router filled them.
  CHECK(op_named(ops, "expert_up").gemm.m == 1280);
  CHECK(op_flops(ops, "expert_up") == doctest::Approx(2.0 * 8 * 1280 * 2 * 14336 * 4096));
  // Activations kept for backward grow with the padded rows: the permuted input (rows·h).
  const auto dropless = layer_ops(load_model("mixtral-8x7b"), {.micro_batch = 1, .seq = 4096});
  CHECK(op_named(ops, "expert_up").activation_bytes - op_named(dropless, "expert_up").activation_bytes ==
        8 * 256 * 4096 * 2);
}

TEST_CASE("under expert parallelism a rank runs E/ep experts on the rows its EP group routes to them") {
  ModelSpec m = load_model("mixtral-8x7b");
  const LayerShape ep4{.micro_batch = 1, .seq = 4096, .ep = 4};
  const auto ops = layer_ops(m, ep4);
  // 2 local experts; 4 ranks' T·k = 4·4096·2 routed rows over 8 experts: 4096 rows each.
  CHECK(op_named(ops, "expert_up").gemm == GemmShape{2, 4096, 2 * 14336, 4096});
  // The same expert FLOPs per rank as without EP (balanced), a quarter of the expert parameters.
  CHECK(op_flops(ops, "expert_up") == doctest::Approx(op_flops(layer_ops(m, {.micro_batch = 1, .seq = 4096}), "expert_up")));
  CHECK(sum_ops(ops).expert_params * 4 == sum_ops(layer_ops(m, {.micro_batch = 1, .seq = 4096})).expert_params);
  // The dispatch all-to-all: the rank's T·k copies of h values, 16-bit.
  CHECK(moe_dispatch_bytes(m, ep4) == 4096 * 2 * 4096 * 2);
  CHECK(moe_dispatch_bytes(m, {.micro_batch = 1, .seq = 4096}) == 0);
  // The busiest rank at 1.5× the mean load: its rows and bytes, and so every rank's time.
  m.moe.load_imbalance = 1.5;
  CHECK(op_named(layer_ops(m, ep4), "expert_up").gemm.m == 6144);
  CHECK(moe_dispatch_bytes(m, ep4) == 3 * 4096 * 4096 * 2);
  // Without EP the rank runs all the experts: imbalance leaves the sum, and the mean, alone.
  CHECK(op_named(layer_ops(m, {.micro_batch = 1, .seq = 4096}), "expert_up").gemm.m == 1024);
}

TEST_CASE("a shared expert and its gate run on every token (Qwen1.5-MoE)") {
  const ModelSpec m = load_model("qwen1.5-moe-a2.7b");  // h 2048, shared f 5632, 60 experts, k 4
  const auto ops = layer_ops(m, {.micro_batch = 2, .seq = 2048});
  const double T = 2 * 2048, h = 2048;
  CHECK(op_flops(ops, "shared_up") + op_flops(ops, "shared_down") == doctest::Approx(6 * T * h * 5632));
  CHECK(op_flops(ops, "shared_gate") == doctest::Approx(2 * T * h));
  // 4·4096 routed rows over 60 experts: ceil(16384/60) = 274 rows each.
  CHECK(op_named(ops, "expert_up").gemm.m == 274);
  CHECK(sum_ops(ops).params == params_per_layer(m));
}

TEST_CASE("a gradient accumulation reads the new gradient and reads and writes the kept one") {
  const OpCost op = gradient_accumulation_op(1'000'000, 3, 2, 4);
  CHECK(op.kind == OpKind::memory);
  CHECK(op.bwd_input_bytes == doctest::Approx(1e6 * (2 + 4 + 4)));
  CHECK(op.bwd_kernels == 3);  // one add per tensor
  CHECK(op.fwd_bytes == 0);
  CHECK(op.fwd_kernels == 0);
  CHECK(op.params == 0);  // it holds no parameters of its own
  // Cast first (DeepSpeed's BF16_Optimizer): the cast reads 2 and writes 4, the add reads the copy
  // (4) and reads and writes the kept gradient (4 + 4): 18 bytes, two kernels a tensor.
  const OpCost cast = gradient_accumulation_op(1'000'000, 3, 2, 4, true);
  CHECK(cast.bwd_input_bytes == doctest::Approx(1e6 * (2 + 4 + 4 + 4 + 4)));
  CHECK(cast.bwd_kernels == 6);
}

}  // namespace
}  // namespace stepsim::models
