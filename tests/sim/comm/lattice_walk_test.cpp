// Pins coarse mode's two walkers, sim/comm/lattice_walk.cpp and sim/comm/flow_walk.cpp, on cases
// whose max-min answer is exact by hand: both must give it. Their agreement with the engine on
// real plans is in plan_walk_test.cpp and folded_ring_test.cpp.
#include <doctest/doctest.h>

#include "sim/comm/flow_walk.hpp"
#include "sim/comm/lattice_walk.hpp"

namespace stepsim::comm {
namespace {

constexpr double kPsPerByte = 10'000;  // 100 B/us

// Jobs with their successor lists turned into the CSR form WalkGraph keeps.
WalkGraph graph(std::vector<WalkRoutes> routes, std::vector<WalkJob> jobs, const std::vector<std::vector<std::int64_t>>& next) {
  WalkGraph g{.routes = std::move(routes), .jobs = std::move(jobs)};
  g.next_begin.push_back(0);
  for (std::size_t j = 0; j < g.jobs.size(); ++j) {
    if (j < next.size()) g.next.insert(g.next.end(), next[j].begin(), next[j].end());
    g.next_begin.push_back(static_cast<std::int64_t>(g.next.size()));
  }
  return g;
}

// Each walker's finish times for g, walk_max_min's first.
std::vector<std::vector<double>> walk_both(const WalkGraph& g, std::size_t links) {
  return {*walk_max_min(g, links), *walk_on_flow_network(g, links)};
}

WalkRoute over(std::vector<int> links, double latency_ps = 0) {
  WalkRoute r{.latency_ps = latency_ps};
  for (int l : links) r.links.push_back({l, kPsPerByte});
  return r;
}

TEST_CASE("two jobs on one link share it, and the rest goes to the one left") {
  // 100 B and 300 B on 100 B/us: 50 B/us each until the small one ends at 2 us; the big one's
  // last 200 B then take 2 us alone: 4 us (the engine's own case, flow_network_test.cpp).
  const auto g = graph({{over({0})}}, {{.routes = 0, .bytes = 100}, {.routes = 0, .bytes = 300}}, {});
  for (const auto& finish : walk_both(g, 1)) {
    CHECK(finish[0] == doctest::Approx(2e6));
    CHECK(finish[1] == doctest::Approx(4e6));
  }
}

TEST_CASE("the parking lot: a long job over three links and a short one on each") {
  // Each link carries the long job and one short: 50 B/us each. The short ones (100 B) end at
  // 2 us; the long one (300 B) has 200 B left at 100 B/us: 4 us.
  const auto g = graph({{over({0, 1, 2})}, {over({0})}, {over({1})}, {over({2})}},
                       {{.routes = 0, .bytes = 300}, {.routes = 1, .bytes = 100}, {.routes = 2, .bytes = 100}, {.routes = 3, .bytes = 100}}, {});
  for (const auto& finish : walk_both(g, 3)) {
    CHECK(finish[0] == doctest::Approx(4e6));
    CHECK(finish[1] == doctest::Approx(2e6));
  }
}

TEST_CASE("a job waits for its predecessors, then for its route's latency") {
  // Job 0: 200 B, 2 us. Join 1 after it, job 2 (100 B, latency 0.5 us) after the join:
  // 2 + 0.5 + 1 = 3.5 us.
  const auto g = graph({{over({0})}, {over({0}, 500'000)}}, {{.routes = 0, .bytes = 200}, {}, {.routes = 1, .bytes = 100}}, {{1}, {2}});
  for (const auto& finish : walk_both(g, 1)) {
    CHECK(finish[1] == doctest::Approx(2e6));
    CHECK(finish[2] == doctest::Approx(3.5e6));
  }
}

TEST_CASE("a job's slices are flows of their own: two slices take two shares") {
  // 200 B in 2 slices against 100 B in 1 on one link: three flows of 100 B, 33.3 B/us each,
  // all ending at 3 us; as one flow each, the 100 B job would end at 2 us.
  const auto g = graph({{over({0})}}, {{.routes = 0, .bytes = 200, .slices = 2}, {.routes = 0, .bytes = 100}}, {});
  for (const auto& finish : walk_both(g, 1)) {
    CHECK(finish[0] == doctest::Approx(3e6));
    CHECK(finish[1] == doctest::Approx(3e6));
  }
}

TEST_CASE("equal-cost routes split a job's bytes") {
  // 200 B over two disjoint routes: 100 B each at 100 B/us, 1 us.
  const auto g = graph({{over({0}), over({1})}}, {{.routes = 0, .bytes = 200}}, {});
  for (const auto& finish : walk_both(g, 2)) CHECK(finish[0] == doctest::Approx(1e6));
}

TEST_CASE("a link that another link of every route crossing it implies is dropped, and only then") {
  // Route A crosses links 0 and 1, route B links 1 and 2. Link 0 (faster, only on A) and link 2
  // (as slow as 1, only on B) are implied by link 1; link 1 is implied by neither, since each
  // misses one of its routes.
  std::vector<WalkRoutes> routes{{WalkRoute{.links = {{0, 1.0}, {1, 2.0}}}}, {WalkRoute{.links = {{1, 2.0}, {2, 2.0}}}}};
  drop_implied_links(routes, 3);
  REQUIRE(routes[0].front().links.size() == 1);
  CHECK(routes[0].front().links.front().link == 1);
  REQUIRE(routes[1].front().links.size() == 1);
  CHECK(routes[1].front().links.front().link == 1);
}

TEST_CASE("a walk over its budget gives up") {
  const auto g = graph({{over({0})}}, {{.routes = 0, .bytes = 100}, {.routes = 0, .bytes = 300}}, {});
  CHECK_FALSE(walk_max_min(g, 1, {.total = 0}).has_value());
  CHECK_FALSE(walk_max_min(g, 1, {.allowance = 0, .per_job = 1}).has_value());  // spends before any job is done
  CHECK(walk_max_min(g, 1, {.allowance = 100, .per_job = 0}).has_value());
}

TEST_CASE("the walk on the flow network gives up over its budget, or early once its projection is over") {
  // Work: the first solve sees link 0 with its 2 flows (1 + 2) and their 2 hops: 5. The first flow
  // ends (+100), the second is solved alone (1 + 1 + 1: 108), ends (+100: 208), and the empty
  // link is looked at once more: 209.
  const auto g = graph({{over({0})}}, {{.routes = 0, .bytes = 100}, {.routes = 0, .bytes = 300}}, {});
  CHECK(walk_on_flow_network(g, 1, {.total = 209}).has_value());
  CHECK_FALSE(walk_on_flow_network(g, 1, {.total = 208}).has_value());
  // Projected from the allowance on: with 1 of 2 flows done at 105, 210 is over 150 though 105 is not.
  CHECK_FALSE(walk_on_flow_network(g, 1, {.total = 150, .allowance = 10}).has_value());
  CHECK(walk_on_flow_network(g, 1, {.total = 300, .allowance = 10}).has_value());
  // Nothing done yet at the first solve: any spending past the allowance projects past any total.
  CHECK_FALSE(walk_on_flow_network(g, 1, {.total = 1000, .allowance = 4}).has_value());
}

TEST_CASE("a chain of many jobs walks alike on both walkers, to the picosecond") {
  // 200 jobs of 1 KB one after another on one link, each after a 1 ns latency: 200 x (1 ns +
  // 10 us), whichever walker.
  std::vector<WalkJob> jobs(200, WalkJob{.routes = 0, .bytes = 1000});
  std::vector<std::vector<std::int64_t>> next;
  for (std::int64_t j = 0; j + 1 < 200; ++j) next.push_back({j + 1});
  const auto g = graph({{over({0}, 1000)}}, jobs, next);
  for (const auto& finish : walk_both(g, 1)) CHECK(finish.back() == 200 * (1000 + 1e7));
}

}  // namespace
}  // namespace stepsim::comm
