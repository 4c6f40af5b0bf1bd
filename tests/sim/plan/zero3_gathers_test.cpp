// Which all-gathers fetch a layer's ZeRO-3 parameters, framework by framework
// (sim/plan/zero3_gathers.hpp), and what DeepSpeed's blocking, per-submodule gathers cost a step
// on an ideal network (the test hook: every collective takes bytes / bandwidth).
#include <doctest/doctest.h>

#include <cmath>

#include "sim/plan/stage_costs.hpp"
#include "sim/plan/zero3_gathers.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim::plan;

namespace {

Strategy deepspeed(Recompute recompute = Recompute::full) {
  Strategy s;
  s.zero_stage = 3;
  s.framework = Framework::deepspeed;
  s.recompute = recompute;
  return s;
}

}  // namespace

TEST_CASE("generic and FSDP fetch a layer in one all-gather; DeepSpeed per submodule, persistent ones left out") {
  const std::vector<std::int64_t> ops{2'048, 3'000'000, 1'000'000, 2'048, 4'000'000, 4'000'000};
  Strategy generic;
  generic.zero_stage = 3;
  CHECK(zero3_gathers(generic, ops, 0) == std::vector<std::int64_t>{12'004'096});
  CHECK(zero3_gathers(generic, ops, 500) == std::vector<std::int64_t>{12'004'596});
  // An FSDP unit is gathered whole, its norms too: DeepSpeed's persistence threshold is not FSDP's.
  Strategy fsdp = generic;
  fsdp.framework = Framework::fsdp;
  CHECK(zero3_gathers(fsdp, ops, 500) == std::vector<std::int64_t>{12'004'596});
  // The two norms (2,048 elements) are under the 1e5 threshold; the embedding is its own gather.
  CHECK(zero3_gathers(deepspeed(), ops, 0) == std::vector<std::int64_t>{3'000'000, 1'000'000, 4'000'000, 4'000'000});
  CHECK(zero3_gathers(deepspeed(), ops, 32'000'000) ==
        std::vector<std::int64_t>{3'000'000, 1'000'000, 4'000'000, 4'000'000, 32'000'000});
  Strategy none_persistent = deepspeed();
  none_persistent.zero3_persistence_threshold = 0;
  CHECK(zero3_gathers(none_persistent, ops, 0).size() == ops.size());
}

TEST_CASE("DeepSpeed's backward re-fetches a submodule when twice the later ones reach the reuse distance") {
  // Submodules 3, 1, 4, 4 (M elements). After k's recompute use the trace fetches the later ones
  // for their recompute and again for their backward: 2·(later) = 18, 16, 8, 0 M for k = 0..3.
  const std::vector<std::int64_t> units{3'000'000, 1'000'000, 4'000'000, 4'000'000};
  Strategy s = deepspeed();
  CHECK(zero3_backward_regathers(s, units).empty());  // the default 1e9: all kept
  s.zero3_max_reuse_distance = 8'000'000;             // k = 0, 1, 2 released; backward order 2, 1, 0
  CHECK(zero3_backward_regathers(s, units) == std::vector<std::int64_t>{4'000'000, 1'000'000, 3'000'000});
  s.zero3_max_reuse_distance = 16'000'001;  // only k = 0 (18 M) reaches it
  CHECK(zero3_backward_regathers(s, units) == std::vector<std::int64_t>{3'000'000});
  s.zero3_max_reuse_distance = 0;  // even the last submodule (0 between its uses) is released
  CHECK(zero3_backward_regathers(s, units).size() == 4);
  // Nothing to repeat without a recompute, outside DeepSpeed, or below ZeRO-3.
  Strategy no_recompute = deepspeed(Recompute::selective);
  no_recompute.zero3_max_reuse_distance = 0;
  CHECK(zero3_backward_regathers(no_recompute, units).empty());
  Strategy generic = s;
  generic.framework = Framework::generic;
  CHECK(zero3_backward_regathers(generic, units).empty());
  Strategy zero2 = s;
  zero2.zero_stage = 2;
  CHECK(zero3_backward_regathers(zero2, units).empty());
}

TEST_CASE("blocking gathers fetch nothing ahead") {
  Strategy s = deepspeed();
  s.zero_prefetch = 2;
  CHECK(zero3_prefetch_layers(s, false) == 2);
  CHECK(zero3_prefetch_layers(s, true) == 2);
  s.zero3_blocking_gathers = true;
  CHECK(zero3_prefetch_layers(s, false) == 0);
  // FSDP's backward prefetches one unit, whatever zero_prefetch says, or none; only POST waits
  // for the gradients.
  Strategy fsdp;
  fsdp.framework = Framework::fsdp;
  fsdp.zero_prefetch = 3;
  CHECK(zero3_prefetch_layers(fsdp, false) == 3);
  CHECK(zero3_prefetch_layers(fsdp, true) == 1);
  CHECK_FALSE(zero3_prefetch_after_gradients(fsdp));
  fsdp.fsdp_backward_prefetch = FsdpPrefetch::backward_post;
  CHECK(zero3_prefetch_layers(fsdp, true) == 1);
  CHECK(zero3_prefetch_after_gradients(fsdp));
  fsdp.fsdp_backward_prefetch = FsdpPrefetch::none;
  CHECK(zero3_prefetch_layers(fsdp, true) == 0);
}

namespace {

constexpr double kBandwidth = 250e9;  // bytes/s for every collective

SimOptions hooked() { return plan_test::ideal_network(kBandwidth); }

// A transfer of `params` 2-byte parameters at the hook's bandwidth, in whole picoseconds, in seconds.
double seconds_for(std::int64_t params) { return std::ceil(2.0 * static_cast<double>(params) / kBandwidth * 1e12) * 1e-12; }

}  // namespace

