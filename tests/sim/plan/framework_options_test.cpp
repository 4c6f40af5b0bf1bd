// Strategy keys for how a framework runs the same model: eager elementwise ops (eager_ops),
// torchtitan's per-op checkpointing (selective_policy) and Adam's state dtypes (optimizer_states):
// read with positioned errors, and simulated as the memory each keeps.
#include <doctest/doctest.h>

#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

// Llama-2 7B cut to 2 layers (h 4096, ffn 11008, RMSNorm, SwiGLU, rotary) on one A100, one
// sequence of 4096 tokens per step.
std::string llama(const std::string& strategy) {
  return R"(name: eager
hardware: {preset: dgx-a100, gpus: 1}
model: {preset: llama-2-7b, layers: 2}
training: {seq_len: 4096, global_batch: 1, precision: bf16}
strategies:
  - )" + strategy + "\n";
}

}  // namespace

TEST_CASE("eager_ops: the ops listed, for any framework but Megatron-Core") {
  const auto sc = plan_test::scenario(llama("{name: s, framework: fsdp, eager_ops: [norm, activation]}"));
  CHECK(sc.strategies[0].eager_ops == models::EagerOps{.norm = true, .activation = true});
  CHECK(plan_test::scenario(llama("{name: s, eager_ops: []}")).strategies[0].eager_ops == models::EagerOps{});
  CHECK(plan_test::read_error(llama("{name: s, framework: megatron-core, eager_ops: [norm]}"))
            .find("6:52: strategies[0].eager_ops: eager_ops names ops a PyTorch model runs unfused; framework: "
                  "megatron-core runs TransformerEngine's fused kernels") != std::string::npos);
  CHECK(plan_test::read_error(llama("{name: s, eager_ops: [softmax]}")).find("expected one of norm, rotary, activation") !=
        std::string::npos);
  CHECK(plan_test::read_error(llama("{name: s, eager_ops: norm}")).find("expected a list of ops such as [norm, rotary, activation]") !=
        std::string::npos);
}

TEST_CASE("eager norms and SwiGLU keep more activations: 4 B per norm element, one more ffn tensor") {
  // Per layer, T = 4096 tokens: each RMSNorm keeps its fp32 upcast and its 16-bit output (6 B per
  // element) where the fused one keeps its 2-byte input, +4·T·h, twice; the eager SwiGLU keeps
  // the gate, silu's output and up (3 tensors of T·ffn·2 B) where the fused one keeps two. Rotary
  // keeps nothing either way; ideal_network leaves out the head and its final norm.
  auto activations = [](const std::string& strategy) {
    const auto sc = plan_test::scenario(llama(strategy));
    return simulate(sc, sc.strategies[0], plan_test::ideal_network(1e12)).memory_at_peak.activations;
  };
  const std::int64_t t = 4096, h = 4096, ffn = 11008;
  const std::int64_t per_layer = 2 * 4 * t * h + t * ffn * 2;
  const std::int64_t fused = activations("{name: s, framework: fsdp}");
  const std::int64_t eager = activations("{name: s, framework: fsdp, eager_ops: [norm, rotary, activation]}");
  CHECK(eager - fused == 2 * per_layer);
}

TEST_CASE("selective_policy: torch_ops needs selective recompute, a dense model and no Megatron-Core") {
  const auto sc = plan_test::scenario(llama("{name: s, framework: fsdp, recompute: selective, selective_policy: torch_ops}"));
  CHECK(sc.strategies[0].selective_policy == models::SelectivePolicy::torch_ops);
  CHECK(plan_test::strategy_error(llama("{name: s, framework: fsdp, recompute: full, selective_policy: torch_ops}"))
            .find("strategies[0].selective_policy: torch_ops chooses what selective recompute re-runs: it needs recompute: "
                  "selective, found recompute: full") != std::string::npos);
  CHECK(plan_test::strategy_error(llama("{name: s, framework: megatron-core, recompute: selective, selective_policy: torch_ops}"))
            .find("Megatron-Core re-runs recompute_modules") != std::string::npos);
  CHECK(plan_test::read_error(llama("{name: s, selective_policy: op}")).find("expected one of modules, torch_ops") != std::string::npos);
  // The run names the policy.
  const auto r = simulate(sc, sc.strategies[0], plan_test::ideal_network(1e12));
  CHECK(r.recompute == "selective (torch_ops)");
}

TEST_CASE("optimizer_states: Adam's state dtypes, positioned errors for anything else") {
  const auto sc = plan_test::scenario(llama("{name: s, optimizer_states: {master: none, exp_avg: bf16, exp_avg_sq: bf16}}"));
  CHECK(sc.strategies[0].optimizer_states == models::OptimizerStates{.master = 0, .exp_avg = 2, .exp_avg_sq = 2});
  CHECK(plan_test::scenario(llama("{name: s, optimizer_states: {exp_avg: fp16}}")).strategies[0].optimizer_states ==
        models::OptimizerStates{.master = 4, .exp_avg = 2, .exp_avg_sq = 4});
  CHECK(plan_test::read_error(llama("{name: s, optimizer_states: {exp_avg: none}}")).find("expected one of fp32, fp16, bf16") !=
        std::string::npos);
  CHECK(plan_test::read_error(llama("{name: s, optimizer_states: bf16}")).find("expected a mapping such as") != std::string::npos);
  CHECK(plan_test::read_error(llama("{name: s, optimizer_states: {moments: bf16}}")).find("moments") != std::string::npos);
  // The optimizer's memory: 12 bytes per parameter by default, 4 with bf16 moments and no master.
  auto optimizer = [](const std::string& strategy) {
    const auto sc = plan_test::scenario(llama(strategy));
    return simulate(sc, sc.strategies[0], plan_test::ideal_network(1e12)).memory_at_peak.optimizer_states;
  };
  CHECK(optimizer("{name: s}") == 3 * optimizer("{name: s, optimizer_states: {master: none, exp_avg: bf16, exp_avg_sq: bf16}}"));
  // Where the framework keeps its own states.
  CHECK(plan_test::strategy_error(llama("{name: s, framework: fsdp, optimizer_states: {master: bf16}}"))
            .find("FSDP's fp32 parameter shards are the master copy") != std::string::npos);
  CHECK(plan_test::strategy_error(llama("{name: s, framework: fsdp, optimizer_states: {exp_avg: bf16}}")) == "no error");
  CHECK(plan_test::strategy_error(llama("{name: s, framework: deepspeed, zero_stage: 2, offload_optimizer: true, "
                                        "optimizer_states: {exp_avg: bf16}}"))
            .find("ZeRO-Offload's CPU Adam keeps fp32 states") != std::string::npos);
}
