// Multi-token prediction (models::ModelSpec::mtp_layers) on the last pipeline stage: each depth's
// work after the main head, its weights where they are kept and reduced, and the embedding copy
// the last stage reduces with the first's.
#include <doctest/doctest.h>

#include <limits>

#include "models/layer_ops.hpp"
#include "sim/config/shell_words.hpp"
#include "sim/plan/megatron_args.hpp"
#include "sim/plan/plan_inputs.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

// 4 layers, h 1024, 8 heads, SwiGLU 2816, vocabulary 32000, untied, on one DGX A100 in bf16.
std::string gpt(int mtp, const std::string& strategy) {
  return R"(name: mtp
hardware: {preset: dgx-a100}
model: {name: m, layers: 4, hidden: 1024, heads: 8, ffn_hidden: 2816, vocab: 32000, position: rotary,
        activation: swiglu, norm: rmsnorm, bias: false, dropout: false, tied_embeddings: false, mtp_layers: )" +
         std::to_string(mtp) + R"(}
training: {seq_len: 2048, global_batch: 16, precision: bf16}
strategies:
  - )" + strategy + "\n";
}

// The costs only: the PlanInputs' references to its scenario do not outlive this call.
PlanInputs inputs(int mtp, const std::string& strategy) {
  const auto sc = plan_test::scenario(gpt(mtp, strategy));
  return make_inputs(sc, sc.strategies[0], {});
}

}  // namespace

TEST_CASE("a depth runs its own ops, a layer of the last layer's kind and the head again, after the head") {
  const std::string tp2 = "{name: s, tp: 2, dp: 4, micro_batch: 2, flash_attention: true}";
  const PlanInputs base = inputs(0, tp2), one = inputs(1, tp2);
  // FLOPs of one microbatch (T = 2 · 2048 tokens): the head again, the layer, and eh_proj's
  // 2·T·2h·(h/t); the lookup and the three norms are memory-bound.
  const double tokens = 2.0 * 2048, h = 1024;
  CHECK(one.logits.fwd_flops ==
        doctest::Approx(2 * base.logits.fwd_flops + base.layer(3).fwd_flops + 2 * tokens * 2 * h * (h / 2)).epsilon(1e-12));
  CHECK(one.logits.bwd_flops ==
        doctest::Approx(2 * base.logits.bwd_flops + base.layer(3).bwd_flops + 4 * tokens * 2 * h * (h / 2)).epsilon(1e-12));
  // Its weights on this TP rank: enorm, hnorm and the final norm (3h, replicated), eh_proj's
  // 2h·h/t and the layer's; the output head is the main one's. With pp 1 the embedding table it
  // reads is the first stage's own.
  const std::int64_t own = 3 * 1024 + 2 * 1024 * 512 + base.layer(3).params;
  CHECK(one.logits.params - base.logits.params == own);
  // What `stepsim model show` counts per GPU, from the model alone.
  CHECK(models::mtp_params_per_rank(plan_test::scenario(gpt(1, tp2)).model, 2) == own);
  CHECK(one.stage_params[0] - base.stage_params[0] == own);
  // Forward runs the main head first; backward starts with the last depth's head.
  REQUIRE(one.logits.fwd.size() > base.logits.fwd.size());
  CHECK(one.logits.fwd.front().compute_ps == base.logits.fwd.front().compute_ps);
  CHECK(one.logits.bwd.back().compute_ps == base.logits.bwd.back().compute_ps);
}

TEST_CASE("with pp > 1 the last stage holds a copy of the embedding table and reduces it with the first stage") {
  const std::string pp2 = "{name: s, tp: 4, pp: 2, dp: 1, micro_batch: 2, flash_attention: true}";
  const PlanInputs base = inputs(0, pp2), one = inputs(1, pp2);
  // Stage 1 gains the depth's weights and the table's V/t·h = 8000 · 1024 rows; stage 0 nothing.
  const std::int64_t own = 3 * 1024 + 2 * 1024 * 256 + base.layer(3).params;
  CHECK(one.stage_params[1] - base.stage_params[1] == own + 8000 * 1024);
  CHECK(one.stage_params[0] == base.stage_params[0]);
  // The only DP-class collective without DP is that table's gradient all-reduce between the
  // first and the last stage (Megatron's _allreduce_word_embedding_grads): it is there with MTP.
  auto sc0 = plan_test::scenario(gpt(0, pp2)), sc1 = plan_test::scenario(gpt(1, pp2));
  const StepResult r0 = simulate(sc0, sc0.strategies[0], {}), r1 = simulate(sc1, sc1.strategies[0], {});
  CHECK(r0.exposed_comm_s.dp == 0);
  CHECK(r1.exposed_comm_s.dp > 0);
  CHECK(r1.step_time_s > r0.step_time_s);
}

