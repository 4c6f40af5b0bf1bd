#include <doctest/doctest.h>

#include <sstream>

#include "json_check.hpp"
#include "sim/report/bubble_lesson.hpp"
#include "sim/report/critical_path.hpp"

using namespace stepsim;
using K = plan::ScheduleKind;

namespace {

report::BubbleLesson lesson(K kind, int p, int m, int v = 1, double r = 0) {
  return report::run_bubble_lesson({kind, p, m, v, r});
}

}  // namespace

TEST_CASE("with free communication the simulated bubble is the textbook bubble") {
  // GPipe and 1F1B: (p−1)/(m+p−1). p = 4, m = 8: 3/11. Step = (m+p−1)(T_F+T_B) = 11 × 3 ms = 33 ms.
  for (const K kind : {K::gpipe, K::one_f_one_b}) {
    const auto l = lesson(kind, 4, 8);
    CHECK(l.view.measured_bubble == doctest::Approx(3.0 / 11).epsilon(1e-12));
    CHECK(l.view.formula_bubble == doctest::Approx(3.0 / 11).epsilon(1e-12));
    CHECK(l.result.step_time_s == doctest::Approx(33e-3).epsilon(1e-12));
  }
  // Interleaved, v = 2: (p−1)/(v·m+p−1) = 3/19 (Narayanan et al. 2021: the bubble shrinks by v).
  const auto il = lesson(K::interleaved, 4, 8, 2);
  CHECK(il.view.formula_bubble == doctest::Approx(3.0 / 19));
  CHECK(il.view.measured_bubble == doctest::Approx(3.0 / 19).epsilon(1e-12));
  // ZB-H1 with T_F = T_B = T_W = 1 ms: idle (p−1)(T_F+T_B−T_W) = 3 ms of a 3m + p − 1 = 27 ms step.
  const auto zb = lesson(K::zb_h1, 4, 8);
  CHECK(zb.result.step_time_s == doctest::Approx(27e-3).epsilon(1e-12));
  CHECK(zb.view.measured_bubble == doctest::Approx(3.0 / 27).epsilon(1e-12));
  CHECK(zb.view.formula_bubble == doctest::Approx(3.0 / 27).epsilon(1e-12));
}

TEST_CASE("sends cost R·T_F each and make the bubble larger than the formula") {
  // 1F1B, p = 2, m = 1, R = 0.5: F on stage 0 (1), send (0.5), F+B on stage 1 (3), send back
  // (0.5), B on stage 0 (2): 7 ms. Busy 3 + 3 of 2 × 7: bubble 8/14.
  const auto l = lesson(K::one_f_one_b, 2, 1, 1, 0.5);
  CHECK(l.result.step_time_s == doctest::Approx(7e-3).epsilon(1e-12));
  CHECK(l.view.measured_bubble == doctest::Approx(8.0 / 14).epsilon(1e-12));
  CHECK(l.view.formula_bubble == doctest::Approx(1.0 / 2));
  // 8/14 − 1/2 = 7.1 points.
  CHECK(l.advice.find("\nThe sends (R = 0.50) add 7.1 points over the formula") != std::string::npos);
  // The critical path runs through both sends and adds up to the step.
  const auto path = report::critical_path(l.result);
  CHECK(path.total_ps == 7'000'000'000);
}

TEST_CASE("bubble advice names what shrinks the bubble, with textbook numbers") {
  // p = 4, m = 8: 4x the microbatches 3/35 = 8.6 %, v = 2 3/19 = 15.8 %, ZB-H1 3/27 = 11.1 %.
  CHECK(report::bubble_advice({K::one_f_one_b, 4, 8, 1, 0}, 3.0 / 11, 3.0 / 11) ==
        "Shrink it with 4x the microbatches (m = 32): 8.6 %, interleaving v = 2: 15.8 %, zero-bubble zb-h1: 11.1 %.");
  CHECK(report::bubble_advice({K::one_f_one_b, 1, 8, 1, 0}, 0, 0).find("no pipeline bubble") != std::string::npos);
}

TEST_CASE("bad lesson input is rejected with a message") {
  CHECK_THROWS_WITH(lesson(K::one_f_one_b, 0, 8), "--pp: expected at least 1 stage, found 0");
  CHECK_THROWS_WITH(lesson(K::interleaved, 4, 6, 2), "--microbatches: interleaved needs a multiple of --pp (4), found 6");
  CHECK_THROWS_WITH(lesson(K::gpipe, 2, 2, 1, -1), "--comm-ratio: expected a number >= 0, found -1.000");
}

TEST_CASE("the lesson's JSON has the documented keys") {
  std::ostringstream out;
  report::write_bubble_json(lesson(K::one_f_one_b, 4, 8), out);
  const auto doc = report::testing::parse_json(out.str());
  CHECK(doc["measured_bubble"].number == doctest::Approx(3.0 / 11));
  CHECK(doc["formula_bubble"].number == doctest::Approx(3.0 / 11));
  CHECK(doc["schedule"].string == "1f1b");
  CHECK(doc["pp"].number == 4);
  CHECK(doc["microbatches"].number == 8);
}
