#include "sim/comm/flow_walk.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <queue>

#include "sim/comm/walk_jobs.hpp"
#include "sim/core/flow_network.hpp"

namespace stepsim::comm {
namespace {
// What a flow's start, end and heap entries cost, in the network's solve-work units (~10 ns each
// here): 1024 single-GPU servers' 1 MiB tree, 1.0M flows and 14M units of solving (~0.14 s),
// took 1.4 s: ~1.3 us, ~130 units, per flow, rounded down.
constexpr std::int64_t kWorkPerFlow = 100;
}  // namespace

std::optional<std::vector<double>> walk_on_flow_network(const WalkGraph& graph, std::size_t link_count, const WalkBudget& budget) {
  const auto& jobs = graph.jobs;
  if (jobs.size() > UINT32_MAX) return std::nullopt;  // a flow names its job by a 32-bit TaskId
  // A link's capacity is its effective rate, which every crossing gives alike (walk_route()).
  core::FlowNetwork net;
  std::vector<double> ps_per_byte(link_count, 0.0);
  for (const auto& kind : graph.routes)
    for (const auto& route : kind)
      for (const auto& c : route.links) ps_per_byte[static_cast<std::size_t>(c.link)] = c.ps_per_byte;
  for (const double p : ps_per_byte) net.add_link(p > 0 ? 1e12 / p : 1.0);
  std::vector<std::vector<core::LinkId>> route_links;  // every route of every kind, kinds in order
  std::vector<std::size_t> first_route;               // per kind: its first entry in route_links
  for (const auto& kind : graph.routes) {
    first_route.push_back(route_links.size());
    for (const auto& route : kind) {
      route_links.emplace_back();
      for (const auto& c : route.links) route_links.back().push_back(core::LinkId{static_cast<std::uint32_t>(c.link)});
    }
  }
  WalkJobs walk_jobs(graph);
  const std::int64_t flows_total = walk_jobs.total_flows();
  // Starts and ends are taken by (time, sequence number) from one counter, as the engine takes its
  // events, so that the flows of one instant enter the network in a fixed order (the re-solve's
  // float sums, and so near-ties, depend on it). The engine's joins draw numbers too, so the two
  // orders are alike, not the same.
  std::uint64_t seq = 0;
  struct Start {
    core::EventKey key;
    std::int64_t job = 0;
    std::uint32_t route = 0;
    bool operator>(const Start& o) const { return key > o.key; }
  };
  std::priority_queue<Start, std::vector<Start>, std::greater<>> starts;
  auto start_flow = [&](std::int64_t job, std::uint32_t route, double at) { starts.push({{std::llround(at), ++seq}, job, route}); };
  walk_jobs.release(start_flow);

  // The engine's loop (sim/core/simulation.cpp, Simulation::step): every start and end of one
  // instant, then one re-solve before time moves on.
  std::int64_t now = 0, flows_done = 0;
  for (;;) {
    const auto spent = static_cast<std::int64_t>(net.solve_work()) + kWorkPerFlow * flows_done;
    // Past the allowance, the work so far scaled up to every flow must fit the total too: a walk
    // that will not fit is given up early rather than after spending the whole budget.
    if (spent > budget.total || (spent > budget.allowance && static_cast<double>(spent) * static_cast<double>(flows_total) >
                                                                 static_cast<double>(budget.total) * static_cast<double>(flows_done)))
      return std::nullopt;
    const bool has_end = net.has_completion();
    if (starts.empty() && !has_end) {
      if (!net.has_changes()) break;
      net.recompute(now, seq, nullptr);
      continue;
    }
    const bool end_first = has_end && (starts.empty() || net.next_key() < starts.top().key);
    const core::EventKey next = end_first ? net.next_key() : starts.top().key;
    if (next.time_ps > now && net.has_changes()) {
      net.recompute(now, seq, nullptr);
      continue;
    }
    now = next.time_ps;
    if (end_first) {
      const std::uint32_t flow = net.next_flow();
      const auto job = static_cast<std::int64_t>(net.task_of(flow).value);
      net.finish_flow(flow, now);
      ++flows_done;
      walk_jobs.flow_done(job, static_cast<double>(now));
    } else {
      const Start s = starts.top();
      starts.pop();
      const auto& job = jobs[static_cast<std::size_t>(s.job)];
      const auto& kind = graph.routes[static_cast<std::size_t>(job.routes)];
      const double flows = static_cast<double>(kind.size()) * walk_jobs.flows_per_route(job);
      net.start_flow(route_links[first_route[static_cast<std::size_t>(job.routes)] + s.route], job.bytes / flows,
                     core::TaskId{static_cast<std::uint32_t>(s.job)}, now);
    }
    walk_jobs.release(start_flow);
  }
  return std::move(walk_jobs.finish_times());
}

}  // namespace stepsim::comm
