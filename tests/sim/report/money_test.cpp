#include <doctest/doctest.h>

#include "sim/report/money.hpp"

using namespace stepsim;

namespace {

plan::StepResult plan_of(const std::string& name, int gpus, double tokens_per_s, bool fits = true) {
  plan::StepResult r;
  r.name = name, r.gpus = gpus, r.tokens_per_s = tokens_per_s, r.fits = fits;
  return r;
}

}  // namespace

TEST_CASE("days, GPU-hours and cost follow from tokens/s") {
  // 300B tokens at 100,000 tokens/s = 3e6 s = 34.72 days; on 8 GPUs 8 · 3e6 / 3600 = 6,666.7
  // GPU-hours; at $2/GPU-hour $13,333.33.
  const auto c = report::training_cost(plan_of("x", 8, 1e5), 300e9, 2.0);
  CHECK(c.days == doctest::Approx(3e6 / 86400));
  CHECK(c.gpu_hours == doctest::Approx(8 * 3e6 / 3600));
  REQUIRE(c.dollars.has_value());
  CHECK(*c.dollars == doctest::Approx(2 * 8 * 3e6 / 3600));
  CHECK_FALSE(report::training_cost(plan_of("x", 8, 1e5), 300e9, std::nullopt).dollars.has_value());
}

TEST_CASE("token counts print the way training.tokens is written") {
  CHECK(report::compact_count(300e9) == "300B");
  CHECK(report::compact_count(1.5e12) == "1.5T");
  CHECK(report::compact_count(2e6) == "2M");
  CHECK(report::compact_count(999) == "999");
}

TEST_CASE("the time-and-money table prices plans that fit and marks the best") {
  // a: 3e6 s as above. b: 200,000 tokens/s on 16 GPUs = 1.5e6 s = 17.4 days, 6,666.7 GPU-hours.
  const std::string text = report::format_time_and_money(
      {plan_of("a", 8, 1e5), plan_of("b", 16, 2e5), plan_of("c", 4, 9e9, false)}, 300e9, 2.0);
  CHECK(text ==
        "Training on 300B tokens at $2.00 per GPU-hour:\n"
        "strategy  GPUs  days to train  GPU-hours     cost\n"
        "--------  ----  -------------  ---------  -------\n"
        "a            8      34.7 days    6,667 h  $13,333\n"
        "*b          16      17.4 days    6,667 h  $13,333\n"
        "c            4   does not fit          -        -\n");
  CHECK(report::format_time_and_money({plan_of("a", 8, 1e5)}, 300e9, std::nullopt)
            .find("(no price: give --price-per-gpu-hour)") != std::string::npos);
}
