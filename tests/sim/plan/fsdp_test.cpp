// PyTorch FSDP as a framework profile: its all-gathers and reduce-scatters run in issue order on
// one NCCL stream, so where the backward prefetch issues the next all-gather decides what is
// exposed; HYBRID_SHARD shards within a server and all-reduces the shards across servers. On the
// ideal network (every collective takes bytes / bandwidth, compute not slowed by it) the exposed
// time is derived by hand.
#include <doctest/doctest.h>

#include <cmath>

#include "sim/plan/stage_costs.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

constexpr double kBandwidth = 1e12;  // a layer's gather (25 MB) takes far less than its compute

std::string on_nodes(const std::string& strategy, int nodes) {
  return plan_test::small_gpt_on_nodes(strategy, nodes, 8 * nodes);  // one microbatch per rank
}

StepResult run(const std::string& strategy, int nodes = 1, bool detail = false) {
  auto sc = plan_test::scenario(on_nodes(strategy, nodes));
  sc.cluster.gpu.comm_slowdown = 0;
  SimOptions opt = plan_test::ideal_network(kBandwidth);
  opt.detail = detail;
  return simulate(sc, sc.strategies[0], opt);
}

}  // namespace

TEST_CASE("framework: fsdp is FULL_SHARD with BACKWARD_PRE; what it cannot be is refused at the key") {
  const auto sc = plan_test::scenario(on_nodes("{name: f, framework: fsdp}", 1));
  CHECK(sc.strategies[0].zero_stage == 3);
  CHECK(sc.strategies[0].fsdp_shard_degree == 0);
  CHECK(sc.strategies[0].fsdp_backward_prefetch == FsdpPrefetch::backward_pre);
  CHECK(plan_test::scenario(on_nodes("{name: f, framework: fsdp, fsdp_sharding: shard_grad_op}", 1)).strategies[0].zero_stage == 2);
  CHECK(plan_test::scenario(on_nodes("{name: f, framework: fsdp, zero_stage: 2}", 1)).strategies[0].shards_parameters());
  CHECK_THROWS_WITH(plan_test::scenario(on_nodes("{name: f, framework: fsdp, zero_stage: 1}", 1)),
                    doctest::Contains("FSDP shards parameters: FULL_SHARD / HYBRID_SHARD are zero_stage 3, SHARD_GRAD_OP zero_stage 2"));
  CHECK_THROWS_WITH(plan_test::scenario(on_nodes("{name: f, framework: fsdp, zero_stage: 3, fsdp_sharding: shard_grad_op}", 1)),
                    doctest::Contains("shard_grad_op is zero_stage 2; the strategy says zero_stage 3"));
  CHECK_THROWS_WITH(plan_test::scenario(on_nodes("{name: f, zero_stage: 3, fsdp_backward_prefetch: none}", 1)),
                    doctest::Contains("fsdp_backward_prefetch is FSDP's: it needs framework: fsdp"));
  // tp 8 leaves one DP rank per server: nothing to shard within it.
  const auto one = plan_test::scenario(on_nodes("{name: f, tp: 8, framework: fsdp, fsdp_sharding: hybrid_shard}", 2));
  CHECK_THROWS_WITH(check_strategy(one, one.strategies[0]),
                    doctest::Contains("hybrid_shard shards over the DP ranks of one server; expected at least two per server"));
}

TEST_CASE("on one stream, BACKWARD_POST exposes one gather per layer and no prefetch two, against BACKWARD_PRE") {
  // dp 8, one microbatch, 8 layers of P parameters; c = 2P / bandwidth for a layer's all-gather
  // and its reduce-scatter alike. PRE issues layer i's gather before layer i+1's gradients, so it
  // runs under them. POST issues it after them, ahead of their reduce-scatter: layer i waits c.
  // With none it is issued at layer i, behind layer i+1's reduce-scatter: 2c. Seven such layers.
  const auto sc = plan_test::scenario(on_nodes("{name: f, framework: fsdp}", 1));
  const double p = static_cast<double>(layer_cost(cost_inputs(sc, sc.strategies[0])).params);
  const double c = std::ceil(2 * p / kBandwidth * 1e12) * 1e-12;
  const double pre = run("{name: f, framework: fsdp}").step_time_s;
  const double post = run("{name: f, framework: fsdp, fsdp_backward_prefetch: backward_post}").step_time_s;
  const double none = run("{name: f, framework: fsdp, fsdp_backward_prefetch: none}").step_time_s;
  CHECK(post - pre == doctest::Approx(7 * c).epsilon(1e-6));
  CHECK(none - pre == doctest::Approx(14 * c).epsilon(1e-6));
  // Where collectives take a fixed time, sharing one stream costs PRE nothing over generic's two
  // (to well under one gather: the streams' order of equal-time events differs by nanoseconds).
  CHECK(std::abs(pre - run("{name: g, zero_stage: 3}").step_time_s) < 0.01 * c);
}

