// Transfers through the Engine: max-min sharing over time, latency, link accounting, batching.
#include <doctest/doctest.h>

#include <stdexcept>

#include "sim/core/engine.hpp"
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
                       "add_transfer: the route is empty; a transfer needs at least one link", std::invalid_argument);
  CHECK_THROWS_WITH_AS(e.add_transfer({LinkId{3}}, 10, 0_ps),
                       "add_transfer: unknown link 3 in the route (there are 0)", std::invalid_argument);
  const LinkId l = e.add_link(1e9);
  CHECK_THROWS_AS(e.add_transfer({l}, -1, 0_ps), std::invalid_argument);
  CHECK_THROWS_AS(e.scale_link(l, 0.0), std::invalid_argument);
  CHECK(e.task_count() == 0);
}
