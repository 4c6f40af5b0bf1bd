// How weight gradients add up over a step's microbatches (Strategy::grad_accumulation): fused into
// the weight-gradient GEMM, Megatron's main_grad.add_ on every microbatch, or autograd's in-place
// add from the second microbatch on. Expected times follow from the layer's parameters and the
// GPU's bandwidth figures alone.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "sim/plan/strategy.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

constexpr std::int64_t kHidden = 1024;
constexpr int kLayers = 4;
constexpr int kMicrobatches = 4;

// A GPT of kLayers layers in bf16 on `gpus` A100s, kMicrobatches microbatches of one sequence a
// rank; `extra` is added to the strategy.
std::string gpt(int gpus, const std::string& extra) {
  return "name: accumulate\nhardware: {preset: dgx-a100, gpus: " + std::to_string(gpus) +
         "}\nmodel: {name: g, layers: " + std::to_string(kLayers) + ", hidden: " + std::to_string(kHidden) +
         ", heads: 16, vocab: 32000, max_seq: 1024}\ntraining: {seq_len: 1024, global_batch: " +
         std::to_string(kMicrobatches * gpus) + ", precision: bf16}\nstrategies:\n  - {name: s, dp: " +
         std::to_string(gpus) + ", micro_batch: 1, recompute: none" + extra + "}\n";
}

double step_ps(const std::string& yaml) {
  const auto sc = plan_test::scenario(yaml);
  return simulate(sc, sc.strategies.front(), plan_test::ideal_network(std::numeric_limits<double>::infinity())).step_time_s *
         1e12;
}

// One layer's accumulation kernels: a GPT layer holds 12h² + 13h parameters (QKV 3h² + 3h, output
// h² + h, MLP 4h² + 4h and 4h² + h, two LayerNorms 2h each) in 12 tensors (each matrix and its
// bias, each norm's weight and bias); each element moves `bytes`, each tensor is one kernel.
std::int64_t layer_add_ps(const hw::GpuSpec& gpu, double bytes) {
  const double params = 12.0 * kHidden * kHidden + 13.0 * kHidden;
  const double seconds = params * bytes / (gpu.memory_bytes_per_s * gpu.memory_efficiency);
  return static_cast<std::int64_t>(std::ceil(seconds * 1e12)) + 12 * gpu.launch_overhead_ps;
}

}  // namespace

TEST_CASE("autograd adds from the second microbatch, main_grad on every one, fused never") {
  const double fused = step_ps(gpt(1, ", grad_accumulation: fused"));
  const double autograd = step_ps(gpt(1, ", grad_accumulation: autograd"));
  const double main_grad = step_ps(gpt(1, ", grad_accumulation: main_grad"));
  const hw::GpuSpec gpu = plan_test::scenario(gpt(1, "")).cluster.gpu;
  // autograd: read the new bf16 gradient and read and write the kept one (2 + 2 + 2 bytes).
  CHECK(autograd - fused == doctest::Approx((kMicrobatches - 1) * kLayers * layer_add_ps(gpu, 6)).epsilon(1e-9));
  // main_grad of a bf16 model is fp32 (Megatron forces accumulate_allreduce_grads_in_fp32): 2 + 4 + 4.
  CHECK(main_grad - fused == doctest::Approx(kMicrobatches * kLayers * layer_add_ps(gpu, 10)).epsilon(1e-9));
  // The generic framework fuses, as Megatron-LM does by default.
  CHECK(step_ps(gpt(1, "")) == fused);
  // The result names the time: the busiest rank's kernels, per step.
  const auto sc = plan_test::scenario(gpt(1, ", grad_accumulation: autograd"));
  const auto opt = plan_test::ideal_network(std::numeric_limits<double>::infinity());
  CHECK(simulate(sc, sc.strategies.front(), opt).grad_accumulation_s * 1e12 ==
        doctest::Approx((kMicrobatches - 1) * kLayers * layer_add_ps(gpu, 6)).epsilon(1e-9));
  const auto none = plan_test::scenario(gpt(1, ""));
  CHECK(simulate(none, none.strategies.front(), opt).grad_accumulation_s == 0);
}

TEST_CASE("a table tied to the head is one tensor, added once") {
  // With the embedding and the head: the word table (32000 × h) and learned positions (1024 × h),
  // one tensor each, and the final LayerNorm (2h, two tensors); on one stage the head's matrix is
  // the word table itself, whose two gradients meet before autograd adds them.
  auto opt = plan_test::ideal_network(std::numeric_limits<double>::infinity());
  opt.hooks.skip_embedding_and_head = false;
  auto step = [&](const std::string& yaml) {
    const auto sc = plan_test::scenario(yaml);
    return simulate(sc, sc.strategies.front(), opt).step_time_s * 1e12;
  };
  const hw::GpuSpec gpu = plan_test::scenario(gpt(1, "")).cluster.gpu;
  const double bandwidth = gpu.memory_bytes_per_s * gpu.memory_efficiency;
  auto add_ps = [&](double params, int tensors) {
    return static_cast<double>(static_cast<std::int64_t>(std::ceil(params * 6 / bandwidth * 1e12)) +
                               tensors * gpu.launch_overhead_ps);
  };
  const double per_microbatch =
      kLayers * layer_add_ps(gpu, 6) + add_ps((32000.0 + 1024.0) * kHidden, 2) + add_ps(2.0 * kHidden, 2);
  CHECK(step(gpt(1, ", grad_accumulation: autograd")) - step(gpt(1, ", grad_accumulation: fused")) ==
        doctest::Approx((kMicrobatches - 1) * per_microbatch).epsilon(1e-9));
}

