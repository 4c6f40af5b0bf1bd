#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "sim/config/yaml_field.hpp"
#include "sim/sweep/sweep_space.hpp"
#include "sim/sweep/sweep_yaml.hpp"
#include "sweep_fixture.hpp"

using namespace stepsim;
using sweep::enumerate_plans;

namespace {

std::size_t count_valid(const std::vector<sweep::Candidate>& c) {
  return static_cast<std::size_t>(std::count_if(c.begin(), c.end(), [](const auto& x) { return x.valid; }));
}

sweep::SweepSpace space_from(const std::string& section) {
  return sweep::read_scenario_sweep(
      config::YamlDocument::load_string(sweep_test::small_scenario_yaml(section), "test.yaml"));
}

}  // namespace

TEST_CASE("the default space on 4 GPUs, derived by hand") {
  // 4 GPUs, 8 layers, global batch 8. Per (tp, pp, dp): ZeRO stages × micro-batches (powers of two
  // with mb·dp dividing 8) × schedules × recompute (3) × SP (2 when tp > 1):
  //   (1,1,4): z0-3 (4) × mb 1,2 (2)   × 1f1b (1)                             × 3     = 24
  //   (1,2,2): z0-1 (2) × mb 1,2,4 (3) × gpipe,1f1b,zb-h1,interleaved v2,v4 (5) × 3 = 90
  //   (1,4,1): z0 (1)   × mb 1,2,4,8 (4) × 3 + interleaved v2 (8 % 4v: v=2 only) (4) × 3 = 48
  //   (2,1,2): 4 × 3 × 1 × 3 × 2 = 72;  (2,2,1): 1 × 4 × 5 × 3 × 2 = 120;  (4,1,1): 1 × 4 × 1 × 3 × 2 = 24
  // Total 378. check_strategy rejects interleaved where m = 8/(mb·dp) is not a multiple of pp:
  //   (1,2,2) mb4 (m=1): 2 z × 2 v × 3 rc = 12;  (1,4,1) mb4 (m=2), mb8 (m=1): 2 × 3 = 6;
  //   (2,2,1) mb8 (m=1): 2 v × 3 rc × 2 sp = 12.  Invalid 30, valid 348.
  const auto sc = sweep_test::small_scenario();
  const auto plans = enumerate_plans(sc, {});
  CHECK(plans.size() == 378);
  CHECK(count_valid(plans) == 348);
  for (std::size_t i = 0; i < plans.size(); ++i) CHECK(plans[i].index == i);
  const auto& first = plans.front();
  CHECK(first.strategy.name == "tp1-pp1-dp4-z0-mb1");
  CHECK(first.strategy.dp == 4);
  std::set<std::string> names;
  for (const auto& p : plans) names.insert(p.strategy.name);
  CHECK(names.size() == plans.size());  // every plan has its own name
}

TEST_CASE("an invalid plan keeps check_strategy's reason") {
  const auto sc = sweep_test::small_scenario();
  const auto plans = enumerate_plans(sc, {});
  const auto bad = std::find_if(plans.begin(), plans.end(), [](const auto& c) { return !c.valid; });
  REQUIRE(bad != plans.end());
  CHECK(bad->strategy.name == "tp1-pp2-dp2-z0-mb4-interleaved-v2");
  CHECK(bad->invalid_reason ==
        "schedule: interleaved needs the microbatches per step (1) to be a multiple of pp = 2 (Megatron-LM's requirement)");
}

TEST_CASE("a sweep section narrows the space") {
  // tp [1,2], zero [0,3], mb [1,2], schedule [1f1b, interleaved], recompute [none, selective]:
  //   (1,1,4): z0,z3 × mb 2 × 1 × rc 2 = 8;   (1,2,2): z0 (z3 needs pp = 1) × 2 × (1f1b, v2, v4) × 2 = 12
  //   (1,4,1): z0 × 2 × (1f1b, v2) × 2 = 8;   (2,1,2): 2 × 2 × 1 × 2 × sp 2 = 16;  (2,2,1): 1 × 2 × 3 × 2 × 2 = 24
  // Total 68; m = 8/(mb·dp) is 2 or more and a multiple of pp everywhere, so all are valid.
  const auto space = space_from(
      "sweep: {tp: [1, 2], zero_stage: [0, 3], micro_batch: [1, 2], schedule: [1f1b, interleaved], "
      "recompute: [none, selective]}");
  const auto plans = enumerate_plans(sweep_test::small_scenario(), space);
  CHECK(plans.size() == 68);
  CHECK(count_valid(plans) == 68);
}

