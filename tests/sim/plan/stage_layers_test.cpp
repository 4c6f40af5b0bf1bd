// Uneven first and last pipeline stages (Strategy::first_stage_layers / last_stage_layers): the
// layers each stage holds, what the check refuses, and the step the pipeline's slowest stage sets.
#include <doctest/doctest.h>

#include <limits>

#include "sim/config/shell_words.hpp"
#include "sim/plan/megatron_args.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

// Free communication, no embedding or head, no optimizer, instant host: a stage's pass is its
// layers' compute, so the schedule's dependencies alone set the step.
StepResult run_free(const std::string& strategy, int global_batch) {
  auto sc = plan_test::scenario(plan_test::small_gpt(strategy, global_batch));
  return simulate(sc, sc.strategies[0], plan_test::ideal_network(std::numeric_limits<double>::infinity()));
}

int stage_layers(const StepResult& r, int stage) {
  for (const auto& rank : r.ranks)
    if (rank.pp == stage) return rank.layers;
  FAIL("no rank of stage " << stage);
  return 0;
}

}  // namespace

TEST_CASE("first and last stage layers, the rest split evenly between them") {
  // 8 layers on pp 4: first 1, last 3, the two middle stages 2 each.
  const StepResult r = run_free("{name: s, pp: 4, dp: 2, schedule: gpipe, first_stage_layers: 1, last_stage_layers: 3}", 16);
  CHECK(stage_layers(r, 0) == 1);
  CHECK(stage_layers(r, 1) == 2);
  CHECK(stage_layers(r, 2) == 2);
  CHECK(stage_layers(r, 3) == 3);
  // Only the last given: the other three share 8 - 5 = 3; only the first: 8 - 5 over three.
  const StepResult last = run_free("{name: s, pp: 4, dp: 2, last_stage_layers: 5}", 16);
  for (int stage = 0; stage < 3; ++stage) CHECK(stage_layers(last, stage) == 1);
  CHECK(stage_layers(last, 3) == 5);
  const StepResult first = run_free("{name: s, pp: 4, dp: 2, first_stage_layers: 5}", 16);
  CHECK(stage_layers(first, 0) == 5);
  for (int stage = 1; stage < 4; ++stage) CHECK(stage_layers(first, stage) == 1);
}

TEST_CASE("the slowest stage sets the step: GPipe's phases each take the sum of the stages plus (m-1) of the slowest") {
  // A permutation flow shop of m identical items over stages of t_s each takes sum(t_s) +
  // (m - 1)·max(t_s); GPipe runs one such phase forward and one backward. Stage passes are
  // proportional to their layers: [2,2,2,2] gives 8 + 2(m-1) layer-passes a phase, [1,2,2,3]
  // gives 8 + 3(m-1). m = 8: 22 and 29.
  const StepResult even = run_free("{name: s, pp: 4, dp: 2, schedule: gpipe}", 16);
  const StepResult uneven =
      run_free("{name: s, pp: 4, dp: 2, schedule: gpipe, first_stage_layers: 1, last_stage_layers: 3}", 16);
  REQUIRE(even.microbatches == 8);
  CHECK(uneven.step_time_s / even.step_time_s == doctest::Approx(29.0 / 22.0).epsilon(1e-9));
}

