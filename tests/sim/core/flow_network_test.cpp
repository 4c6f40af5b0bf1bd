// Transfers through the Engine: max-min sharing over time, latency, link accounting, batching.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

#include "sim/core/engine.hpp"
#include "sim/core/max_min.hpp"
#include "tests/sim/core/trace_recorder.hpp"

using namespace stepsim::core;
using namespace stepsim::core::literals;
using stepsim::core::testing::TraceRecorder;

namespace {
constexpr double kBytesPerUs = 1e6;  // 1 B/us = 1e6 B/s: lets the comments count in B and us
constexpr TimePoint at(Duration d) { return TimePoint{} + d; }
}  // namespace

TEST_CASE("one flow alone on one link") {
  // 250 B over a 100 B/us link: 2.5 us.
  Engine e;
  const LinkId l = e.add_link(100 * kBytesPerUs);
  const TaskId f = e.add_transfer({l}, 250, 0_ps);
  TraceRecorder trace;
  e.run(&trace);
  CHECK(e.finish_of(f) == at(2500_ns));
  CHECK(e.link_busy(l) == 2500_ns);
  CHECK(e.link_bytes(l) == 250.0);
  // Rate 0 during its (zero) latency, then the whole link.
  CHECK(trace.rates_of(f) == std::vector<std::pair<std::int64_t, double>>{{0, 0.0}, {0, 100e6}});
}

TEST_CASE("two flows sharing one link") {
  // 100 B and 300 B at t=0 on 100 B/us: 50 B/us each; the small one ends at 2 us. The big one has
  // 300 - 100 = 200 B left at 100 B/us: 2 us more, ending at 4 us.
  Engine e;
  const LinkId l = e.add_link(100 * kBytesPerUs);
  const TaskId small = e.add_transfer({l}, 100, 0_ps);
  const TaskId big = e.add_transfer({l}, 300, 0_ps);
  TraceRecorder trace;
  e.run(&trace);
  CHECK(e.finish_of(small) == at(2_us));
  CHECK(e.finish_of(big) == at(4_us));
  CHECK(trace.rates_of(big) == std::vector<std::pair<std::int64_t, double>>{{0, 0.0}, {0, 50e6}, {2'000'000, 100e6}});
}

TEST_CASE("the parking lot: one long flow across three links, one short flow on each") {
  // Links 100 B/us each. Every link carries the long flow and one short flow: 50 B/us each.
  // Short flows (100 B) end at 100/50 = 2 us. The long one (300 B) has 200 B left, now alone on
  // every link at 100 B/us: 2 us more, ending at 4 us.
  Engine e;
  const LinkId a = e.add_link(100 * kBytesPerUs), b = e.add_link(100 * kBytesPerUs), c = e.add_link(100 * kBytesPerUs);
  const TaskId lng = e.add_transfer({a, b, c}, 300, 0_ps);
  const TaskId s1 = e.add_transfer({a}, 100, 0_ps), s2 = e.add_transfer({b}, 100, 0_ps), s3 = e.add_transfer({c}, 100, 0_ps);
  e.run();
  CHECK(e.finish_of(s1) == at(2_us));
  CHECK(e.finish_of(s2) == at(2_us));
  CHECK(e.finish_of(s3) == at(2_us));
  CHECK(e.finish_of(lng) == at(4_us));
  CHECK(e.link_bytes(b) == 400.0);  // 300 + 100
}

TEST_CASE("different bottlenecks per flow") {
  // Link A 100 B/us, link B 30 B/us. f2 crosses A and B; f1 crosses A only. B limits f2 to 30, f1
  // takes A's rest, 70. f2 (60 B) ends at 60/30 = 2 us; by then f1 (700 B) moved 140 B, and its
  // 560 B left go at 100 B/us: 5.6 us more, ending at 7.6 us.
  Engine e;
  const LinkId a = e.add_link(100 * kBytesPerUs), b = e.add_link(30 * kBytesPerUs);
  const TaskId f1 = e.add_transfer({a}, 700, 0_ps);
  const TaskId f2 = e.add_transfer({a, b}, 60, 0_ps);
  TraceRecorder trace;
  e.run(&trace);
  CHECK(e.finish_of(f2) == at(2_us));
  CHECK(e.finish_of(f1) == at(7600_ns));
  const auto r1 = trace.rates_of(f1);
  REQUIRE(r1.size() == 3);
  CHECK(r1[1].second == doctest::Approx(70e6));
  CHECK(r1[2] == std::pair<std::int64_t, double>{2'000'000, 100e6});
}

