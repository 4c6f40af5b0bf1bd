// torchtitan TOML job configs as a strategy (sim/plan/torchtitan_config.hpp): every key it models
// lands in the strategy, keys it does not model are positioned notes in file order, and a value that
// disagrees with the scenario or that stepsim cannot simulate is an error at its position.
#include <doctest/doctest.h>

#include "sim/plan/torchtitan_config.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

// Llama 3 8B on 4 DGX A100 (32 GPUs).
const char* kScenario = R"(name: titan
hardware: {preset: dgx-a100, nodes: 4}
model: llama-3-8b
training: {seq_len: 8192, global_batch: 32, precision: bf16}
strategies:
  - {name: s}
)";

Strategy apply(const std::string& toml) {
  const Scenario sc = plan_test::scenario(kScenario);
  Strategy s;
  apply_torchtitan_config(toml, "t.toml", sc.model, sc.training, sc.cluster.gpu_count(), s);
  return s;
}

}  // namespace

TEST_CASE("the modelled keys land in the strategy: FSDP2 over the shard degree, HSDP with replicas") {
  const Strategy s = apply(
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n"
      "[training]\nlocal_batch_size = 2\nseq_len = 8192\n"
      "[parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 2\n"
      "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"op\"\n");
  CHECK(s.framework == Framework::fsdp);
  CHECK(s.tp == 2);
  CHECK(s.sequence_parallel);
  CHECK(s.pp == 1);
  CHECK(s.dp == 16);               // replicate 2 x the leftover shard degree 32 / (2 · 2) = 8
  CHECK(s.zero_stage == 3);
  CHECK(s.fsdp_shard_degree == 8); // HSDP: shard groups of 8, 2 replicas
  CHECK(s.fsdp_reduce_fp32);
  CHECK(s.micro_batch == 2);
  CHECK(s.recompute == Recompute::selective);
  CHECK(s.selective_policy == models::SelectivePolicy::torch_ops);  // selective_ac_option = "op"
  CHECK(s.where.tp == config::SourcePos{"t.toml", 10, 26});
  CHECK(s.unmodelled.empty());
  // The old key name, replication alone (DDP), full checkpointing, and every-block selective AC.
  const Strategy ddp = apply(
      "[training]\nbatch_size = 1\n[parallelism]\ndata_parallel_replicate_degree = 32\ndata_parallel_shard_degree = 1\n"
      "[activation_checkpoint]\nmode = \"full\"\n");
  CHECK(ddp.zero_stage == 0);
  CHECK(ddp.dp == 32);
  CHECK(ddp.fsdp_shard_degree == 0);
  CHECK(ddp.recompute == Recompute::full);
  CHECK(apply("[training]\nlocal_batch_size = 1\n[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = '1'\n")
            .recompute == Recompute::full);
  // Pipeline parallelism without sharding: the schedule and its microbatch size.
  const Strategy pp = apply(
      "[training]\nlocal_batch_size = 8\nglobal_batch_size = 32\n"
      "[parallelism]\ndata_parallel_shard_degree = 1\ndata_parallel_replicate_degree = 4\npipeline_parallel_degree = 8\n"
      "pipeline_parallel_schedule = \"Interleaved1F1B\"\npipeline_parallel_layers_per_stage = 2\n"
      "pipeline_parallel_microbatch_size = 2\n");
  CHECK(pp.pp == 8);
  CHECK(pp.schedule == ScheduleKind::interleaved);
  CHECK(pp.v == 2);  // 32 layers / 2 per stage = 16 stages over 8 ranks
  CHECK(pp.micro_batch == 2);
  // FSDP2 with PP, as torchtitan runs it: kept gathered across microbatches, gradients reduced
  // after each stage's last backward. Without PP, "never" keeps them from forward to backward.
  const Strategy fsdp_pp = apply("[training]\nlocal_batch_size = 4\n[parallelism]\npipeline_parallel_degree = 4\n");
  CHECK(fsdp_pp.pp == 4);
  CHECK(fsdp_pp.dp == 8);
  CHECK(fsdp_pp.zero_stage == 3);
  CHECK(fsdp_pp.fsdp_keeps_gathered());
  CHECK(fsdp_pp.fsdp_defers_gradient_reduction());
  CHECK(apply("[training]\nlocal_batch_size = 1\n[parallelism]\nfsdp_reshard_after_forward = \"never\"\n").zero_stage == 2);
  CHECK(apply("[training]\nlocal_batch_size = 1\n[parallelism]\nfsdp_reshard_after_forward = \"always\"\n").zero_stage == 3);
}

