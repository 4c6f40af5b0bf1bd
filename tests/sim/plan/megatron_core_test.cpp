// Megatron-Core as a framework profile (sim/plan/framework_defaults.hpp): its defaults and the
// switches that need something else, TP communication overlap in a layer's segments, and on an
// ideal network (the test hook: every collective takes bytes / bandwidth, compute not slowed by
// it) what the overlaps take off a step.
#include <doctest/doctest.h>

#include <cmath>

#include "models/compute_time.hpp"
#include "sim/plan/stage_costs.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

std::string on_nodes(const std::string& strategy, int nodes, int global_batch = 128) {
  return plan_test::small_gpt_on_nodes(strategy, nodes, global_batch);
}

Strategy checked(const std::string& yaml) {
  const auto sc = plan_test::scenario(yaml);
  return check_strategy(sc, sc.strategies[0]);
}

}  // namespace

TEST_CASE("megatron-core turns on the distributed optimizer and its overlaps; buckets of max(40M, 1M·dp) parameters") {
  const Strategy s = checked(on_nodes("{name: m, tp: 2, sequence_parallel: true, framework: megatron-core}", 1));
  CHECK(s.distributed_optimizer);
  CHECK(s.effective_zero_stage() == 1);
  CHECK(s.dp_overlap);
  CHECK(s.overlap_param_gather);
  CHECK(s.tp_comm_overlap);
  CHECK(s.dp_bucket_params == 40'000'000);  // dp 4: the 40M floor
  // dp 64 on 16 servers: 64M parameters.
  CHECK(checked(on_nodes("{name: m, tp: 2, framework: megatron-core}", 16)).dp_bucket_params == 64'000'000);
  const Strategy bytes = checked(on_nodes("{name: m, tp: 2, framework: megatron-core, dp_bucket_size: 25MB}", 1));
  CHECK(bytes.dp_bucket_params == 0);
  CHECK(bytes.dp_bucket_bytes == 25'000'000);
  // Without sequence parallelism the default TP overlap has nothing to apply to.
  CHECK_FALSE(checked(on_nodes("{name: m, tp: 2, framework: megatron-core}", 1)).tp_comm_overlap);
  // Without the distributed optimizer there are no parameter all-gathers to overlap.
  CHECK_FALSE(checked(on_nodes("{name: m, tp: 2, framework: megatron-core, distributed_optimizer: false}", 1)).overlap_param_gather);
}

TEST_CASE("megatron-core's switches are refused where they cannot apply, at the key") {
  CHECK_THROWS_WITH(checked(on_nodes("{name: m, tp: 2, framework: megatron-core, tp_comm_overlap: true}", 1)),
                    doctest::Contains("test.yaml:6:65: strategies[0].tp_comm_overlap: expected sequence_parallel: true"));
  CHECK_THROWS_WITH(checked(on_nodes("{name: m, framework: megatron-core, distributed_optimizer: false, "
                                     "overlap_param_gather: true}",
                                     1)),
                    doctest::Contains("overlap_param_gather: expected distributed_optimizer: true"));
  CHECK_THROWS_WITH(plan_test::scenario(on_nodes("{name: m, zero_stage: 2, framework: megatron-core}", 1)),
                    doctest::Contains("Megatron-Core's distributed optimizer shards optimizer state only"));
  CHECK_THROWS_WITH(plan_test::scenario(on_nodes("{name: m, tp: 2, sequence_parallel: true, tp_comm_overlap: true}", 1)),
                    doctest::Contains("tp_comm_overlap is Megatron-Core's: it needs framework: megatron-core"));
}

