#include "sim/report/validation_bias.hpp"

#include <doctest/doctest.h>

using namespace stepsim::report;

namespace {

ValidationRow row(std::string source, int tp, double measured, double predicted, std::string metric = "step_time_s") {
  ValidationRow r;
  r.name = source + " tp" + std::to_string(tp);
  r.source = std::move(source);
  r.metric = std::move(metric);
  r.tp = tp;
  r.measured = measured;
  r.predicted = predicted;
  r.error = (predicted - measured) / measured;
  return r;
}

}  // namespace

TEST_CASE("a step time's error is its own; a throughput's is turned into one of step time") {
  // 0.8 s predicted for 1.0 s measured: 20 % fast.
  CHECK(step_time_error(row("s", 1, 1.0, 0.8)) == doctest::Approx(-0.2));
  // 125 TFLOP/s predicted for 100 measured: the step takes 100/125 of the measured time, 20 % fast,
  // although the metric's own error is +25 %.
  CHECK(step_time_error(row("s", 1, 100, 125, "megatron_eq3_tflops_per_gpu")) == doctest::Approx(-0.2));
}

TEST_CASE("bias is averaged per TP degree of each source that has several") {
  const std::vector<ValidationRow> rows{
      row("a", 8, 1.0, 0.5),  // −50 %
      row("a", 1, 1.0, 1.1),  // +10 %
      row("a", 8, 2.0, 1.8),  // −10 %: TP 8 averages −30 %, |error| 30 %
      row("b", 4, 1.0, 0.9),  // one degree only: says nothing about layouts
      row("b", 4, 1.0, 0.7),
      row("c", 2, 100, 80, "samples_per_gpu_per_s"),  // step time 100/80 − 1 = +25 %, |error| 20 %
      row("c", 1, 100, 100, "samples_per_gpu_per_s"),
  };
  const auto biases = bias_by_tp(rows);
  REQUIRE(biases.size() == 4);
  CHECK(biases[0].source == "a");
  CHECK(biases[0].tp == 1);  // degrees ascending within a source
  CHECK(biases[0].rows == 1);
  CHECK(biases[0].mean_step_time_error == doctest::Approx(0.1));
  CHECK(biases[1].tp == 8);
  CHECK(biases[1].rows == 2);
  CHECK(biases[1].mean_step_time_error == doctest::Approx(-0.3));
  CHECK(biases[1].mean_abs_error == doctest::Approx(0.3));
  CHECK(biases[2].source == "c");  // sources in order of first appearance, "b" left out
  CHECK(biases[2].tp == 1);
  CHECK(biases[2].mean_step_time_error == doctest::Approx(0.0));
  CHECK(biases[3].tp == 2);
  CHECK(biases[3].mean_step_time_error == doctest::Approx(0.25));
  CHECK(biases[3].mean_abs_error == doctest::Approx(0.2));
}
