// Reading scenario files: --set overrides, faults by GPU and by link name, and what faults do.
#include <doctest/doctest.h>

#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim::plan;

namespace {
const std::string kFile = std::string(STEPSIM_DATA_DIR) + "/tests/sim/plan/data/small_faults.yaml";
}

TEST_CASE("a scenario file with --set overrides and faults") {
  auto sc = load_scenario(kFile, {"training.global_batch=32", "strategies[1].dp=8"});
  CHECK(sc.name == "faults");
  CHECK(sc.training.global_batch == 32);
  CHECK(sc.training.tokens == doctest::Approx(3e11));
  CHECK(sc.training.price_per_gpu_hour == doctest::Approx(2.5));
  REQUIRE(sc.strategies.size() == 2);
  CHECK(sc.strategies[0].tp == 8);
  REQUIRE(sc.faults.gpus.size() == 1);
  CHECK(sc.faults.gpus[0].gpu == 3);
  REQUIRE(sc.faults.links.size() == 1);
  CHECK(sc.faults.links[0].links.size() == 2);  // both directions of the cable
}

TEST_CASE("--set of a key that does not exist is an error naming it") {
  CHECK_THROWS_AS(load_scenario(kFile, {"training.global_bach=32"}), stepsim::config::ConfigError);
  CHECK_THROWS_AS(load_scenario(kFile, {"no-equals-sign"}), stepsim::config::ConfigError);
}

TEST_CASE("a slow GPU and a degraded link lengthen the step and show up as stalls") {
  auto faulty = load_scenario(kFile);
  auto clean = faulty;
  clean.faults = {};
  for (std::size_t i = 0; i < 2; ++i) {
    auto a = simulate(clean, clean.strategies[i]);
    auto b = simulate(faulty, faulty.strategies[i]);
    CHECK(b.step_time_s > a.step_time_s);
    CHECK(b.sync_stall_s > a.sync_stall_s);
  }
}

TEST_CASE("an unknown link name suggests the closest") {
  try {
    plan_test::scenario(plan_test::small_gpt("{name: s, dp: 8}") + "faults:\n  - {link: gpu0-nvswich0, bandwidth_factor: 0.5}\n");
    FAIL("no error");
  } catch (const stepsim::config::ConfigError& e) {
    CHECK(std::string(e.what()).find("did you mean 'gpu0-nvswitch0'?") != std::string::npos);
  }
}

TEST_CASE("a precision the GPU has no tensor cores for is refused where it is written, or at training") {
  const std::string head = "name: v\nhardware: {preset: dgx-2, gpus: 2}\nmodel: llama-2-7b\n";
  const std::string tail = "strategies:\n  - {name: a, tp: 2}\n";
  CHECK_THROWS_WITH(plan_test::scenario(head + "training: {seq_len: 1024, global_batch: 8}\n" + tail),
                    "test.yaml:4:11: training: V100-SXM2-32GB has no bf16 tensor cores; expected precision fp16 (bf16 "
                    "is the default: set training.precision)");
  CHECK_THROWS_WITH(plan_test::scenario(head + "training: {seq_len: 1024, global_batch: 8, precision: fp8}\n" + tail),
                    "test.yaml:4:55: training.precision: V100-SXM2-32GB has no fp8 tensor cores; expected precision fp16");
  CHECK(plan_test::scenario(head + "training: {seq_len: 1024, global_batch: 8, precision: fp16}\n" + tail)
            .training.precision == Precision::fp16);
}

TEST_CASE("a name too long for the file system is an unknown preset, not an internal error") {
  // stat() of a 300-byte file name fails with ENAMETOOLONG, which std::filesystem::exists threw.
  const std::string name(300, 'm');
  const std::string rest = "training: {seq_len: 1024, global_batch: 8}\nstrategies:\n  - {name: a}\n";
  CHECK_THROWS_WITH(plan_test::scenario("name: v\nhardware: {preset: dgx-a100, gpus: 1}\nmodel: " + name + "\n" + rest),
                    doctest::Contains("test.yaml:3:8: model: unknown model 'mmmm"));
  CHECK_THROWS_WITH(plan_test::scenario("name: v\nhardware: " + name + "\nmodel: llama-2-7b\n" + rest),
                    doctest::Contains("test.yaml:2:11: hardware: unknown hardware preset 'mmmm"));
}
