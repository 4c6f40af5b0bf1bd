// Expert parallelism (Megatron-Core's EP inside DP): a MoE layer's experts split over the EP
// group, its tokens exchanged by an all-to-all before and after the experts in forward and again
// in backward, and the routed experts' gradients reduced only over the dp/ep ranks that hold the
// same experts. On the ideal network (every collective takes bytes / bandwidth) the times and
// volumes are derived by hand.
#include <doctest/doctest.h>

#include "models/compute_time.hpp"
#include "sim/plan/rank_grid.hpp"
#include "sim/plan/stage_costs.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

constexpr double kBandwidth = 1e12;

// 4 MoE layers of 8 SwiGLU experts (h 512, expert width 1024, top 2) on one DGX A100; one
// microbatch of one 1,024-token sequence per rank.
std::string moe_scenario(const std::string& strategy) {
  return R"(name: moe
hardware: {preset: dgx-a100}
model: {name: tiny-moe, layers: 4, hidden: 512, heads: 8, vocab: 1000, position: rotary, activation: swiglu,
        norm: rmsnorm, bias: false, dropout: false, moe: {experts: 8, top_k: 2, expert_ffn: 1024}}
training: {seq_len: 1024, global_batch: 8}
strategies:
  - )" + strategy + "\n";
}

StepResult run(const std::string& strategy) {
  auto sc = plan_test::scenario(moe_scenario(strategy));
  sc.cluster.gpu.comm_slowdown = 0;
  SimOptions opt = plan_test::ideal_network(kBandwidth);
  opt.detail = true;
  return simulate(sc, sc.strategies[0], opt);
}

double bytes_of(const StepResult& r, int rank, TaskCategory category, int* count = nullptr) {
  double bytes = 0;
  for (const auto& t : r.tasks)
    if (t.rank == rank && t.category == category) {
      bytes += t.bytes;
      if (count) ++*count;
    }
  return bytes;
}

}  // namespace

TEST_CASE("EP groups are consecutive DP ranks; expert-DP groups hold the same experts") {
  const RankGrid grid(2, 1, 4, "tp-dp-pp");  // rank = tp + 2·dp
  CHECK(grid.ep_group(0, 2) == std::vector<int>{0, 2});
  CHECK(grid.ep_group(5, 2) == std::vector<int>{5, 7});
  CHECK(grid.expert_dp_group(0, 2) == std::vector<int>{0, 4});
  CHECK(grid.expert_dp_group(7, 2) == std::vector<int>{3, 7});
  CHECK(grid.expert_dp_group(1, 4) == std::vector<int>{1});
}

TEST_CASE("folded over TP (etp 1), EP groups are consecutive ranks of the TP × DP grid") {
  const RankGrid grid(2, 1, 4, "tp-dp-pp");  // rank = tp + 2·dp = f
  CHECK(grid.folded_ep_group(0, 4) == std::vector<int>{0, 1, 2, 3});
  CHECK(grid.folded_ep_group(5, 4) == std::vector<int>{4, 5, 6, 7});
  CHECK(grid.folded_expert_dp_group(1, 4) == std::vector<int>{1, 5});
  CHECK(grid.folded_expert_dp_group(6, 8) == std::vector<int>{6});
  // Another rank order: rank = dp + 4·tp; f = tp + 2·dp still numbers the grid TP-innermost.
  const RankGrid dp_first(2, 1, 4, "dp-tp-pp");
  CHECK(dp_first.folded_ep_group(0, 4) == std::vector<int>{0, 4, 1, 5});
}