TEST_CASE("every schedule runs each stage's adds once per microbatch after the first") {
  // Two stages of kLayers / 2 layers on 2 GPUs: the busiest rank's adds are its own layers'
  // whether they follow the backward (1F1B), its W passes (zb-h1) or each chunk's backward
  // (interleaved, two chunks of one layer).
  const hw::GpuSpec gpu = plan_test::scenario(gpt(1, "")).cluster.gpu;
  const double expected = (kMicrobatches - 1) * (kLayers / 2) * layer_add_ps(gpu, 6);
  const auto opt = plan_test::ideal_network(std::numeric_limits<double>::infinity());
  for (const std::string schedule : {"1f1b", "zb-h1", "interleaved, v: 2"}) {
    CAPTURE(schedule);
    std::string yaml = gpt(2, ", pp: 2, schedule: " + schedule + ", grad_accumulation: autograd");
    yaml.replace(yaml.find("dp: 2"), 5, "dp: 1");
    yaml.replace(yaml.find("global_batch: 8"), 15, "global_batch: 4");
    const auto sc = plan_test::scenario(yaml);
    CHECK(simulate(sc, sc.strategies.front(), opt).grad_accumulation_s * 1e12 == doctest::Approx(expected).epsilon(1e-9));
  }
}

TEST_CASE("main_grad stays 16-bit under fp16 and under grad_reduce_in_bf16") {
  auto fp16 = [](std::string yaml) { return yaml.replace(yaml.find("bf16"), 4, "fp16"); };
  const double fused = step_ps(fp16(gpt(1, ", grad_accumulation: fused")));
  const double main_grad = step_ps(fp16(gpt(1, ", grad_accumulation: main_grad")));
  const hw::GpuSpec gpu = plan_test::scenario(gpt(1, "")).cluster.gpu;
  CHECK(main_grad - fused == doctest::Approx(kMicrobatches * kLayers * layer_add_ps(gpu, 6)).epsilon(1e-9));
  const double core = step_ps(gpt(1, ", framework: megatron-core, grad_accumulation: fused"));
  const double core_bf16 = step_ps(gpt(1, ", framework: megatron-core, grad_accumulation: main_grad, grad_reduce_in_bf16: true"));
  CHECK(core_bf16 - core == doctest::Approx(kMicrobatches * kLayers * layer_add_ps(gpu, 6)).epsilon(1e-9));
}

TEST_CASE("gradients reduced and dropped every microbatch accumulate nothing whole") {
  // DeepSpeed ZeRO-2 reduce-scatters each micro-step's gradients; ZeRO-1 keeps them whole.
  const std::string zero2 = ", framework: deepspeed, zero_stage: 2";
  CHECK(step_ps(gpt(2, zero2)) == step_ps(gpt(2, zero2 + ", grad_accumulation: fused")));
  const std::string zero1 = ", framework: deepspeed, zero_stage: 1";
  CHECK(step_ps(gpt(2, zero1)) > step_ps(gpt(2, zero1 + ", grad_accumulation: fused")));
  // FSDP reduces each microbatch's unless no_sync defers it.
  CHECK(step_ps(gpt(2, ", framework: fsdp")) == step_ps(gpt(2, ", framework: fsdp, grad_accumulation: fused")));
  CHECK(step_ps(gpt(2, ", framework: fsdp, fsdp_no_sync: true")) >
        step_ps(gpt(2, ", framework: fsdp, fsdp_no_sync: true, grad_accumulation: fused")));
}

TEST_CASE("the framework sets how gradients accumulate, and a bad value names its place") {
  const auto read = [](const std::string& extra) { return plan_test::scenario(gpt(2, extra)).strategies.front(); };
  CHECK(read("").grad_accumulation == GradAccumulation::fused);
  CHECK(read(", framework: megatron-core").grad_accumulation == GradAccumulation::fused);
  CHECK(read(", framework: deepspeed").grad_accumulation == GradAccumulation::autograd);
  CHECK(read(", framework: fsdp").grad_accumulation == GradAccumulation::autograd);
  CHECK(read(", framework: fsdp, grad_accumulation: fused").grad_accumulation == GradAccumulation::fused);
  const std::string error = plan_test::read_error(gpt(2, ", grad_accumulation: sometimes"));
  CHECK(error.find("test.yaml:6:") != std::string::npos);
  CHECK(error.find("fused") != std::string::npos);
  CHECK(error.find("sometimes") != std::string::npos);
}
