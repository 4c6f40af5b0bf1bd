// Megatron-LM arguments as a strategy (sim/plan/megatron_args.hpp): every flag it models lands in
// the strategy, flags it does not model become positioned notes, and a value that disagrees with
// the scenario or cannot be read is an error at its word.
#include <doctest/doctest.h>

#include "sim/config/shell_words.hpp"
#include "sim/plan/megatron_args.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

// Llama-2 7B's shape in Megatron's flags (32 layers of 4096, 32 heads, SwiGLU 11008, RMSNorm,
// RoPE, untied), on a 2-node DGX H100.
const char* kScenario = R"(name: args
hardware: {preset: dgx-h100, nodes: 2}
model: llama-2-7b
training: {seq_len: 4096, global_batch: 64, precision: bf16}
strategies:
  - {name: s}
)";

const std::string kLlamaShape =
    "--num-layers 32 --hidden-size 4096 --ffn-hidden-size 11008 --num-attention-heads 32 --swiglu "
    "--normalization RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights ";

Strategy apply(const std::string& script_text) {
  const Scenario sc = plan_test::scenario(kScenario);
  Strategy s;
  apply_megatron_args(config::read_shell_script(script_text, "args.sh"), sc.model, sc.training, s);
  return s;
}

}  // namespace

TEST_CASE("--no-gradient-accumulation-fusion adds each weight gradient into main_grad") {
  const Strategy s = apply("--micro-batch-size 1 --global-batch-size 64 --seq-length 4096 --bf16 "
                           "--no-gradient-accumulation-fusion " + kLlamaShape);
  CHECK(s.grad_accumulation == GradAccumulation::main_grad);
}

TEST_CASE("every modelled flag lands in the strategy; absent switches are off, as in Megatron-LM") {
  const Strategy s = apply(
      "TP=2\n"
      "ARGS=(\n"
      "  --tensor-model-parallel-size $TP --pipeline-model-parallel-size 2\n"
      "  --num-layers-per-virtual-pipeline-stage 4\n"
      "  --micro-batch-size 2 --global-batch-size 64 --seq-length 4096 --bf16\n"
      "  --sequence-parallel --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather\n"
      "  --tp-comm-overlap --grad-reduce-in-bf16 --ddp-bucket-size 20000000\n"
      "  --recompute-granularity selective\n"
      "  " + kLlamaShape + "\n)\n");
  CHECK(s.framework == Framework::megatron_core);
  CHECK(s.tp == 2);
  CHECK(s.pp == 2);
  CHECK(s.schedule == ScheduleKind::interleaved);
  CHECK(s.v == 4);  // 32 layers / pp 2 = 16 per stage, 4 per virtual stage
  CHECK(s.micro_batch == 2);
  CHECK(s.sequence_parallel);
  CHECK(s.distributed_optimizer);
  CHECK(s.dp_overlap);
  CHECK(s.overlap_param_gather);
  CHECK(s.tp_comm_overlap);
  CHECK(s.grad_reduce_in_bf16);
  CHECK(s.grad_accumulation == GradAccumulation::fused);  // Megatron's default
  CHECK(s.dp_bucket_params == 20'000'000);
  CHECK_FALSE(s.dp_bucket_from_dp);
  CHECK(s.recompute == Recompute::selective);
  CHECK(s.flash_attention);  // TransformerEngine, the default --transformer-impl
  CHECK(s.where.tp == config::SourcePos{"args.sh", 3, 32});
  CHECK(s.unmodelled.empty());

  const Strategy bare = apply("--micro-batch-size 1 --bf16 " + kLlamaShape);
  CHECK(bare.tp == 1);
  CHECK(bare.schedule == ScheduleKind::one_f_one_b);
  CHECK_FALSE(bare.sequence_parallel);
  CHECK_FALSE(bare.distributed_optimizer);
  CHECK_FALSE(bare.dp_overlap);
  CHECK_FALSE(bare.overlap_param_gather);
  CHECK_FALSE(bare.tp_comm_overlap);
  CHECK(bare.dp_bucket_from_dp);  // Megatron-Core's default bucket
  CHECK(bare.recompute == Recompute::none);
  CHECK_FALSE(apply("--bf16 --transformer-impl local " + kLlamaShape).flash_attention);
  CHECK(apply("--bf16 --transformer-impl local --use-flash-attn " + kLlamaShape).flash_attention);
  CHECK_FALSE(apply("--bf16 --attention-backend unfused " + kLlamaShape).flash_attention);
  CHECK(apply("--bf16 --recompute-activations " + kLlamaShape).recompute == Recompute::selective);
  CHECK(apply("--bf16 --num-virtual-stages-per-pipeline-rank 1 " + kLlamaShape).schedule == ScheduleKind::one_f_one_b);
}