TEST_CASE("whole experts (etp 1): each rank routes its own s/t tokens, no TP collective around the experts") {
  // tp 2, dp 4, ep 8, etp 1: 8 ranks, one expert each, 2 microbatches of 1,024 tokens per rank.
  // All-to-all: the rank's s/t = 512 tokens × k 2 × h 512 × 2 B = 1 MiB, 4 a layer and microbatch:
  // 32 of them. TP: only attention's pair under SP, 1 MiB each way, forward and backward: 4 MiB a
  // layer and microbatch, 32 MiB; etp 2 adds the experts' pair, as much again.
  const std::string folded = "{name: f, tp: 2, dp: 4, ep: 8, etp: 1, sequence_parallel: true}";
  const StepResult r = run(folded);
  int count = 0;
  CHECK(bytes_of(r, 0, TaskCategory::ep_comm, &count) == doctest::Approx(32.0 * 1048576));
  CHECK(count == 32);
  CHECK(bytes_of(r, 0, TaskCategory::tp_comm) == doctest::Approx(32.0 * 1048576));
  const StepResult split = run("{name: s, tp: 2, dp: 4, ep: 4, sequence_parallel: true}");
  CHECK(bytes_of(split, 0, TaskCategory::tp_comm) == doctest::Approx(64.0 * 1048576));
  // The rank holds its expert whole: 3 · 512 · 1024 parameters, which nobody else holds (tp·dp/ep
  // = 1: no expert reduction); the rest reduces over DP, at 4 B (Megatron-LM reduces a bf16
  // model's gradients in fp32).
  const auto sc = plan_test::scenario(moe_scenario(folded));
  const LayerCost c = layer_cost(cost_inputs(sc, sc.strategies[0]));
  CHECK(c.expert_params == 3 * 512 * 1024);
  CHECK(bytes_of(r, 0, TaskCategory::dp_comm) == doctest::Approx(4.0 * static_cast<double>(c.params - c.expert_params) * 4));
  // ep 4 under tp 2 · dp 4: two ranks hold each pair of experts and all-reduce them.
  const StepResult half = run("{name: f4, tp: 2, dp: 4, ep: 4, etp: 1, sequence_parallel: true}");
  const auto sc4 = plan_test::scenario(moe_scenario("{name: f4, tp: 2, dp: 4, ep: 4, etp: 1, sequence_parallel: true}"));
  const LayerCost c4 = layer_cost(cost_inputs(sc4, sc4.strategies[0]));
  CHECK(c4.expert_params == 2 * 3 * 512 * 1024);
  CHECK(bytes_of(half, 0, TaskCategory::dp_comm) ==
        doctest::Approx(4.0 * static_cast<double>(c4.params - c4.expert_params) * 4 + 4.0 * static_cast<double>(c4.expert_params) * 4));
}

TEST_CASE("DeepEP across two servers: each token crosses once per server holding its experts, then NVLink") {
  // 16 experts, top 2, on 2 DGX A100: dp 16, ep 16, one 1,024-token microbatch per rank, 4 layers.
  // A plain all-to-all carries B = 1024·2·512·2 B = 2 MiB per exchange. DeepEP splits it: the rail
  // (the rank's GPU index on both servers) gets 2 chunks of 1 − C(8,2)/C(16,2) = 92/120 of the
  // tokens (one stays home), B·2·(92/120)/2 bytes; the server part carries B among its 8 ranks.
  // Four exchanges a layer (dispatch and combine, forward and backward).
  std::string yaml = moe_scenario("{name: d, framework: megatron-core, dp: 16, ep: 16, moe_deepep: true}");
  yaml.replace(yaml.find("{preset: dgx-a100}"), 18, "{preset: dgx-a100, nodes: 2}");
  yaml.replace(yaml.find("experts: 8"), 10, "experts: 16");
  yaml.replace(yaml.find("global_batch: 8"), 15, "global_batch: 16");
  auto sc = plan_test::scenario(yaml);
  sc.cluster.gpu.comm_slowdown = 0;
  SimOptions opt = plan_test::ideal_network(kBandwidth);
  opt.detail = true;
  const double b = 1024.0 * 2 * 512 * 2, rail = b * 2 * (92.0 / 120) / 2;
  int count = 0;
  CHECK(bytes_of(simulate(sc, sc.strategies[0], opt), 0, TaskCategory::ep_comm, &count) ==
        doctest::Approx(16 * (b + rail)).epsilon(1e-6));
  CHECK(count == 32);
  sc.strategies[0].moe_deepep = false;
  CHECK(bytes_of(simulate(sc, sc.strategies[0], opt), 0, TaskCategory::ep_comm) == doctest::Approx(16 * b));
  // Inside one server DeepEP is the plain all-to-all.
  CHECK(run("{name: d, framework: megatron-core, dp: 8, ep: 8, moe_deepep: true}").exposed_comm_s.ep ==
        doctest::Approx(16.0 * 1024 * 2 * 512 * 2 / kBandwidth).epsilon(1e-9));
  CHECK(plan_test::strategy_error(moe_scenario("{name: d, framework: megatron-core, dp: 8, moe_deepep: true}")) ==
        "test.yaml:7:60: strategies[0].moe_deepep: DeepEP dispatches a MoE layer's tokens over an expert-parallel "
        "group; it needs ep > 1, found ep = 1");
}