TEST_CASE("DeepSpeed's blocking gathers expose every submodule's fetch, and the repeated ones too") {
  // dp 8, m = 16 / (2·8) = 1 microbatch, 8 layers, full recompute. Blocking: each layer's
  // submodule gathers (t' = Σ of their times, the norms persistent) start when the compute before
  // them ends, and its compute waits for them. The reduce-scatter of layer i (t, every parameter)
  // runs on its own stream beside the gathers of layer i−1 and under their compute; the last one
  // ends the step. Forward: 8·t'. Backward: 8·t' before the recompute, and with a reuse distance
  // of 0 another 8·t' between recompute and backward. Exposed: 16·t' + t, or 24·t' + t.
  const std::string base = "{name: z, dp: 8, zero_stage: 3, micro_batch: 2, recompute: full, framework: deepspeed, "
                           "zero3_blocking_gathers: true";
  auto kept = plan_test::scenario(plan_test::small_gpt(base + "}"));
  auto released = plan_test::scenario(plan_test::small_gpt(base + ", zero3_max_reuse_distance: 0}"));
  const LayerCost layer = layer_cost(cost_inputs(kept, kept.strategies[0]));
  double t_gathers = 0;
  for (std::int64_t p : zero3_gathers(kept.strategies[0], layer.op_params, 0)) t_gathers += seconds_for(p);
  const double t_scatter = seconds_for(layer.params);
  REQUIRE(zero3_gathers(kept.strategies[0], layer.op_params, 0).size() == 4);  // qkv, proj, fc1, fc2
  const auto r_kept = simulate(kept, kept.strategies[0], hooked());
  const auto r_released = simulate(released, released.strategies[0], hooked());
  CHECK(r_kept.exposed_comm_s.zero == doctest::Approx(16 * t_gathers + t_scatter).epsilon(1e-6).scale(0));
  CHECK(r_released.exposed_comm_s.zero == doctest::Approx(24 * t_gathers + t_scatter).epsilon(1e-6).scale(0));
}

TEST_CASE("list-based collectives cost the host a view and a copy call per rank and parameter tensor") {
  // As above (dp 8, 8 layers, blocking gathers, ideal network), each collective now passes one
  // tensor per rank: views made before the NCCL call (an all-gather one per rank, v; a
  // reduce-scatter two, grad.view(-1).narrow), a copy per rank beside it (an all-gather's copies
  // out) or before it (a reduce-scatter's copies in), c. With c = 1 ms the N·c = 8 ms of copies
  // outlast every gather (t ≤ 32 us here), so a gather costs N·(v + c) instead of its t, and a
  // layer's reduce-scatter, one call per parameter tensor, holds the host, and with it the next
  // compute, for T·N·(2v + c). Step: + G·N·(v + c) − Σt + L·T·N·(2v + c).
  const std::string base = "{name: z, dp: 8, zero_stage: 3, micro_batch: 2, recompute: full, framework: deepspeed, "
                           "zero3_blocking_gathers: true";
  auto with_host = [](std::string yaml) {
    const std::string preset = "hardware: {preset: dgx-a100}";
    return yaml.replace(yaml.find(preset), preset.size(),
                        "hardware: {preset: dgx-a100, comm: {host_view_call: 2ms, host_copy_call: 1ms}}");
  };
  auto plain = plan_test::scenario(with_host(plan_test::small_gpt(base + "}")));
  auto listed = plan_test::scenario(with_host(plan_test::small_gpt(base + ", zero3_list_collectives: true}")));
  const LayerCost layer = layer_cost(cost_inputs(plain, plain.strategies[0]));
  const auto gathers = zero3_gathers(plain.strategies[0], layer.op_params, 0);
  REQUIRE(gathers.size() == 4);
  double t_gathers = 0;
  for (std::int64_t p : gathers) t_gathers += seconds_for(p);
  const double n = 8, v = 2e-3, c = 1e-3, layers = 8;
  const double tensors = 2 * 2 + 4 * 2;  // two LayerNorms and four linears, a weight and a bias each
  const double g = 16 * 4;                // forward and before the recompute, four submodules a layer
  const auto r_plain = simulate(plain, plain.strategies[0], hooked());
  const auto r_listed = simulate(listed, listed.strategies[0], hooked());
  CHECK(r_listed.step_time_s - r_plain.step_time_s ==
        doctest::Approx(g * n * (v + c) - 16 * t_gathers + layers * tensors * n * (2 * v + c)).epsilon(1e-6));
  CHECK(r_listed.host_bound_s > 0.9 * (g * n * (v + c) + layers * tensors * n * (2 * v + c)));
}

TEST_CASE("DeepSpeed's keys are refused under another framework, where they are written") {
  CHECK_THROWS_WITH(plan_test::scenario(plan_test::small_gpt("{name: z, dp: 8, zero_stage: 3, zero3_blocking_gathers: true}")),
                    doctest::Contains("zero3_blocking_gathers is DeepSpeed's: it needs framework: deepspeed"));
  CHECK_THROWS_WITH(plan_test::scenario(plan_test::small_gpt("{name: z, dp: 8, zero_stage: 3, zero3_list_collectives: true}")),
                    doctest::Contains("zero3_list_collectives is DeepSpeed's: it needs framework: deepspeed"));
  CHECK_THROWS_WITH(plan_test::scenario(plan_test::small_gpt("{name: z, dp: 8, zero_stage: 3, framework: torchtitan}")),
                    doctest::Contains("generic"));
  const auto sc = plan_test::scenario(plan_test::small_gpt("{name: z, dp: 8, zero_stage: 3, framework: deepspeed}"));
  CHECK(sc.strategies[0].framework == Framework::deepspeed);
}
