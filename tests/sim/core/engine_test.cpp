// Streams, dependencies, holds, groups, interference and errors of the Engine.
#include <doctest/doctest.h>

#include <stdexcept>

#include "sim/core/engine.hpp"

using namespace stepsim::core;
using namespace stepsim::core::literals;

namespace {
constexpr TimePoint at(Duration d) { return TimePoint{} + d; }
}  // namespace

TEST_CASE("streams are FIFO; cross-stream dependencies act like CUDA events") {
  // s1: A 10 us, B 5 us.  s2: C 3 us, D 4 us (D after A), E 2 us.  s3: F 1 us (after B), G 1 us.
  // A 0..10; B waits for A on its stream: 10..15. C 0..3. D is ready at 10 (A) and C is done: 10..14.
  // E has no dependency but is behind D on s2: 14..16. F waits for B: 15..16. G, though ready at 0,
  // is behind F on s3: 16..17.
  Engine e;
  const DeviceId d = e.add_device();
  const StreamId s1 = e.add_stream(d, StreamKind::compute), s2 = e.add_stream(d, StreamKind::compute),
                 s3 = e.add_stream(d, StreamKind::compute);
  const TaskId a = e.add_compute(s1, 10_us), b = e.add_compute(s1, 5_us);
  const TaskId c = e.add_compute(s2, 3_us), dd = e.add_compute(s2, 4_us), ee = e.add_compute(s2, 2_us);
  const TaskId f = e.add_compute(s3, 1_us), g = e.add_compute(s3, 1_us);
  e.add_dependency(a, dd);
  e.add_dependency(b, f);
  const RunStats stats = e.run();
  CHECK(e.start_of(b) == at(10_us));
  CHECK(e.finish_of(c) == at(3_us));
  CHECK(e.start_of(dd) == at(10_us));
  CHECK(e.finish_of(ee) == at(16_us));
  CHECK(e.start_of(f) == at(15_us));
  CHECK(e.start_of(g) == at(16_us));
  CHECK(e.finish_of(g) == at(17_us));
  CHECK(stats.makespan == at(17_us));
  CHECK(stats.tasks == 7);
}

TEST_CASE("delays and markers off any stream start as soon as they are ready") {
  // delay 2 us, then a marker after it: marker at 2 us; a compute after the marker on a stream: 2..5.
  Engine e;
  const StreamId s = e.add_stream(e.add_device(), StreamKind::compute);
  const TaskId d = e.add_delay(2_us), m = e.add_marker(), c = e.add_compute(s, 3_us);
  e.add_dependency(d, m);
  e.add_dependency(m, c);
  e.run();
  CHECK(e.finish_of(m) == at(2_us));
  CHECK(e.finish_of(c) == at(5_us));
  CHECK(e.sync_wait(c) == 0_ps);  // in no group
}

TEST_CASE("a group records how long each member waited for the others") {
  // Three comm streams; before each member a delay of 2, 5 and 9 us on the same stream, so the
  // members (holds) start at 2, 5, 9 us. Arrival = 9 us; sync waits 9-2 = 7, 9-5 = 4, 0.
  // The data (1000 B at 1 GB/s = 1 us) depends on the arrival marker: 9..10 us. Each hold waits for
  // it, so all three end at 10 us and the compute queued after hold 0 starts at 10 us.
  Engine e;
  const DeviceId d = e.add_device();
  std::vector<TaskId> holds;
  std::vector<StreamId> streams;
  for (const auto before : {2_us, 5_us, 9_us}) {
    streams.push_back(e.add_stream(d, StreamKind::communication));
    e.add_delay(before, streams.back());
    holds.push_back(e.add_hold(streams.back()));
  }
  const TaskId after = e.add_delay(1_us, streams[0]);
  const GroupId group = e.add_group(holds);
  const TaskId data = e.add_transfer({e.add_link(1e9)}, 1000, 0_ps);
  e.add_dependency(e.arrival_marker(group), data);
  for (const TaskId h : holds) e.hold_until(h, data);
  e.run();
  CHECK(e.arrival_of(group) == at(9_us));
  CHECK(e.sync_wait(holds[0]) == 7_us);
  CHECK(e.sync_wait(holds[1]) == 4_us);
  CHECK(e.sync_wait(holds[2]) == 0_us);
  CHECK(e.finish_of(data) == at(10_us));
  for (const TaskId h : holds) CHECK(e.finish_of(h) == at(10_us));
  CHECK(e.start_of(after) == at(10_us));
  // times_of reads the same three at once, in a group and out of one.
  const TaskTimes first = e.times_of(holds[0]);
  CHECK(first.start == at(2_us));
  CHECK(first.finish == at(10_us));
  CHECK(first.sync_wait == 7_us);
  const TaskTimes alone = e.times_of(after);
  CHECK(alone.start == at(10_us));
  CHECK(alone.finish == at(11_us));
  CHECK(alone.sync_wait == 0_ps);
}

