// The transfer DAG solved on the engine's own flow network (flow_network.hpp), which re-solves
// only what a change can move (flows coupled through saturated links, above the level of the
// change): where every flow shares links with many others (a tree whose edges all share NICs or
// PCIe uplinks) that is several times faster than re-filling everything connected to a change.
#include <cmath>
#include <cstdint>
#include <queue>

#include "sim/core/dag_solve.hpp"
#include "sim/core/flow_network.hpp"

namespace stepsim::core {

std::vector<double> solve_on_flow_network(const TransferDag& dag) {
  const auto& jobs = dag.jobs;
  // A link's capacity is its effective rate. Only the links some route crosses enter the
  // network, numbered as first met: a collective crosses few of a large cluster's links.
  FlowNetwork net;
  std::vector<std::uint32_t> local;
  std::vector<std::vector<LinkId>> route_links;  // every route of every kind, kinds in order
  std::vector<std::size_t> first_route;         // per kind: its first entry in route_links
  for (const auto& kind : dag.routes) {
    first_route.push_back(route_links.size());
    for (const auto& route : kind) {
      route_links.emplace_back();
      for (const auto& c : route.links) {
        const auto at = static_cast<std::size_t>(c.link);
        if (at >= local.size()) local.resize(at + 1, UINT32_MAX);
        if (local[at] == UINT32_MAX) local[at] = net.add_link(1e12 / c.ps_per_byte).value;
        route_links.back().push_back(LinkId{local[at]});
      }
    }
  }
  Release release(dag);
  // Starts and ends are taken by (time, sequence number) from one counter, as the engine takes its
  // events, so that the flows of one instant enter the network in a fixed order (the re-solve's
  // float sums, and so near-ties, depend on it).
  std::uint64_t seq = 0;
  struct Start {
    EventKey key;
    std::int64_t job = 0;
    std::uint32_t route = 0;
    bool operator>(const Start& o) const { return key > o.key; }
  };
  std::priority_queue<Start, std::vector<Start>, std::greater<>> starts;
  auto start_flow = [&](std::int64_t job, std::uint32_t route, double at) { starts.push({{std::llround(at), ++seq}, job, route}); };
  release.release(start_flow);

  // The engine's loop (simulation.cpp, Simulation::step): every start and end of one instant,
  // then one re-solve before time moves on.
  std::int64_t now = 0;
  for (;;) {
    const bool has_end = net.has_completion();
    if (starts.empty() && !has_end) {
      if (!net.has_changes()) break;
      net.recompute(now, seq, nullptr);
      continue;
    }
    const bool end_first = has_end && (starts.empty() || net.next_key() < starts.top().key);
    const EventKey next = end_first ? net.next_key() : starts.top().key;
    if (next.time_ps > now && net.has_changes()) {
      net.recompute(now, seq, nullptr);
      continue;
    }
    now = next.time_ps;
    if (end_first) {
      const std::uint32_t flow = net.next_flow();
      const auto job = static_cast<std::int64_t>(net.task_of(flow).value);
      net.finish_flow(flow, now);
      release.flow_done(job, static_cast<double>(now));
    } else {
      const Start s = starts.top();
      starts.pop();
      const auto& job = jobs[static_cast<std::size_t>(s.job)];
      const auto& kind = dag.routes[static_cast<std::size_t>(job.routes)];
      const double bytes = job.bytes / (static_cast<double>(kind.size()) * release.flows_per_route(job));
      if (bytes > FlowNetwork::kDoneBytes)
        net.start_flow(route_links[first_route[static_cast<std::size_t>(job.routes)] + s.route], bytes,
                       TaskId{static_cast<std::uint32_t>(s.job)}, now);
      else
        release.flow_done(s.job, static_cast<double>(now));  // nothing to move: done on arrival
    }
    release.release(start_flow);
  }
  return std::move(release.finish_times());
}

}  // namespace stepsim::core
