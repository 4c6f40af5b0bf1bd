// DeepSpeed's ZeRO-Offload (sim/plan/optimizer_offload.hpp): what the step pays for moving the
// optimizer to the host, its micro-step copies, and what it frees on the GPU. The expected figures
// come from the preset's line rates and the cited constants, not from the program's output.
#include <doctest/doctest.h>

#include "models/model_spec.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim::plan;

namespace {

// The small GPT (untied head, so every parameter is counted once at any PP) on `dp` A100s of a
// DGX A100, DeepSpeed ZeRO `stage`, one bucket, reduced after the backward.
std::string one_gpu(int stage, bool offload, int global_batch, int dp = 1) {
  return R"(name: offload
hardware: {preset: dgx-a100, gpus: )" + std::to_string(dp) + R"(}
model: {name: small-gpt, layers: 8, hidden: 1024, heads: 16, vocab: 32000, max_seq: 1024, tied_embeddings: false}
training: {seq_len: 1024, global_batch: )" + std::to_string(global_batch) + R"(, precision: bf16}
strategies:
  - {name: s, framework: deepspeed, zero_stage: )" + std::to_string(stage) + ", dp: " + std::to_string(dp) +
         R"(, micro_batch: 1, dp_overlap: false, dp_bucket_size: 1TB, offload_optimizer: )" + (offload ? "true" : "false") + "}\n";
}

SimOptions instant_host() {
  SimOptions opt;
  opt.hooks.instant_host = true;
  return opt;
}

StepResult run(const std::string& yaml, bool detail = false) {
  const auto sc = plan_test::scenario(yaml);
  SimOptions opt = instant_host();
  opt.detail = detail;
  return simulate(sc, check_strategy(sc, sc.strategies[0]), opt);
}

}  // namespace

TEST_CASE("ZeRO-Offload on one GPU: the step trades the GPU's Adam for PCIe copies and the CPU's Adam") {
  const double params = static_cast<double>(stepsim::models::total_params(plan_test::scenario(one_gpu(1, false, 1)).model));
  const double base = run(one_gpu(1, false, 1)).step_time_s;
  const double offloaded = run(one_gpu(1, true, 1)).step_time_s;
  // dgx-a100: GPU -> its PCIe gen4 switch -> CPU, 31.5 GB/s each, at pcie_efficiency 0.8; 250 ns
  // a link. One micro-step (ZeRO-1): fp32 gradients out (4 B), 16-bit parameters back (2 B).
  const double pcie = 31.5e9 * 0.8, latency = 2 * 250e-9;
  const double out = 4 * params / pcie + latency, back = 2 * params / pcie + latency;
  const double cpu_adam = params * 707e-12;  // hw::CommParams::cpu_adam_param_ps, one GPU's server share
  // What it no longer runs: fused Adam's 28 B a parameter at the A100-80GB's 2,039 GB/s x 0.55.
  const double gpu_adam = params * 28 / (2039e9 * 0.55);
  CHECK(offloaded - base == doctest::Approx(out + cpu_adam + back - gpu_adam).epsilon(1e-6));
}

TEST_CASE("ZeRO-Offload under accumulation: each later micro-step brings the sum back and sends it out") {
  // ZeRO-2, three micro-steps: 2 B out; 2 in + 2 out; 2 in + 4 out (fp32 at the boundary); then the
  // 16-bit parameters back: 14 B a parameter over PCIe in all. ZeRO-1 accumulates on the GPU and
  // sends fp32 once: 4 + 2 = 6 B.
  const double params = static_cast<double>(stepsim::models::total_params(plan_test::scenario(one_gpu(2, true, 3)).model));
  auto moved = [](const StepResult& r) {
    double bytes = 0;
    int copies = 0;
    for (const TaskRecord& t : r.tasks)
      if (t.category == TaskCategory::host_transfer) bytes += t.bytes, ++copies;
    return std::make_pair(bytes, copies);
  };
  const auto [zero2, zero2_copies] = moved(run(one_gpu(2, true, 3), true));
  CHECK(zero2 == doctest::Approx(14 * params));
  CHECK(zero2_copies == 1 + 2 + 2 + 1);
  const auto [zero1, zero1_copies] = moved(run(one_gpu(1, true, 3), true));
  CHECK(zero1 == doctest::Approx(6 * params));
  CHECK(zero1_copies == 2);
  // The step names the time the GPU waited for it.
  CHECK(run(one_gpu(2, true, 3)).offload_s > 0);
  // A tied head is the embedding's tensor: its gradient goes out once (PlanInputs::
  // logits_own_params), so the tied model moves 14 B a parameter of its tied count.
  std::string tied = one_gpu(2, true, 3);
  tied.replace(tied.find(", tied_embeddings: false"), 24, "");
  const double tied_params = static_cast<double>(stepsim::models::total_params(plan_test::scenario(tied).model));
  REQUIRE(tied_params < params);
  CHECK(moved(run(tied, true)).first == doctest::Approx(14 * tied_params));
}

