#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "sim/core/max_min.hpp"

using stepsim::core::max_min_rates;
using Routes = std::vector<std::vector<std::uint32_t>>;

namespace {

// Brute-force reference, written differently from the solver on purpose: the textbook "raise all
// unfrozen flows together" loop (Bertsekas & Gallager 6.5.2). Each round finds the smallest
// increment that fills some link, adds it to every unfrozen flow, and freezes the flows on every
// link that is now full. O(L·F) per round, at most L rounds.
std::vector<double> reference_rates(const std::vector<double>& cap, const Routes& routes) {
  std::vector<double> rate(routes.size(), 0.0), left = cap;
  std::vector<bool> frozen(routes.size(), false);
  for (;;) {
    std::vector<int> unfrozen(cap.size(), 0);
    for (std::size_t f = 0; f < routes.size(); ++f)
      if (!frozen[f])
        for (auto l : routes[f]) ++unfrozen[l];
    double step = -1;
    for (std::size_t l = 0; l < cap.size(); ++l)
      if (unfrozen[l] > 0 && (step < 0 || left[l] / unfrozen[l] < step)) step = left[l] / unfrozen[l];
    if (step < 0) return rate;
    for (std::size_t f = 0; f < routes.size(); ++f)
      if (!frozen[f]) {
        rate[f] += step;
        for (auto l : routes[f]) left[l] -= step;
      }
    for (std::size_t f = 0; f < routes.size(); ++f)
      for (auto l : routes[f])
        if (left[l] <= 1e-9 * cap[l]) frozen[f] = true;
  }
}

// The defining property of max-min fairness: feasible, and every flow crosses a bottleneck (a full
// link where no other flow gets more).
void check_max_min_property(const std::vector<double>& cap, const Routes& routes, const std::vector<double>& rate) {
  std::vector<double> load(cap.size(), 0.0), max_rate(cap.size(), 0.0);
  for (std::size_t f = 0; f < routes.size(); ++f)
    for (auto l : routes[f]) {
      load[l] += rate[f];
      max_rate[l] = std::max(max_rate[l], rate[f]);
    }
  for (std::size_t l = 0; l < cap.size(); ++l) CHECK(load[l] <= cap[l] * (1 + 1e-9));
  for (std::size_t f = 0; f < routes.size(); ++f) {
    bool has_bottleneck = false;
    for (auto l : routes[f])
      if (load[l] >= cap[l] * (1 - 1e-9) && rate[f] >= max_rate[l] * (1 - 1e-9)) has_bottleneck = true;
    CHECK(has_bottleneck);
  }
}

}  // namespace

TEST_CASE("max-min: the parking lot") {
  // Links 0,1,2 of 100 each; flow 0 crosses all three, flows 1..3 one link each. Every link has two
  // flows, so everyone gets 100/2 = 50.
  const auto r = max_min_rates({100, 100, 100}, {{0, 1, 2}, {0}, {1}, {2}});
  for (double x : r) CHECK(x == doctest::Approx(50.0));
}

TEST_CASE("max-min: different bottlenecks per flow") {
  // Link 0 = 100, link 1 = 30. Flow 0 crosses link 0; flow 1 crosses both; flow 2 crosses link 1.
  // Link 1 is the tightest (30/2 = 15 each for flows 1 and 2); flow 0 gets link 0's rest, 100-15 = 85.
  const auto r = max_min_rates({100, 30}, {{0}, {0, 1}, {1}});
  CHECK(r[0] == doctest::Approx(85.0));
  CHECK(r[1] == doctest::Approx(15.0));
  CHECK(r[2] == doctest::Approx(15.0));
}

TEST_CASE("max-min: a link listed twice in a route is used twice") {
  // One flow crossing link 0 twice on a 100 link: 2r = 100, r = 50.
  CHECK(max_min_rates({100}, {{0, 0}})[0] == doctest::Approx(50.0));
}

TEST_CASE("max-min: bad problems are rejected") {
  CHECK_THROWS_AS(max_min_rates({100}, {{}}), std::invalid_argument);
  CHECK_THROWS_AS(max_min_rates({100}, {{1}}), std::invalid_argument);
  CHECK_THROWS_AS(max_min_rates({0.0}, {{0}}), std::invalid_argument);
}

TEST_CASE("max-min: randomized against the brute-force reference (seed 20240611)") {
  std::mt19937_64 rng(20240611);
  for (int round = 0; round < 500; ++round) {
    const int links = std::uniform_int_distribution<int>(1, 12)(rng);
    const int flows = std::uniform_int_distribution<int>(1, 20)(rng);
    std::vector<double> cap(links);
    // Few distinct capacities, so ties (the hard case for frozen sets) happen often.
    for (auto& c : cap) c = 10.0 * std::uniform_int_distribution<int>(1, 5)(rng);
    Routes routes(flows);
    for (auto& route : routes) {
      std::vector<std::uint32_t> all(links);
      for (int l = 0; l < links; ++l) all[l] = l;
      std::shuffle(all.begin(), all.end(), rng);
      all.resize(std::uniform_int_distribution<int>(1, std::min(links, 4))(rng));
      route = all;
    }
    const auto got = max_min_rates(cap, routes);
    const auto want = reference_rates(cap, routes);
    CAPTURE(round);
    for (int f = 0; f < flows; ++f) CHECK(got[f] == doctest::Approx(want[f]).epsilon(1e-9));
    check_max_min_property(cap, routes, got);
  }
}
