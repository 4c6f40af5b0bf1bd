// Korthikanti et al. 2022 Table 4 (shared/data/README.md §2): one transformer layer of the 22B
// model (h 6144, 64 heads, s 2048, micro-batch 4) at TP 8 on a DGX A100, forward / backward ms:
// baseline 7.7 / 11.9, sequence parallel 7.2 / 11.8, selective recompute backward 13.2. Our
// layer time = the layer's compute tasks plus its blocking TP collectives on rank 0, microbatch 0.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim::plan;

namespace {

struct LayerMs {
  double fwd = 0, bwd = 0;
};

LayerMs layer_ms(const std::string& extra) {
  auto sc = plan_test::scenario(R"(name: korthikanti-22b
hardware: {preset: dgx-a100}
model: korthikanti-22b
training: {seq_len: 2048, global_batch: 4}
strategies:
  - {name: t, tp: 8, micro_batch: 4, flash_attention: false)" + extra + "}\n");
  SimOptions opt;
  opt.detail = true;
  auto r = simulate(sc, sc.strategies[0], opt);
  // Wall time of the layer's forward and of its backward: first start to last end of the tasks
  // of each phase (backward overlaps a TP all-reduce with a weight-gradient GEMM).
  std::int64_t bwd_begin = INT64_MAX;
  for (const auto& t : r.tasks)
    if (t.rank == 0 && t.layer == 20 && t.category == TaskCategory::backward_input) bwd_begin = std::min(bwd_begin, t.start_ps);
  std::int64_t f0 = INT64_MAX, f1 = 0, b0 = INT64_MAX, b1 = 0;
  for (const auto& t : r.tasks) {
    // GPU tasks only: the host thread issues the layer's kernels ahead of them.
    if (t.rank != 0 || t.layer != 20 || t.microbatch != 0 || t.category == TaskCategory::host) continue;
    const bool backward = t.start_ps >= bwd_begin;
    (backward ? b0 : f0) = std::min(backward ? b0 : f0, t.start_ps);
    (backward ? b1 : f1) = std::max(backward ? b1 : f1, t.end_ps);
  }
  LayerMs out{static_cast<double>(f1 - f0) * 1e-9, static_cast<double>(b1 - b0) * 1e-9};
  std::printf("22B layer%s: forward %.2f ms, backward %.2f ms\n", extra.c_str(), out.fwd, out.bwd);
  return out;
}

}  // namespace

TEST_CASE("Korthikanti Table 4: one 22B layer at TP 8 within 10 %") {
  auto base = layer_ms("");
  CHECK(base.fwd == doctest::Approx(7.7).epsilon(0.10).scale(0));
  CHECK(base.bwd == doctest::Approx(11.9).epsilon(0.10).scale(0));
  auto sp = layer_ms(", sequence_parallel: true");
  CHECK(sp.fwd == doctest::Approx(7.2).epsilon(0.10).scale(0));
  CHECK(sp.bwd == doctest::Approx(11.8).epsilon(0.10).scale(0));
  auto sel = layer_ms(", recompute: selective");
  CHECK(sel.bwd == doctest::Approx(13.2).epsilon(0.10).scale(0));
}