TEST_CASE("a group's arrival marker may finish a set time after the arrival") {
  // Members start at 2 and 5 us: arrival at 5 us; the marker, 3 us after it, at 8 us, and the
  // holds waiting for it end then. The sync waits are measured to the arrival, not the marker.
  Engine e;
  const DeviceId d = e.add_device();
  std::vector<TaskId> holds;
  for (const auto before : {2_us, 5_us}) {
    const StreamId s = e.add_stream(d, StreamKind::communication);
    e.add_delay(before, s);
    holds.push_back(e.add_hold(s));
  }
  const GroupId group = e.add_group(holds, 3_us);
  for (const TaskId h : holds) e.hold_until(h, e.arrival_marker(group));
  e.run();
  CHECK(e.arrival_of(group) == at(5_us));
  CHECK(e.finish_of(e.arrival_marker(group)) == at(8_us));
  CHECK(e.sync_wait(holds[0]) == 3_us);
  for (const TaskId h : holds) CHECK(e.finish_of(h) == at(8_us));
  Engine bad;
  const TaskId member = bad.add_hold(bad.add_stream(bad.add_device(), StreamKind::communication));
  CHECK_THROWS_AS(bad.add_group({member}, Duration{-1}), std::invalid_argument);
}

TEST_CASE("hold semantics") {
  // h1 holds for a 4 us delay: occupies its stream 0..4; the compute behind it runs 4..5.
  // h2 holds for nothing: finishes at its start (0). h3 starts at 6 us (after a 6 us compute on its
  // stream) and holds for a 1 us delay that finished long before: it ends at its start, 6 us.
  Engine e;
  const DeviceId d = e.add_device();
  const StreamId s1 = e.add_stream(d, StreamKind::communication), s2 = e.add_stream(d, StreamKind::compute),
                 s3 = e.add_stream(d, StreamKind::compute);
  const TaskId h1 = e.add_hold(s1), behind = e.add_compute(s1, 1_us);
  const TaskId waited = e.add_delay(4_us);
  e.hold_until(h1, waited);
  const TaskId h2 = e.add_hold(s2);
  e.add_compute(s3, 6_us);
  const TaskId h3 = e.add_hold(s3), early = e.add_delay(1_us);
  e.hold_until(h3, early);
  e.run();
  CHECK(e.finish_of(h1) == at(4_us));
  CHECK(e.start_of(behind) == at(4_us));
  CHECK(e.finish_of(behind) == at(5_us));
  CHECK(e.finish_of(h2) == at(0_us));
  CHECK(e.start_of(h3) == at(6_us));
  CHECK(e.finish_of(h3) == at(6_us));
  CHECK_THROWS_AS(e.hold_until(behind, early), std::invalid_argument);  // not a hold
}