TEST_CASE("an uneven layout the stages cannot share, or without a pipeline, is refused at its key") {
  CHECK(plan_test::strategy_error(plan_test::small_gpt("{name: s, pp: 4, dp: 2, first_stage_layers: 3}"))
            .find("first_stage_layers: expected the other 3 stages to share the remaining 5 of the model's 8 layers "
                  "evenly") != std::string::npos);
  CHECK(plan_test::strategy_error(plan_test::small_gpt("{name: s, dp: 8, last_stage_layers: 2}"))
            .find("last_stage_layers places layers on pipeline stages; it needs pp > 1, found pp = 1") != std::string::npos);
  CHECK(plan_test::strategy_error(
            plan_test::small_gpt("{name: s, pp: 2, dp: 4, schedule: interleaved, v: 2, first_stage_layers: 2}"))
            .find("with the interleaved schedule (v > 1) is not modelled yet") != std::string::npos);
  CHECK(plan_test::strategy_error(plan_test::small_gpt("{name: s, pp: 2, dp: 4, first_stage_layers: 3, last_stage_layers: 4}"))
            .find("expected the other 0 stages to share the remaining 1") != std::string::npos);
  // At the value, with the file's line and column.
  CHECK(plan_test::strategy_error(plan_test::small_gpt("{name: s, pp: 4, dp: 2, first_stage_layers: 3}"))
            .find("test.yaml:6:49: strategies[0].first_stage_layers:") == 0);
  CHECK(plan_test::read_error(plan_test::small_gpt("{name: s, pp: 2, dp: 4, first_stage_layers: 0}"))
            .find("test.yaml:6:49: strategies[0].first_stage_layers: expected") == 0);
}

TEST_CASE("Megatron-LM's --decoder-first/last-pipeline-num-layers set the layout") {
  const auto sc = plan_test::scenario(plan_test::small_gpt("{name: s}"));
  Strategy s;
  apply_megatron_args(config::read_shell_script("--pipeline-model-parallel-size 4 --decoder-first-pipeline-num-layers 1 "
                                                "--decoder-last-pipeline-num-layers 3 --num-layers 8 --bf16",
                                                "args.sh"),
                      sc.model, sc.training, s);
  CHECK(s.first_stage_layers == 1);
  CHECK(s.last_stage_layers == 3);
  CHECK(s.where.stage_layers.line == 1);
  CHECK(s.where.stage_layers.column == 70);  // the first flag's value, which a layout error names
  CHECK_THROWS_WITH(apply_megatron_args(config::read_shell_script("--pipeline-model-parallel-size 4 --num-layers 8 --bf16 "
                                                                  "--decoder-last-pipeline-num-layers 2 "
                                                                  "--num-layers-per-virtual-pipeline-stage 1",
                                                                  "args.sh"),
                                        sc.model, sc.training, s),
                    doctest::Contains("virtual stages with an uneven first or last stage are not modelled"));
}

namespace {

// small_gpt with `layers` layers and Megatron-Core's framework.
std::string gpt_of(int layers, const std::string& strategy) {
  std::string yaml = plan_test::small_gpt(strategy);
  const std::string eight = "layers: 8,";
  return yaml.replace(yaml.find(eight), eight.size(), "layers: " + std::to_string(layers) + ",");
}

}  // namespace

TEST_CASE("the embedding and the loss counted as layers: (L + 2) / (p·v) a virtual stage, one fewer at each end") {
  // 14 layers + 2 = 16 over pp 4 · v 2 = 8 virtual stages of 2: virtual stage 0 (the embedding's)
  // and 7 (the loss's) build 1. Stage s holds virtual stages s and s + 4: 1+2, 2+2, 2+2, 2+1.
  const auto sc = plan_test::scenario(gpt_of(
      14, "{name: s, pp: 4, dp: 2, schedule: interleaved, v: 2, framework: megatron-core, "
          "pipeline_split_counts: [embedding, loss]}"));
  const StepResult r = simulate(sc, sc.strategies[0], plan_test::ideal_network(std::numeric_limits<double>::infinity()));
  CHECK(stage_layers(r, 0) == 3);
  CHECK(stage_layers(r, 1) == 4);
  CHECK(stage_layers(r, 2) == 4);
  CHECK(stage_layers(r, 3) == 3);
  // The embedding alone: 15 + 1 = 16 over 4 stages of 4, the first building 3.
  const auto emb = plan_test::scenario(gpt_of(15, "{name: s, pp: 4, dp: 2, framework: megatron-core, "
                                                  "pipeline_split_counts: [embedding]}"));
  const StepResult e = simulate(emb, emb.strategies[0], plan_test::ideal_network(std::numeric_limits<double>::infinity()));
  CHECK(stage_layers(e, 0) == 3);
  for (int stage = 1; stage < 4; ++stage) CHECK(stage_layers(e, stage) == 4);
}

