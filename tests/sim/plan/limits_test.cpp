// The limits of sim/config/limits.hpp, refused where the value is written (whole messages), and
// the largest accepted values still accepted. Reproducers: shared/reliability/scenario_*.
#include <doctest/doctest.h>

#include "hardware/hardware_yaml.hpp"
#include "sim/config/limits.hpp"
#include "sim/config/resident_memory.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim::plan;

namespace {

std::string with(const std::string& hardware, const std::string& training, const std::string& strategy) {
  return "name: l\nhardware: " + hardware + "\nmodel: llama-2-7b\ntraining: " + training + "\nstrategies:\n  - " +
         strategy + "\n";
}

const char* kFourGpus = "{preset: dgx-a100, gpus: 4}";
const char* kOneBatch = "{seq_len: 4096, global_batch: 4}";

}  // namespace

TEST_CASE("a sequence longer than 2^22 tokens is refused at training.seq_len") {
  CHECK_THROWS_WITH(plan_test::scenario(with(kFourGpus, "{seq_len: 1000000000, global_batch: 4}", "{name: a, dp: 4}")),
                    "test.yaml:4:21: training.seq_len: expected at most 4,194,304 tokens per sequence (a limit of "
                    "stepsim: attention work and step time grow with its square), found 1,000,000,000; `stepsim --limit "
                    "seq_len=N` raises the limit");
  CHECK(plan_test::scenario(with(kFourGpus, "{seq_len: 4194304, global_batch: 4}", "{name: a, dp: 4}")).training.seq_len ==
        4194304);
}

TEST_CASE("more than 65,536 GPUs are refused at nodes or gpus, before anything is built") {
  // 2^31 nodes overflowed an int ("servers < 1"); 125,000 DGX servers and a billion GPUs in one
  // server ran out of memory. A count above the GPU limit is too many on its own; otherwise
  // nodes × GPUs per node is checked (10,000 × 8 = 80,000).
  const std::string message = ": expected at most 65,536 GPUs in a cluster (a limit of stepsim: the cluster's graph "
                              "and routes grow with it), found ";
  const std::string raise = "; `stepsim --limit gpus=N` raises the limit";
  CHECK_THROWS_WITH(plan_test::scenario(with("{preset: dgx-a100, nodes: 2147483648}", kOneBatch, "{name: a, dp: 1}")),
                    ("test.yaml:2:37: hardware.nodes" + message + "2,147,483,648 servers" + raise).c_str());
  CHECK_THROWS_WITH(plan_test::scenario(with("{preset: dgx-a100, nodes: 125000}", kOneBatch, "{name: a, dp: 1}")),
                    ("test.yaml:2:37: hardware.nodes" + message + "125,000 servers" + raise).c_str());
  CHECK_THROWS_WITH(plan_test::scenario(with("{preset: dgx-a100, gpus: 1000000000}", kOneBatch, "{name: a, dp: 1}")),
                    ("test.yaml:2:36: hardware.gpus" + message + "1,000,000,000 GPUs per server" + raise).c_str());
  CHECK_THROWS_WITH(plan_test::scenario(with("{preset: dgx-a100, nodes: 10000}", kOneBatch, "{name: a, dp: 1}")),
                    ("test.yaml:2:37: hardware.nodes" + message + "80,000" + raise).c_str());
  // The command-line shape goes through the same check (stepsim collective --nodes).
  CHECK_THROWS_WITH(stepsim::hw::load_cluster("dgx-a100", stepsim::hw::ClusterShape{.nodes = 10000, .gpus_per_node = std::nullopt}),
                    ("dgx-a100" + message + "80,000" + raise).c_str());
  // 8,192 servers of 8 = 65,536 GPUs is the largest accepted cluster (only read here, not simulated).
  CHECK(plan_test::scenario(with("{preset: dgx-a100, nodes: 8192}", kOneBatch, "{name: a, dp: 1}")).cluster.gpu_count() ==
        65536);
}

