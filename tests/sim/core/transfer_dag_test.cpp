// Pins sim/core/transfer_dag.cpp on cases whose max-min answer is exact by hand. Its agreement
// with the engine's step mode on real collectives is in tests/sim/comm/timing_methods_test.cpp.
#include <doctest/doctest.h>

#include <stdexcept>

#include "sim/core/transfer_dag.hpp"

namespace stepsim::core {
namespace {

constexpr double kPsPerByte = 10'000;  // 100 B/us

// Jobs with their successor lists, set as the DAG keeps them.
TransferDag graph(std::vector<DagRoutes> routes, std::vector<DagJob> jobs, const std::vector<std::vector<std::int64_t>>& next) {
  TransferDag g{.routes = std::move(routes), .jobs = std::move(jobs)};
  std::vector<std::pair<std::int64_t, std::int64_t>> edges;
  for (std::size_t j = 0; j < next.size(); ++j)
    for (const auto n : next[j]) edges.emplace_back(static_cast<std::int64_t>(j), n);
  g.set_edges(edges);
  return g;
}

// Each solver's finish times for g, refills first: both must give the exact answer.
std::vector<std::vector<double>> both_solvers(const TransferDag& g) {
  return {finish_times(g, DagSolver::refills), finish_times(g, DagSolver::flow_network)};
}

DagRoute over(std::vector<int> links, double latency_ps = 0) {
  DagRoute r{.latency_ps = latency_ps};
  for (int l : links) r.links.push_back({l, kPsPerByte});
  return r;
}

TEST_CASE("two jobs on one link share it, and the rest goes to the one left") {
  // 100 B and 300 B on 100 B/us: 50 B/us each until the small one ends at 2 us; the big one's
  // last 200 B then take 2 us alone: 4 us (the engine's own case, flow_network_test.cpp).
  const auto g = graph({{over({0})}}, {{.routes = 0, .bytes = 100}, {.routes = 0, .bytes = 300}}, {});
  for (const auto& finish : both_solvers(g)) {
    CHECK(finish[0] == doctest::Approx(2e6));
    CHECK(finish[1] == doctest::Approx(4e6));
  }
}

TEST_CASE("the parking lot: a long job over three links and a short one on each") {
  // Each link carries the long job and one short: 50 B/us each. The short ones (100 B) end at
  // 2 us; the long one (300 B) has 200 B left at 100 B/us: 4 us.
  const auto g = graph({{over({0, 1, 2})}, {over({0})}, {over({1})}, {over({2})}},
                       {{.routes = 0, .bytes = 300}, {.routes = 1, .bytes = 100}, {.routes = 2, .bytes = 100}, {.routes = 3, .bytes = 100}}, {});
  for (const auto& finish : both_solvers(g)) {
    CHECK(finish[0] == doctest::Approx(4e6));
    CHECK(finish[1] == doctest::Approx(2e6));
  }
}

TEST_CASE("a job waits for its predecessors, then for its route's latency") {
  // Job 0: 200 B, 2 us. Join 1 after it, job 2 (100 B, latency 0.5 us) after the join:
  // 2 + 0.5 + 1 = 3.5 us.
  const auto g = graph({{over({0})}, {over({0}, 500'000)}}, {{.routes = 0, .bytes = 200}, {}, {.routes = 1, .bytes = 100}}, {{1}, {2}});
  for (const auto& finish : both_solvers(g)) {
    CHECK(finish[1] == doctest::Approx(2e6));
    CHECK(finish[2] == doctest::Approx(3.5e6));
  }
}

TEST_CASE("a job's slices are flows of their own: two slices take two shares") {
  // 200 B in 2 slices against 100 B in 1 on one link: three flows of 100 B, 33.3 B/us each,
  // all ending at 3 us; as one flow each, the 100 B job would end at 2 us.
  const auto g = graph({{over({0})}}, {{.routes = 0, .bytes = 200, .slices = 2}, {.routes = 0, .bytes = 100}}, {});
  for (const auto& finish : both_solvers(g)) {
    CHECK(finish[0] == doctest::Approx(3e6));
    CHECK(finish[1] == doctest::Approx(3e6));
  }
}

TEST_CASE("equal-cost routes split a job's bytes") {
  // 200 B over two disjoint routes: 100 B each at 100 B/us, 1 us.
  const auto g = graph({{over({0}), over({1})}}, {{.routes = 0, .bytes = 200}}, {});
  for (const auto& finish : both_solvers(g)) CHECK(finish[0] == doctest::Approx(1e6));
}

TEST_CASE("a link that another link of every route crossing it implies is dropped, and only then") {
  // Route A crosses links 0 and 1, route B links 1 and 2. Link 0 (faster, only on A) and link 2
  // (as slow as 1, only on B) are implied by link 1; link 1 is implied by neither, since each
  // misses one of its routes.
  std::vector<DagRoutes> routes{{DagRoute{.links = {{0, 1.0}, {1, 2.0}}}}, {DagRoute{.links = {{1, 2.0}, {2, 2.0}}}}};
  drop_implied_links(routes, 3);
  REQUIRE(routes[0].front().links.size() == 1);
  CHECK(routes[0].front().links.front().link == 1);
  REQUIRE(routes[1].front().links.size() == 1);
  CHECK(routes[1].front().links.front().link == 1);
}

TEST_CASE("a chain of many jobs ends to the picosecond") {
  // 200 jobs of 1 KB one after another on one link, each after a 1 ns latency: 200 x (1 ns +
  // 10 us).
  std::vector<DagJob> jobs(200, DagJob{.routes = 0, .bytes = 1000});
  std::vector<std::vector<std::int64_t>> next;
  for (std::int64_t j = 0; j + 1 < 200; ++j) next.push_back({j + 1});
  const auto g = graph({{over({0}, 1000)}}, jobs, next);
  for (const auto& finish : both_solvers(g)) CHECK(finish.back() == 200 * (1000 + 1e7));
}

TEST_CASE("flow_count counts routes that cross a link, in slices beyond those every job shares") {
  // Job 0: 2 routes (one empty) × 4 slices; job 1: 1 route × 8 slices; a join. Common slices 4:
  // 1 × 1 + 1 × 2 = 3 flows.
  const auto g = graph({{over({0}), DagRoute{}}, {over({1})}},
                       {{.routes = 0, .bytes = 100, .slices = 4}, {.routes = 1, .bytes = 100, .slices = 8}, {}}, {{2}, {2}});
  CHECK(flow_count(g) == 3);
}

TEST_CASE("a malformed DAG is refused, not solved into silent zeros") {
  // A cycle: neither job is ever released.
  for (const DagSolver solver : {DagSolver::refills, DagSolver::flow_network}) {
    const auto cycle = graph({{over({0})}}, {{.routes = 0, .bytes = 1}, {.routes = 0, .bytes = 1}}, {{1}, {0}});
    CHECK_THROWS_AS(finish_times(cycle, solver), std::invalid_argument);
    CHECK_THROWS_AS(finish_times(graph({{over({0})}}, {{.routes = 3, .bytes = 1}}, {}), solver), std::invalid_argument);
    CHECK_THROWS_AS(finish_times(graph({{DagRoute{.links = {{0, 0.0}}}}}, {{.routes = 0, .bytes = 1}}, {}), solver),
                    std::invalid_argument);
  }
}

}  // namespace
}  // namespace stepsim::core