TEST_CASE("latency plus bandwidth") {
  // 1 GB/s link = 1000 B/us. a: no latency, 2000 B. b: 1 us latency, 500 B.
  // 0..1 us: a alone moves 1000 B. From 1 us they share 500 B/us: b's 500 B take 1 us (ends at
  // 2 us), a moves 500 more; a's last 500 B alone take 0.5 us: ends at 2.5 us.
  // c: 1.5 us latency, 0 B: ends at 1.5 us and never touches the link.
  Engine e;
  const LinkId l = e.add_link(1e9);
  const TaskId a = e.add_transfer({l}, 2000, 0_ps);
  const TaskId b = e.add_transfer({l}, 500, 1_us);
  const TaskId c = e.add_transfer({l}, 0, 1500_ns);
  e.run();
  CHECK(e.finish_of(b) == at(2_us));
  CHECK(e.finish_of(a) == at(2500_ns));
  CHECK(e.finish_of(c) == at(1500_ns));
  CHECK(e.link_busy(l) == 2500_ns);
  CHECK(e.link_bytes(l) == 2500.0);
}

TEST_CASE("a lone transfer takes latency + bytes / bandwidth") {
  // alpha-beta model: 3 us + 1 MB / 25 GB/s = 3 us + 40 us = 43 us.
  Engine e;
  const TaskId t = e.add_transfer({e.add_link(25e9)}, 1'000'000, 3_us);
  e.run();
  CHECK(e.finish_of(t) == at(43_us));
}

TEST_CASE("rates are solved once per timestamp however many flows start then") {
  // 100 flows of 10 B start at t=0 on one 1000 B/us link: 10 B/us each, all end at 1 us. Rates
  // are solved twice: at 0 (all start) and at 1 us (all end), not once per flow.
  Engine e;
  const LinkId l = e.add_link(1000 * kBytesPerUs);
  for (int i = 0; i < 100; ++i) e.add_transfer({l}, 10, 0_ps);
  const RunStats stats = e.run();
  CHECK(stats.rate_updates == 2);
  CHECK(stats.makespan == at(1_us));
  CHECK(stats.tasks == 100);
}

TEST_CASE("a degraded link is slower") {
  // 100 B/us scaled by 0.5 = 50 B/us; 100 B take 2 us.
  Engine e;
  const LinkId l = e.add_link(100 * kBytesPerUs);
  e.scale_link(l, 0.5);
  const TaskId t = e.add_transfer({l}, 100, 0_ps);
  e.run();
  CHECK(e.finish_of(t) == at(2_us));
}

TEST_CASE("transfer on a stream holds the stream until its bytes arrive") {
  // Transfer of 100 B at 100 B/us on a comm stream: 0..1 us; the marker after it starts at 1 us.
  Engine e;
  const StreamId s = e.add_stream(e.add_device(), StreamKind::communication);
  const TaskId t = e.add_transfer({e.add_link(100 * kBytesPerUs)}, 100, 0_ps, s);
  const TaskId m = e.add_marker(s);
  e.run();
  CHECK(e.finish_of(t) == at(1_us));
  CHECK(e.start_of(m) == at(1_us));
}

TEST_CASE("link and route errors are reported at once") {
  Engine e;
  CHECK_THROWS_WITH_AS(e.add_link(0.0), "add_link: capacity must be a finite number > 0 bytes/s, got 0.000000",
                       std::invalid_argument);
  CHECK_THROWS_AS(e.add_link(-5.0), std::invalid_argument);
  CHECK_THROWS_WITH_AS(e.add_transfer({}, 10, 0_ps),
                       "add_route: the route is empty; a transfer needs at least one link", std::invalid_argument);
  CHECK_THROWS_WITH_AS(e.add_transfer({LinkId{3}}, 10, 0_ps),
                       "add_route: unknown link 3 in the route (there are 0)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(e.add_transfer(RouteId{0}, 10, 0_ps), "add_transfer: unknown route 0 (there are 0)",
                       std::invalid_argument);
  const LinkId l = e.add_link(1e9);
  CHECK_THROWS_AS(e.add_transfer({l}, -1, 0_ps), std::invalid_argument);
  CHECK_THROWS_AS(e.add_transfer({l}, 10, 0_ps, StreamId{7}), std::invalid_argument);  // unknown stream
  // None of the transfers refused above kept its route: the first route kept is route 0.
  const RouteId first = e.add_route(std::vector<LinkId>{l});
  CHECK(first == RouteId{0});
  CHECK_THROWS_AS(e.add_transfer(first, 10, Duration{-1}), std::invalid_argument);
  CHECK_THROWS_AS(e.scale_link(l, 0.0), std::invalid_argument);
  CHECK(e.task_count() == 0);
  e.run();
  CHECK_THROWS_AS(e.add_route(std::vector<LinkId>{l}), std::logic_error);
  CHECK_THROWS_AS(e.add_transfer(first, 10, 0_ps), std::logic_error);
}

