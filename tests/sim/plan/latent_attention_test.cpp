// Multi-head latent attention under tensor parallelism (Megatron-Core's MLASelfAttention): the
// down projections run on every TP rank, so the layer's first TP collective carries the latents
// (query latent, KV latent and the shared rotary key), not the hidden state; the collective after
// the output projection carries the hidden state as in any layer. Volumes derived by hand.
#include <doctest/doctest.h>

#include <map>

#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

// 2 layers, h 512, 8 heads; latents of 128 (query) and 64 (KV), heads of 32 + 16 rotary query/key
// dims and 32 value dims; one 1,024-token sequence per microbatch, 2 microbatches, TP 2.
std::string latent(const std::string& strategy) {
  return R"(name: mla
hardware: {preset: dgx-a100}
model: {name: tiny-mla, layers: 2, hidden: 512, heads: 8, ffn_hidden: 1024, vocab: 1000, position: rotary,
        activation: swiglu, norm: rmsnorm, bias: false, dropout: false,
        mla: {q_lora_rank: 128, kv_lora_rank: 64, qk_nope_head_dim: 32, qk_rope_head_dim: 16, v_head_dim: 32}}
training: {seq_len: 1024, global_batch: 8, precision: bf16}
strategies:
  - )" + strategy + "\n";
}

// Payloads of rank 0's TP collectives by op, summed over the step.
std::map<std::string, double> tp_bytes_by_op(const std::string& strategy) {
  auto sc = plan_test::scenario(latent(strategy));
  SimOptions opt = plan_test::ideal_network(1e12);
  opt.detail = true;
  const StepResult r = simulate(sc, sc.strategies[0], opt);
  std::map<std::string, double> out;
  for (const auto& t : r.tasks)
    if (t.rank == 0 && t.category == TaskCategory::tp_comm) out[t.op] += t.bytes;
  return out;
}

}  // namespace

TEST_CASE("without SP the latents' gradients are all-reduced, the hidden state after each projection") {
  // tp 2, dp 4: 2 microbatches × 2 layers. Per layer and microbatch: forward, the all-reduce after
  // out_proj and after mlp_down (1024·512·2 B = 1 MiB each); backward, the all-reduce of the
  // latents' gradient, 1024·(128 + 64 + 16)·2 = 425,984 B, and of mlp_up's input gradient (1 MiB).
  const auto bytes = tp_bytes_by_op("{name: tp2, tp: 2, flash_attention: true}");
  CHECK(bytes.at("all_reduce") == doctest::Approx(4 * (3 * 1048576.0 + 425984.0)));
}

TEST_CASE("with SP the latents are all-gathered: the gather before attention is the latent's size") {
  // Forward all-gathers the latents (425,984 B) and mlp_up's input (1 MiB) and reduce-scatters
  // out_proj's and mlp_down's outputs (1 MiB each); backward mirrors each: the same volumes.
  const auto bytes = tp_bytes_by_op("{name: tp2-sp, tp: 2, sequence_parallel: true, flash_attention: true}");
  CHECK(bytes.at("all_gather") == doctest::Approx(4 * (3 * 1048576.0 + 425984.0)));
  CHECK(bytes.at("reduce_scatter") == doctest::Approx(4 * (3 * 1048576.0 + 425984.0)));
}