TEST_CASE("ZeRO-Offload memory: Adam's states leave the GPU for the host") {
  // Four ranks of ZeRO-2: the GPU keeps 16-bit parameters only (ZeRO-2 sends each reduced slice
  // out); the server holds 16 B a parameter of every rank's quarter, plus the 16-bit sum kept
  // between micro-steps (2 B), which two micro-steps need.
  const auto sc = plan_test::scenario(one_gpu(2, true, 8, 4));
  const auto params = stepsim::models::total_params(sc.model);
  const StepResult r = run(one_gpu(2, true, 8, 4));
  CHECK(r.memory_at_peak.optimizer_states == 0);
  CHECK(r.memory_at_peak.gradients == 0);
  CHECK(r.memory_at_peak.parameters == 2 * params);
  CHECK(r.host_memory_bytes == 4 * 18 * ((params + 3) / 4));
  const StepResult on_gpu = run(one_gpu(2, false, 8, 4));
  CHECK(on_gpu.memory_at_peak.optimizer_states == 12 * ((params + 3) / 4));
  CHECK(on_gpu.host_memory_bytes == 0);
  // ZeRO-1 accumulates its 16-bit gradients on the GPU.
  CHECK(run(one_gpu(1, true, 8, 4)).memory_at_peak.gradients == 2 * params);
}

TEST_CASE("ZeRO-Offload is DeepSpeed's, and offloads a ZeRO stage") {
  std::string zero0 = one_gpu(1, true, 1);
  zero0.replace(zero0.find("zero_stage: 1"), 13, "zero_stage: 0");
  CHECK(plan_test::strategy_error(zero0).find("offload_optimizer: expected zero_stage 1, 2 or 3") != std::string::npos);
  std::string generic = one_gpu(1, true, 1);
  generic.replace(generic.find("framework: deepspeed"), 20, "framework: generic");
  try {
    plan_test::scenario(generic);
    FAIL("expected an error");
  } catch (const stepsim::config::ConfigError& e) {
    CHECK(std::string(e.what()).find("offload_optimizer is DeepSpeed's") != std::string::npos);
  }
}

TEST_CASE("ZeRO-Infinity's parameter offload: each all-gather first fetches the rank's partition from the host") {
  // Two ranks of ZeRO-3, optimizer and parameters offloaded, one micro-step. Every all-gather of
  // B bytes is preceded on its stream by the rank's B/2 from host memory; nothing else comes back
  // (the step writes the host's copy): the copies from the host total half of the gathered bytes.
  std::string yaml = one_gpu(3, true, 2, 2);
  yaml.replace(yaml.find("offload_optimizer: true"), 23, "offload_optimizer: true, offload_param: true");
  const StepResult r = run(yaml, true);
  double gathered = 0, fetched = 0;
  for (const TaskRecord& t : r.tasks) {
    if (t.rank != 0) continue;
    if (t.category == TaskCategory::zero_comm && t.op == "all_gather") gathered += t.bytes;
    if (t.category == TaskCategory::host_transfer && t.op == "from host") fetched += t.bytes;
  }
  REQUIRE(gathered > 0);
  CHECK(fetched == doctest::Approx(gathered / 2));
  // The GPU holds no parameters at rest; the host 16 + 2 B a parameter of each rank's half.
  const auto params = stepsim::models::total_params(plan_test::scenario(yaml).model);
  CHECK(r.memory_at_peak.parameters == 0);
  CHECK(r.host_memory_bytes == 2 * 18 * ((params + 1) / 2));
  // It needs ZeRO-3, the optimizer offloaded too, and more than one rank to shard over.
  std::string zero2 = one_gpu(2, true, 2, 2);
  zero2.replace(zero2.find("offload_optimizer: true"), 23, "offload_optimizer: true, offload_param: true");
  CHECK(plan_test::strategy_error(zero2).find("offload_param: expected zero_stage 3") != std::string::npos);
  std::string alone = one_gpu(3, false, 2, 2);
  alone.replace(alone.find("offload_optimizer: false"), 24, "offload_param: true");
  CHECK(plan_test::strategy_error(alone).find("expected offload_optimizer: true beside it") != std::string::npos);
  std::string one = one_gpu(3, true, 2, 1);
  one.replace(one.find("offload_optimizer: true"), 23, "offload_optimizer: true, offload_param: true");
  CHECK(plan_test::strategy_error(one).find("expected dp·cp > 1") != std::string::npos);
}

TEST_CASE("ZeRO-Offload must fit the server's host RAM where the hardware states it") {
  // dgx-a100 states 2 TB. Llama-2 70B's Adam states on the host, 16 B a parameter (~1.1 TB) over
  // one server's 8 ranks fit there; on an alike server of 512 GB RAM the same plan does not.
  const std::string plan = R"(
model: llama-2-70b
training: {seq_len: 1024, global_batch: 8}
strategies:
  - {name: s, framework: deepspeed, zero_stage: 3, dp: 8, micro_batch: 1, recompute: full, offload_optimizer: true}
)";
  const std::string roomy_yaml = "name: ram\nhardware: {preset: dgx-a100}" + plan;
  const StepResult roomy = run(roomy_yaml);
  CHECK(roomy.host_ram_bytes == 2'000'000'000'000);
  CHECK(roomy.host_memory_bytes == 8 * 16 * ((stepsim::models::total_params(plan_test::scenario(roomy_yaml).model) + 7) / 8));
  CHECK(roomy.fits);
  const StepResult tight = run(
      "name: ram\nhardware: {gpu: A100-SXM4-80GB, server: {gpus: 8, nvlink: {topology: nvswitch, links: 12}, "
      "pcie: {bandwidth: 31.5GB/s, gpus_per_switch: 1}, host_ram: 512GB}}" + plan);
  CHECK(tight.host_ram_bytes == 512'000'000'000);
  CHECK_FALSE(tight.fits);
  CHECK(tight.memory_note.find("of host memory, more than the") != std::string::npos);
}