TEST_CASE("flags that change the cost and are not modelled are notes with their position, in file order") {
  const Strategy s = apply(
      "--bf16 --clip-grad 1.0\n"
      "--rampup-batch-size 16 16 5859375 --lr 1e-4 --data-path /data/x\n"
      "--recompute-granularity full --recompute-method block --recompute-num-layers 2\n"
      "--my-own-flag 3 " + kLlamaShape);
  REQUIRE(s.unmodelled.size() == 4);
  CHECK(s.unmodelled[0] == "args.sh:1:8: --clip-grad: the gradient norm's pass over every gradient is not costed");
  CHECK(s.unmodelled[1] == "args.sh:2:1: --rampup-batch-size: the batch ramp-up is not modelled: every step is costed at the global batch");
  CHECK(s.unmodelled[2].find("args.sh:3:1: --recompute-granularity: full recompute is costed as every layer") == 0);
  CHECK(s.unmodelled[3] == "args.sh:4:1: --my-own-flag: not a Megatron-LM argument stepsim knows; not modelled");
  CHECK(s.recompute == Recompute::full);
  // --recompute-method uniform --recompute-num-layers 1 is what stepsim's full recompute is.
  CHECK(apply("--bf16 --recompute-granularity full --recompute-method uniform --recompute-num-layers 1 " + kLlamaShape)
            .unmodelled.empty());
}

TEST_CASE("a value that disagrees with the scenario or cannot be read is an error at its word") {
  CHECK_THROWS_WITH(apply("--bf16 --global-batch-size 128 " + kLlamaShape),
                    "args.sh:1:28: --global-batch-size: expected 64 (the scenario's training.global_batch), found 128");
  CHECK_THROWS_WITH(apply("--bf16 --seq-length 2048 " + kLlamaShape), doctest::Contains("args.sh:1:21: --seq-length: expected 4096"));
  CHECK_THROWS_WITH(apply("--fp16 " + kLlamaShape), doctest::Contains("args.sh:1:1: --fp16: the scenario trains in bf16"));
  CHECK_THROWS_WITH(apply(kLlamaShape), doctest::Contains("expected --bf16 or --fp16"));
  CHECK_THROWS_WITH(apply("--bf16 --tensor-model-parallel-size two " + kLlamaShape),
                    doctest::Contains("args.sh:1:37: --tensor-model-parallel-size: expected an integer from 1 to 1048576, found 'two'"));
  CHECK_THROWS_WITH(apply("--bf16 --tensor-model-parallel-size $TP " + kLlamaShape),
                    doctest::Contains("expected a value stepsim can read without running the script: $TP is not assigned"));
  CHECK_THROWS_WITH(apply("--bf16 --micro-batch-size 1\n--micro-batch-size 2 " + kLlamaShape),
                    doctest::Contains("args.sh:2:20: --micro-batch-size: given twice with different values: 1 at args.sh:1:27"));
  // Expert parallelism is read (the MoE case below); on a dense model check_strategy refuses it.
  CHECK(apply("--bf16 --expert-model-parallel-size 2 " + kLlamaShape).ep == 2);
  // Context parallelism is read (its checks against the machine are check_strategy's).
  const Strategy cp = apply("--bf16 --context-parallel-size 2 " + kLlamaShape);
  CHECK(cp.cp == 2);
  CHECK(cp.where.cp.line == 1);
  CHECK_THROWS_WITH(apply("--bf16 --num-layers 40 --hidden-size 4096 --num-attention-heads 32 --swiglu "
                          "--ffn-hidden-size 11008 --untie-embeddings-and-output-weights"),
                    doctest::Contains("--num-layers: expected 32 (the scenario's model llama-2-7b has layers 32), found 40"));
  CHECK_THROWS_WITH(apply("--bf16 --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --untie-embeddings-and-output-weights"),
                    doctest::Contains("without --swiglu the MLP is GELU"));
  CHECK_THROWS_WITH(apply("--bf16 --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 5 " + kLlamaShape),
                    doctest::Contains("expected a divisor of the 16 layers per pipeline stage"));
  CHECK_THROWS_WITH(apply("--bf16 --micro-batch-size"), doctest::Contains("expected a value after --micro-batch-size"));
}

