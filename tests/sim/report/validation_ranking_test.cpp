#include "sim/report/validation_ranking.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace stepsim::report;

namespace {

ValidationRow plan(std::string name, std::string group, double measured, double predicted,
                   std::string metric = "step_time_s") {
  ValidationRow r;
  r.name = std::move(name);
  r.source = "src";
  r.group = std::move(group);
  r.metric = std::move(metric);
  r.measured = measured;
  r.predicted = predicted;
  return r;
}

}  // namespace

TEST_CASE("Spearman's rho of orders that agree, reverse and tie") {
  CHECK(spearman({1, 2, 3, 4}, {10, 20, 30, 40}) == doctest::Approx(1.0));
  CHECK(spearman({1, 2, 3, 4}, {40, 30, 20, 10}) == doctest::Approx(-1.0));
  // Ranks 1,2,3 against 1,3,2: d² = 0+1+1 = 2, rho = 1 − 6·2/(3·8) = 0.5 (no ties, so the
  // textbook formula and Pearson-of-ranks agree).
  CHECK(spearman({1, 2, 3}, {1, 3, 2}) == doctest::Approx(0.5));
  // Ties: b's ranks are 1.5, 1.5, 3 (mean 2); a's 1, 2, 3. cov = (−1)(−.5)+0+(1)(1) = 1.5,
  // var a = 2, var b = .25+.25+1 = 1.5: rho = 1.5 / sqrt(3) = 0.866.
  CHECK(spearman({1, 2, 3}, {5, 5, 7}) == doctest::Approx(1.5 / std::sqrt(3.0)));
  CHECK(spearman({1, 2, 3}, {4, 4, 4}) == 1.0);
}

TEST_CASE("regret is the measured slowdown of the predicted-best plan") {
  // Step times: the prediction picks b (0.9 s predicted) but b measured 1.2 s against a's 1.0 s:
  // regret 1.2 / 1.0 − 1 = 20 %. Measured order a < b < c, predicted b < a < c: rho = 0.5.
  const std::vector<ValidationRow> rows{plan("a", "g", 1.0, 1.1), plan("b", "g", 1.2, 0.9), plan("c", "g", 2.0, 3.0),
                                        plan("alone", "h", 1.0, 5.0), plan("none", "", 1.0, 1.0)};
  const auto groups = rank_groups(rows);
  REQUIRE(groups.size() == 1);  // "h" has one plan and "" none: nothing to rank
  CHECK(groups[0].plans == 3);
  CHECK(groups[0].regret == doctest::Approx(0.2));
  CHECK_FALSE(groups[0].picked_best);
  CHECK(groups[0].spearman == doctest::Approx(0.5));
  CHECK(groups[0].predicted_best == "b");
  CHECK(groups[0].measured_best == "a");
}

TEST_CASE("for a throughput, higher is better and regret is best / pick − 1") {
  // TFLOP/s: measured best is a (150); the prediction picks b (measured 120): 150/120 − 1 = 25 %.
  const std::vector<ValidationRow> rows{plan("a", "g", 150, 100, "megatron_eq3_tflops_per_gpu"),
                                        plan("b", "g", 120, 140, "megatron_eq3_tflops_per_gpu")};
  const auto groups = rank_groups(rows);
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].regret == doctest::Approx(0.25));
  CHECK(groups[0].spearman == doctest::Approx(-1.0));
}

TEST_CASE("summaries count right picks and take the median regret") {
  // Three groups with regrets 0, 0.1, 0.3: median 0.1, max 0.3, one right pick.
  const std::vector<ValidationRow> rows{plan("a", "g1", 1.0, 1.0), plan("b", "g1", 2.0, 2.0),
                                        plan("a", "g2", 1.0, 1.0), plan("b", "g2", 1.1, 0.5),
                                        plan("a", "g3", 1.0, 1.0), plan("b", "g3", 1.3, 0.5)};
  const auto summary = summarize_rankings(rank_groups(rows));
  REQUIRE(summary.size() == 1);
  CHECK(summary[0].groups == 3);
  CHECK(summary[0].picked_best == 1);
  CHECK(summary[0].median_regret == doctest::Approx(0.1));
  CHECK(summary[0].max_regret == doctest::Approx(0.3));
  CHECK(summary[0].mean_spearman == doctest::Approx(-1.0 / 3.0));
}
