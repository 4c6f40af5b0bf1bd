// Pins sim/comm/calibration_fit.cpp on problems whose answer is known: times made by the model
// itself with chosen parameters, fitted from starting values far off.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "sim/comm/calibration_fit.hpp"

namespace stepsim::comm {
namespace {

// Rows of sizes 1, 2, 4, ... 1024 (in bytes, times in us).
std::vector<double> sizes() {
  std::vector<double> out;
  for (double s = 1; s <= 1024; s *= 2) out.push_back(s);
  return out;
}

TEST_CASE("a latency and a rate are found again from times a + S / b") {
  // Truth a = 10 us, b = 2 bytes/us; start a = 40, b = 0.5 (4x off each way). The time is
  // linear in a and 1/b, the coordinates the fit's model uses, so it must land on them.
  const auto s = sizes();
  FitProblem problem{.parameters = {{.value = 40, .lower = 1e-3, .upper = 1e4}, {.value = 0.5, .lower = 1e-3, .upper = 1e3, .rate = true}}};
  for (std::size_t i = 0; i < s.size(); ++i) {
    problem.rows.push_back({.logged_us = 10 + s[i] / 2, .tolerance = 0.1});
    problem.candidates.push_back({.row = i, .parameters = {0, 1}});
  }
  problem.time_us = [&](const std::vector<double>& x, std::size_t c) { return x[0] + s[c] / x[1]; };
  const auto fit = fit_row_times(problem);
  CHECK(fit.x[0] == doctest::Approx(10).epsilon(1e-3));
  CHECK(fit.x[1] == doctest::Approx(2).epsilon(1e-3));
  CHECK(fit.objective < 1e-6);
}

TEST_CASE("the fastest candidate of a group explains its row: two protocols found again from their hand-over") {
  // A low-latency protocol 2 + S / 0.5 and a high-bandwidth one 20 + S / 4 cross at
  // S = 18 / 1.75 = 10.3 bytes: rows 1-8 are the first's, 16-1024 the second's. Starting from
  // values 2-3x off, the fit must find all four, each from the rows its protocol is fastest on.
  const auto s = sizes();
  FitProblem problem{.parameters = {{.value = 6, .lower = 1e-3, .upper = 1e4},
                                    {.value = 0.2, .lower = 1e-3, .upper = 1e3, .rate = true},
                                    {.value = 50, .lower = 1e-3, .upper = 1e4},
                                    {.value = 10, .lower = 1e-3, .upper = 1e3, .rate = true}}};
  std::vector<double> size_of;
  for (std::size_t i = 0; i < s.size(); ++i) {
    problem.rows.push_back({.logged_us = std::min(2 + s[i] / 0.5, 20 + s[i] / 4), .tolerance = 0.1});
    problem.candidates.push_back({.row = i, .parameters = {0, 1}});
    problem.candidates.push_back({.row = i, .parameters = {2, 3}});
    size_of.insert(size_of.end(), {s[i], s[i]});
  }
  problem.time_us = [&](const std::vector<double>& x, std::size_t c) {
    const std::size_t first = c % 2 == 0 ? 0 : 2;
    return x[first] + size_of[c] / x[first + 1];
  };
  const auto fit = fit_row_times(problem);
  CHECK(fit.x[0] == doctest::Approx(2).epsilon(1e-2));
  CHECK(fit.x[1] == doctest::Approx(0.5).epsilon(1e-2));
  CHECK(fit.x[2] == doctest::Approx(20).epsilon(1e-2));
  CHECK(fit.x[3] == doctest::Approx(4).epsilon(1e-2));
}

TEST_CASE("the objective: the group closest to the row explains it, and going past worse_from costs extra") {
  // One row logged at 10 us, held to 10 %. Group 0 runs its fastest (12 us, not 20); group 1
  // takes 9 us, closer: the row's error is log(10/9).
  FitProblem problem{.candidates = {{.row = 0, .group = 0}, {.row = 0, .group = 0}, {.row = 0, .group = 1}},
                     .rows = {{.logged_us = 10, .tolerance = 0.1}}};
  const std::vector<double> times{12, 20, 9};
  const double e = std::log(10.0 / 9.0) / 0.1;
  CHECK(fit_objective(problem, times) == doctest::Approx(e * e));
  // The row started 5 % off: the 0.0536 beyond that costs kWorsePenalty times its square.
  problem.rows[0].worse_from = 0.05;
  const double worse = (std::log(10.0 / 9.0) - 0.05) / 0.1;
  CHECK(fit_objective(problem, times) == doctest::Approx(e * e + kWorsePenalty * worse * worse));
}

}  // namespace
}  // namespace stepsim::comm