TEST_CASE("a MoE model's experts are tried split over TP inside DP and whole with EP folded over TP") {
  // 8 experts on 8 GPUs, tp 2 (dp 4), ZeRO-1, one micro-batch and recompute, SP on: ep over DP is
  // 1, 2, 4 (each expert split over TP); whole experts (etp 1) take ep 2, 4, 8 dividing tp·dp = 8.
  const auto doc = stepsim::config::YamlDocument::load_string(R"(name: moe
hardware: {preset: dgx-a100}
model: {name: tiny-moe, layers: 4, hidden: 512, heads: 8, vocab: 1000, position: rotary, activation: swiglu,
        moe: {experts: 8, top_k: 2, expert_ffn: 1024}}
training: {seq_len: 1024, global_batch: 8}
sweep: {tp: [2], pp: [1], zero_stage: [1], micro_batch: [1], recompute: [none], sequence_parallel: [true]}
)", "test.yaml");
  const auto plans = enumerate_plans(stepsim::plan::read_scenario(doc), sweep::read_scenario_sweep(doc));
  std::vector<std::string> names;
  for (const auto& p : plans) names.push_back(p.strategy.name + (p.valid ? "" : " (invalid)"));
  CHECK(names == std::vector<std::string>{"tp2-pp1-dp4-z1-mb1-sp", "tp2-pp1-dp4-ep2-z1-mb1-sp", "tp2-pp1-dp4-ep4-z1-mb1-sp",
                                          "tp2-pp1-dp4-ep2-etp1-z1-mb1-sp", "tp2-pp1-dp4-ep4-etp1-z1-mb1-sp",
                                          "tp2-pp1-dp4-ep8-etp1-z1-mb1-sp"});
}

TEST_CASE("under Megatron-Core, EP groups that span servers are also tried with DeepEP's dispatch") {
  // 2 DGX A100 (16 GPUs), tp 2, dp 8: EP over DP covers ep·tp GPUs (2, 4, 8: 4, 8, 16 GPUs), folded
  // EP covers ep (2..16). Only the 16-GPU groups leave a server: ep 8 over DP, ep 16 folded.
  const auto doc = stepsim::config::YamlDocument::load_string(R"(name: moe
hardware: {preset: dgx-a100, nodes: 2}
model: {name: tiny-moe, layers: 4, hidden: 512, heads: 8, vocab: 1000, position: rotary, activation: swiglu,
        moe: {experts: 16, top_k: 2, expert_ffn: 1024}}
training: {seq_len: 1024, global_batch: 16}
sweep: {framework: [megatron-core], tp: [2], pp: [1], micro_batch: [1], recompute: [none], sequence_parallel: [true]}
)", "test.yaml");
  const auto plans = enumerate_plans(stepsim::plan::read_scenario(doc), sweep::read_scenario_sweep(doc));
  std::vector<std::string> deepep;
  for (const auto& p : plans)
    if (p.strategy.moe_deepep) deepep.push_back(p.strategy.name + (p.valid ? "" : " (invalid)"));
  CHECK(deepep == std::vector<std::string>{"megatron-core-tp2-pp1-dp8-ep8-deepep-z0-mb1-sp",
                                           "megatron-core-tp2-pp1-dp8-ep16-etp1-deepep-z0-mb1-sp",
                                           "megatron-core-tp2-pp1-dp8-ep8-deepep-z1-mb1-sp",
                                           "megatron-core-tp2-pp1-dp8-ep16-etp1-deepep-z1-mb1-sp"});
}

TEST_CASE("a listed value that does not divide the GPUs is one invalid plan") {
  // tp 3 on 4 GPUs: one invalid entry for the layout, not one per combination of the other fields.
  const auto plans = enumerate_plans(sweep_test::small_scenario(), space_from("sweep: {tp: 3, pp: [1]}"));
  REQUIRE(plans.size() == 1);
  CHECK_FALSE(plans[0].valid);
  CHECK(plans[0].strategy.name == "tp3-pp1-z0-mb1");
}