TEST_CASE("interference: compute slows while comm runs on the same device") {
  // comm_slowdown 1: compute runs at 1/2 speed while comm is active. The comm stream runs a 4 us
  // delay from 3 us (after an off-stream 3 us delay). Compute of 10 us from 0: 0..3 full speed
  // (3 us of work done, 7 left); 3..7 half speed (2 us of work, 5 left); then full speed: ends at
  // 7 + 5 = 12 us. The same compute on another device, and the comm task itself, are not slowed.
  Engine e;
  const DeviceId d = e.add_device(1.0), other = e.add_device(1.0);
  const StreamId compute = e.add_stream(d, StreamKind::compute), comm = e.add_stream(d, StreamKind::communication);
  const TaskId gate = e.add_delay(3_us);
  const TaskId busy = e.add_delay(4_us, comm);
  e.add_dependency(gate, busy);
  const TaskId work = e.add_compute(compute, 10_us);
  const TaskId far = e.add_compute(e.add_stream(other, StreamKind::compute), 10_us);
  e.run();
  CHECK(e.finish_of(busy) == at(7_us));
  CHECK(e.finish_of(work) == at(12_us));
  CHECK(e.finish_of(far) == at(10_us));
}

TEST_CASE("interference: compute starting during comm, and a non-integer slowdown") {
  // comm_slowdown 0.5: speed 1/1.5 while a 6 us comm delay runs from 0. Compute 10 us from 0:
  // by 6 us it did 6/1.5 = 4 us of work; 6 us left at full speed: ends at 12 us.
  // A second compute of 1 us queued behind it starts at 12 us with no comm: ends at 13 us.
  Engine e;
  const DeviceId d = e.add_device(0.5);
  const StreamId compute = e.add_stream(d, StreamKind::compute), comm = e.add_stream(d, StreamKind::communication);
  e.add_delay(6_us, comm);
  const TaskId work = e.add_compute(compute, 10_us), next = e.add_compute(compute, 1_us);
  e.run();
  CHECK(e.finish_of(work) == at(12_us));
  CHECK(e.finish_of(next) == at(13_us));
}

TEST_CASE("interference off (slowdown 0) leaves compute alone") {
  Engine e;
  const DeviceId d = e.add_device(0.0);
  const TaskId work = e.add_compute(e.add_stream(d, StreamKind::compute), 10_us);
  e.add_delay(6_us, e.add_stream(d, StreamKind::communication));
  e.run();
  CHECK(e.finish_of(work) == at(10_us));
}

TEST_CASE("a dependency cycle is a SimulationError, not a hang") {
  // 0 -> 1 -> 0, and 2 waits for 1: three tasks stuck; task 0 is the first, waiting for 1 dependency.
  Engine e;
  const TaskId a = e.add_delay(1_us), b = e.add_delay(1_us), c = e.add_marker();
  const TaskId free_task = e.add_marker();
  e.add_dependency(a, b);
  e.add_dependency(b, a);
  e.add_dependency(b, c);
  CHECK_THROWS_WITH_AS(e.run(),
                       "3 of 4 tasks can never finish (a dependency cycle, or a hold or group that is never "
                       "released); e.g. task 0: 1 unfinished dependencies",
                       SimulationError);
  CHECK(e.finish_of(free_task) == at(0_us));
  CHECK_THROWS_AS(e.finish_of(a), std::logic_error);
  CHECK_THROWS_AS(e.times_of(a), std::logic_error);
}

TEST_CASE("a hold waiting for a task behind it on its own stream is stuck, not a hang") {
  Engine e;
  const StreamId s = e.add_stream(e.add_device(), StreamKind::communication);
  const TaskId h = e.add_hold(s), later = e.add_marker(s);
  e.hold_until(h, later);
  CHECK_THROWS_AS(e.run(), SimulationError);
}