TEST_CASE("keys that change the cost and are not modelled are notes with their position, in file order") {
  const Strategy s = apply(
      "[model]\nconverters = [\"float8\"]\n"
      "[training]\nlocal_batch_size = 1\nmax_norm = 1.0\n"
      "[parallelism]\nenable_async_tensor_parallel = true\n"
      "[compile]\nenable = true\n"
      "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = '2'\n"
      "[liger_kernel]\nenable_fused_linear_cross_entropy = false\n");
  REQUIRE(s.unmodelled.size() == 6);
  CHECK(s.unmodelled[0] == "t.toml:2:14: model.converters: float8 linear layers are not modelled; costed at the scenario's precision");
  CHECK(s.unmodelled[1] == "t.toml:5:12: training.max_norm: the gradient norm's pass over every gradient is not costed");
  CHECK(s.unmodelled[2].find("t.toml:7:32: parallelism.enable_async_tensor_parallel: async TP is not modelled") == 0);
  CHECK(s.unmodelled[3] == "t.toml:9:10: compile.enable: torch.compile: the norms, rotary and activation are costed as fused kernels; its other fusions are not modelled");
  CHECK(s.unmodelled[4].find("t.toml:12:23: activation_checkpoint.selective_ac_option: checkpointing one block in every 2") == 0);
  CHECK(s.unmodelled[5] == "t.toml:13:1: liger_kernel: not a torchtitan section stepsim knows; not modelled");
}

TEST_CASE("a value that disagrees with the scenario, or that stepsim cannot simulate, is an error at its position") {
  CHECK_THROWS_WITH(apply("[training]\nlocal_batch_size = 2\n"),
                    "t.toml:2:20: training: this config trains 64 sequences per step (local batch 2 x DP 32); the scenario's "
                    "training.global_batch is 32");
  CHECK_THROWS_WITH(apply("[training]\nlocal_batch_size = 1\nseq_len = 4096\n"),
                    doctest::Contains("t.toml:3:11: training.seq_len: expected 8192"));
  CHECK_THROWS_WITH(apply("[model]\nname = \"llama3\"\nflavor = \"70B\"\n[training]\nlocal_batch_size = 1\n"),
                    doctest::Contains("t.toml:3:10: model.flavor: llama3 70B has layers 80, the scenario's model llama-3-8b 32"));
  CHECK_THROWS_WITH(apply("[training]\nlocal_batch_size = 8\n[parallelism]\npipeline_parallel_degree = 4\n"
                          "fsdp_reshard_after_forward = \"always\"\n"),
                    doctest::Contains("t.toml:5:30: parallelism.fsdp_reshard_after_forward: resharding after every forward"));
  CHECK_THROWS_WITH(apply("[training]\nlocal_batch_size = 1\n[parallelism]\nfsdp_reshard_after_forward = \"sometimes\"\n"),
                    doctest::Contains("t.toml:4:30: parallelism.fsdp_reshard_after_forward: expected default, always or never"));
  CHECK_THROWS_WITH(apply("[training]\nlocal_batch_size = 1\n[parallelism]\nexpert_parallel_degree = 2\n"),
                    doctest::Contains("t.toml:4:26: parallelism.expert_parallel_degree: expert parallelism over FSDP-sharded experts is not modelled"));
  CHECK_THROWS_WITH(apply("[training]\nlocal_batch_size = 8\n[parallelism]\ndata_parallel_shard_degree = 1\n"
                          "data_parallel_replicate_degree = 4\npipeline_parallel_degree = 8\npipeline_parallel_schedule = \"ZBVZeroBubble\"\n"),
                    doctest::Contains("expected 1F1B, GPipe or Interleaved1F1B"));
  CHECK_THROWS_WITH(apply("[training]\nlocal_batch_size = \"two\"\n"),
                    doctest::Contains("t.toml:2:20: training.local_batch_size: expected an integer from 1 to 1048576, found 'two'"));
  // A float where an integer belongs is refused, not converted: tools/fuzz found 4e21 reaching
  // toml++'s float-to-integer cast (undefined out of range; tests/fuzz/corpus/torchtitan_config/
  // regression-float-degree).
  CHECK_THROWS_WITH(apply("[parallelism]\ntensor_parallel_degree = 4000000099999e9\n"),
                    doctest::Contains("t.toml:2:26: parallelism.tensor_parallel_degree: expected an integer from 1 to"));
  CHECK_THROWS_WITH(apply("[training]\nlocal_batch_size = 2.0\n"),
                    doctest::Contains("t.toml:2:20: training.local_batch_size: expected an integer from 1 to 1048576, found 2.000000"));
  CHECK_THROWS_WITH(apply("[training\nlocal_batch_size = 1\n"), doctest::Contains("t.toml:1:"));
  CHECK_THROWS_WITH(apply("[training]\nlocal_batch_size = 1\nmixed_precision_param = \"float32\"\n"),
                    doctest::Contains("t.toml:3:25: training.mixed_precision_param: this config trains in float32"));
}

