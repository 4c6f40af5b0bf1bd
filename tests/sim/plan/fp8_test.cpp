// FP8 training (precision: fp8, Transformer Engine's recipe, models/fp8_ops.cpp) through the plan:
// a strategy's own precision beside the scenario's, the FP8 weight copies in memory, the MFU
// conventions, and the errors where FP8 cannot be.
#include <doctest/doctest.h>

#include "models/model_spec.hpp"
#include "sim/config/shell_words.hpp"
#include "sim/plan/megatron_args.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

// A 4-layer GPT of hidden 4096 on one DGX H100 (H100 has FP8), trained in bf16 unless a strategy
// says otherwise. Its GEMMs are large enough for FP8 to pay: at hidden 1024 and 1,024 tokens a
// microbatch, the casts' launches cost more than the GEMMs save, as on real GPUs.
std::string on_h100(const std::string& strategies, const std::string& training_extra = "") {
  return R"(name: fp8
hardware: {preset: dgx-h100}
model: {name: gpt-4l, layers: 4, hidden: 4096, heads: 32, vocab: 32000, max_seq: 2048}
training: {seq_len: 2048, global_batch: 16)" + training_extra + R"(}
strategies:
)" + strategies;
}


}  // namespace

TEST_CASE("a strategy's own precision: FP8 beside bf16 in one scenario, faster and with its weight copies") {
  const auto sc = plan_test::scenario(on_h100("  - {name: bf16, dp: 8}\n  - {name: fp8, dp: 8, precision: fp8}\n"));
  CHECK(precision_of(sc.training, sc.strategies[0]) == Precision::bf16);
  CHECK(precision_of(sc.training, sc.strategies[1]) == Precision::fp8);
  CHECK(fp8_recipe_of(sc.training, sc.strategies[1]) == models::Fp8Recipe::delayed);
  const StepResult bf16 = simulate(sc, sc.strategies[0]);
  const StepResult fp8 = simulate(sc, sc.strategies[1]);
  // The GEMMs run at most 2 x 0.88 faster, and the rest (attention, norms, casts) no faster.
  CHECK(fp8.step_time_s < bf16.step_time_s);
  CHECK(fp8.step_time_s > bf16.step_time_s / 1.76);
  // Every layer's four linear GEMMs keep an FP8 copy and its transpose, 2 bytes per weight:
  // qkv h·3h, out h², up h·4h, down 4h·h with their biases (3h, h, 4h, h); ZeRO-0 holds them all.
  const double h = 4096, f = 4 * h;
  const double fp8_params = 4 * (4 * h * h + 2 * h * f + (sc.model.linear_bias ? 5 * h + f : 0));
  CHECK(static_cast<double>(fp8.memory_at_peak.fp8_weights) == doctest::Approx(2 * fp8_params));
  CHECK(bf16.memory_at_peak.fp8_weights == 0);
  // MFU against the bf16 peak (one scale for both), and against the FP8 peak as NVIDIA states it.
  const auto& gpu = sc.cluster.gpu;
  CHECK(fp8.mfu_fp8_peak == doctest::Approx(fp8.mfu * gpu.peak.bf16 / gpu.peak.fp8));
  CHECK(bf16.mfu_fp8_peak == 0);
  // The casts include the weights' once-per-step cast: read 2, write 1 + 1 bytes per FP8 weight.
  const double weight_cast_s = 4 * fp8_params / (gpu.memory_bytes_per_s * gpu.memory_efficiency);
  CHECK(fp8.fp8_cast_s > weight_cast_s);
  CHECK(fp8.fp8_cast_s < fp8.step_time_s);
  CHECK(bf16.fp8_cast_s == 0);
}

TEST_CASE("FP8 parameters (fp8_param_gather): 1 byte each plus the transpose, no 16-bit copy") {
  const auto sc = plan_test::scenario(on_h100(
      "  - {name: copies, dp: 8, framework: megatron-core}\n"
      "  - {name: params, dp: 8, framework: megatron-core, fp8_param_gather: true}\n", ", precision: fp8"));
  const StepResult copies = simulate(sc, sc.strategies[0]);
  const StepResult params = simulate(sc, sc.strategies[1]);
  const double h = 4096, f = 4 * h;
  const double fp8_params = 4 * (4 * h * h + 2 * h * f + (sc.model.linear_bias ? 5 * h + f : 0));
  CHECK(static_cast<double>(copies.memory_at_peak.fp8_weights) == doctest::Approx(2 * fp8_params));
  CHECK(static_cast<double>(params.memory_at_peak.fp8_weights) == doctest::Approx(fp8_params));
  CHECK(static_cast<double>(copies.memory_at_peak.parameters - params.memory_at_peak.parameters) == doctest::Approx(fp8_params));
  CHECK(params.peak_memory_bytes < copies.peak_memory_bytes);
  CHECK(plan_test::read_error(on_h100("  - {name: s, dp: 8, framework: megatron-core, fp8_param_gather: true}\n")).find(
            "strategies[0].fp8_param_gather: FP8 parameters need precision: fp8, found precision: bf16") != std::string::npos);
}

