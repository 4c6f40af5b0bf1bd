// Invalid plans are ConfigErrors at the strategy field that is wrong; whole messages pinned.
#include <doctest/doctest.h>

#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim::plan;
using stepsim::config::ConfigError;

namespace {

std::string error_of(const std::string& strategy, int global_batch = 16) {
  auto sc = plan_test::scenario(plan_test::small_gpt(strategy, global_batch));
  try {
    check_strategy(sc, sc.strategies[0]);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::string load_error(const std::string& yaml) {
  try {
    plan_test::scenario(yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("tp·pp·dp must equal the GPU count") {
  CHECK(error_of("{name: s, tp: 2, pp: 2, dp: 3}") ==
        "test.yaml:6:33: strategies[0].dp: expected tp·pp·dp = 8 GPUs of dgx-a100, found 2·2·3 = 12");
  CHECK(error_of("{name: s, tp: 3}") ==
        "test.yaml:6:19: strategies[0].tp: tp·pp = 3 does not divide the 8 GPUs of dgx-a100");
}

TEST_CASE("heads, layers and batch must divide") {
  // 16 heads: tp 8 is fine, but the model's 8 layers cannot fill pp 4 · v 4.
  CHECK(error_of("{name: s, pp: 4, dp: 2, schedule: interleaved, v: 4}") ==
        "test.yaml:6:19: strategies[0].pp: expected at least pp·v = 16 layers, the model has 8");
  CHECK(error_of("{name: s, dp: 8, micro_batch: 3}") ==
        "test.yaml:6:35: strategies[0].micro_batch: expected micro_batch·dp = 24 to divide training.global_batch "
        "= 16 (at test.yaml:4:41)");
  CHECK(error_of("{name: s, pp: 4, dp: 2, schedule: interleaved, v: 2}", 12) ==
        "test.yaml:6:39: strategies[0].schedule: interleaved needs the microbatches per step (6) to be a multiple "
        "of pp = 4 (Megatron-LM's requirement)");
}

TEST_CASE("heads not divisible by tp") {
  auto sc = plan_test::scenario(R"(name: h
hardware: {preset: dgx-a100, nodes: 2}
model: {layers: 4, hidden: 960, heads: 12, vocab: 1000, max_seq: 128}
training: {seq_len: 128, global_batch: 16}
strategies:
  - {name: s, tp: 8, dp: 2}
)");
  CHECK_THROWS_WITH_AS(check_strategy(sc, sc.strategies[0]),
                       "test.yaml:6:19: strategies[0].tp: expected tp to divide the model's 12 attention heads and 12 "
                       "key/value heads, found tp = 8",
                       ConfigError);
}

TEST_CASE("a TP group across servers needs allow_tp_across_servers") {
  auto yaml = [](const std::string& extra) {
    return R"(name: x
hardware: {preset: dgx-a100, nodes: 2}
model: {layers: 4, hidden: 1024, heads: 16, vocab: 1000, max_seq: 128}
training: {seq_len: 128, global_batch: 16}
strategies:
  - {name: s, tp: 16)" + extra + "}\n";
  };
  auto sc = plan_test::scenario(yaml(""));
  CHECK_THROWS_WITH_AS(check_strategy(sc, sc.strategies[0]),
                       "test.yaml:6:19: strategies[0].tp: the TP group of GPU 0 spans 2 servers (8 GPUs each); set "
                       "allow_tp_across_servers: true if that is intended",
                       ConfigError);
  auto ok = plan_test::scenario(yaml(", allow_tp_across_servers: true"));
  CHECK(check_strategy(ok, ok.strategies[0]).dp == 1);
}

TEST_CASE("unknown keys are errors with a suggestion") {
  CHECK(load_error(plan_test::small_gpt("{name: s, zero_stge: 1}")) ==
        "test.yaml:6:15: strategies[0]: unknown key 'zero_stge'; did you mean 'zero_stage'?");
}

TEST_CASE("defaults: dp from the GPU count, 1f1b, micro-batch 1") {
  auto sc = plan_test::scenario(plan_test::small_gpt("{name: s, tp: 2, pp: 2}"));
  const Strategy s = check_strategy(sc, sc.strategies[0]);
  CHECK(s.dp == 2);
  CHECK(s.schedule == ScheduleKind::one_f_one_b);
  CHECK(s.micro_batch == 1);
  CHECK(s.dp_bucket_bytes == 25'000'000);
  CHECK(microbatches(sc, s) == 8);
}
