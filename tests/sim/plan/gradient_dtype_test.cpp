// The dtype a framework keeps and reduces gradients in. Megatron-LM (framework generic) forces fp32
// accumulation and all-reduce for a bf16 model (arguments.py: "bfloat16 requires gradient
// accumulation and all-reduce to be done in fp32") at every ZeRO stage it runs; a generic ZeRO-3
// plan gathers and reduces as FSDP does, in the parameters' bf16; fp16 stays fp16. On an ideal
// network with no embedding or head, rank 0 of dp 8 on one server reduces the P·8 parameters of
// its 8 layers once (one microbatch of 2 sequences).
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "sim/plan/stage_costs.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

constexpr double kBandwidth = 1e12;

Scenario scenario(const std::string& strategy, const std::string& precision) {
  std::string yaml = plan_test::small_gpt_on_nodes(strategy, 1, 16);
  yaml.replace(yaml.find("precision: bf16"), 15, "precision: " + precision);
  return plan_test::scenario(yaml);
}

// Rank 0's DP and ZeRO traffic by collective: bytes summed per op name.
std::map<std::string, double> traffic(const std::string& strategy, const std::string& precision) {
  const auto sc = scenario(strategy, precision);
  SimOptions opt = plan_test::ideal_network(kBandwidth);
  opt.hooks.skip_optimizer = false;
  opt.detail = true;
  std::map<std::string, double> out;
  for (const auto& t : simulate(sc, sc.strategies[0], opt).tasks)
    if (t.rank == 0 && (t.category == TaskCategory::dp_comm || t.category == TaskCategory::zero_comm)) out[t.op] += t.bytes;
  return out;
}

double layer_params() {
  const auto sc = scenario("{name: g, dp: 8}", "bf16");
  return 8.0 * static_cast<double>(layer_cost(cost_inputs(sc, sc.strategies[0])).params);
}

}  // namespace

TEST_CASE("Megatron-LM (generic) reduces a bf16 model's gradients in fp32, an fp16 model's in fp16") {
  const double p = layer_params();
  // ZeRO-0: one all-reduce of the gradients.
  CHECK(traffic("{name: g, dp: 8, micro_batch: 2}", "bf16") == std::map<std::string, double>{{"all_reduce", 4 * p}});
  CHECK(traffic("{name: g, dp: 8, micro_batch: 2}", "fp16") == std::map<std::string, double>{{"all_reduce", 2 * p}});
  // The distributed optimizer: fp32 gradients reduce-scattered, the 2-byte parameters gathered.
  CHECK(traffic("{name: g, dp: 8, micro_batch: 2, distributed_optimizer: true}", "bf16") ==
        std::map<std::string, double>{{"reduce_scatter", 4 * p}, {"all_gather", 2 * p}});
  CHECK(traffic("{name: g, dp: 8, micro_batch: 2, zero_stage: 2}", "bf16").at("reduce_scatter") == 4 * p);
}

TEST_CASE("a generic ZeRO-3 plan gathers and reduces in bf16, as FSDP does") {
  const double p = layer_params();
  // Each layer gathered for the forward and again for the backward; gradients reduce-scattered once.
  const auto t = traffic("{name: g, dp: 8, micro_batch: 2, zero_stage: 3}", "bf16");
  CHECK(t.at("all_gather") == 2 * 2 * p);
  CHECK(t.at("reduce_scatter") == 2 * p);
}

TEST_CASE("the gradients are held in memory at the dtype they are reduced in") {
  auto gradients = [](const std::string& strategy, const std::string& precision) {
    const auto sc = scenario(strategy, precision);
    return simulate(sc, sc.strategies[0], plan_test::ideal_network(kBandwidth)).memory_at_peak.gradients;
  };
  const auto p = static_cast<std::int64_t>(layer_params());
  CHECK(gradients("{name: g, dp: 8, micro_batch: 2}", "bf16") == 4 * p);
  CHECK(gradients("{name: g, dp: 8, micro_batch: 2}", "fp16") == 2 * p);
}

TEST_CASE("DeepSpeed with bf16 and no ZeRO runs BF16_Optimizer: gradients all-reduced in bf16, optimizer sharded") {
  const double p = layer_params();
  const std::string ds = "{name: d, dp: 8, micro_batch: 2, framework: deepspeed}";
  // The 2-byte all-reduce of the gradients (DeepSpeed communicates in the model's dtype), then
  // the all-gather of each rank's updated bf16 partition.
  CHECK(traffic(ds, "bf16") == std::map<std::string, double>{{"all_reduce", 2 * p}, {"all_gather", 2 * p}});
  // fp16 runs FP16_Optimizer: an all-reduce and nothing sharded.
  CHECK(traffic(ds, "fp16") == std::map<std::string, double>{{"all_reduce", 2 * p}});
  auto states = [](const std::string& strategy, const std::string& precision) {
    const auto sc = scenario(strategy, precision);
    return simulate(sc, sc.strategies[0], plan_test::ideal_network(kBandwidth)).memory_at_peak;
  };
  const auto n = static_cast<std::int64_t>(p);
  // The bf16 .grad beside the fp32 buffer: 6 bytes; fp32 master, m and v over 8 ranks: 12/8.
  const auto bf16 = states(ds, "bf16");
  CHECK(bf16.gradients == 6 * n);
  CHECK(bf16.optimizer_states == doctest::Approx(12.0 * static_cast<double>(n) / 8).epsilon(1e-6));
  const auto fp16 = states(ds, "fp16");
  CHECK(fp16.gradients == 2 * n);
  CHECK(fp16.optimizer_states == 12 * n);
}