TEST_CASE("counting the embedding and the loss is refused where Megatron-Core would assert, or a stage would hold none") {
  const std::string mc = "framework: megatron-core, pipeline_split_counts: [embedding, loss]";
  CHECK(plan_test::strategy_error(plan_test::small_gpt("{name: s, pp: 4, dp: 2, " + mc + "}"))
            .find("pipeline_split_counts: expected the 8 layers + the embedding + the loss = 10 to divide evenly over "
                  "pp·v = 4 virtual stages") != std::string::npos);
  // 10 over 10 virtual stages: the first and the last would hold the embedding or the loss alone.
  CHECK(plan_test::strategy_error(plan_test::small_gpt("{name: s, pp: 2, dp: 4, schedule: interleaved, v: 5, " + mc + "}"))
            .find("leave the first or the last with no transformer layer") != std::string::npos);
  CHECK(plan_test::strategy_error(plan_test::small_gpt("{name: s, pp: 2, dp: 4, first_stage_layers: 3, " + mc + "}"))
            .find("first_stage_layers / last_stage_layers exclude each other") != std::string::npos);
  CHECK(plan_test::read_error(plan_test::small_gpt("{name: s, pp: 2, dp: 4, pipeline_split_counts: [loss]}"))
            .find("pipeline_split_counts is Megatron-Core's --account-for-embedding/loss-in-pipeline-split: it needs "
                  "framework: megatron-core") != std::string::npos);
  CHECK(plan_test::read_error(plan_test::small_gpt("{name: s, pp: 2, dp: 4, framework: megatron-core, "
                                                   "pipeline_split_counts: [loss, loss]}"))
            .find("'loss' is listed twice") != std::string::npos);
  CHECK(plan_test::read_error(plan_test::small_gpt("{name: s, pp: 2, dp: 4, framework: megatron-core, "
                                                   "pipeline_split_counts: [head]}"))
            .find("pipeline_split_counts") != std::string::npos);
}

TEST_CASE("Megatron-LM's --account-for-embedding/loss-in-pipeline-split count them in the split and the virtual size") {
  const auto sc = plan_test::scenario(gpt_of(14, "{name: s}"));
  Strategy s;
  // (14 + 2) / pp 2 = 8 layers a stage, 2 a virtual stage: v = 4.
  apply_megatron_args(config::read_shell_script("--pipeline-model-parallel-size 2 --num-layers 14 --bf16 "
                                                "--account-for-embedding-in-pipeline-split "
                                                "--account-for-loss-in-pipeline-split "
                                                "--num-layers-per-virtual-pipeline-stage 2",
                                                "args.sh"),
                      sc.model, sc.training, s);
  CHECK(s.split_counts_embedding);
  CHECK(s.split_counts_loss);
  CHECK(s.v == 4);
  CHECK(s.where.pipeline_split.column == 57);  // the first of the two flags
  CHECK(s.unmodelled.empty());
  Strategy loss_first;
  apply_megatron_args(config::read_shell_script("--pipeline-model-parallel-size 2 --num-layers 14 --bf16 "
                                                "--account-for-loss-in-pipeline-split "
                                                "--account-for-embedding-in-pipeline-split",
                                                "args.sh"),
                      sc.model, sc.training, loss_first);
  CHECK(loss_first.where.pipeline_split.column == 57);
  // Without them, 14 / 2 = 7 layers a stage, which 2 does not divide.
  Strategy plain;
  CHECK_THROWS_WITH(apply_megatron_args(config::read_shell_script("--pipeline-model-parallel-size 2 --num-layers 14 --bf16 "
                                                                  "--num-layers-per-virtual-pipeline-stage 2",
                                                                  "args.sh"),
                                        sc.model, sc.training, plain),
                    doctest::Contains("expected a divisor of the 7 layers per pipeline stage (14 layers / pp 2)"));
}