TEST_CASE("current (tensorwise) scaling reads every cast tensor once more: slower than delayed") {
  const auto sc = plan_test::scenario(
      on_h100("  - {name: d, dp: 8}\n  - {name: t, dp: 8, fp8_recipe: tensorwise}\n", ", precision: fp8"));
  CHECK(fp8_recipe_of(sc.training, sc.strategies[1]) == models::Fp8Recipe::tensorwise);
  const StepResult delayed = simulate(sc, sc.strategies[0]);
  const StepResult tensorwise = simulate(sc, sc.strategies[1]);
  CHECK(tensorwise.fp8_cast_s > delayed.fp8_cast_s);
  CHECK(tensorwise.step_time_s > delayed.step_time_s);
}

TEST_CASE("FP8 where it cannot be is an error at its key") {
  // A100 has no FP8 tensor cores.
  CHECK(plan_test::read_error(plan_test::small_gpt("{name: s, dp: 8, precision: fp8}")) ==
        "test.yaml:6:33: strategies[0].precision: A100-SXM4-80GB has no fp8 tensor cores; expected precision bf16 or fp16");
  CHECK(plan_test::read_error(on_h100("  - {name: s, dp: 8, fp8_recipe: delayed}\n")).find(
            "strategies[0].fp8_recipe: an FP8 scaling recipe needs precision: fp8, found precision: bf16") != std::string::npos);
  CHECK(plan_test::read_error(on_h100("  - {name: s, dp: 8}\n", ", fp8_recipe: tensorwise")).find(
            "training.fp8_recipe: an FP8 scaling recipe needs precision: fp8") != std::string::npos);
  CHECK(plan_test::read_error(on_h100("  - {name: s, dp: 8, fp8_recipe: blockwise}\n", ", precision: fp8")).find(
            "strategies[0].fp8_recipe: expected one of delayed, tensorwise") != std::string::npos);
}

TEST_CASE("Megatron-LM's --fp8-format and --fp8-recipe agree with the strategy's precision") {
  const auto sc = plan_test::scenario(on_h100("  - {name: s}\n", ", precision: fp8"));
  auto apply = [&](const std::string& args) {
    Strategy s;
    apply_megatron_args(config::read_shell_script(args + " --num-layers 4 --hidden-size 4096 --num-attention-heads 32",
                                                  "args.sh"),
                        sc.model, sc.training, s);
    return s;
  };
  CHECK(apply("--bf16 --fp8-format hybrid --fp8-recipe delayed").unmodelled.empty());
  CHECK(apply("--bf16 --fp8-format hybrid --fp8-param-gather").fp8_param_gather);
  CHECK_FALSE(apply("--bf16 --fp8-format hybrid").fp8_param_gather);
  CHECK_THROWS_WITH(apply("--bf16"), doctest::Contains("args.sh:1:1: --bf16: the scenario trains in fp8; expected --fp8-format hybrid"));
  CHECK_THROWS_WITH(apply("--bf16 --fp8-format hybrid --fp8-recipe mxfp8"),
                    doctest::Contains("--fp8-recipe: expected delayed or tensorwise"));
  CHECK_THROWS_WITH(apply("--bf16 --fp8-format hybrid --fp8-recipe tensorwise"),
                    doctest::Contains("--fp8-recipe: the scenario's FP8 recipe is delayed"));
  const auto bf16 = plan_test::scenario(on_h100("  - {name: s}\n"));
  Strategy s;
  CHECK_THROWS_WITH(apply_megatron_args(config::read_shell_script("--bf16 --fp8-format hybrid", "args.sh"), bf16.model,
                                        bf16.training, s),
                    doctest::Contains("--fp8-format: the scenario trains in bf16; expected training.precision: fp8"));
}
