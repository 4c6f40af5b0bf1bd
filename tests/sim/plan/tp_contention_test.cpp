// TP collectives inside a server are flows on the hardware graph (sim/plan/collectives.cpp), so
// on a PCIe box they share each GPU's link with the DP traffic of the same step.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "models/model_spec.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim::plan;

namespace {

struct Window {
  std::int64_t from = 0, to = 0;  // data moving: from the group's arrival to the member's end
};

Window data_window(const TaskRecord& t) { return {t.start_ps + t.sync_wait_ps, t.end_ps}; }

}  // namespace

TEST_CASE("on a100-pcie a TP all-reduce beside a DP bucket gets half of its GPU's PCIe link") {
  // 4 GPUs, two per PCIe switch, tp 2 × dp 2 (TP innermost): TP groups {0,1} and {2,3} talk
  // through their switch; DP groups {0,2} and {1,3} both cross each switch's uplink. Max-min: the
  // two DP flows leaving a switch split its uplink, B/2 each; GPU 0's link carries its DP flow
  // (fixed at B/2 by the uplink) and its TP flow, which gets the rest, B/2. So a 2-rank ring
  // all-reduce of S bytes — 2 steps of S/2, each one step latency α — takes launch + 2(α + S/B)
  // beside a DP bucket instead of launch + 2(α + S/(2B)) alone, and the DP bucket is not slowed
  // (its bottleneck is the uplink). B = PCIe gen4 x16 at the preset's pcie_efficiency.
  const std::string yaml = R"(name: pcie
hardware: {preset: a100-pcie, gpus: 4}
model: {name: wide, layers: 4, hidden: 4096, heads: 32, vocab: 32000, max_seq: 2048}
training: {seq_len: 2048, global_batch: 2}
strategies:
  - {name: tp2-dp2, tp: 2, dp: 2, micro_batch: 1}
)";
  auto sc = plan_test::scenario(yaml);
  sc.strategies[0].dp_bucket_bytes = 2 * stepsim::models::params_per_layer(sc.model) / 2;  // one layer's fp16 grads per TP rank
  SimOptions opt;
  opt.detail = true;
  opt.hooks.skip_embedding_and_head = true;
  opt.hooks.skip_optimizer = true;
  opt.hooks.instant_host = true;
  const StepResult r = simulate(sc, sc.strategies[0], opt);

  const auto& comm = sc.cluster.comm;
  const double bandwidth = 31.5e9 * comm.pcie_efficiency;
  const double tp_bytes = 2.0 * 2048 * 4096;  // fp16 activations of one microbatch: s·b·h
  const double latency = static_cast<double>(comm.launch_latency_ps + 2 * comm.ring_step_latency_ps) * 1e-12;
  const double alone = latency + tp_bytes / bandwidth;
  const double shared = latency + 2 * tp_bytes / bandwidth;

  std::vector<Window> dp;
  for (const auto& t : r.tasks) {
    if (t.rank != 0 || t.category != TaskCategory::dp_comm) continue;
    dp.push_back(data_window(t));
    // Two steps of bytes/2 at B/2 whether or not TP traffic runs beside it.
    CHECK(static_cast<double>(dp.back().to - dp.back().from) * 1e-12 ==
          doctest::Approx(latency + 2 * t.bytes / bandwidth).epsilon(1e-3));
  }
  REQUIRE(!dp.empty());
  double fastest = 1e9, slowest = 0;
  int inside = 0;
  for (const auto& t : r.tasks) {
    if (t.rank != 0 || t.category != TaskCategory::tp_comm) continue;
    const Window w = data_window(t);
    const double seconds = static_cast<double>(w.to - w.from) * 1e-12;
    fastest = std::min(fastest, seconds);
    slowest = std::max(slowest, seconds);
    const bool under_dp = std::any_of(dp.begin(), dp.end(), [&](const Window& d) {
      return d.from + comm.launch_latency_ps <= w.from && w.to <= d.to;
    });
    if (under_dp) {
      ++inside;
      // The DP ring pauses one step latency between its two steps; TP runs at full rate then.
      CHECK(seconds == doctest::Approx(shared).epsilon(0.01));
    }
  }
  CHECK(inside > 0);
  CHECK(fastest == doctest::Approx(alone).epsilon(1e-3));
  CHECK(slowest <= shared * 1.001);
}
