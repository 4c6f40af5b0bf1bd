#include "sim/comm/plan_dag.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "sim/comm/folded_ring.hpp"
#include "sim/comm/network.hpp"
#include "sim/comm/timing_method.hpp"

namespace stepsim::comm {

core::DagRoute dag_route(const hw::Cluster& cluster, const hw::Route& route, const PlannedTransfer& transfer) {
  core::DagRoute out{.latency_ps = static_cast<double>(transfer_latency_ps(cluster, route, transfer))};
  for (int l : route) out.links.push_back({l, 1e12 / effective_bytes_per_s(cluster.links[static_cast<std::size_t>(l)], cluster.comm)});
  return out;
}

core::TransferDag step_plan_dag(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan) {
  require_whole(plan, "step_plan_dag");
  const hw::Cluster& cluster = router.cluster();
  core::TransferDag g;
  // The routes of each (src, dst, hop, step latency): a pipelined plan repeats them per slice.
  std::map<std::tuple<int, int, Hop, std::int64_t>, int> kinds;
  std::vector<std::pair<std::int64_t, std::int64_t>> edges;
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    if (!t.ring.empty()) throw std::invalid_argument("step_plan_dag: a folded ring is timed by its lattice (folded_ring.hpp)");
    for (int a : t.after) edges.emplace_back(a, static_cast<std::int64_t>(i));
    core::DagJob job{.bytes = static_cast<double>(t.bytes) * t.wire_factor};
    if (!t.is_join) {
      const auto key = std::tuple{t.src, t.dst, t.hop, t.step_latency_ps};
      auto it = kinds.find(key);
      if (it == kinds.end()) {
        core::DagRoutes kind;
        for (const auto& r : planned_routes(router, gpus, t)) kind.push_back(dag_route(cluster, r, t));
        it = kinds.emplace(key, static_cast<int>(g.routes.size())).first;
        g.routes.push_back(std::move(kind));
      }
      job.routes = it->second;
    }
    g.add_job(job);
  }
  g.set_edges(edges);
  core::drop_implied_links(g.routes, cluster.links.size());
  return g;
}

std::optional<core::Duration> step_plan_time(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan) {
  // Every transfer between two GPUs is at least one flow: a plan past the bound by that count
  // alone is not built.
  const auto moving = std::count_if(plan.transfers.begin(), plan.transfers.end(),
                                    [](const PlannedTransfer& t) { return !t.is_join && t.src != t.dst; });
  if (idle_timing(moving * plan.copies, gpus.size(), false) != IdleTiming::dag) return std::nullopt;
  if (plan.copies > 1) return step_plan_time(router, gpus, expanded(plan));
  const core::TransferDag g = step_plan_dag(router, gpus, plan);
  if (idle_timing(core::flow_count(g), gpus.size(), false) != IdleTiming::dag) return std::nullopt;
  const auto finish = core::finish_times(g, dag_solver(false));
  double end = 0;
  for (const auto& done : plan.rank_done)
    for (int t : done) end = std::max(end, finish[static_cast<std::size_t>(t)]);
  return core::picoseconds(plan.launch_latency_ps + static_cast<std::int64_t>(std::llround(end)));
}

}  // namespace stepsim::comm