TEST_CASE("transfers that take one kept route share its links as transfers of their own routes do") {
  // Two 1000 B transfers over the same two links at 1 GB/s, at once: each gets half the rate, 2 us,
  // whether they take one kept route or each a copy of it.
  for (const bool kept : {true, false}) {
    CAPTURE(kept);
    Engine e;
    const std::vector<LinkId> links{e.add_link(1e9), e.add_link(1e9)};
    const RouteId route = e.add_route(links);
    const TaskId a = kept ? e.add_transfer(route, 1000, 0_ps) : e.add_transfer(links, 1000, 0_ps);
    const TaskId b = kept ? e.add_transfer(route, 1000, 0_ps) : e.add_transfer(links, 1000, 0_ps);
    e.run();
    CHECK(e.finish_of(a) == at(2_us));
    CHECK(e.finish_of(b) == at(2_us));
    CHECK(e.link_bytes(links[0]) == 2000.0);
  }
}

namespace {

// One random network run for the incremental-vs-scratch test: every transfer's route, entry time
// into the network (start + latency) and bytes, so the set of flows moving at any time is known.
struct RandomTransfers {
  std::vector<double> capacity;
  std::vector<TaskId> task;
  std::vector<std::vector<std::uint32_t>> route;
  std::vector<std::int64_t> latency_ps;
};

RandomTransfers build_random_transfers(Engine& e, std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  RandomTransfers r;
  const int links = pick(1, 10);
  for (int l = 0; l < links; ++l) {
    r.capacity.push_back(kBytesPerUs * 10.0 * pick(1, 4));  // few distinct values: ties happen
    e.add_link(r.capacity.back());
  }
  const int transfers = pick(1, 40);
  for (int i = 0; i < transfers; ++i) {
    std::vector<LinkId> route;
    std::vector<std::uint32_t> ids;
    for (int h = 0, n = pick(1, 3); h < n; ++h) {
      ids.push_back(static_cast<std::uint32_t>(pick(0, links - 1)));
      route.push_back(LinkId{ids.back()});
    }
    r.latency_ps.push_back(1'000'000LL * pick(0, 6));  // whole us: many flows start together
    r.task.push_back(e.add_transfer(route, 10 * pick(1, 60), Duration{r.latency_ps.back()}));
    r.route.push_back(ids);
    if (i > 0 && pick(0, 2) == 0) e.add_dependency(r.task[pick(0, i - 1)], r.task.back());
  }
  return r;
}

// After all events at time t: the rate each moving flow was last given, or nullopt if it is not
// moving (in its latency, or finished). rates[i] is trace.rates_of(task i).
using RateLog = std::vector<std::pair<std::int64_t, double>>;
std::vector<std::optional<double>> rates_at(const Engine& e, const RandomTransfers& r,
                                            const std::vector<RateLog>& rates, std::int64_t t) {
  std::vector<std::optional<double>> out(r.task.size());
  for (std::size_t i = 0; i < r.task.size(); ++i) {
    const std::int64_t enters = e.start_of(r.task[i]).ps + r.latency_ps[i];
    if (enters > t || e.finish_of(r.task[i]).ps <= t) continue;
    for (const auto& [at, rate] : rates[i])
      if (at <= t) out[i] = rate;
  }
  return out;
}

}  // namespace

TEST_CASE("incremental rates equal a from-scratch max-min solve after every event (seed 4242)") {
  // The engine re-solves only the flows a change can reach (flow_component.cpp). At every time
  // something happened, solve all moving flows from scratch with max_min_rates and compare.
  std::mt19937_64 rng(4242);
  int checked = 0;
  for (int round = 0; round < 300; ++round) {
    Engine e;
    const RandomTransfers r = build_random_transfers(e, rng);
    TraceRecorder trace;
    e.run(&trace);
    std::vector<RateLog> rates;
    for (const TaskId t : r.task) rates.push_back(trace.rates_of(t));
    std::vector<std::int64_t> times;
    for (const auto& record : trace.records) times.push_back(record.at_ps);
    times.erase(std::unique(times.begin(), times.end()), times.end());  // records come in time order
    for (const std::int64_t t : times) {
      const auto got = rates_at(e, r, rates, t);
      std::vector<std::vector<std::uint32_t>> routes;
      for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i]) routes.push_back(r.route[i]);
      if (routes.empty()) continue;
      const auto want = max_min_rates(r.capacity, routes);
      CAPTURE(round);
      CAPTURE(t);
      for (std::size_t i = 0, k = 0; i < got.size(); ++i)
        if (got[i]) CHECK(*got[i] == doctest::Approx(want[k++]).epsilon(1e-9));
      ++checked;
    }
  }
  CHECK(checked > 3000);
}
