// Peak memory measured on the timeline against the closed forms: model states (ZeRO paper,
// models::model_state_bytes) + stored activations of the microbatches in flight (Korthikanti et
// al. 2022 per layer, models::korthikanti_activation_bytes) — within 2 %.
#include <doctest/doctest.h>

#include "models/memory.hpp"
#include "models/model_spec.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim::plan;
namespace models = stepsim::models;

namespace {

double activations_per_layer(const Scenario& sc, int micro, int tp, bool sp, models::Recompute rc) {
  return models::korthikanti_activation_bytes(static_cast<double>(sc.training.seq_len), micro,
                                              static_cast<double>(sc.model.hidden), sc.model.heads, tp, sp, rc);
}

}  // namespace

TEST_CASE("1f1b stage 0 keeps p microbatches: states + p·(L/p)·act, within 2 %") {
  // pp 4, dp 2, 8 layers (2 per stage), micro 1, m = 8, flash attention off so the per-layer
  // activations are Korthikanti's sbh(34 + 5as/h). Stage 0 holds p = 4 microbatches at its peak
  // (warmup p−1 forwards plus the first steady forward). Embedding and logits are dropped (hook),
  // so every stage holds 2 layers' parameters; their gradients are fp32 (Megatron-LM's main_grad
  // for a bf16 model).
  auto sc = plan_test::scenario(plan_test::small_gpt("{name: m, pp: 4, dp: 2, flash_attention: false}"));
  SimOptions opt;
  opt.hooks.skip_embedding_and_head = true;
  opt.detail = true;
  auto r = simulate(sc, sc.strategies[0], opt);
  const auto states = models::model_state_bytes(2 * models::params_per_layer(sc.model), 0, 2, models::GradPrecision::fp32);
  const double expected = static_cast<double>(states.total()) +
                          4 * 2 * activations_per_layer(sc, 1, 1, false, models::Recompute::none);
  CHECK(static_cast<double>(r.ranks[0].peak_memory_bytes) == doctest::Approx(expected).epsilon(0.02).scale(0));
  // The last stage keeps one microbatch at a time.
  const double last = static_cast<double>(states.total()) + 2 * activations_per_layer(sc, 1, 1, false, models::Recompute::none);
  CHECK(static_cast<double>(r.ranks.back().peak_memory_bytes) == doctest::Approx(last).epsilon(0.02).scale(0));
}

TEST_CASE("TP + SP + selective recompute and ZeRO-1: 34sbh/t per layer, optimizer sharded") {
  // tp 2, dp 4, gpipe with m = 4: all 4 microbatches' activations of 8 layers are held at once.
  auto sc = plan_test::scenario(plan_test::small_gpt(
      "{name: m, tp: 2, dp: 4, zero_stage: 1, micro_batch: 2, schedule: gpipe, sequence_parallel: true, "
      "recompute: selective, flash_attention: false}", 32));
  SimOptions opt;
  opt.hooks.skip_embedding_and_head = true;
  auto r = simulate(sc, sc.strategies[0], opt);
  const auto states =
      models::model_state_bytes(8 * models::params_per_layer_per_rank(sc.model, 2), 1, 4, models::GradPrecision::fp32);
  const double act = activations_per_layer(sc, 2, 2, true, models::Recompute::selective);
  // Peak: during the first backward, 4 microbatches stored plus one layer's recomputed attention.
  const double transient = activations_per_layer(sc, 2, 2, true, models::Recompute::none) - act;
  const double expected = static_cast<double>(states.total()) + 4 * 8 * act + transient;
  CHECK(static_cast<double>(r.peak_memory_bytes) == doctest::Approx(expected).epsilon(0.02).scale(0));
  CHECK(r.fits);
}

TEST_CASE("a plan that does not fit says by how much and what dominates") {
  // GPT-3 175B on one DGX A100 with pure DP: 175e9 · 18 bytes of model states per GPU (2 + fp32 gradients 4 + 12).
  auto sc = plan_test::scenario(R"(name: too-big
hardware: {preset: dgx-a100}
model: gpt3-175b
training: {seq_len: 2048, global_batch: 8}
strategies:
  - {name: dp8, dp: 8}
)");
  auto r = simulate(sc, sc.strategies[0]);
  CHECK_FALSE(r.fits);
  CHECK(r.memory_note.find("optimizer states") != std::string::npos);
  MESSAGE(r.memory_note);
  CHECK(r.memory_note.find("more than the 80") != std::string::npos);
}

TEST_CASE("a tied LM head is one tensor where the embedding and the head share a stage") {
  // The small GPT ties its head to the embedding (models' default). One stage holds every
  // parameter once: 2 B each as 16-bit weights (ZeRO-0, dp 8). (Under PP the last stage keeps its
  // own copy, whose gradient build_embedding_sync all-reduces with the first stage's.)
  auto sc = plan_test::scenario(plan_test::small_gpt("{name: one, dp: 8}"));
  CHECK(simulate(sc, sc.strategies[0], {}).memory_at_peak.parameters == 2 * models::total_params(sc.model));
}