TEST_CASE("sweep section errors point at the key") {
  auto error_of = [](const std::string& section) {
    try {
      space_from(section);
    } catch (const config::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("sweep: {tp: [1], zero_stge: [0]}") ==
        "test.yaml:5:18: sweep: unknown key 'zero_stge'; did you mean 'zero_stage'?");
  CHECK(error_of("sweep: {schedule: [1f1b, interleave]}") ==
        "test.yaml:5:26: sweep.schedule[1]: expected one of gpipe, 1f1b, interleaved, zb-h1, found 'interleave'; "
        "did you mean 'interleaved'?");
  CHECK(error_of("sweep: {zero_stage: [4]}") ==
        "test.yaml:5:22: sweep.zero_stage[0]: expected an integer from 0 to 3, found '4'");
  CHECK(error_of("sweep: {tp: []}") == "test.yaml:5:13: sweep.tp: expected at least one value, found an empty list");
}

TEST_CASE("TP stays inside a server unless the sweep section allows otherwise") {
  // 2 servers of 4 GPUs. Default tp ∈ {1, 2, 4} (divisors of the 4 GPUs per server); with
  // allow_tp_across_servers, tp 8 (a TP group over both servers) is tried and valid too.
  const std::string two_servers = R"(name: two
hardware: {preset: dgx-a100, nodes: 2, gpus: 4}
model: {name: small-gpt, layers: 8, hidden: 1024, heads: 16, vocab: 32000, max_seq: 1024}
training: {seq_len: 1024, global_batch: 8}
)";
  auto tps = [&](const std::string& section) {
    const auto doc = config::YamlDocument::load_string(two_servers + section + "\n", "two.yaml");
    std::set<int> out;
    for (const auto& c : enumerate_plans(plan::read_scenario(doc), sweep::read_scenario_sweep(doc)))
      if (c.valid) out.insert(c.strategy.tp);
    return out;
  };
  CHECK(tps("sweep: {pp: [1]}") == std::set<int>{1, 2, 4});
  CHECK(tps("sweep: {pp: [1], allow_tp_across_servers: true}") == std::set<int>{1, 2, 4, 8});
}

TEST_CASE("a framework list repeats the space per framework, each with its own ZeRO stages") {
  // Only tp 1, pp 1 on the 4 GPUs (dp 4), mb 1 and 2, recompute none. generic: z0-3 (4) x 2 = 8;
  // megatron-core: z0, z1 as its distributed optimizer off and on (2) x 2 = 4; fsdp: z2
  // (SHARD_GRAD_OP) and z3 (FULL_SHARD) x 2 = 4.
  const auto sc = sweep_test::small_scenario();
  const auto plans =
      enumerate_plans(sc, space_from("sweep: {framework: [generic, megatron-core, fsdp], tp: 1, pp: 1, recompute: none}"));
  REQUIRE(plans.size() == 16);
  CHECK(plans[0].strategy.name == "tp1-pp1-dp4-z0-mb1");
  CHECK(plans[8].strategy.name == "megatron-core-tp1-pp1-dp4-z0-mb1");
  CHECK_FALSE(plans[8].strategy.distributed_optimizer);
  CHECK(plans[10].strategy.name == "megatron-core-tp1-pp1-dp4-z1-mb1");
  CHECK(plans[10].strategy.distributed_optimizer);
  CHECK(plans[10].strategy.overlap_param_gather);  // the framework's defaults
  CHECK(plans[12].strategy.name == "fsdp-tp1-pp1-dp4-z2-mb1");
  CHECK(plans[14].strategy.name == "fsdp-tp1-pp1-dp4-z3-mb1");
  CHECK(plans[12].strategy.framework == plan::Framework::fsdp);
  CHECK(count_valid(plans) == 16);
  CHECK_THROWS_WITH(space_from("sweep: {framework: [torchtitan]}"), doctest::Contains("expected one of"));
}

TEST_CASE("ZeRO-Offload is tried where listed, on DeepSpeed plans with a ZeRO stage") {
  // tp 1, pp 1 on 4 GPUs (dp 4), mb 1, recompute none. generic: z0-3 (4), never offloaded;
  // deepspeed: z0 (1) plus z1-3 each off and on (6).
  const auto sc = sweep_test::small_scenario();
  const auto plans = enumerate_plans(
      sc, space_from("sweep: {framework: [generic, deepspeed], offload_optimizer: [false, true], tp: 1, pp: 1, "
                     "micro_batch: 1, recompute: none}"));
  REQUIRE(plans.size() == 11);
  CHECK(plans[4].strategy.name == "deepspeed-tp1-pp1-dp4-z0-mb1");
  CHECK(plans[5].strategy.name == "deepspeed-tp1-pp1-dp4-z1-mb1");
  CHECK(plans[6].strategy.name == "deepspeed-tp1-pp1-dp4-z1-offload-mb1");
  CHECK(plans[6].strategy.offload_optimizer);
  CHECK(plans[10].strategy.name == "deepspeed-tp1-pp1-dp4-z3-offload-mb1");
  CHECK(count_valid(plans) == 11);
  CHECK_THROWS_WITH(space_from("sweep: {offload_optimizer: [true]}"),
                    doctest::Contains("sweep.offload_optimizer: ZeRO-Offload is DeepSpeed's: expected framework to list deepspeed"));
}
