#include "sim/comm/plan_walk.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "sim/comm/flow_walk.hpp"
#include "sim/comm/folded_ring.hpp"
#include "sim/comm/lattice_walk.hpp"
#include "sim/comm/network.hpp"

namespace stepsim::comm {

WalkRoute walk_route(const hw::Cluster& cluster, const hw::Route& route, const PlannedTransfer& transfer) {
  WalkRoute out{.latency_ps = static_cast<double>(transfer_latency_ps(cluster, route, transfer))};
  for (int l : route) out.links.push_back({l, 1e12 / effective_bytes_per_s(cluster.links[static_cast<std::size_t>(l)], cluster.comm)});
  return out;
}

std::optional<core::Duration> walk_step_plan(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan,
                                             const WalkBudget& budget, const WalkBudget& fallback) {
  const hw::Cluster& cluster = router.cluster();
  WalkGraph g;
  // The routes of each (src, dst, hop, step latency): a pipelined plan repeats them per slice.
  std::map<std::tuple<int, int, Hop, std::int64_t>, int> kinds;
  std::vector<std::int64_t> successors(plan.transfers.size() + 1, 0);
  for (const auto& t : plan.transfers) {
    if (!t.ring.empty()) return std::nullopt;  // a folded ring is folded_ring.hpp's
    for (int a : t.after) ++successors[static_cast<std::size_t>(a) + 1];
    WalkJob job{.bytes = static_cast<double>(t.bytes) * t.wire_factor};
    if (!t.is_join) {
      const auto key = std::tuple{t.src, t.dst, t.hop, t.step_latency_ps};
      auto it = kinds.find(key);
      if (it == kinds.end()) {
        WalkRoutes kind;
        for (const auto& r : planned_routes(router, gpus, t)) kind.push_back(walk_route(cluster, r, t));
        it = kinds.emplace(key, static_cast<int>(g.routes.size())).first;
        g.routes.push_back(std::move(kind));
      }
      job.routes = it->second;
    }
    g.jobs.push_back(job);
  }
  // Successors in CSR form, from each transfer's `after`.
  for (std::size_t i = 1; i < successors.size(); ++i) successors[i] += successors[i - 1];
  g.next_begin = successors;
  g.next.resize(static_cast<std::size_t>(successors.back()));
  for (std::size_t i = 0; i < plan.transfers.size(); ++i)
    for (int a : plan.transfers[i].after) g.next[static_cast<std::size_t>(successors[static_cast<std::size_t>(a)]++)] = static_cast<std::int64_t>(i);

  drop_implied_links(g.routes, cluster.links.size());
  auto finish = walk_max_min(g, cluster.links.size(), budget);
  if (!finish) finish = walk_on_flow_network(g, cluster.links.size(), fallback);
  if (!finish) return std::nullopt;
  double end = 0;
  for (const auto& done : plan.rank_done)
    for (int t : done) end = std::max(end, (*finish)[static_cast<std::size_t>(t)]);
  return core::picoseconds(plan.launch_latency_ps + static_cast<std::int64_t>(std::llround(end)));
}

}  // namespace stepsim::comm