TEST_CASE("building errors are std::invalid_argument") {
  Engine e;
  CHECK_THROWS_WITH_AS(e.add_compute(StreamId{0}, 1_us), "add_compute: unknown stream 0 (there are 0)",
                       std::invalid_argument);
  CHECK_THROWS_AS(e.add_stream(DeviceId{5}, StreamKind::compute), std::invalid_argument);
  CHECK_THROWS_AS(e.add_device(-1.0), std::invalid_argument);
  const StreamId s = e.add_stream(e.add_device(), StreamKind::compute);
  CHECK_THROWS_AS(e.add_compute(s, Duration{-1}), std::invalid_argument);
  const TaskId t = e.add_compute(s, 1_us);
  CHECK_THROWS_WITH_AS(e.add_dependency(t, t), "add_dependency: task 0 cannot depend on itself", std::invalid_argument);
  CHECK_THROWS_AS(e.add_dependency(t, TaskId{9}), std::invalid_argument);
  CHECK_THROWS_AS(e.add_group({}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(e.add_group({t, t}), "add_group: task 0 is listed twice", std::invalid_argument);
  e.add_group({t});
  CHECK_THROWS_WITH_AS(e.add_group({t}), "add_group: task 0 is already in group 0", std::invalid_argument);
  e.run();
  CHECK_THROWS_AS(e.run(), std::logic_error);
  CHECK_THROWS_WITH_AS(e.add_link(1e9), "add_link: the engine has already run", std::logic_error);
}

TEST_CASE("the event cap and the time cap stop a run") {
  // A chain of 100 markers needs 100 events; a cap of 10 stops it at the 11th.
  Engine capped(EngineLimits{.max_events = 10, .max_time = std::nullopt, .checkpoint = {}});
  TaskId prev = capped.add_marker();
  for (int i = 1; i < 100; ++i) {
    const TaskId next = capped.add_marker();
    capped.add_dependency(prev, next);
    prev = next;
  }
  CHECK_THROWS_WITH_AS(capped.run(),
                       "stopped after 10 events (EngineLimits::max_events) at t=0 ps with 90 tasks unfinished",
                       EventLimitReached);
  // A 10 us delay with max_time 5 us: its finish event at 10 us is past the cap.
  Engine late(EngineLimits{.max_events = std::nullopt, .max_time = at(5_us), .checkpoint = {}});
  late.add_delay(10_us);
  CHECK_THROWS_WITH_AS(late.run(),
                       "stopped at t=10000000 ps, past EngineLimits::max_time=5000000 ps, with 1 tasks unfinished",
                       SimulationError);
}

TEST_CASE("the checkpoint sees every 65,536th task added and event processed, and may stop either") {
  // 2 x 65,536 independent markers: two calls while building (tasks 65,536 and 131,072, no events
  // yet); a marker finishes as it starts, one event each, so two calls while running, each with
  // all 131,072 tasks.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
  Engine e(EngineLimits{.max_events = std::nullopt, .max_time = std::nullopt,
                        .checkpoint = [&](std::uint64_t tasks, std::uint64_t events) { calls.emplace_back(tasks, events); }});
  const std::uint64_t k = EngineLimits::kCheckpointEvery;
  for (std::uint64_t i = 0; i < 2 * k; ++i) e.add_marker();
  REQUIRE(calls.size() == 2);
  CHECK(calls[0] == std::pair{k, std::uint64_t{0}});
  CHECK(calls[1] == std::pair{2 * k, std::uint64_t{0}});
  const RunStats stats = e.run();
  CHECK(stats.events == 2 * k);
  REQUIRE(calls.size() == 2 + stats.events / k);
  for (std::size_t c = 2; c < calls.size(); ++c) CHECK(calls[c] == std::pair{2 * k, (c - 1) * k});

  // A checkpoint that throws stops the build where it is called.
  Engine stopped(EngineLimits{.max_events = std::nullopt, .max_time = std::nullopt,
                              .checkpoint = [](std::uint64_t, std::uint64_t) { throw std::runtime_error("held too much"); }});
  for (std::uint64_t i = 1; i < k; ++i) stopped.add_marker();
  CHECK_THROWS_WITH(stopped.add_marker(), "held too much");
}