TEST_CASE("SHARD_GRAD_OP gathers once in the forward and keeps the parameters for the backward") {
  // One microbatch: FULL_SHARD's backward gathers every layer again, all but the first under the
  // layer above's gradients (c exposed, the top layer's); SHARD_GRAD_OP gathers none there, so it
  // is c faster, and holds every layer's gathered parameters from its forward to its backward.
  const auto sc = plan_test::scenario(on_nodes("{name: f, framework: fsdp}", 1));
  const double p = static_cast<double>(layer_cost(cost_inputs(sc, sc.strategies[0])).params);
  const double c = std::ceil(2 * p / kBandwidth * 1e12) * 1e-12;
  const auto full = run("{name: f, framework: fsdp}");
  const auto sgo = run("{name: s, framework: fsdp, fsdp_sharding: shard_grad_op}");
  CHECK(full.step_time_s - sgo.step_time_s == doctest::Approx(c).epsilon(1e-6));
  // At its peak SHARD_GRAD_OP holds all 8 layers (2P bytes each); FULL_SHARD at most 3 (its own,
  // one prefetched, one being released).
  const double extra = static_cast<double>(sgo.peak_memory_bytes - full.peak_memory_bytes);
  CHECK(extra >= 5 * 2 * p);
  CHECK(extra <= 8 * 2 * p);
}

TEST_CASE("HYBRID_SHARD reduce-scatters in the server and all-reduces each 1/8 shard across servers") {
  // 2 servers, dp 16, shard groups of 8: every layer's backward reduce-scatters its 2P bytes and
  // all-reduces 2P/8 over the two replicas; model states are sharded 8 ways, not 16.
  const auto hybrid = run("{name: h, framework: fsdp, fsdp_sharding: hybrid_shard}", 2, true);
  const auto full = run("{name: f, framework: fsdp}", 2, true);
  const auto sc = plan_test::scenario(on_nodes("{name: f, framework: fsdp}", 2));
  const double p = static_cast<double>(layer_cost(cost_inputs(sc, sc.strategies[0])).params);
  int reduces = 0;
  for (const auto& t : hybrid.tasks)
    if (t.rank == 0 && t.category == TaskCategory::zero_comm && t.op == "all_reduce") {
      ++reduces;
      CHECK(t.bytes == doctest::Approx(2 * p / 8));
    }
  CHECK(reduces == 8);
  for (const auto& t : full.tasks) CHECK_FALSE((t.category == TaskCategory::zero_comm && t.op == "all_reduce"));
  CHECK(hybrid.peak_memory_bytes > full.peak_memory_bytes);
}

namespace {

StepResult run_batch(const std::string& strategy, int global_batch) {
  auto sc = plan_test::scenario(plan_test::small_gpt_on_nodes(strategy, 1, global_batch));
  sc.cluster.gpu.comm_slowdown = 0;
  SimOptions opt = plan_test::ideal_network(kBandwidth);
  opt.detail = true;
  return simulate(sc, sc.strategies[0], opt);
}

int count(const StepResult& r, int rank, const std::string& op) {
  int n = 0;
  for (const auto& t : r.tasks) n += t.rank == rank && t.category == TaskCategory::zero_comm && t.op == op;
  return n;
}

double layer_params(const std::string& strategy) {
  const auto sc = plan_test::scenario(plan_test::small_gpt_on_nodes(strategy, 1, 8));
  return static_cast<double>(layer_cost(cost_inputs(sc, sc.strategies[0])).params);
}

}  // namespace

