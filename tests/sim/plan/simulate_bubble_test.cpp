// Pipeline bubbles measured on the simulated timeline with free communication and uniform stages
// (test hooks: collectives take no time, no embedding/logits, no optimizer): the measured bubble
// must be the textbook one, because the simulation then runs exactly the schedule's dependencies.
#include <doctest/doctest.h>

#include <limits>

#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim::plan;

namespace {

StepResult run_free(const std::string& strategy, int global_batch) {
  auto sc = plan_test::scenario(plan_test::small_gpt(strategy, global_batch));
  return simulate(sc, sc.strategies[0], plan_test::ideal_network(std::numeric_limits<double>::infinity()));
}

}  // namespace

TEST_CASE("gpipe and 1f1b bubble is (p-1)/(m+p-1) with free communication") {
  // pp 4, dp 2 on 8 GPUs; global batch 16 = m · micro 1 · dp 2, so m = 8: 3/11.
  for (const char* schedule : {"gpipe", "1f1b"}) {
    auto r = run_free(std::string("{name: s, pp: 4, dp: 2, schedule: ") + schedule + "}", 16);
    CHECK(r.microbatches == 8);
    CHECK(r.bubble_fraction == doctest::Approx(3.0 / 11.0).epsilon(1e-9).scale(0));
  }
  // pp 8, m = 4 (global 4, dp 1): 7/11.
  auto r = run_free("{name: s, pp: 8, schedule: 1f1b}", 4);
  CHECK(r.bubble_fraction == doctest::Approx(7.0 / 11.0).epsilon(1e-9).scale(0));
}

TEST_CASE("interleaved bubble is (p-1)/(v·m+p-1)") {
  // pp 4, v 2, dp 2, m 8 (8 layers: one per chunk): 3/(16+3).
  auto r = run_free("{name: s, pp: 4, dp: 2, schedule: interleaved, v: 2}", 16);
  CHECK(r.bubble_fraction == doctest::Approx(3.0 / 19.0).epsilon(1e-9).scale(0));
}

TEST_CASE("zb-h1 bubble is (p-1)(T_F+T_B-T_W) (Qi et al. 2024)") {
  auto sc = plan_test::scenario(plan_test::small_gpt("{name: s, pp: 4, dp: 2, schedule: zb-h1}", 16));
  SimOptions opt;
  opt.hooks.comm_bytes_per_s = std::numeric_limits<double>::infinity();
  opt.hooks.skip_embedding_and_head = true;
  opt.hooks.skip_optimizer = true;
  opt.hooks.instant_host = true;
  opt.detail = true;
  auto r = simulate(sc, sc.strategies[0], opt);
  // T_F, T_B, T_W of one stage pass (2 layers) from the simulated tasks of rank 0.
  std::int64_t f = 0, b = 0, w = 0;
  for (const auto& t : r.tasks) {
    if (t.rank != 0 || t.microbatch != 0) continue;
    const std::int64_t d = t.end_ps - t.start_ps;
    if (t.category == TaskCategory::forward) f += d;
    if (t.category == TaskCategory::backward_input) b += d;
    if (t.category == TaskCategory::backward_weight) w += d;
  }
  REQUIRE(w > 0);
  const double step = r.step_time_s * 1e12;
  CHECK(step == doctest::Approx(8.0 * (f + b + w) + 3.0 * (f + b - w)).epsilon(1e-9).scale(0));
}
