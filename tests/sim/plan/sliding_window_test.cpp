// Layers of two kinds: a model whose local (sliding-window) attention alternates with global
// layers is costed per layer, each kind from its own shape. On the ideal network (every collective
// takes bytes / bandwidth, the host issues at once) a step is a sum over layers, so the
// alternating model's step is exactly the mean of an all-local and an all-global one.
#include <doctest/doctest.h>

#include "sim/plan/plan_inputs.hpp"
#include "tests/sim/plan/plan_fixture.hpp"

using namespace stepsim;
using namespace stepsim::plan;

namespace {

// 4 layers, h 1024, 8 heads of 128, 8k tokens, flash attention, TP 8 on one DGX A100 in bf16.
// `window` is the model's window keys (empty: none).
std::string long_sequence(const std::string& window, const std::string& strategy = "{name: tp8, tp: 8, flash_attention: true}") {
  return R"(name: window
hardware: {preset: dgx-a100}
model: {name: local, layers: 4, hidden: 1024, heads: 8, vocab: 1000, position: rotary, activation: geglu,
        norm: rmsnorm, bias: false, dropout: false)" + window + R"(}
training: {seq_len: 8192, global_batch: 1, precision: bf16}
strategies:
  - )" + strategy + "\n";
}

std::int64_t step_ps(const std::string& window) {
  auto sc = plan_test::scenario(long_sequence(window));
  sc.cluster.gpu.comm_slowdown = 0;
  const StepResult r = simulate(sc, sc.strategies[0], plan_test::ideal_network(100e9));
  return static_cast<std::int64_t>(r.step_time_s * 1e12 + 0.5);
}

}  // namespace

TEST_CASE("alternating local and global layers cost the mean of all-local and all-global") {
  const std::int64_t global = step_ps("");
  const std::int64_t local = step_ps(", attention_window: 2048");
  const std::int64_t alternating = step_ps(", attention_window: 2048, global_attention_every: 2");
  CHECK(local < global);  // a window of a quarter of the sequence skips most key blocks
  CHECK(2 * alternating == doctest::Approx(static_cast<double>(local + global)).epsilon(1e-12));
  // Picoseconds are rounded per step result; the sums themselves are exact.
  CHECK(std::abs(2 * alternating - (local + global)) <= 2);
}

TEST_CASE("each distinct layer shape is costed once, and every layer knows its kind") {
  const auto sc = plan_test::scenario(long_sequence(", attention_window: 2048, global_attention_every: 2"));
  const PlanInputs in = make_inputs(sc, sc.strategies[0], {});
  REQUIRE(in.layer_kinds.size() == 2);
  CHECK(in.kind_of_layer == std::vector<int>{0, 1, 0, 1});  // layers 1 and 3 are global
  CHECK(in.layer(0).fwd_flops < in.layer(1).fwd_flops);
  CHECK(in.layer(0).params == in.layer(1).params);
  // A window as long as the sequence is no window: one kind.
  const auto whole = plan_test::scenario(long_sequence(", attention_window: 8192, global_attention_every: 2"));
  CHECK(make_inputs(whole, whole.strategies[0], {}).layer_kinds.size() == 1);
}

TEST_CASE("context parallelism with a sliding window is refused at cp") {
  CHECK(plan_test::strategy_error(long_sequence(", attention_window: 2048", "{name: cp2, cp: 2, tp: 4, flash_attention: true}")) ==
        "test.yaml:7:21: strategies[0].cp: context parallelism with sliding-window attention (local: a window of 2048 "
        "tokens) is not modelled yet; expected cp = 1");
}