TEST_CASE("TP communication overlap moves each SP collective's neighbouring GEMM beside it") {
  const auto sc = plan_test::scenario(on_nodes("{name: m, tp: 4, sequence_parallel: true, framework: megatron-core}", 1));
  CostInputs generic_in = cost_inputs(sc, sc.strategies[0]);
  generic_in.tp_comm_overlap = false;
  CostInputs overlap_in = generic_in;
  overlap_in.tp_comm_overlap = true;
  const LayerCost plain = layer_cost(generic_in), over = layer_cost(overlap_in);
  auto fwd_of = [&](const char* name) {
    for (const auto& op : models::layer_ops(*generic_in.model, generic_in.shape))
      if (op.name == name) return models::time_op(op, *generic_in.gpu, generic_in.dtype);
    FAIL("no op " << name);
    return models::OpTime{};
  };
  // Forward: norm | AG ~ qkv, attention, | RS ~ out_proj, residual and norm | AG ~ mlp_up, gelu, | RS ~ mlp_down.
  REQUIRE(plain.fwd.size() == 4);
  REQUIRE(over.fwd.size() == 4);
  CHECK(over.fwd[0].overlap_ps == fwd_of("qkv").fwd_ps);
  CHECK(over.fwd[1].overlap_ps == fwd_of("out_proj").fwd_ps);
  CHECK(over.fwd[2].overlap_ps == fwd_of("mlp_up").fwd_ps);
  CHECK(over.fwd[3].overlap_ps == fwd_of("mlp_down").fwd_ps);
  CHECK(over.fwd[1].compute_ps == plain.fwd[1].compute_ps - fwd_of("qkv").fwd_ps - fwd_of("out_proj").fwd_ps);
  // Backward, last op first: AG ~ mlp_down's input gradient | RS ~ mlp_up's weight gradient (as
  // without the overlap) | AG ~ out_proj's input gradient | RS ~ qkv's weight gradient.
  REQUIRE(over.bwd.size() == plain.bwd.size());
  CHECK(over.bwd[0].overlap_ps == fwd_of("mlp_down").bwd_input_ps);
  CHECK(plain.bwd[0].overlap_ps == 0);
  CHECK(over.bwd[1].overlap_ps == plain.bwd[1].overlap_ps);
  CHECK(over.bwd[2].overlap_ps == fwd_of("out_proj").bwd_input_ps);
  // Nothing is lost: the same GPU time, split differently.
  auto total = [](const std::vector<Segment>& segs) {
    std::int64_t t = 0;
    for (const auto& s : segs) t += s.compute_ps + s.overlap_ps;
    return t;
  };
  CHECK(total(over.fwd) == total(plain.fwd));
  CHECK(total(over.bwd) == total(plain.bwd));
}

namespace {

constexpr double kBandwidth = 1e12;  // bytes/s for every collective: far faster than any GEMM here

SimOptions hooked(bool skip_optimizer) {
  SimOptions opt = plan_test::ideal_network(kBandwidth);
  opt.hooks.skip_optimizer = skip_optimizer;
  return opt;
}

double seconds_for(double bytes) { return std::ceil(bytes / kBandwidth * 1e12) * 1e-12; }

StepResult run(const std::string& strategy, int nodes, int global_batch, bool skip_optimizer) {
  auto sc = plan_test::scenario(on_nodes(strategy, nodes, global_batch));
  sc.cluster.gpu.comm_slowdown = 0;  // a GEMM beside a collective keeps its speed: exact sums
  return simulate(sc, sc.strategies[0], hooked(skip_optimizer));
}

}  // namespace

TEST_CASE("with TP communication overlap the six exposed SP collectives per layer and microbatch are hidden") {
  // tp 8 on one server (dp 1), m = 16 / micro_batch 8 = 2 microbatches, 8 layers.
  // Without the overlap each layer's forward blocks on 2 all-gathers and 2 reduce-scatters and its
  // backward on 2 all-gathers (the 2 reduce-scatters run beside weight gradients): 6·c per layer
  // and microbatch, c = b·s·h·2 bytes / bandwidth. With it, every one runs beside a longer GEMM.
  const std::string base = "{name: m, tp: 8, micro_batch: 8, sequence_parallel: true, framework: megatron-core";
  const auto plain = run(base + ", tp_comm_overlap: false}", 1, 16, true);
  const auto over = run(base + "}", 1, 16, true);
  const double c = seconds_for(8.0 * 1024 * 1024 * 2);
  const double hidden = 6 * c * 8 * 2;
  CHECK(plain.exposed_comm_s.tp == doctest::Approx(hidden).epsilon(1e-6));
  CHECK(over.exposed_comm_s.tp == doctest::Approx(0).epsilon(1e-9));
  CHECK(plain.step_time_s - over.step_time_s == doctest::Approx(hidden).epsilon(1e-6));
}