TEST_CASE("each MoE layer exchanges its tokens four times a step per microbatch, every time exposed") {
  // ep 8: the rank keeps 1 of the 8 experts. Each all-to-all carries the rank's T·k copies of h
  // values, 1024·2·512·2 B = 2 MiB; dispatch and combine in forward and in backward on each of
  // the 4 layers: 16, each blocking the compute stream for bytes / bandwidth.
  const StepResult r = run("{name: ep8, dp: 8, ep: 8}");
  int count = 0;
  const double bytes = bytes_of(r, 0, TaskCategory::ep_comm, &count);
  CHECK(count == 16);
  CHECK(bytes == doctest::Approx(16.0 * 1024 * 2 * 512 * 2));
  CHECK(r.exposed_comm_s.ep == doctest::Approx(16.0 * 1024 * 2 * 512 * 2 / kBandwidth).epsilon(1e-9));
  CHECK(r.ep == 8);
  // Without EP there is no all-to-all.
  CHECK(run("{name: dp8, dp: 8}").exposed_comm_s.ep == 0);
}

TEST_CASE("routed experts' gradients are reduced over their own replicas, the rest over DP") {
  const auto sc = plan_test::scenario(moe_scenario("{name: ep8, dp: 8, ep: 8}"));
  const LayerCost ep8 = layer_cost(cost_inputs(sc, sc.strategies[0]));
  // One local expert: 3 · 512 · 1024 parameters.
  CHECK(ep8.expert_params == 3 * 512 * 1024);
  const auto sc4 = plan_test::scenario(moe_scenario("{name: ep4, dp: 8, ep: 4}"));
  const LayerCost ep4 = layer_cost(cost_inputs(sc4, sc4.strategies[0]));
  CHECK(ep4.expert_params == 2 * 3 * 512 * 1024);
  CHECK(ep8.params - ep8.expert_params == ep4.params - ep4.expert_params);
  // ep == dp: each expert lives on one rank, nothing to reduce for it; the all-reduce carries the
  // 4 layers' other parameters at 4 B (fp32, as Megatron-LM reduces a bf16 model's gradients).
  const double dense = 4.0 * static_cast<double>(ep8.params - ep8.expert_params) * 4;
  CHECK(bytes_of(run("{name: ep8, dp: 8, ep: 8}"), 0, TaskCategory::dp_comm) == doctest::Approx(dense));
  // ep 4: the two ranks holding the same two experts all-reduce them too.
  const double with_experts = dense + 4.0 * static_cast<double>(ep4.expert_params) * 4;
  CHECK(bytes_of(run("{name: ep4, dp: 8, ep: 4}"), 0, TaskCategory::dp_comm) == doctest::Approx(with_experts));
}

