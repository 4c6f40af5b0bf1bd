// The host-side cost per pipeline pass (hw::CommParams::pipeline_pass_overhead) and the
// tp_overlap switch, on cases small enough to derive by hand.
#include <doctest/doctest.h>

#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim::plan;

namespace {

// Two stages on two GPUs of a DGX A100, one microbatch: F on stage 0, F and B on stage 1, B on
// stage 0 run one after another, so every pass is on the critical path.
std::string two_stages(const std::string& overhead) {
  return R"(name: overhead
hardware: {preset: dgx-a100, gpus: 2, comm: {pipeline_pass_overhead: )" + overhead + R"(}}
model: {name: small-gpt, layers: 8, hidden: 1024, heads: 16, vocab: 32000, max_seq: 1024}
training: {seq_len: 1024, global_batch: 1}
strategies:
  - {name: pp2, pp: 2, micro_batch: 1}
)";
}

double step_ps(const std::string& yaml, const SimOptions& opt = {}) {
  const Scenario sc = plan_test::scenario(yaml);
  return simulate(sc, sc.strategies.front(), opt).step_time_s * 1e12;
}

}  // namespace

TEST_CASE("each forward and backward pass of a pipeline pays the host-side overhead once") {
  // m = 1, p = 2: four passes in a chain (F0, F1, B1, B0), nothing else changes between the runs,
  // so the step grows by exactly 4 × 1 ms.
  const double without = step_ps(two_stages("0us"));
  const double with = step_ps(two_stages("1ms"));
  CHECK(with - without == doctest::Approx(4e9).epsilon(1e-6));
}

TEST_CASE("Megatron-Core's interleaved schedule does not synchronize: the overhead hides while the host is ahead") {
  // Megatron-Core posts the interleaved schedule's p2p and moves on (overlap_p2p_comm, no
  // batch_p2p_sync) and its per-pass timers are off: the host pays the overhead while the GPU
  // still runs what it issued. With 1 us of overhead per pass, far less than any pass's GPU
  // time, the step is what it is with none; Megatron-LM's synchronizing schedule pays it on
  // every pass of the critical path, and Megatron-Core's 1F1B (batch_p2p_sync) does too.
  auto yaml = [](const std::string& overhead, const std::string& strategy) {
    return R"(name: overhead
hardware: {preset: dgx-a100, gpus: 4, comm: {pipeline_pass_overhead: )" + overhead + R"(}}
model: {name: small-gpt, layers: 8, hidden: 1024, heads: 16, vocab: 32000, max_seq: 1024}
training: {seq_len: 1024, global_batch: 8}
strategies:
  - )" + strategy + "\n";
  };
  const std::string mcore = "{name: v2, pp: 2, dp: 2, micro_batch: 1, schedule: interleaved, v: 2, framework: megatron-core}";
  const std::string mlm = "{name: v2, pp: 2, dp: 2, micro_batch: 1, schedule: interleaved, v: 2, distributed_optimizer: true}";
  const std::string mcore_1f1b = "{name: p2, pp: 2, dp: 2, micro_batch: 1, framework: megatron-core}";
  // This narrow model is host-bound with the per-call host time; the host issues kernels at once
  // here, so its only work is the overhead.
  SimOptions opt;
  opt.hooks.instant_host = true;
  CHECK(step_ps(yaml("1us", mcore), opt) == doctest::Approx(step_ps(yaml("0us", mcore), opt)).epsilon(1e-9));
  CHECK(step_ps(yaml("1us", mlm), opt) > step_ps(yaml("0us", mlm), opt) + 1e6);
  CHECK(step_ps(yaml("1us", mcore_1f1b), opt) > step_ps(yaml("0us", mcore_1f1b), opt) + 1e6);
}

TEST_CASE("ideal-communication test hooks remove the pass overhead with the rest of the p2p cost") {
  SimOptions free_comm;
  free_comm.hooks.comm_bytes_per_s = 1e30;
  CHECK(step_ps(two_stages("0us"), free_comm) == step_ps(two_stages("1ms"), free_comm));
}

TEST_CASE("without tp_overlap the backward TP all-reduce blocks instead of hiding behind dW") {
  // Async TP (Megatron-LM 2021+) runs the input-gradient all-reduce beside the weight-gradient
  // GEMM; the 2020 code waits for it, so the same plan can only get slower, never faster.
  const Scenario async = plan_test::scenario(plan_test::small_gpt("{name: tp2, tp: 2, dp: 4}"));
  const Scenario blocking = plan_test::scenario(plan_test::small_gpt("{name: tp2, tp: 2, dp: 4, tp_overlap: false}"));
  // This narrow model is host-bound, which would hide the difference: the host issues at once.
  SimOptions opt;
  opt.hooks.instant_host = true;
  const double a = simulate(async, async.strategies.front(), opt).step_time_s;
  const double b = simulate(blocking, blocking.strategies.front(), opt).step_time_s;
  CHECK(b > a);
}