TEST_CASE("each depth adds the same work: two depths cost twice one") {
  // Free communication and an instant host: the last stage's work is a sum, so the step grows by
  // the same amount per depth, to the picosecond rounding of each step.
  SimOptions opt;
  opt.hooks.comm_bytes_per_s = std::numeric_limits<double>::infinity();
  opt.hooks.skip_optimizer = true;
  opt.hooks.instant_host = true;
  std::int64_t step[3];
  for (int depths = 0; depths < 3; ++depths) {
    auto sc = plan_test::scenario(gpt(depths, "{name: s, tp: 8, micro_batch: 2, flash_attention: true}"));
    sc.cluster.gpu.comm_slowdown = 0;
    step[depths] = static_cast<std::int64_t>(simulate(sc, sc.strategies[0], opt).step_time_s * 1e12 + 0.5);
  }
  CHECK(step[1] > step[0]);
  CHECK(std::abs((step[2] - step[0]) - 2 * (step[1] - step[0])) <= 2);
}

TEST_CASE("mtp_layers out of its range is refused at the key") {
  CHECK(plan_test::read_error(gpt(17, "{name: s, dp: 8}"))
            .find("model.mtp_layers: expected multi-token-prediction depths from 0 to 16, found '17'") != std::string::npos);
  CHECK(plan_test::read_error(gpt(-1, "{name: s, dp: 8}")).find("found '-1'") != std::string::npos);
}

TEST_CASE("a strategy trains fewer depths, or none, than its model has; never more") {
  const std::string tp2 = "{name: s, tp: 2, dp: 4, micro_batch: 2, flash_attention: true";
  const PlanInputs base = inputs(0, tp2 + "}");
  const PlanInputs off = inputs(2, tp2 + ", mtp_layers: 0}");
  const PlanInputs one = inputs(2, tp2 + ", mtp_layers: 1}"), model_one = inputs(1, tp2 + "}");
  CHECK(off.logits.fwd_flops == base.logits.fwd_flops);
  CHECK(off.logits.params == base.logits.params);
  CHECK(one.logits.fwd_flops == model_one.logits.fwd_flops);
  CHECK(plan_test::strategy_error(gpt(1, tp2 + ", mtp_layers: 2}"))
            .find("strategies[0].mtp_layers: expected at most the model's 1 multi-token-prediction depths (m's "
                  "mtp_layers), found 2") != std::string::npos);
}

TEST_CASE("Megatron-LM trains multi-token prediction only with --mtp-num-layers") {
  const auto sc = plan_test::scenario(gpt(1, "{name: s}"));
  const std::string common = "--tensor-model-parallel-size 2 --num-layers 4 --bf16 ";
  Strategy with;
  apply_megatron_args(config::read_shell_script(common + "--mtp-num-layers 1", "args.sh"), sc.model, sc.training, with);
  CHECK(with.mtp_layers == 1);
  CHECK(with.unmodelled.empty());
  Strategy without;
  apply_megatron_args(config::read_shell_script(common, "args.sh"), sc.model, sc.training, without);
  CHECK(without.mtp_layers == 0);
  REQUIRE(without.unmodelled.size() == 1);
  CHECK(without.unmodelled[0] == "args.sh:1:1: no --mtp-num-layers: the scenario's model m's multi-token prediction is "
                                 "not trained (Megatron's default)");
  Strategy more;
  CHECK_THROWS_WITH(apply_megatron_args(config::read_shell_script(common + "--mtp-num-layers 2", "args.sh"), sc.model,
                                        sc.training, more),
                    doctest::Contains("args.sh:1:71: --mtp-num-layers: expected at most the 1 multi-token-prediction "
                                      "depths of the scenario's model m, found 2"));
}

TEST_CASE("a MoE model's depth runs a MoE layer: its experts are the last stage's, reduced with the others") {
  // 4 experts of 1024, top 2, EP 2 folded over DP: the depth's layer adds one layer's routed
  // experts to what the last stage reduces over the expert-DP group and keeps in memory.
  auto moe = [](int mtp) {
    std::string yaml = gpt(mtp, "{name: s, pp: 2, dp: 4, ep: 2, micro_batch: 2, flash_attention: true}");
    const std::string close = "mtp_layers: " + std::to_string(mtp) + "}";
    yaml.replace(yaml.find(close), close.size(),
                 "mtp_layers: " + std::to_string(mtp) + ", moe: {experts: 4, top_k: 2, expert_ffn: 1024}}");
    const auto sc = plan_test::scenario(yaml);
    return make_inputs(sc, sc.strategies[0], {});
  };
  const PlanInputs base = moe(0), one = moe(1);
  REQUIRE(base.layer(3).expert_params > 0);
  CHECK(one.logits.expert_params == base.layer(3).expert_params);
  CHECK(one.stage_expert_params[1] - base.stage_expert_params[1] == base.layer(3).expert_params);
  CHECK(one.stage_expert_params[0] == base.stage_expert_params[0]);
}

TEST_CASE("eh_proj is a TransformerEngine linear: in FP8 under FP8 training, with its input's cast") {
  const auto sc = plan_test::scenario(gpt(1, "{name: s, dp: 8}"));
  models::LayerShape shape{.micro_batch = 1, .seq = 2048};
  shape.fp8 = models::Fp8Recipe::delayed;
  const auto ops = models::mtp_input_ops(sc.model, shape);
  bool cast = false, fp8 = false;
  for (const auto& op : ops) {
    cast = cast || op.name == "mtp_eh_proj_fp8_cast";
    fp8 = fp8 || (op.name == "mtp_eh_proj" && op.fp8);
  }
  CHECK(cast);
  CHECK(fp8);
}
