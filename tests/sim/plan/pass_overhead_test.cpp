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