TEST_CASE("more than 4,096 microbatches per step are refused at the strategy's micro_batch") {
  // 100,000 sequences, micro-batch 1, dp 1 (tp 2 · pp 2 on 4 GPUs): 100,000 microbatches ran past a minute.
  const Scenario sc =
      plan_test::scenario(with(kFourGpus, "{seq_len: 512, global_batch: 100000}", "{name: a, tp: 2, pp: 2, micro_batch: 1}"));
  CHECK_THROWS_WITH(check_strategy(sc, sc.strategies.front()),
                    "test.yaml:6:42: strategies[0].micro_batch: expected at most 4,096 microbatches per step (a limit "
                    "of stepsim: each one is simulated pass by pass), found 100,000 = training.global_batch / "
                    "(micro_batch·dp) = 100000 / 1; raise micro_batch or dp, or lower the global batch; `stepsim "
                    "--limit microbatches=N` raises the limit, at a cost in time and memory");
}

TEST_CASE("stepsim --limit moves a limit for the run, up to a ceiling that keeps integers in range") {
  using stepsim::config::kMaxGpus;
  using stepsim::config::limit_value;
  using stepsim::config::set_limit;
  CHECK_FALSE(set_limit("gpus", 131072).has_value());
  CHECK(limit_value(kMaxGpus) == 131072);
  CHECK(plan_test::scenario(with("{preset: dgx-a100, nodes: 10000}", kOneBatch, "{name: a, dp: 1}")).cluster.gpu_count() ==
        80000);
  CHECK_THROWS_WITH(plan_test::scenario(with("{preset: dgx-a100, nodes: 20000}", kOneBatch, "{name: a, dp: 1}")),
                    "test.yaml:2:37: hardware.nodes: expected at most 131,072 GPUs in a cluster (a limit of stepsim: the "
                    "cluster's graph and routes grow with it), found 160,000; `stepsim --limit gpus=N` raises the limit");
  stepsim::config::reset_limits();
  CHECK(limit_value(kMaxGpus) == 65536);
  CHECK(set_limit("gpus", std::int64_t{1} << 31) ==
        std::optional<std::string>("--limit gpus: at most 1,073,741,824 GPUs in a cluster can be simulated at all, found 2,147,483,648"));
  CHECK(set_limit("gpus", 0) == std::optional<std::string>("--limit gpus: expected a positive count, found 0"));
  CHECK(set_limit("nodes", 4) ==
        std::optional<std::string>(
            "--limit: unknown limit 'nodes'; expected one of gpus, seq_len, microbatches, events, memory_gib, trace_slices"));
  CHECK(limit_value(kMaxGpus) == 65536);
}

TEST_CASE("a step that needs more engine events than its limit stops at its strategy, naming the flag") {
  // The same plan with the limit at exactly its event count runs; one below, it stops at the last
  // event allowed, with the strategy's position, and (full fidelity, 8 DP replicas) the fidelity
  // that simulates fewer ranks.
  using stepsim::config::set_limit;
  using stepsim::config::with_commas;
  const Scenario sc = plan_test::scenario(plan_test::small_gpt("{name: a, dp: 8}"));
  const std::int64_t events = static_cast<std::int64_t>(simulate(sc, sc.strategies[0], SimOptions{}).events);
  REQUIRE(events > 1000);
  CHECK_FALSE(set_limit("events", events).has_value());
  CHECK(static_cast<std::int64_t>(simulate(sc, sc.strategies[0], SimOptions{}).events) == events);
  CHECK_FALSE(set_limit("events", events - 1).has_value());
  CHECK_THROWS_WITH_AS(simulate(sc, sc.strategies[0], SimOptions{}),
                       ("test.yaml:6:5: strategies[0]: plan 'a': expected at most " + with_commas(events - 1) +
                        " engine events in one simulated step (a limit of stepsim: they are processed one after "
                        "another), found " + with_commas(events) + " (the run stopped there); `stepsim --limit "
                        "events=N` raises the limit; this plan runs in full fidelity, and `--fidelity symmetric` "
                        "simulates one data-parallel replica").c_str(),
                       stepsim::config::ConfigError);
  stepsim::config::reset_limits();
}

TEST_CASE("the memory limit's message rounds what the process holds up to whole GiB") {
  // 8 GiB + 1 byte held is past the default 8 GiB and reads as 9 GiB.
  const std::int64_t gib = std::int64_t{1} << 30;
  CHECK(stepsim::config::MemoryLimitExceeded(8 * gib + 1, " while routing").message() ==
        "expected at most 8 GiB of memory held while simulating (a limit of stepsim: a plan's tasks, flows and "
        "routes live in memory until its step ends), found 9 GiB while routing; `stepsim --limit memory_gib=N` "
        "raises the limit");
}
