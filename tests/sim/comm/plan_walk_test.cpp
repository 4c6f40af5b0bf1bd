// Pins sim/comm/plan_walk.cpp: coarse mode's time for trees, broadcast chains and direct sends is
// their step plan walked outside the engine, so it must be the engine's step-mode time.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "comm_fixture.hpp"
#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"
#include "sim/comm/algorithm.hpp"
#include "sim/comm/perf_table.hpp"
#include "sim/comm/plan_input.hpp"
#include "sim/comm/plan_walk.hpp"

namespace stepsim::comm {
namespace {

using testing::first_gpus;
using testing::run_together;
using testing::shape;

// 1 MiB to 4 GiB by factors of 16.
const std::vector<std::int64_t> kSizes{1LL << 20, 16LL << 20, 256LL << 20, 4LL << 30};

// `first`: walk_max_min's budget; {.total = 0} sends every plan to the flow-network fallback.
double worst_walk_disagreement(const std::string& preset, int nodes, Op op, Algorithm algorithm, const WalkBudget& first = kWalkBudget) {
  const auto cluster = hw::load_cluster(preset, shape(nodes, std::nullopt));
  const hw::Router router(cluster);
  double worst = 0;
  for (std::int64_t bytes : kSizes) {
    const CollectiveRequest req{.op = op, .gpus = first_gpus(cluster.gpu_count()), .bytes = bytes, .algorithm = algorithm,
                                .protocol = hw::Protocol::simple};
    const double engine = run_together(router, {req}).front();
    const auto walked = walk_step_plan(router, req.gpus, make_algorithm(algorithm)->plan(plan_input(cluster, req)), first);
    REQUIRE(walked.has_value());
    worst = std::max(worst, std::abs(static_cast<double>(walked->ps) * 1e-6 / engine - 1));
  }
  return worst;
}

TEST_CASE("a walked step plan takes the engine's time: trees, chains and direct sends" * doctest::test_suite("slow")) {
  // The walker shares links max-min and rounds ends to whole picoseconds as the engine does.
  // Trees and direct sends agree to the picosecond; a 256-slice chain is off by up to 1.03 %
  // (rtx5090, 1 GiB), float rounding that two ways of keeping remaining bytes differ in and
  // that near-ties between its many flows amplify.
  for (const std::string preset : {"dgx-a100", "a100-pcie", "rtx5090"}) {
    CAPTURE(preset);
    CHECK(worst_walk_disagreement(preset, 2, Op::all_reduce, Algorithm::tree) <= 1e-4);
    CHECK(worst_walk_disagreement(preset, 2, Op::broadcast, Algorithm::ring) <= 0.015);
    CHECK(worst_walk_disagreement(preset, 2, Op::all_to_all, Algorithm::direct) <= 1e-4);
    // The fallback walks on the engine's own flow network.
    CHECK(worst_walk_disagreement(preset, 2, Op::all_reduce, Algorithm::tree, {.total = 0}) <= 1e-4);
    CHECK(worst_walk_disagreement(preset, 2, Op::all_to_all, Algorithm::direct, {.total = 0}) <= 1e-4);
  }
}

TEST_CASE("the nccl-tests table at coarse fidelity agrees with full fidelity, the tuner's picks included" * doctest::test_suite("slow")) {
  // The tuner times rings by their lattice at either fidelity (estimate.cpp), so both pick
  // alike; the pick is then folded (rings), walked (trees) or run step by step. Before: the picks
  // differed on a100-pcie 2x8 at 4-16 MiB (coarse ring, full tree: −12.8 %) and trees were timed
  // on paper in coarse mode (+13 % on rtx5090 2x8 at 1 MiB).
  for (const std::string preset : {"a100-pcie", "rtx5090", "dgx-h100"}) {
    const auto cluster = hw::load_cluster(preset, shape(2, std::nullopt));
    const hw::Router router(cluster);
    for (std::int64_t bytes = 1 << 20; bytes <= (1LL << 30); bytes *= 4) {
      CAPTURE(preset);
      CAPTURE(bytes);
      const auto full = simulate_size(router, Op::all_reduce, first_gpus(16), bytes, Algorithm::automatic, true, RingMode::step);
      const auto coarse = simulate_size(router, Op::all_reduce, first_gpus(16), bytes, Algorithm::automatic, true, RingMode::folded);
      CHECK(coarse.algorithm == full.algorithm);
      CHECK(coarse.time_us == doctest::Approx(full.time_us).epsilon(0.02));
    }
  }
}

TEST_CASE("a tree past walk_max_min's budget is walked on the flow network, to step mode's time" * doctest::test_suite("slow")) {
  // a100-pcie 8x8 at 256 MiB: 64,512 transfers whose refills each span ~1000 flows, over
  // walk_max_min's budget; timed on paper before the fallback, +3.4 %.
  const auto cluster = hw::load_cluster("a100-pcie", shape(8, std::nullopt));
  const hw::Router router(cluster);
  const auto full = simulate_size(router, Op::all_reduce, first_gpus(64), 256 << 20, Algorithm::tree, true, RingMode::step);
  const auto coarse = simulate_size(router, Op::all_reduce, first_gpus(64), 256 << 20, Algorithm::tree, true, RingMode::folded);
  CHECK(coarse.time_us == doctest::Approx(full.time_us).epsilon(1e-4));
}

TEST_CASE("a walk that would exceed both budgets is declined, for estimate() to take over") {
  const auto cluster = hw::load_cluster("dgx-a100", shape(2, std::nullopt));
  const hw::Router router(cluster);
  const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(16), .bytes = 1 << 20, .algorithm = Algorithm::tree};
  const StepPlan plan = make_algorithm(Algorithm::tree)->plan(plan_input(cluster, req));
  CHECK_FALSE(walk_step_plan(router, req.gpus, plan, {.total = 1000}, {.total = 1000}).has_value());
  CHECK(walk_step_plan(router, req.gpus, plan, {.total = 1000}).has_value());  // the fallback walks it
  CHECK(walk_step_plan(router, req.gpus, plan).has_value());
}

TEST_CASE("a plan with a folded ring is not walked here") {
  const auto cluster = hw::load_cluster("dgx-a100", shape(2, std::nullopt));
  const hw::Router router(cluster);
  const CollectiveRequest req{.op = Op::all_reduce, .gpus = first_gpus(16), .bytes = 1 << 20, .algorithm = Algorithm::ring,
                              .coarse = true};
  CHECK_FALSE(walk_step_plan(router, req.gpus, make_algorithm(Algorithm::ring)->plan(plan_input(cluster, req))).has_value());
}

}  // namespace
}  // namespace stepsim::comm
