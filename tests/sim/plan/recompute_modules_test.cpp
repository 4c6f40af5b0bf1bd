// Megatron-Core's --recompute-modules as a strategy key and an argument (Strategy::recompute_modules):
// read, checked against the model, and simulated as the memory each module frees.
#include <doctest/doctest.h>

#include "sim/config/shell_words.hpp"
#include "sim/plan/megatron_args.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

// Mixtral 8x7B with 4 layers on one DGX H100: 8 experts of f 14336, top 2.
std::string mixtral(const std::string& strategy) {
  return R"(name: moe
hardware: {preset: dgx-h100}
model: {preset: mixtral-8x7b, layers: 4}
training: {seq_len: 4096, global_batch: 8, precision: bf16}
strategies:
  - )" + strategy + "\n";
}


}  // namespace

TEST_CASE("recompute_modules: selective recompute of the modules listed, core_attn only if listed") {
  const auto sc = plan_test::scenario(
      mixtral("{name: s, dp: 8, framework: megatron-core, recompute_modules: [layernorm, moe_act]}"));
  const Strategy& s = sc.strategies[0];
  CHECK(s.recompute == Recompute::selective);
  CHECK(s.recompute_modules == models::RecomputeModules{.core_attn = false, .layernorm = true, .moe_act = true});
  CHECK(s.where.recompute_modules.line == 6);
}

TEST_CASE("recompute_modules refuses what it cannot cost, at the value") {
  CHECK(plan_test::read_error(mixtral("{name: s, dp: 8, recompute_modules: [moe_act]}"))
            .find("recompute_modules is Megatron-Core's --recompute-modules: it needs framework: megatron-core") !=
        std::string::npos);
  CHECK(plan_test::read_error(mixtral("{name: s, dp: 8, framework: megatron-core, recompute: full, recompute_modules: [moe_act]}"))
            .find("it needs recompute: selective, found recompute: full") != std::string::npos);
  CHECK(plan_test::read_error(mixtral("{name: s, dp: 8, framework: megatron-core, recompute_modules: []}"))
            .find("expected a list of modules") != std::string::npos);
  CHECK(plan_test::read_error(mixtral("{name: s, dp: 8, framework: megatron-core, recompute_modules: [moe]}"))
            .find("recomputing moe re-runs the communication inside it (the token dispatch), which is not modelled") !=
        std::string::npos);
  CHECK(plan_test::read_error(mixtral("{name: s, dp: 8, framework: megatron-core, recompute_modules: [attn]}"))
            .find("test.yaml:6:68: strategies[0].recompute_modules[0]: expected one of core_attn") != std::string::npos);
  // Checked against the model: Mixtral has experts but no latent attention; a dense model no experts.
  CHECK(plan_test::strategy_error(
            mixtral("{name: s, dp: 8, framework: megatron-core, recompute_modules: [mla_up_proj]}"))
            .find("mla_up_proj re-runs latent attention's up projections; mixtral-8x7b has no latent attention") !=
        std::string::npos);
  CHECK(plan_test::strategy_error(plan_test::small_gpt("{name: s, framework: megatron-core, recompute_modules: [moe_act]}"))
            .find("small-gpt has no experts") != std::string::npos);
  // Megatron-Core's own refusal: no moe_act or layernorm recompute under FP8 delayed scaling.
  CHECK(plan_test::strategy_error(mixtral("{name: s, dp: 8, framework: megatron-core, precision: fp8, "
                                          "recompute_modules: [moe_act]}"))
            .find("refuses moe_act and layernorm recompute under FP8 delayed scaling") != std::string::npos);
  CHECK(plan_test::strategy_error(mixtral("{name: s, dp: 8, framework: megatron-core, precision: fp8, "
                                          "fp8_recipe: tensorwise, recompute_modules: [moe_act]}")) == "no error");
}

TEST_CASE("mla_up_proj under TP with SP says the latents' gather it repeats is costed once") {
  const auto sc = plan_test::scenario(R"(name: v3
hardware: {preset: dgx-h100, nodes: 2}
model: {preset: deepseek-v3, layers: 4}
training: {seq_len: 4096, global_batch: 16, precision: bf16}
strategies:
  - {name: s, tp: 2, dp: 8, ep: 8, etp: 1, sequence_parallel: true, framework: megatron-core, recompute_modules: [mla_up_proj]}
  - {name: t, dp: 16, ep: 8, framework: megatron-core, recompute_modules: [mla_up_proj]}
)");
  REQUIRE(sc.strategies[0].unmodelled.size() == 1);
  CHECK(sc.strategies[0].unmodelled[0] ==
        "test.yaml:6:114: recompute_modules: mla_up_proj re-runs the up projections' tensor-parallel gather of the "
        "latents inside its checkpoint; that gather is costed once");
  CHECK(sc.strategies[1].unmodelled.empty());
}

