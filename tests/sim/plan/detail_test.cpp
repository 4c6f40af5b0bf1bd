// Pins sim/plan/detail.cpp and link_loads.cpp: what a detailed run records for reports. A PP
// transfer's two members are a send and a receive with one group id, each task's stream
// predecessor is the one before it on its stream, and the links that carried traffic have load
// samples that never exceed their capacity.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "plan_fixture.hpp"

namespace stepsim::plan {
namespace {

StepResult detailed(const std::string& strategy) {
  SimOptions o;
  o.detail = true;
  const auto sc = plan_test::scenario(plan_test::small_gpt(strategy, 16));
  return simulate(sc, sc.strategies.front(), o);
}

TEST_CASE("a pipeline transfer is recorded as a send and a receive of one group") {
  // pp 2 × dp 4, 16 sequences at micro-batch 2: 2 microbatches per replica, each a forward
  // activation 0 -> 1 and a gradient 1 -> 0: 16 transfers, each one send and one receive.
  const auto r = detailed("{name: p, pp: 2, dp: 4, micro_batch: 2}");
  std::map<int, std::multiset<std::string>> ends_of_group;
  for (const auto& t : r.tasks)
    if (t.category == TaskCategory::pp_comm) ends_of_group[t.group].insert(t.op);
  CHECK(ends_of_group.size() == 16);
  for (const auto& entry : ends_of_group) {
    CAPTURE(entry.first);  // a structured binding cannot be captured by CAPTURE's lambda before C++20 in clang
    CHECK(entry.second == std::multiset<std::string>{"recv", "send"});
  }
}

TEST_CASE("each task's stream predecessor is the task before it on its rank and stream") {
  const auto r = detailed("{name: p, pp: 2, dp: 4, micro_batch: 2}");
  std::map<std::pair<int, int>, std::int64_t> last;
  for (std::size_t i = 0; i < r.tasks.size(); ++i) {
    const auto key = std::pair(r.tasks[i].rank, r.tasks[i].stream);
    const auto it = last.find(key);
    CHECK(r.tasks[i].stream_pred == (it == last.end() ? -1 : it->second));
    if (it != last.end()) CHECK(r.tasks[static_cast<std::size_t>(it->second)].end_ps <= r.tasks[i].start_ps);
    last[key] = static_cast<std::int64_t>(i);
  }
}

TEST_CASE("links that carried traffic have load samples within their capacity") {
  // tp 2 on NVSwitch: its all-reduces are timed on paper (no flows); dp 4's gradient buckets are
  // flows over the GPUs' NVLink ports.
  const auto r = detailed("{name: p, tp: 2, dp: 4, micro_batch: 2}");
  REQUIRE_FALSE(r.links.empty());
  for (const auto& link : r.links) {
    CAPTURE(link.name);
    REQUIRE_FALSE(link.samples.empty());
    CHECK(link.capacity_bytes_per_s > 0);
    bool carried = false;
    for (std::size_t k = 0; k < link.samples.size(); ++k) {
      CHECK(link.samples[k].bytes_per_s <= link.capacity_bytes_per_s * (1 + 1e-9));
      if (k > 0) CHECK(link.samples[k].t_ps > link.samples[k - 1].t_ps);
      carried = carried || link.samples[k].bytes_per_s > 0;
    }
    CHECK(carried);
  }
  // Without detail nothing is kept.
  const auto sc = plan_test::scenario(plan_test::small_gpt("{name: p, tp: 2, dp: 4, micro_batch: 2}", 16));
  CHECK(simulate(sc, sc.strategies.front()).links.empty());
}

}  // namespace
}  // namespace stepsim::plan
