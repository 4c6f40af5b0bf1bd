// The host stream (hw::CommParams::host_call_overhead): the framework's CPU thread issues every
// kernel in program order, and a kernel cannot start before it is issued. Cases where the
// answer follows from the op table alone.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>

#include "models/layer_ops.hpp"
#include "sim/plan/plan_inputs.hpp"
#include "sim/plan/stage_costs.hpp"
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

namespace {

// The host/GPU recurrence of one pass, every call made in turn (host_thread.hpp): segment i's
// compute starts when the GPU is free and its first call is made, a collective after it when
// the compute is done and all its calls are made (free here), and the overlapped compute of a
// backward segment beside that collective. Returns the GPU's end; `host` moves to the pass's
// last call.
std::int64_t pass_end(const std::vector<Segment>& segs, int layers, std::int64_t call_ps, std::int64_t& host,
                      std::int64_t gpu) {
  for (int l = 0; l < layers; ++l)
    for (const Segment& s : segs) {
      const std::int64_t first = host + std::min(call_ps, s.host_ps);
      host += s.host_ps;
      if (s.compute_ps > 0) gpu = std::max(gpu, s.host_ps > 0 ? first : gpu) + s.compute_ps;
      if (s.has_comm) gpu = std::max(gpu + s.overlap_ps, s.host_ps > 0 ? host : gpu);
    }
  return gpu;
}

// h 2048 with an MLP 16 times wider on 2 A100 at tp 2: the attention segments are host-bound
// (dozens of 30 us calls around small kernels) and the MLP's GEMMs GPU-bound (milliseconds).
const std::string kMixed = R"(name: mixed
hardware: {preset: dgx-a100, gpus: 2}
model: {name: mixed, layers: 2, hidden: 2048, heads: 16, ffn_hidden: 32768, vocab: 128, max_seq: 512}
training: {seq_len: 512, global_batch: 1}
strategies:
  - {name: tp2, tp: 2, micro_batch: 1, flash_attention: false}
)";

}  // namespace

TEST_CASE("a pass partly host-bound: the step is the recurrence of every call, with host tasks only where they bind") {
  const Scenario sc = plan_test::scenario(kMixed);
  SimOptions opt = ideal();
  const PlanInputs in = make_inputs(sc, sc.strategies.front(), opt);
  REQUIRE(in.passes_sync_device);  // Megatron-LM: each pass's host waits for the GPU before it
  const LayerCost& layer = in.layer(0);
  // Mixed: some segment is host-bound, some GPU-bound, in each pass.
  for (const auto* segs : {&layer.fwd, &layer.bwd}) {
    bool host_bound = false, gpu_bound = false;
    for (const Segment& s : *segs) (s.host_ps > s.compute_ps ? host_bound : gpu_bound) = true;
    REQUIRE(host_bound);
    REQUIRE(gpu_bound);
  }
  const std::int64_t call = in.cost_in.host_call_ps;
  std::int64_t host = 0;
  const std::int64_t forward = pass_end(layer.fwd, 2, call, host, 0);
  host = std::max(host, forward);  // the backward's first call waits for the GPU
  const std::int64_t backward = pass_end(layer.bwd, 2, call, host, forward);
  const std::int64_t expected = std::max(backward, host);

  opt.detail = true;
  const StepResult r = simulate(sc, sc.strategies.front(), opt);
  CHECK(static_cast<std::int64_t>(std::llround(r.step_time_s * 1e12)) == expected);
  // Calls the GPU is already past are no task of their own: fewer host tasks per rank than
  // segments with calls.
  std::size_t segments_with_calls = 0, host_tasks = 0;
  for (const auto* segs : {&layer.fwd, &layer.bwd})
    for (const Segment& s : *segs) segments_with_calls += s.host_ps > 0 ? 2 : 0;  // two layers
  for (const auto& t : r.tasks) host_tasks += t.rank == 0 && t.category == TaskCategory::host;
  CHECK(host_tasks < segments_with_calls);
}

namespace {

// Start and end of every task but the host's, in recording order.
std::vector<std::tuple<int, int, std::int64_t, std::int64_t>> gpu_timeline(const StepResult& r) {
  std::vector<std::tuple<int, int, std::int64_t, std::int64_t>> out;
  for (const auto& t : r.tasks)
    if (t.category != TaskCategory::host) out.emplace_back(t.rank, static_cast<int>(t.category), t.start_ps, t.end_ps);
  return out;
}

}  // namespace

TEST_CASE("host calls left out where they cannot delay the GPU change no task of the timeline") {
  // The partly host-bound layers above under what moves the host against its GPU: the pipeline's
  // pass overhead with and without the device sync (Megatron-LM, Megatron-Core), Zero Bubble's
  // split backward, and GPUs slowed and sped up by faults. Each against a host task for every
  // segment's calls (TestHooks::host_task_per_call).
  const std::string pp2 = R"(name: mixed
hardware: {preset: dgx-a100, gpus: 4}
model: {name: mixed, layers: 4, hidden: 2048, heads: 16, ffn_hidden: 32768, vocab: 128, max_seq: 512}
training: {seq_len: 512, global_batch: 4}
)";
  const std::vector<std::string> cases{
      kMixed,
      pp2 + "strategies:\n  - {name: lm, tp: 2, pp: 2, micro_batch: 1, flash_attention: false}\n",
      pp2 + "strategies:\n  - {name: core, tp: 2, pp: 2, micro_batch: 1, framework: megatron-core}\n",
      pp2 + "strategies:\n  - {name: zb, tp: 2, pp: 2, micro_batch: 1, schedule: zb-h1, flash_attention: false}\n",
      pp2 + "strategies:\n  - {name: lm, tp: 2, pp: 2, micro_batch: 1, flash_attention: false}\n"
            "faults: [{gpu: 0, compute_slowdown: 0.7}, {gpu: 3, compute_slowdown: 1.3}]\n",
  };
  for (const std::string& yaml : cases) {
    CAPTURE(yaml);
    const Scenario sc = plan_test::scenario(yaml);
    SimOptions pruned;
    pruned.detail = true;
    SimOptions every = pruned;
    every.hooks.host_task_per_call = true;
    const StepResult a = simulate(sc, sc.strategies.front(), pruned), b = simulate(sc, sc.strategies.front(), every);
    CHECK(a.step_time_s == b.step_time_s);
    CHECK(a.host_bound_s == b.host_bound_s);
    CHECK(gpu_timeline(a) == gpu_timeline(b));
    std::size_t host_a = 0, host_b = 0;
    for (const auto& t : a.tasks) host_a += t.category == TaskCategory::host;
    for (const auto& t : b.tasks) host_b += t.category == TaskCategory::host;
    CHECK(host_a < host_b);  // the layers fall behind somewhere, and calls were left out
  }
}