TEST_CASE("BF16_Optimizer adds every microbatch's gradients into fp32, the first included") {
  auto accumulation = [](const std::string& strategy, const std::string& precision) {
    const auto sc = scenario(strategy, precision);
    return simulate(sc, sc.strategies[0], plan_test::ideal_network(kBandwidth)).grad_accumulation_s;
  };
  // 16 sequences over dp 8: micro-batch 2 is one microbatch a step, micro-batch 1 two, each
  // adding the same 8 layers' gradients once.
  const double one = accumulation("{name: d, dp: 8, micro_batch: 2, framework: deepspeed}", "bf16");
  // Into fp32 after a cast of its own, per parameter tensor of the 8 layers (no embedding or head
  // here): the cast reads 2 bytes and writes 4, the add reads that copy and reads and writes the
  // kept 4: 18 bytes a parameter at the GPU's elementwise bandwidth, two kernels a tensor.
  const auto sc = scenario("{name: d, dp: 8, micro_batch: 2, framework: deepspeed}", "bf16");
  const LayerCost layer = layer_cost(cost_inputs(sc, sc.strategies[0]));
  const auto& gpu = sc.cluster.gpu;
  const double per_layer_ps = std::ceil(static_cast<double>(layer.params) * 18 / (gpu.memory_bytes_per_s * gpu.memory_efficiency) * 1e12) +
                              2.0 * layer.param_tensors * static_cast<double>(gpu.launch_overhead_ps);
  CHECK(one * 1e12 == doctest::Approx(8 * per_layer_ps).epsilon(1e-9));
  CHECK(accumulation("{name: d, dp: 8, micro_batch: 1, framework: deepspeed}", "bf16") == doctest::Approx(2 * one));
  // Autograd (fp16) keeps the first microbatch's gradient and adds only the later ones.
  CHECK(accumulation("{name: d, dp: 8, micro_batch: 2, framework: deepspeed}", "fp16") == 0);
}

TEST_CASE("under PP, DeepSpeed all-reduces BF16_Optimizer's fp32 copy of the tied embedding's gradient") {
  // pp 2, dp 4: the first and last stage each hold the V·h table (tied embeddings), and
  // pipe/engine.py _exec_reduce_tied_grads all-reduces its fp32 gradient between them.
  auto tied = [](const std::string& precision) {
    const auto sc = scenario("{name: d, pp: 2, dp: 4, micro_batch: 2, framework: deepspeed}", precision);
    SimOptions opt;
    opt.hooks.comm_bytes_per_s = kBandwidth;
    opt.detail = true;
    double bytes = 0;
    for (const auto& t : simulate(sc, sc.strategies[0], opt).tasks)
      if (t.rank == 0 && t.category == TaskCategory::dp_comm && t.op == "all_reduce" && t.bytes == 4.0 * 32000 * 1024) bytes += t.bytes;
    return bytes;
  };
  CHECK(tied("bf16") == 4.0 * 32000 * 1024);
  CHECK(tied("fp16") == 0);  // FP16_Optimizer reduces it in fp16, half the bytes
}

TEST_CASE("at ZeRO-1 DeepSpeed runs BF16_Optimizer where its config asks for fp32 accumulation") {
  const double p = layer_params();
  // DeepSpeed's ZeRO-1 optimizer reduce-scatters; BF16_Optimizer all-reduces, then gathers.
  auto zero1 = [](bool fp32_accumulation) {
    auto sc = scenario("{name: d, dp: 8, micro_batch: 2, framework: deepspeed, zero_stage: 1}", "bf16");
    sc.strategies[0].deepspeed_fp32_accumulation = fp32_accumulation;
    SimOptions opt = plan_test::ideal_network(kBandwidth);
    opt.hooks.skip_optimizer = false;
    opt.detail = true;
    std::map<std::string, double> out;
    const auto r = simulate(sc, sc.strategies[0], opt);
    for (const auto& t : r.tasks)
      if (t.rank == 0 && t.category == TaskCategory::dp_comm) out[t.op] += t.bytes;
    return std::make_pair(out, r.zero_stage);
  };
  CHECK(zero1(false).first == std::map<std::string, double>{{"reduce_scatter", 2 * p}, {"all_gather", 2 * p}});
  CHECK(zero1(true).first == std::map<std::string, double>{{"all_reduce", 2 * p}, {"all_gather", 2 * p}});
  CHECK(zero1(true).second == 1);  // reported as written
}