TEST_CASE("a MoE model's first dense layers run no all-to-all and reduce their whole MLP over DP") {
  // moe.dense_layers 1 (DeepSeek's first_k_dense_replace): layer 0 keeps a dense SwiGLU MLP of
  // width ffn_hidden = 4h, the other three run experts. ep 8: 3 layers × 4 all-to-alls of 2 MiB.
  const std::string strategy = "{name: ep8, dp: 8, ep: 8}";
  std::string yaml = moe_scenario(strategy);
  yaml.replace(yaml.find("expert_ffn: 1024}"), 17, "expert_ffn: 1024, dense_layers: 1}");
  auto sc = plan_test::scenario(yaml);
  sc.cluster.gpu.comm_slowdown = 0;
  SimOptions opt = plan_test::ideal_network(kBandwidth);
  opt.detail = true;
  const StepResult r = simulate(sc, sc.strategies[0], opt);
  int count = 0;
  CHECK(bytes_of(r, 0, TaskCategory::ep_comm, &count) == doctest::Approx(12.0 * 1024 * 2 * 512 * 2));
  CHECK(count == 12);
  // Gradients over DP (ep = dp: routed experts have no replica): the dense layer whole, and each
  // MoE layer without its expert, at 4 B (fp32).
  CostInputs in = cost_inputs(sc, sc.strategies[0]);
  const LayerCost moe = layer_cost(in);
  in.shape.dense_mlp = true;
  const LayerCost dense = layer_cost(in);
  CHECK(dense.expert_params == 0);
  CHECK(dense.params == moe.params - moe.expert_params - 512 * 8 + 3 * 512 * 2048);  // no router; a 4h MLP
  const double reduced = 4.0 * static_cast<double>(dense.params + 3 * (moe.params - moe.expert_params));
  CHECK(bytes_of(r, 0, TaskCategory::dp_comm) == doctest::Approx(reduced));
}

TEST_CASE("expert parallelism is refused where it cannot run, at the key") {
  const auto error = plan_test::strategy_error;
  CHECK(error(plan_test::small_gpt("{name: e, dp: 8, ep: 2}")) ==
        "test.yaml:6:26: strategies[0].ep: expert parallelism needs a mixture-of-experts model; small-gpt is dense");
  CHECK(error(moe_scenario("{name: e, dp: 8, ep: 3}")).find("expected ep to divide dp = 8") != std::string::npos);
  CHECK(error(moe_scenario("{name: e, tp: 2, dp: 4, ep: 4, sequence_parallel: false}")).find("needs sequence_parallel: true") !=
        std::string::npos);
  CHECK(error(moe_scenario("{name: e, dp: 8, ep: 8, zero_stage: 3}")).find("expert parallelism is modelled with ZeRO-0/1") !=
        std::string::npos);
  CHECK(error(moe_scenario("{name: e, tp: 2, dp: 4, ep: 4, etp: 3, sequence_parallel: true}")) ==
        "test.yaml:7:41: strategies[0].etp: expected etp 1 (whole experts, EP folded over TP) or tp = 2, found etp = 3");
  CHECK(error(moe_scenario("{name: e, tp: 2, dp: 4, etp: 1, sequence_parallel: true}")) ==
        "test.yaml:7:34: strategies[0].etp: etp 1 below tp needs expert parallelism (ep > 1) to place whole experts, "
        "found ep = 1");
  CHECK(error(moe_scenario("{name: e, tp: 2, dp: 4, ep: 3, etp: 1, sequence_parallel: true}")).find("expected ep to divide tp·dp = 8") !=
        std::string::npos);
}

TEST_CASE("an EP layer's backward keeps every op's time: nothing runs beside an all-to-all") {
  for (const char* strategy : {"{name: ep8, dp: 8, ep: 8}", "{name: tp2-ep4, tp: 2, dp: 4, ep: 4, sequence_parallel: true}"}) {
    CAPTURE(strategy);
    const auto sc = plan_test::scenario(moe_scenario(strategy));
    const CostInputs in = cost_inputs(sc, sc.strategies[0]);
    const LayerCost c = layer_cost(in);
    const models::OpsTime ops = models::time_ops(models::layer_ops(*in.model, in.shape), *in.gpu, in.dtype);
    std::int64_t simulated = 0;
    for (const Segment& s : c.bwd) {
      CHECK(s.compute_ps >= 0);
      if (s.group == LayerGroup::ep) CHECK(s.overlap_ps == 0);
      simulated += s.compute_ps + s.overlap_ps;
    }
    CHECK(simulated == ops.bwd_input_ps + ops.bwd_weight_ps);
  }
}
