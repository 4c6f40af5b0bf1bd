#include <doctest/doctest.h>

#include <numeric>

#include "sim/report/critical_path.hpp"
#include "synthetic.hpp"

using namespace stepsim;
using report::testing::kUs;

namespace {

std::int64_t sum_of(const report::CriticalPath& path) {
  return std::accumulate(path.by_category.begin(), path.by_category.end(), std::int64_t{0},
                         [](std::int64_t s, const report::CategoryTime& c) { return s + c.ps; });
}

std::int64_t time_of(const report::CriticalPath& path, const std::string& label) {
  for (const auto& c : path.by_category)
    if (c.label == label) return c.ps;
  return 0;
}

plan::TaskRecord task(int rank, int stream, plan::TaskCategory c, std::int64_t start_us, std::int64_t end_us,
                      std::vector<std::uint32_t> deps = {}) {
  plan::TaskRecord t;
  t.rank = rank, t.stream = stream, t.category = c, t.op = "mlp";
  t.start_ps = start_us * kUs, t.end_ps = end_us * kUs, t.deps = std::move(deps);
  return t;
}

// The tasks with each one's stream predecessor recorded as the builders record it: the task
// listed before it on its (rank, stream).
std::vector<plan::TaskRecord> in_stream_order(std::vector<plan::TaskRecord> tasks) {
  for (std::size_t i = 0; i < tasks.size(); ++i)
    for (std::size_t k = i; k-- > 0;)
      if (tasks[k].rank == tasks[i].rank && tasks[k].stream == tasks[i].stream) {
        tasks[i].stream_pred = static_cast<std::int64_t>(k);
        break;
      }
  return tasks;
}

}  // namespace

TEST_CASE("the critical path follows the predecessor that finished last and sums to the step") {
  using C = plan::TaskCategory;
  plan::StepResult r;
  r.tasks = in_stream_order({
      task(0, 0, C::forward, 0, 10),            // 0 A: forward on rank 0
      task(0, 1, C::pp_comm, 10, 12, {0}),      // 1 S: send A's output to rank 1
      task(1, 0, C::forward, 12, 22, {1}),      // 2 B: forward on rank 1
      task(1, 2, C::tp_comm, 25, 30, {2}),      // 3 C: TP all-reduce, starts 3 us after B (a gap)
      task(1, 0, C::optimizer, 30, 40, {3}),    // 4 D: the last task
      task(0, 0, C::backward_input, 10, 35),    // 5 E: ends before D, not on the path
  });
  r.tasks[3].sync_wait_ps = 2 * kUs;
  const auto path = report::critical_path(r);
  // D's candidates: C (dep, ends 30) and B (stream predecessor, ends 22): C. C's only candidate is
  // B (ends 22 < C's start 25: 3 us waiting). B <- S <- A, and A starts at 0.
  REQUIRE(path.chain.size() == 5);
  CHECK(path.chain[0].task == 0);
  CHECK(path.chain[1].task == 1);
  CHECK(path.chain[2].task == 2);
  CHECK(path.chain[3].task == 3);
  CHECK(path.chain[3].wait_before_ps == 3 * kUs);
  CHECK(path.chain[4].task == 4);
  CHECK(path.rank_changes == 1);  // S (rank 0) -> B (rank 1)
  // forward mlp: A 10 + B 10; optimizer 10; C's 5 us = 2 sync stall + 3 TP; 3 waiting; S 2.
  CHECK(time_of(path, "forward mlp") == 20 * kUs);
  CHECK(time_of(path, "optimizer step") == 10 * kUs);
  CHECK(time_of(path, "TP communication") == 3 * kUs);
  CHECK(time_of(path, "sync stall") == 2 * kUs);
  CHECK(time_of(path, "waiting") == 3 * kUs);
  CHECK(time_of(path, "PP send/recv") == 2 * kUs);
  CHECK(path.total_ps == 40 * kUs);
  CHECK(sum_of(path) == path.total_ps);
  CHECK(path.by_category.front().label == "forward mlp");  // largest first
}

TEST_CASE("a same-stream predecessor binds when it finished after every dependency") {
  using C = plan::TaskCategory;
  plan::StepResult r;
  r.tasks = in_stream_order({task(0, 0, C::forward, 5, 10), task(0, 1, C::tp_comm, 0, 4), task(0, 0, C::forward, 10, 20, {1})});
  const auto path = report::critical_path(r);
  // Task 2 depends on 1 (ends 4) but its stream predecessor 0 ends 10 = its start. Task 0 starts
  // at 5 with no predecessor: 5 us waiting from the step start.
  REQUIRE(path.chain.size() == 2);
  CHECK(path.chain[0].task == 0);
  CHECK(path.chain[0].wait_before_ps == 5 * kUs);
  CHECK(time_of(path, "waiting") == 5 * kUs);
  CHECK(sum_of(path) == 20 * kUs);
}