TEST_CASE("--recompute-modules lands in the strategy; modules with communication inside are notes") {
  const auto sc = plan_test::scenario(mixtral("{name: s}"));
  auto apply = [&](const std::string& args) {
    Strategy s;
    apply_megatron_args(config::read_shell_script("--bf16 --num-experts 8 --moe-grouped-gemm " + args, "args.sh"),
                        sc.model, sc.training, s);
    return s;
  };
  const Strategy s = apply("--recompute-granularity selective --recompute-modules moe_act layernorm --sequence-parallel");
  CHECK(s.recompute_modules == models::RecomputeModules{.core_attn = false, .layernorm = true, .moe_act = true});
  CHECK(s.sequence_parallel);
  CHECK(s.unmodelled.empty());
  const Strategy shared = apply("--recompute-granularity selective --recompute-modules core_attn mlp");
  CHECK(shared.recompute_modules == models::RecomputeModules{});
  CHECK(apply("--recompute-granularity selective --recompute-modules mlp").recompute == Recompute::none);
  REQUIRE(shared.unmodelled.size() == 1);
  CHECK(shared.unmodelled[0].find("--recompute-modules mlp: recomputing mlp re-runs the communication inside it (its tensor-parallel gathers), which is not modelled; costed as kept") != std::string::npos);
  // Megatron-Core reads the modules under selective granularity only.
  const Strategy full = apply("--recompute-granularity full --recompute-method uniform --recompute-num-layers 1 "
                              "--recompute-modules moe_act");
  CHECK(full.recompute == Recompute::full);
  REQUIRE(full.unmodelled.size() == 1);
  CHECK(full.unmodelled[0].find("read with --recompute-granularity selective only") != std::string::npos);
  // The forms scripts use: =, a variable (the DGX Cloud recipes' $RM), a pipe after the list.
  const models::RecomputeModules act{.core_attn = false, .moe_act = true};
  CHECK(apply("--recompute-granularity selective --recompute-modules=moe_act").recompute_modules == act);
  CHECK(apply("RM='moe_act layernorm'\n--recompute-granularity selective --recompute-modules $RM").recompute_modules ==
        models::RecomputeModules{.core_attn = false, .layernorm = true, .moe_act = true});
  CHECK(apply("--recompute-granularity selective --recompute-modules moe_act | tee log").recompute_modules == act);
  CHECK_THROWS_WITH(apply("--recompute-granularity selective --recompute-modules moe_act --recompute-modules layernorm"),
                    doctest::Contains("--recompute-modules: given twice (first at args.sh:1:"));
  CHECK_THROWS_WITH(apply("--recompute-granularity selective --recompute-modules moe_act moe_ack"),
                    doctest::Contains("found 'moe_ack'"));
  CHECK_THROWS_WITH(apply("--recompute-granularity selective --recompute-modules moe_ack"),
                    doctest::Contains("expected one of core_attn, layernorm, moe_act, mla_up_proj, mlp, moe, shared_experts, found 'moe_ack'"));
}

TEST_CASE("moe_act frees each layer's expert activation output from the simulated peak") {
  // dp 8 (pp 1): one microbatch of one 4,096-token sequence is alive at the peak. Each of the 4
  // layers frees expert_down's input, 8 experts × ceil(4096·2/8) rows × 14336 × 2 B; the one
  // layer being re-created in backward holds its copy again (buffers).
  const auto run = [](const std::string& strategy) {
    const auto sc = plan_test::scenario(mixtral(strategy));
    return simulate(sc, sc.strategies[0]);
  };
  const StepResult kept = run("{name: a, dp: 8, framework: megatron-core}");
  const StepResult freed = run("{name: b, dp: 8, framework: megatron-core, recompute_modules: [moe_act]}");
  const std::int64_t per_layer = std::int64_t{8} * 1024 * 14336 * 2;
  CHECK(kept.memory_at_peak.activations - freed.memory_at_peak.activations == 4 * per_layer);
  CHECK(freed.recompute == "selective (moe_act)");
  CHECK(freed.step_time_s > kept.step_time_s);
}
