// The transfer DAG solved by refills: at each instant where flows start or end, every flow
// connected to them through shared links is brought up to date and the group re-filled by
// progressive filling, links that fill at the same level settled together (a symmetric
// collective has many), rates in bytes per ps over each crossing's time per byte. Only moving
// flows have a record, in a pool whose freed records are reused.
#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

#include "sim/core/dag_solve.hpp"
#include "sim/core/rounding.hpp"

namespace stepsim::core {

std::vector<double> solve_by_refills(const TransferDag& graph) {
  std::size_t link_count = 0;
  for (const auto& kind : graph.routes)
    for (const auto& route : kind)
      for (const auto& c : route.links) link_count = std::max(link_count, static_cast<std::size_t>(c.link) + 1);
  // Only moving flows have a record, in a pool whose freed records are reused; an end event
  // names a record and the version it was computed for, so a reused record's old events are stale.
  struct Flow {
    std::int64_t job = 0;
    std::uint32_t route = 0;           // index into the job's kind of routes
    double left = 0, rate = 0, t = 0;  // bytes still to move; bytes per ps; as of t
    double scheduled_rate = -1;        // the rate its pending end event was computed with
    std::uint64_t version = 0;
    std::uint32_t seen = 0;
    bool fixed = false;
  };
  struct Event {
    double t = 0;
    bool is_end = false;  // else: a flow of `job` over route `route` starts
    std::int64_t id = 0;  // the flow record that ends, or the job
    std::uint32_t route = 0;
    std::uint64_t version = 0;
    bool operator>(const Event& o) const { return t > o.t; }
  };
  const auto& jobs = graph.jobs;
  Release release(graph);
  std::vector<Flow> flows;
  std::vector<std::int64_t> free_flows;
  // Link -> its moving flows, each with which link of its route this is; slot[f·longest + k]:
  // where flow f's k-th link holds it, so that a flow leaves every link in O(1).
  struct OnLink {
    std::int64_t flow = 0;
    std::uint32_t k = 0;
  };
  std::vector<std::vector<OnLink>> on(link_count);
  std::size_t longest = 1;
  for (const auto& kind : graph.routes)
    for (const auto& route : kind) longest = std::max(longest, route.links.size());
  std::vector<std::uint32_t> slot;  // grows with the pool
  std::vector<std::uint32_t> link_seen(link_count, 0);
  std::vector<double> capacity(link_count), weight(link_count);
  std::uint32_t stamp = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  auto route_of = [&](std::int64_t f) -> const DagRoute& {
    const Flow& flow = flows[static_cast<std::size_t>(f)];
    const auto& kind = graph.routes[static_cast<std::size_t>(jobs[static_cast<std::size_t>(flow.job)].routes)];
    return kind[flow.route % kind.size()];
  };
  // A released job's flows start after their route's latency.
  auto start_flow = [&](std::int64_t job, std::uint32_t route, double at) { events.push({at, false, job, route}); };
  std::vector<std::int64_t> group;
  std::vector<int> group_links, open_links, filled;
  auto see_link = [&](int l) {
    if (link_seen[static_cast<std::size_t>(l)] == stamp) return;
    link_seen[static_cast<std::size_t>(l)] = stamp;
    group_links.push_back(l);
  };
  // Brings every flow connected to `seeds` through shared links up to `now`, retires those that
  // are done, and refills the rest.
  auto refill = [&](const std::vector<int>& seeds, double now) {
    ++stamp;
    group.clear(), group_links.clear();
    for (int l : seeds) see_link(l);
    for (std::size_t k = 0; k < group_links.size(); ++k)
      for (const OnLink& entry : on[static_cast<std::size_t>(group_links[k])]) {
        const std::int64_t f = entry.flow;
        auto& flow = flows[static_cast<std::size_t>(f)];
        if (flow.seen == stamp) continue;
        flow.seen = stamp, group.push_back(f);
        const auto& links = route_of(f).links;
        for (const auto& c : links) see_link(c.link);
      }
    std::erase_if(group, [&](std::int64_t f) {
      auto& flow = flows[static_cast<std::size_t>(f)];
      flow.left -= flow.rate * (now - flow.t), flow.t = now, flow.fixed = false;
      if (flow.left > 1e-9 * (1 + flow.rate)) return false;  // well under a byte
      const auto& links = route_of(f).links;
      for (std::size_t k = 0; k < links.size(); ++k) {
        auto& list = on[static_cast<std::size_t>(links[k].link)];
        const std::uint32_t at = slot[static_cast<std::size_t>(f) * longest + k];
        list[at] = list.back();
        slot[static_cast<std::size_t>(list[at].flow) * longest + list[at].k] = at;
        list.pop_back();
      }
      ++flow.version;
      free_flows.push_back(f);
      release.flow_done(flow.job, now);
      return true;
    });
    // Progressive filling: every flow's rate (bytes per ps) rises alike until a link is full;
    // the flows on it keep that rate; repeat with the rest. Links that fill at the same level
    // (a symmetric collective has many) are settled together.
    for (int l : group_links) capacity[static_cast<std::size_t>(l)] = 1, weight[static_cast<std::size_t>(l)] = 0;
    for (std::int64_t f : group)
      for (const auto& c : route_of(f).links) weight[static_cast<std::size_t>(c.link)] += c.ps_per_byte;
    open_links = group_links;
    std::size_t unfixed = group.size();
    while (unfixed > 0) {
      std::erase_if(open_links, [&](int l) { return weight[static_cast<std::size_t>(l)] <= 0; });
      if (open_links.empty()) break;
      double level = std::numeric_limits<double>::infinity();
      for (int l : open_links) level = std::min(level, capacity[static_cast<std::size_t>(l)] / weight[static_cast<std::size_t>(l)]);
      filled.clear();
      for (int l : open_links)
        if (capacity[static_cast<std::size_t>(l)] <= level * weight[static_cast<std::size_t>(l)] * (1 + 1e-12)) filled.push_back(l);
      level = std::max(0.0, level);
      for (int l : filled) {
        for (const OnLink& entry : on[static_cast<std::size_t>(l)]) {
          const std::int64_t f = entry.flow;
          auto& flow = flows[static_cast<std::size_t>(f)];
          if (flow.fixed) continue;
          flow.fixed = true, flow.rate = level, --unfixed;
          for (const auto& c : route_of(f).links) {
            capacity[static_cast<std::size_t>(c.link)] -= c.ps_per_byte * level;
            weight[static_cast<std::size_t>(c.link)] -= c.ps_per_byte;
          }
        }
        weight[static_cast<std::size_t>(l)] = 0;
      }
    }
    // A flow whose rate did not change keeps its end event, which keeps the heap to about one
    // live event per flow. Ends in whole picoseconds, rounded up, as the engine's.
    for (std::int64_t f : group) {
      auto& flow = flows[static_cast<std::size_t>(f)];
      if (flow.rate == flow.scheduled_rate) continue;
      flow.scheduled_rate = flow.rate;
      const double when = flow.rate > 0 ? now + static_cast<double>(ceil_ps(flow.left / flow.rate)) : now;
      events.push({when, true, f, 0, ++flow.version});
    }
  };
  release.release(start_flow);
  // Events of one instant (a symmetric collective's flows start and end together) share a refill.
  std::vector<int> seeds;
  while (!events.empty()) {
    const double now = events.top().t;
    seeds.clear();
    while (!events.empty() && events.top().t <= now) {
      const Event e = events.top();
      events.pop();
      std::int64_t f = e.id;
      if (e.is_end) {
        auto& flow = flows[static_cast<std::size_t>(f)];
        if (e.version != flow.version) continue;
        flow.left = 0;  // this flow's end, whatever rounding says
      } else {
        if (free_flows.empty()) {
          free_flows.push_back(static_cast<std::int64_t>(flows.size()));
          flows.emplace_back();
          slot.resize(flows.size() * longest);
        }
        f = free_flows.back();
        free_flows.pop_back();
        const auto& job = jobs[static_cast<std::size_t>(e.id)];
        const auto flows_of_job = static_cast<double>(graph.routes[static_cast<std::size_t>(job.routes)].size()) * release.flows_per_route(job);
        auto& flow = flows[static_cast<std::size_t>(f)];
        flow.job = e.id, flow.route = e.route;
        flow.left = job.bytes / flows_of_job, flow.t = now, flow.rate = 0, flow.scheduled_rate = -1, flow.fixed = false;
        const auto& links = route_of(f).links;
        for (std::size_t k = 0; k < links.size(); ++k) {
          auto& list = on[static_cast<std::size_t>(links[k].link)];
          slot[static_cast<std::size_t>(f) * longest + k] = static_cast<std::uint32_t>(list.size());
          list.push_back({f, static_cast<std::uint32_t>(k)});
        }
      }
      for (const auto& c : route_of(f).links) seeds.push_back(c.link);
    }
    if (!seeds.empty()) refill(seeds, now);
    release.release(start_flow);
  }
  return std::move(release.finish_times());
}

}  // namespace stepsim::core