TEST_CASE("overlapped parameter all-gathers leave only the first bucket's before the first layer") {
  // dp 8 on one server, one microbatch. The buckets of 40M parameters fill from the last of the
  // 8 layers (P parameters each, 10M < P < 15M): layers 7–4 close one at layer 4, layers 4–1 one
  // at layer 1, and the rest (8P − 80M) ends at layer 0. After the optimizer all three gathers
  // are exposed (2 B per parameter); during the forward only the one layer 0 waits for is.
  const std::string base = "{name: m, micro_batch: 2, framework: megatron-core";
  const auto sc = plan_test::scenario(on_nodes(base + "}", 1, 16));
  const std::int64_t p = layer_cost(cost_inputs(sc, sc.strategies[0])).params;
  REQUIRE(p > 10'000'000);
  REQUIRE(p < 15'000'000);
  const auto after = run(base + ", overlap_param_gather: false}", 1, 16, false);
  const auto during = run(base + "}", 1, 16, false);
  const double saved = seconds_for(2.0 * 40'000'000) * 2;
  CHECK(after.step_time_s - during.step_time_s == doctest::Approx(saved).epsilon(1e-6));
  CHECK(during.exposed_comm_s.dp < after.exposed_comm_s.dp);
}

TEST_CASE("a bf16 model's gradients are reduced in fp32 unless grad_reduce_in_bf16; fp16 ones in fp16") {
  // dp 8 on one server, no embedding or head: rank 0 reduce-scatters each of its P·8 layer
  // parameters' gradients once and all-gathers the 2-byte parameters once.
  auto dp_bytes = [](const std::string& strategy, const std::string& precision) {
    std::string yaml = on_nodes(strategy, 1, 16);
    yaml.replace(yaml.find("precision: bf16"), 15, "precision: " + precision);
    const auto sc = plan_test::scenario(yaml);
    SimOptions opt = plan_test::ideal_network(kBandwidth);
    opt.hooks.skip_optimizer = false;
    opt.detail = true;
    const auto r = simulate(sc, sc.strategies[0], opt);
    double scattered = 0, gathered = 0;
    for (const auto& t : r.tasks)
      if (t.rank == 0 && t.category == TaskCategory::dp_comm)
        (t.op == "reduce_scatter" ? scattered : gathered) += t.bytes;
    return std::make_pair(scattered, gathered);
  };
  const auto sc = plan_test::scenario(on_nodes("{name: m, framework: megatron-core}", 1, 16));
  const double params = 8.0 * static_cast<double>(layer_cost(cost_inputs(sc, sc.strategies[0])).params);
  const std::string base = "{name: m, micro_batch: 2, framework: megatron-core";
  CHECK(dp_bytes(base + "}", "bf16") == std::make_pair(4 * params, 2 * params));
  CHECK(dp_bytes(base + ", grad_reduce_in_bf16: true}", "bf16") == std::make_pair(2 * params, 2 * params));
  CHECK(dp_bytes(base + "}", "fp16") == std::make_pair(2 * params, 2 * params));
}

TEST_CASE("gradients are held in memory at the dtype they are reduced in") {
  // Megatron-Core's main_grad buffer: the rank's P·8 layer parameters, unsharded under the
  // distributed optimizer, 4 bytes each in fp32 and 2 with --grad-reduce-in-bf16.
  auto gradients = [](const std::string& strategy) {
    const auto sc = plan_test::scenario(on_nodes(strategy, 1, 16));
    SimOptions opt = plan_test::ideal_network(kBandwidth);
    opt.hooks.skip_embedding_and_head = true;
    return simulate(sc, sc.strategies[0], opt).memory_at_peak.gradients;
  };
  const auto sc = plan_test::scenario(on_nodes("{name: m, framework: megatron-core}", 1, 16));
  const std::int64_t params = 8 * layer_cost(cost_inputs(sc, sc.strategies[0])).params;
  const std::string base = "{name: m, micro_batch: 2, framework: megatron-core";
  CHECK(gradients(base + "}") == 4 * params);
  CHECK(gradients(base + ", grad_reduce_in_bf16: true}") == 2 * params);
}