TEST_CASE("the shipped torchtitan preset runs as a strategy") {
  const auto sc = load_scenario(std::string(STEPSIM_DATA_DIR) + "/scenarios/llama3_70b_torchtitan.yaml");
  const Strategy& s = sc.strategies.front();
  CHECK(s.framework == Framework::fsdp);
  CHECK(s.tp == 8);
  CHECK(s.dp == 8);
  CHECK(s.zero_stage == 3);
  CHECK(s.micro_batch == 8);
  CHECK(s.recompute == Recompute::full);
  REQUIRE(s.unmodelled.size() == 1);  // max_norm
  CHECK_THROWS_WITH(plan_test::scenario(std::string(kScenario) + "  - {name: t, torchtitan_config: x.toml, tp: 2}\n"),
                    doctest::Contains("tp is set by the torchtitan config 'x.toml'; write it in one place"));
}

TEST_CASE("context parallelism: its degree leaves the rest to the shard degree, FSDP shards over dp_shard x cp") {
  // 32 GPUs, cp 4, tp 2: the leftover shard degree is 32 / (2 · 4) = 4; a local batch of 8 over
  // dp 4 is the scenario's 32 sequences. torchtitan's default rotation (allgather) is said.
  const Strategy s = apply("[training]\nlocal_batch_size = 8\n[parallelism]\ncontext_parallel_degree = 4\ntensor_parallel_degree = 2\n");
  CHECK(s.cp == 4);
  CHECK(s.dp == 4);
  CHECK(s.zero_stage == 3);
  CHECK(s.where.cp.line == 4);
  REQUIRE(s.unmodelled.size() == 1);
  CHECK(s.unmodelled[0].find("t.toml:4:27: parallelism.context_parallel_rotate_method: the all-gather rotation") == 0);
  CHECK(apply("[training]\nlocal_batch_size = 8\n[parallelism]\ncontext_parallel_degree = 4\ntensor_parallel_degree = 2\n"
              "context_parallel_rotate_method = \"alltoall\"\n").unmodelled.empty());
  // Only FSDP over the CP ranks: cp 2 with a shard degree of 1 still shards.
  CHECK(apply("[training]\nlocal_batch_size = 2\n[parallelism]\ncontext_parallel_degree = 2\ndata_parallel_shard_degree = 1\n"
              "data_parallel_replicate_degree = 16\n").zero_stage == 3);
}

TEST_CASE("torchtitan's Llama runs its norms, rotary and SwiGLU eager unless it compiles") {
  const models::EagerOps all{.norm = true, .rotary = true, .activation = true};
  CHECK(apply("[training]\nlocal_batch_size = 1\n").eager_ops == all);
  CHECK(apply("[training]\nlocal_batch_size = 1\n[compile]\nenable = true\n").eager_ops == models::EagerOps{});
  CHECK(apply("[training]\nlocal_batch_size = 1\ncompile = true\n").eager_ops == models::EagerOps{});
  // The older norm_type: the Triton fused RMSNorm is one kernel; another norm is a note.
  CHECK(apply("[model]\nnorm_type = \"fused_rmsnorm\"\n[training]\nlocal_batch_size = 1\n").eager_ops ==
        models::EagerOps{.rotary = true, .activation = true});
  const Strategy ln = apply("[model]\nnorm_type = \"layernorm\"\n[training]\nlocal_batch_size = 1\n");
  REQUIRE(ln.unmodelled.size() == 1);
  CHECK(ln.unmodelled[0] == "t.toml:2:13: model.norm_type: a layernorm model: the scenario's model and its norm are simulated");
}