TEST_CASE("the critical path of a pipeline adds up to its step time") {
  for (const int pp : {1, 2, 4}) {
    report::testing::PipelineShape shape;
    shape.tp = 2, shape.pp = pp, shape.dp = 2, shape.microbatches = 8;
    const auto r = report::testing::synthetic_pipeline(shape);
    const auto path = report::critical_path(r);
    // The step ends with stage 0's optimizer: E + (p−1)(B+send) + m·B + dp + optimizer, with
    // E = (p−1)(F+send) + m·F (synthetic.hpp).
    const std::int64_t fwd_end = (pp - 1) * 110 + 8 * 100;
    const std::int64_t end_us = fwd_end + (pp - 1) * 210 + 8 * 200 + 50 + 30;
    CHECK(path.total_ps == end_us * kUs);
    CHECK(sum_of(path) == path.total_ps);
    CHECK(static_cast<double>(path.total_ps) * 1e-12 == doctest::Approx(r.step_time_s).epsilon(1e-12));
    // No gaps in this timeline: every task starts when its binding predecessor ends.
    CHECK(time_of(path, "waiting") == 0);
    // The path crosses the pipeline down and back up: 2(p−1) sends.
    CHECK(time_of(path, "PP send/recv") == 2 * (pp - 1) * 10 * kUs);
  }
}

TEST_CASE("compute labels name the op unless it repeats the category") {
  auto t = task(0, 0, plan::TaskCategory::backward_input, 0, 1);
  CHECK(report::critical_path_label(t) == "backward mlp");
  t.op = "backward_input";
  CHECK(report::critical_path_label(t) == "backward");
  t.category = plan::TaskCategory::dp_comm;
  CHECK(report::critical_path_label(t) == "DP communication");
}

TEST_CASE("an empty timeline has an empty critical path") {
  const auto path = report::critical_path(plan::StepResult{});
  CHECK(path.chain.empty());
  CHECK(path.total_ps == 0);
  CHECK(report::format_critical_path(path, plan::StepResult{}).find("0.0 ms") != std::string::npos);
}

TEST_CASE("the critical path follows a PP receive to its sender and a DP bucket to its last-arriving rank") {
  // Regression: with tp > 1 and dp > 1 the walk stopped at a DP collective and booked everything
  // before it as waiting; and pipelines never left stage 0, booking the bubble as waiting.
  using C = plan::TaskCategory;
  plan::StepResult r;
  r.tasks = in_stream_order({
      task(0, 0, C::forward, 0, 10),             // 0 F0: stage 0 forward (rank 0)
      task(0, 1, C::pp_comm, 10, 12, {0}),       // 1 send F0's output to rank 1
      task(1, 3, C::pp_comm, 10, 12, {0}),       // 2 recv on rank 1, posted when the data exists
      task(1, 0, C::forward, 12, 22, {2}),       // 3 F1: stage 1 forward, waited for the recv
      task(1, 0, C::backward_input, 22, 42),     // 4 B1: stage 1 backward
      task(1, 2, C::dp_comm, 42, 50, {4}),       // 5 DP all-reduce member on rank 1 (arrives last)
      task(2, 0, C::backward_input, 0, 25),      // 6 B on rank 2, the other DP replica of stage 1
      task(2, 2, C::dp_comm, 25, 50, {6}),       // 7 DP member on rank 2: waits 17 us for rank 1
      task(2, 0, C::optimizer, 50, 60, {7}),     // 8 optimizer on rank 2: the last task
  });
  r.tasks[1].group = r.tasks[2].group = 0;
  r.tasks[5].group = r.tasks[7].group = 1;
  r.tasks[7].sync_wait_ps = 17 * kUs;
  r.tasks[1].peer_rank = 1, r.tasks[2].peer_rank = 0;
  const auto path = report::critical_path(r);
  // 8 (ends 60) <- 7 (dep, ends 50). 7 waited 17 us for its peer: the last-arriving member is 5
  // (rank 1, started 42 = 7's arrival), so 7 books only 50 - 42 = 8 us of DP communication and the
  // walk hops to 5 at 42. 5 <- 4 (dep, ends 42) <- 3 (stream predecessor, ends 22) <- 2 (dep: the
  // recv, ends 12, beats nothing else) <- 0 (dep: F0 ends 10; the recv starts at 10, no wait).
  // Chain 0, 2, 3, 4, 5, 7, 8 with 2 hops between ranks: F0 (rank 0) -> recv (rank 1) and
  // 5 (rank 1) -> 7 (rank 2). Time: forward 10 + 10, PP 2, backward 20, DP 0 (5 is cut at
  // 42, its start) + 8, optimizer 10 = 60, no waiting and no sync stall.
  REQUIRE(path.chain.size() == 7);
  const std::vector<std::uint32_t> expected{0, 2, 3, 4, 5, 7, 8};
  for (std::size_t k = 0; k < expected.size(); ++k) CHECK(path.chain[k].task == expected[k]);
  CHECK(path.rank_changes == 2);
  CHECK(time_of(path, "forward mlp") == 20 * kUs);
  CHECK(time_of(path, "PP send/recv") == 2 * kUs);
  CHECK(time_of(path, "backward mlp") == 20 * kUs);
  CHECK(time_of(path, "DP communication") == 8 * kUs);
  CHECK(time_of(path, "optimizer step") == 10 * kUs);
  CHECK(time_of(path, "waiting") == 0);
  CHECK(time_of(path, "sync stall") == 0);
  CHECK(sum_of(path) == 60 * kUs);

  // Without the group (one simulated member) the same wait stays on rank 2 as sync stall.
  r.tasks[5].group = r.tasks[7].group = -1;
  const auto alone = report::critical_path(r);
  CHECK(time_of(alone, "sync stall") == 17 * kUs);
  CHECK(alone.chain.front().task == 6);
  CHECK(sum_of(alone) == 60 * kUs);
}
