// Context parallelism (Megatron-Core's CP with TransformerEngine's ring attention): each sequence
// split over cp ranks, every op on the rank's s/cp tokens, attention in cp blocks beside the K/V
// chunks going round the ring. On the ideal network (every transfer takes bytes / bandwidth) the
// exchange volumes and what is left exposed are derived by hand from the attention blocks' times.
#include <doctest/doctest.h>

#include <algorithm>

#include "models/compute_time.hpp"
#include "sim/plan/rank_grid.hpp"
#include "sim/plan/stage_costs.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

// 2 layers, h 1024, 16 query heads of 64 and 4 KV heads, 4k tokens, on one DGX A100 in bf16.
std::string long_context(const std::string& strategy) {
  return R"(name: cp
hardware: {preset: dgx-a100}
model: {name: gqa, layers: 2, hidden: 1024, heads: 16, kv_heads: 4, vocab: 1000, position: rotary, activation: swiglu,
        norm: rmsnorm, bias: false, dropout: false}
training: {seq_len: 4096, global_batch: 8, precision: bf16}
strategies:
  - )" + strategy + "\n";
}

StepResult run(const std::string& strategy, double bytes_per_s) {
  auto sc = plan_test::scenario(long_context(strategy));
  sc.cluster.gpu.comm_slowdown = 0;
  SimOptions opt = plan_test::ideal_network(bytes_per_s);
  opt.detail = true;
  return simulate(sc, sc.strategies[0], opt);
}

// One attention block's forward and backward time on the rank (all cp blocks are alike).
models::OpTime block_time(const std::string& strategy) {
  const auto sc = plan_test::scenario(long_context(strategy));
  const CostInputs in = cost_inputs(sc, sc.strategies[0]);
  for (const auto& op : models::layer_ops(*in.model, in.shape))
    if (op.name == "attention") return models::time_op(op, *in.gpu, in.dtype);
  FAIL("no attention op");
  return {};
}

}  // namespace

TEST_CASE("CP groups are consecutive in the data dimension; gradients reduce over dp·cp") {
  const RankGrid grid(2, 1, 2, "tp-dp-pp", 2);  // rank = tp + 2·(cp + 2·dp)
  CHECK(grid.size() == 8);
  CHECK(grid.cp() == 2);
  CHECK(grid.cp_group(0) == std::vector<int>{0, 2});
  CHECK(grid.cp_group(5) == std::vector<int>{5, 7});
  CHECK(grid.dp_group(1) == std::vector<int>{1, 3, 5, 7});
}

TEST_CASE("doubling CP halves a layer's work and its stored activations") {
  const auto cost = [](const std::string& strategy) {
    const auto sc = plan_test::scenario(long_context(strategy));
    return models::sum_ops(models::layer_ops(sc.model, cost_inputs(sc, sc.strategies[0]).shape));
  };
  const auto cp1 = cost("{name: a, dp: 8}"), cp2 = cost("{name: b, dp: 4, cp: 2}"), cp4 = cost("{name: c, dp: 2, cp: 4}");
  // Every count is linear in the rank's tokens, and attention's s²/cp with them: exact halves.
  CHECK(cp2.activation_bytes * 2 == cp1.activation_bytes);
  CHECK(cp4.activation_bytes * 4 == cp1.activation_bytes);
  CHECK(cp2.fwd_flops * 2 == doctest::Approx(cp1.fwd_flops));
  CHECK(cp4.bwd_input_flops * 4 == doctest::Approx(cp1.bwd_input_flops));
  // The simulated peak holds one microbatch's activations (pp = 1): half of them at cp 2.
  const StepResult a = run("{name: a, dp: 8}", 1e12), b = run("{name: b, dp: 4, cp: 2}", 1e12);
  CHECK(b.memory_at_peak.activations * 2 == a.memory_at_peak.activations);
  CHECK(b.cp == 2);
}

TEST_CASE("the ring exchanges cp - 1 K/V chunks forward and 2(cp - 1) backward, beside attention") {
  // A chunk: K and V of the rank's 4096/cp tokens, 4 heads of 64, 2 B each.
  for (int cp : {2, 4}) {
    CAPTURE(cp);
    const std::string strategy = "{name: cp, dp: " + std::to_string(8 / cp) + ", cp: " + std::to_string(cp) + "}";
    const double chunk = 2.0 * (4096 / cp) * 4 * 64 * 2;
    const int microbatches = 8 / (8 / cp), layers = 2;
    // Fast network: every exchange hides behind its attention block.
    const StepResult fast = run(strategy, 1e15);
    double bytes = 0;
    int count = 0;
    for (const auto& t : fast.tasks)
      if (t.rank == 0 && t.category == TaskCategory::cp_comm) bytes += t.bytes, ++count;
    CHECK(count == microbatches * layers * ((cp - 1) + cp));
    CHECK(bytes == doctest::Approx(microbatches * layers * 3.0 * (cp - 1) * chunk));
    CHECK(fast.exposed_comm_s.cp == doctest::Approx(0).epsilon(1e-12));
    // Slow network: each exchange outlasts its block, which is all that hides of it. Forward,
    // cp − 1 chunks beside cp − 1 blocks; backward, 2(cp − 1) chunks in cp exchanges beside
    // the cp blocks' gradients.
    const double bandwidth = 1e8;
    const models::OpTime block = block_time(strategy);
    const double fwd = (cp - 1) * (chunk / bandwidth - block.fwd_ps * 1e-12);
    const double bwd = 2 * (cp - 1) * chunk / bandwidth - cp * block.bwd_input_ps * 1e-12;
    const StepResult slow = run(strategy, bandwidth);
    CHECK(slow.exposed_comm_s.cp == doctest::Approx(microbatches * layers * (fwd + bwd)).epsilon(1e-6));
  }
}

TEST_CASE("context parallelism is refused where it cannot run, at the key") {
  const auto error = plan_test::strategy_error;
  CHECK(error(long_context("{name: c, dp: 4, cp: 2, flash_attention: false}")).find("needs flash_attention: true") !=
        std::string::npos);
  CHECK(error(long_context("{name: c, dp: 1, cp: 3}")).find("expected tp·pp·dp·cp = 8 GPUs") != std::string::npos);
  CHECK(error(long_context("{name: c, cp: 3}")).find("tp·pp·cp = 3 does not divide the 8 GPUs") != std::string::npos);
  const std::string odd = long_context("{name: c, dp: 1, cp: 8}");
  std::string shorter = odd;
  shorter.replace(shorter.find("seq_len: 4096"), 13, "seq_len: 4104");
  CHECK(error(shorter) == "test.yaml:7:26: strategies[0].cp: expected 2·cp to divide training.seq_len = 4104 (each rank "
                          "holds two chunks of s/(2·cp) tokens), found cp = 8");
  CHECK(error(odd) == "no error");
}
