// Exposed communication and sync stalls on hand-derivable cases. The test hook makes every
// collective take bytes / bandwidth (no latency, no contention) and drops the embedding, logits and
// optimizer, so each expected number follows from the schedule alone.
#include <doctest/doctest.h>

#include <cmath>

#include "models/model_spec.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim::plan;

namespace {

constexpr double kBandwidth = 250e9;  // bytes/s for every collective in these tests

SimOptions hooked(bool detail = false) {
  SimOptions opt = plan_test::ideal_network(kBandwidth);
  opt.detail = detail;
  return opt;
}

// One layer's parameters (or gradients) at `bytes_per_param` (2: bf16; 4: fp32 gradients) over
// the ideal network, in seconds.
double layer_seconds(const Scenario& sc, double bytes_per_param = 2.0) {
  const double bytes = bytes_per_param * static_cast<double>(stepsim::models::params_per_layer(sc.model));
  return std::ceil(bytes / kBandwidth * 1e12) * 1e-12;
}

}  // namespace

TEST_CASE("ZeRO-3 prefetch depth 0 exposes every all-gather, depth 1 only the first of each pass") {
  // dp 8, m = 16 / (2·8) = 1 microbatch, 8 layers, t = one layer's all-gather = its reduce-scatter.
  // Depth 0: every layer of F and B waits t for its gather; the reduce-scatter of layer i runs beside
  // the gather of layer i−1 (both ZeRO traffic, counted once); the last reduce-scatter ends the
  // step: exposed = (2·m·L + 1)·t. Depth 1: only the first gather of each pass waits, later ones run
  // under the previous layer's compute (a layer computes longer than t here): (2·m + 1)·t.
  const std::string base = "{name: z, dp: 8, zero_stage: 3, micro_batch: 2, zero_prefetch: ";
  auto sc0 = plan_test::scenario(plan_test::small_gpt(base + "0}"));
  auto sc1 = plan_test::scenario(plan_test::small_gpt(base + "1}"));
  const double t = layer_seconds(sc0);
  auto r0 = simulate(sc0, sc0.strategies[0], hooked());
  auto r1 = simulate(sc1, sc1.strategies[0], hooked());
  CHECK(r0.exposed_comm_s.zero == doctest::Approx((2 * 1 * 8 + 1) * t).epsilon(1e-6).scale(0));
  CHECK(r1.exposed_comm_s.zero == doctest::Approx((2 * 1 + 1) * t).epsilon(1e-6).scale(0));
  // The step shrinks by the 14 gathers no longer exposed, minus what the hidden traffic costs the
  // compute beside it: 15 intervals of t (7 gathers under F, 8 gather/reduce-scatter pairs under
  // B) in which compute runs 1/(1+x) as fast (x = the GPU's comm_slowdown): 14t − 15t·x/(1+x).
  const double x = sc0.cluster.gpu.comm_slowdown;
  CHECK(r0.step_time_s - r1.step_time_s == doctest::Approx(14 * t - 15 * t * x / (1 + x)).epsilon(1e-4).scale(0));
}

TEST_CASE("DP overlap on an ideal network exposes only the last bucket") {
  // dp 8, one bucket per layer (bucket = one layer's gradients). With overlap each bucket's
  // all-reduce (t) starts when its layer's backward ends and hides under the next layer's backward,
  // except layer 0's, which starts when backward ends: exposed t. Without overlap all 8 run
  // after backward, one after another on the DP stream: exposed 8t. The gradients are fp32 (4 B:
  // Megatron-LM reduces a bf16 model's in fp32).
  auto sc = plan_test::scenario(plan_test::small_gpt("{name: d, dp: 8}"));
  const std::int64_t bucket = 4 * stepsim::models::params_per_layer(sc.model);
  sc.strategies[0].dp_bucket_bytes = bucket;
  const double t = layer_seconds(sc, 4.0);
  auto on = simulate(sc, sc.strategies[0], hooked());
  sc.strategies[0].dp_overlap = false;
  auto off = simulate(sc, sc.strategies[0], hooked());
  CHECK(on.exposed_comm_s.dp == doctest::Approx(t).epsilon(1e-6).scale(0));
  CHECK(off.exposed_comm_s.dp == doctest::Approx(8 * t).epsilon(1e-6).scale(0));
}

TEST_CASE("a 20 % slower GPU in a TP group stalls its peer by 20 % of its compute") {
  // tp 2, pp 1, m = 2 microbatches, zb-h1 (B and W split, so no TP collective overlaps compute).
  // Each TP collective waits for GPU 1, which computed 1.2x as long since the last one: GPU 0
  // stalls 0.2 × its compute up to its last collective, i.e. all of it but the final W pass.
  auto sc = plan_test::scenario(plan_test::small_gpt("{name: t, tp: 2, dp: 4, schedule: zb-h1}", 8) +
                                "faults:\n  - {gpu: 1, compute_slowdown: 1.2}\n");
  auto r = simulate(sc, sc.strategies[0], hooked(true));
  std::int64_t stall0 = 0, stall1 = 0, last_w = 0, busy0 = 0;
  for (const auto& task : r.tasks) {
    if (task.category == TaskCategory::tp_comm && task.rank == 0) stall0 += task.sync_wait_ps;
    if (task.category == TaskCategory::tp_comm && task.rank == 1) stall1 += task.sync_wait_ps;
    if (task.rank == 0 && !is_communication(task.category)) busy0 += task.end_ps - task.start_ps;
    if (task.rank == 0 && task.category == TaskCategory::backward_weight) last_w = task.end_ps - task.start_ps;
  }
  CHECK(stall1 == 0);
  CHECK(static_cast<double>(stall0) == doctest::Approx(0.2 * static_cast<double>(busy0 - last_w)).epsilon(1e-6).scale(0));
  CHECK(r.sync_stall_s > 0);
}