TEST_CASE("a strategy names its arguments file, which then sets the strategy; writing a key twice is refused") {
  // The shipped example: Megatron-LM's own GPT-3 175B script.
  const auto sc = load_scenario(std::string(STEPSIM_DATA_DIR) + "/scenarios/gpt3_175b_megatron_args.yaml");
  const Strategy& s = sc.strategies.front();
  CHECK(s.framework == Framework::megatron_core);
  CHECK(s.tp == 8);
  CHECK(s.pp == 16);
  CHECK(s.micro_batch == 1);
  CHECK_FALSE(s.distributed_optimizer);
  CHECK_FALSE(s.dp_overlap);
  REQUIRE(s.unmodelled.size() == 2);  // --rampup-batch-size and --clip-grad
  CHECK_THROWS_WITH(plan_test::scenario(std::string(kScenario) + "  - {name: t, megatron_args: x.sh, tp: 2}\n"),
                    doctest::Contains("tp is set by the Megatron arguments 'x.sh'; write it in one place"));
  CHECK_THROWS_WITH(plan_test::scenario(std::string(kScenario) + "  - {name: t, megatron_args: x.sh, framework: deepspeed}\n"),
                    doctest::Contains("runs framework: megatron-core"));
  CHECK_THROWS_WITH(plan_test::scenario(std::string(kScenario) + "  - {name: t, megatron_args: x.sh}\n"),
                    doctest::Contains("no Megatron arguments at x.sh"));
}

