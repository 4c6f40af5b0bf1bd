// The event loop's queue (sim/core/event_queue.hpp): zero-delay events wait in a FIFO beside the
// heap, and the two together must pop in exactly the (time, seq) order one heap would, which
// earlier() compares as one 128-bit number.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <queue>
#include <random>
#include <vector>

#include "sim/core/event_queue.hpp"

using namespace stepsim::core;

TEST_CASE("events at the current time come out after those queued earlier for it, before later times") {
  EventQueue q;
  q.push({{5, 1}, 1, 0});
  q.push({{7, 2}, 2, 0});
  CHECK(q.pop().key == EventKey{5, 1});  // now = 5
  q.push_now({{5, 3}, 3, 0});
  q.push({{6, 4}, 4, 0});
  q.push_now({{5, 5}, 5, 0});
  CHECK(q.size() == 4);
  CHECK(q.pop().task == 3);
  CHECK(q.pop().task == 5);
  CHECK(q.pop().task == 4);
  CHECK(q.pop().task == 2);
  CHECK(q.empty());
}

TEST_CASE("a heap event due now with an older seq goes before the zero-delay ones") {
  EventQueue q;
  q.push({{4, 1}, 1, 0});
  q.push({{4, 2}, 2, 0});
  CHECK(q.pop().task == 1);  // now = 4; event 2 is due now too, queued before the next ones
  q.push_now({{4, 3}, 3, 0});
  CHECK(q.top().task == 2);
  CHECK(q.pop().task == 2);
  CHECK(q.pop().task == 3);
}

TEST_CASE("any run of pushes and pops: the same order as one binary heap") {
  std::mt19937_64 rng(7);
  EventQueue q;
  auto later = [](const TaskEvent& a, const TaskEvent& b) { return b.key < a.key; };
  std::priority_queue<TaskEvent, std::vector<TaskEvent>, decltype(later)> reference(later);
  std::int64_t now = 0;
  std::uint64_t seq = 0;
  for (int round = 0; round < 20000; ++round) {
    const int pushes = static_cast<int>(rng() % 3);
    for (int k = 0; k < pushes; ++k) {
      const std::int64_t delay = rng() % 3 == 0 ? 0 : static_cast<std::int64_t>(rng() % 5);
      const TaskEvent e{{now + delay, ++seq}, static_cast<std::uint32_t>(seq), 0};
      if (delay == 0) q.push_now(e);
      else q.push(e);
      reference.push(e);
    }
    if (reference.empty()) continue;
    REQUIRE(q.size() == reference.size());
    const TaskEvent got = q.pop();
    CHECK(got.key == reference.top().key);
    now = reference.top().key.time_ps;
    reference.pop();
  }
}

TEST_CASE("earlier() orders keys as (time, seq) does, negative times and the largest seq included") {
  const std::int64_t times[] = {std::numeric_limits<std::int64_t>::min(), -1, 0, 1, 7, std::numeric_limits<std::int64_t>::max()};
  const std::uint64_t seqs[] = {0, 1, 2, std::uint64_t{1} << 63, std::numeric_limits<std::uint64_t>::max()};
  std::vector<EventKey> keys;
  for (const std::int64_t t : times)
    for (const std::uint64_t s : seqs) keys.push_back({t, s});
  int checked = 0;
  for (const EventKey& a : keys)
    for (const EventKey& b : keys) {
      CHECK(earlier(a, b) == (a < b));
      ++checked;
    }
  CHECK(checked == 900);
}
