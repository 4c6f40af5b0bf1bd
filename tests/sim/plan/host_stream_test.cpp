// The host stream (hw::CommParams::host_call_overhead): the framework's CPU thread issues every
// kernel in program order, and a kernel cannot start before it is issued. Cases where the
// answer follows from the op table alone.
#include <doctest/doctest.h>

#include <limits>

#include "models/layer_ops.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

// Two layers of width 64 on one A100, 8 tokens: every kernel takes a few microseconds (its
// launch overhead) while each framework call costs the host 30 us.
std::string narrow(const std::string& host_call) {
  return R"(name: narrow
hardware: {preset: dgx-a100, gpus: 1, comm: {host_call_overhead: )" + host_call + R"(}}
model: {name: narrow, layers: 2, hidden: 64, heads: 1, vocab: 128, max_seq: 8}
training: {seq_len: 8, global_batch: 1}
strategies:
  - {name: one, micro_batch: 1}
)";
}

SimOptions ideal() {
  SimOptions opt;
  opt.hooks.comm_bytes_per_s = std::numeric_limits<double>::infinity();
  opt.hooks.skip_embedding_and_head = true;
  opt.hooks.skip_optimizer = true;
  return opt;
}

std::int64_t step_ps(const std::string& yaml, const SimOptions& opt) {
  const Scenario sc = plan_test::scenario(yaml);
  return static_cast<std::int64_t>(std::llround(simulate(sc, sc.strategies.front(), opt).step_time_s * 1e12));
}

}  // namespace

TEST_CASE("a layer so narrow that the host is the critical path takes the host's issue time") {
  // Every segment's kernels finish before the host has issued the next segment's first call
  // (a few us of GPU work against 30 us per call), so the GPU always waits for the host and the
  // step is the host's time: per layer, one call per forward framework call and one per
  // backward autograd node (a kernel), 30 us each, for the 2 layers of one microbatch.
  const Scenario sc = plan_test::scenario(narrow("30us"));
  models::LayerShape shape;
  shape.seq = 8;
  std::int64_t calls = 0;
  for (const auto& op : models::layer_ops(sc.model, shape)) calls += op.fwd_host_calls + op.bwd_kernels;
  const std::int64_t host_ps = 2 * calls * 30'000'000;
  CHECK(step_ps(narrow("30us"), ideal()) == host_ps);
  // The GPU alone (the host issuing at once) is several times faster.
  SimOptions instant = ideal();
  instant.hooks.instant_host = true;
  CHECK(step_ps(narrow("30us"), instant) * 3 < host_ps);
  // With no host cost the host stream is gone, and the step is the GPU's.
  CHECK(step_ps(narrow("0us"), ideal()) == step_ps(narrow("30us"), instant));
}

TEST_CASE("a wide layer hides the host: the GPU is the critical path") {
  // h 4096, 4 x 2048 tokens: each GEMM takes milliseconds, far above the host's ~1.4 ms per
  // layer, so the host only delays each pass by its first call and the step stays within
  // 0.5 % of the GPU-only one.
  const std::string wide = R"(name: wide
hardware: {preset: dgx-a100, gpus: 1}
model: {name: wide, layers: 2, hidden: 4096, heads: 32, vocab: 128, max_seq: 2048}
training: {seq_len: 2048, global_batch: 4}
strategies:
  - {name: one, micro_batch: 4}
)";
  SimOptions instant = ideal();
  instant.hooks.instant_host = true;
  const double gpu = static_cast<double>(step_ps(wide, instant));
  CHECK(static_cast<double>(step_ps(wide, ideal())) == doctest::Approx(gpu).epsilon(0.005));
}