TEST_CASE("an FSDP pipeline stage gathers once per step and reduce-scatters every layer after its last backward") {
  // pp 2, dp 4, 4 microbatches: each stage holds 4 of the 8 layers. torch.distributed.pipelining
  // keeps a stage's parameters unsharded and its gradients unreduced until the stage's last
  // backward, so rank 0 all-gathers each of its 4 layers once (not 4 · 2 times) and
  // reduce-scatters each once, all after its last backward compute.
  const std::string st = "{name: p, framework: fsdp, pp: 2}";
  const auto r = run_batch(st, 16);
  CHECK(count(r, 0, "all_gather") == 4);
  CHECK(count(r, 0, "reduce_scatter") == 4);
  std::int64_t last_backward = 0, first_scatter = -1;
  for (const auto& t : r.tasks) {
    if (t.rank != 0) continue;
    if (t.category == TaskCategory::backward_input || t.category == TaskCategory::recompute)
      last_backward = std::max(last_backward, t.end_ps);
    if (t.category == TaskCategory::zero_comm && t.op == "reduce_scatter" && (first_scatter < 0 || t.start_ps < first_scatter))
      first_scatter = t.start_ps;
  }
  CHECK(first_scatter >= last_backward);
  // At the peak the stage holds its 4 layers gathered (2P bytes each, bf16) and their gradients
  // unsharded (2P each): at least 4 · 2P of each beyond ZeRO-3's shards.
  const double p = layer_params(st);
  CHECK(static_cast<double>(r.memory_at_peak.gathered_parameters) >= 4 * 2 * p);
  CHECK(static_cast<double>(r.memory_at_peak.gradients) >= 4 * 2 * p);
  // DeepSpeed's pipeline engine refuses ZeRO-2/3; FSDP is the framework that runs it.
  const auto ds = plan_test::scenario(plan_test::small_gpt_on_nodes("{name: d, zero_stage: 3, pp: 2}", 1, 16));
  CHECK_THROWS_WITH(check_strategy(ds, ds.strategies[0]),
                    doctest::Contains("is not supported by DeepSpeed; use zero_stage 0 or 1, or framework: fsdp"));
}

TEST_CASE("FSDP's no_sync reduce-scatters once per step; SHARD_GRAD_OP under it also gathers once") {
  // dp 8, 4 microbatches, 8 layers. Without no_sync every microbatch's backward reduce-scatters
  // every layer (32); with it only the last does (8), and the gradients stay unsharded meanwhile
  // (8 layers · 2P bytes from the second microbatch on). FULL_SHARD still gathers as often;
  // SHARD_GRAD_OP keeps its parameters unsharded after a backward that does not sync, so it
  // gathers each layer once.
  const std::string plain = "{name: f, framework: fsdp}", nosync = "{name: n, framework: fsdp, fsdp_no_sync: true}";
  const auto f = run_batch(plain, 32), n = run_batch(nosync, 32);
  CHECK(count(f, 0, "reduce_scatter") == 32);
  CHECK(count(n, 0, "reduce_scatter") == 8);
  CHECK(count(n, 0, "all_gather") == count(f, 0, "all_gather"));
  const double p = layer_params(plain);
  CHECK(static_cast<double>(n.memory_at_peak.gradients - f.memory_at_peak.gradients) >= 7 * 2 * p);
  const auto sgo = run_batch("{name: s, framework: fsdp, fsdp_sharding: shard_grad_op, fsdp_no_sync: true}", 32);
  CHECK(count(sgo, 0, "all_gather") == 8);
  CHECK(count(sgo, 0, "reduce_scatter") == 8);
  // One microbatch: nothing to defer, the same step as without no_sync.
  CHECK(run_batch(nosync, 8).step_time_s == doctest::Approx(run_batch(plain, 8).step_time_s).epsilon(1e-9));
  CHECK_THROWS_WITH(plan_test::scenario(plan_test::small_gpt_on_nodes("{name: g, zero_stage: 3, fsdp_no_sync: true}", 1, 8)),
                    doctest::Contains("fsdp_no_sync is FSDP's: it needs framework: fsdp"));
}