TEST_CASE("Megatron-Core's MoE flags: expert parallelism and the dispatcher land in the strategy, the layer is checked against the model") {
  const Scenario sc = plan_test::scenario(R"(name: moe
hardware: {preset: dgx-h100, nodes: 2}
model: mixtral-8x7b
training: {seq_len: 4096, global_batch: 64, precision: bf16}
strategies:
  - {name: s}
)");
  auto apply_moe = [&](const std::string& args) {
    Strategy s;
    apply_megatron_args(config::read_shell_script("--bf16 " + args, "args.sh"), sc.model, sc.training, s);
    return s;
  };
  const Strategy s = apply_moe(
      "--tensor-model-parallel-size 2 --sequence-parallel --expert-model-parallel-size 8 --expert-tensor-parallel-size 1 "
      "--num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 14336 --moe-grouped-gemm "
      "--moe-token-dispatcher-type flex --moe-enable-deepep --moe-aux-loss-coeff 1e-2");
  CHECK(s.ep == 8);
  CHECK(s.etp == 1);
  CHECK(s.moe_deepep);
  CHECK(s.where.ep.line == 1);
  CHECK(s.unmodelled.empty());
  // The dispatcher without DeepEP is the plain all-to-all; without grouped GEMMs the experts run
  // one by one in Megatron-Core, which is said.
  const Strategy plain = apply_moe("--expert-model-parallel-size 4 --num-experts 8 --moe-token-dispatcher-type alltoall");
  CHECK(plain.ep == 4);
  CHECK_FALSE(plain.moe_deepep);
  REQUIRE(plain.unmodelled.size() == 1);
  CHECK(plain.unmodelled[0].find("--num-experts: without --moe-grouped-gemm") != std::string::npos);
  CHECK(apply_moe("--num-experts 8 --moe-grouped-gemm --moe-router-num-groups 4").unmodelled.front().find(
            "node-limited routing is not modelled") != std::string::npos);
  // What the arguments build must be the scenario's model.
  CHECK_THROWS_WITH(apply_moe("--num-experts 16"),
                    doctest::Contains("args.sh:1:22: --num-experts: expected 8 (the scenario's model mixtral-8x7b has moe.experts 8), found 16"));
  CHECK_THROWS_WITH(apply_moe("--moe-router-topk 1"), doctest::Contains("--moe-router-topk: expected 2"));
  CHECK_THROWS_WITH(apply_moe("--moe-enable-deepep"), doctest::Contains("--moe-enable-deepep: DeepEP needs --moe-token-dispatcher-type flex"));
  CHECK_THROWS_WITH(apply_moe("--moe-token-dispatcher-type a2a"), doctest::Contains("expected allgather, alltoall or flex, found 'a2a'"));
  CHECK_THROWS_WITH(apply_moe("--moe-expert-capacity-factor 1.25"), doctest::Contains("has moe.capacity_factor 0 (dropless), found 1.25"));
  CHECK_THROWS_WITH(apply(kLlamaShape + " --bf16 --num-experts 8"), doctest::Contains("is dense; expected no --num-experts"));
}

TEST_CASE("the precision-aware optimizer's dtypes set Adam's state bytes; without it they are notes") {
  const Strategy s = apply("--bf16 --use-distributed-optimizer --use-precision-aware-optimizer --main-params-dtype fp16 "
                           "--exp-avg-dtype bf16 --exp-avg-sq-dtype fp8 --main-grads-dtype bf16 " + kLlamaShape);
  CHECK(s.optimizer_states == models::OptimizerStates{.master = 2, .exp_avg = 2, .exp_avg_sq = 1});
  CHECK(s.grad_reduce_in_bf16);
  const Strategy plain = apply("--bf16 --exp-avg-dtype bf16 " + kLlamaShape);
  CHECK(plain.optimizer_states == models::OptimizerStates{});
  REQUIRE(plain.unmodelled.size() == 1);
  CHECK(plain.unmodelled[0] == "args.sh:1:8: --exp-avg-dtype: has effect only with --use-precision-aware-optimizer; fp32 as "
                               "Megatron-Core keeps it");
  CHECK_THROWS_WITH_AS(apply("--bf16 --use-distributed-optimizer --use-precision-aware-optimizer --main-params-dtype bf16 " +
                             kLlamaShape),
                       "args.sh:1:88: --main-params-dtype: expected one of fp32, fp16, found 'bf16'", config::ConfigError);
  CHECK_THROWS_WITH_AS(apply("--bf16 --use-precision-aware-optimizer " + kLlamaShape),
                       "args.sh:1:8: --use-precision-aware-optimizer: Megatron-Core's precision-aware optimizer needs "
                       "--use-distributed-optimizer",
                       config::ConfigError);
  // --main-grads-dtype bf16 reduces in bf16 with or without the precision-aware optimizer; fp32
  // leaves --grad-reduce-in-bf16 as it is.
  CHECK(apply("--bf16 --main-grads-dtype bf16 " + kLlamaShape).grad_reduce_in_bf16);
  CHECK(apply("--bf16 --grad-reduce-in-bf16 --main-grads-dtype fp32 " + kLlamaShape).grad_reduce_in_bf16);
  CHECK(apply("--bf16 --exp-avg-dtype fp32 " + kLlamaShape).unmodelled.empty());
}
