#include "sim/comm/folded_ring.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <numeric>

#include "sim/comm/lattice_rounds.hpp"
#include "sim/comm/lattice_symmetry.hpp"
#include "sim/comm/network.hpp"
#include "sim/core/transfer_dag.hpp"

namespace stepsim::comm {
namespace {

HopRoutes hop_routes_of(const hw::Router& router, const std::vector<int>& gpus, const PlannedTransfer& t) {
  const std::size_t n = t.ring.size();
  HopRoutes hops;
  hops.reserve(n);
  for (std::size_t p = 0; p < n; ++p)
    hops.push_back(&router.routes(gpus[static_cast<std::size_t>(t.ring[p])], gpus[static_cast<std::size_t>(t.ring[(p + 1) % n])]));
  return hops;
}

// Dependency depth, as estimate() counts it (a join adds none): folded rings of one depth run at once.
std::vector<int> levels_of(const StepPlan& plan) {
  std::vector<int> level;
  level.reserve(plan.transfers.size());
  for (const auto& t : plan.transfers) {
    int depth = 0;
    for (int a : t.after) depth = std::max(depth, level[static_cast<std::size_t>(a)] + (t.is_join ? 0 : 1));
    level.push_back(depth);
  }
  return level;
}

double step_bytes(const PlannedTransfer& t) {
  return static_cast<double>(t.bytes) * t.wire_factor / static_cast<double>(std::max(1, t.latency_steps));
}

double ps_per_byte(const hw::Cluster& cluster, int link) {
  return 1e12 / effective_bytes_per_s(cluster.links[static_cast<std::size_t>(link)], cluster.comm);
}

LatticeRing lattice_ring(const hw::Cluster& cluster, const PlannedTransfer& ring, const HopRoutes& hops,
                         const std::vector<double>& link_step_bytes) {
  const PlannedTransfer one_step{.step_latency_ps = ring.step_latency_ps, .network_step_latency_ps = ring.network_step_latency_ps};
  LatticeRing out{.steps = ring.latency_steps};
  std::vector<std::pair<int, double>> crossed;  // (link, this hop's work per step on it), as crossed
  for (const auto* hop : hops) {
    const auto& routes = *hop;
    double d = 0, busy = 0;
    crossed.clear();
    for (const auto& r : routes) {
      d = std::max(d, static_cast<double>(transfer_latency_ps(cluster, r, one_step)));
      for (int l : r) {
        crossed.emplace_back(l, step_bytes(ring) / static_cast<double>(routes.size()) * ps_per_byte(cluster, l));
        busy = std::max(busy, link_step_bytes[static_cast<std::size_t>(l)] * ps_per_byte(cluster, l));
      }
    }
    // Per link in link order, its work summed in the order crossed (equal-cost routes split the bytes).
    std::stable_sort(crossed.begin(), crossed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Crossing> bottlenecks;
    for (std::size_t k = 0; k < crossed.size();) {
      const int l = crossed[k].first;
      double work = 0;
      for (; k < crossed.size() && crossed[k].first == l; ++k) work += crossed[k].second;
      if (link_step_bytes[static_cast<std::size_t>(l)] * ps_per_byte(cluster, l) >= busy * (1 - 1e-9)) bottlenecks.push_back({l, work});
    }
    out.d.push_back(d), out.crossings.push_back(std::move(bottlenecks)), out.busy.push_back(busy);
  }
  return out;
}

// The lattice of every folded ring of the plan as one transfer DAG: ring i's step s of hop p is a
// job after step s−1 of hop p−1, its step 0 of hop p after what member p waits for (ring_entry);
// a member's join after the ring's last step into that member. Hops beyond the plan's rotation
// period stand for themselves in hops below it (lattice_symmetry.hpp). Per folded ring, when its
// last step is in (other transfers: 0).
std::vector<double> plan_lattice_ends(const StepPlan& plan, const LatticeHops& lattice) {
  core::TransferDag g;
  std::vector<std::pair<std::int64_t, std::int64_t>> edges;  // (before, after)
  std::vector<std::int64_t> end_job(plan.transfers.size()), first_job(plan.transfers.size(), -1);
  auto add_job = [&g](core::DagJob job) { return g.add_job(job); };
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    if (t.ring.empty()) {  // a join
      end_job[i] = add_job({});
      if (t.ring_member >= 0) {  // member p is done when the ring's last step reaches it, from p−1
        const auto& f = plan.transfers[static_cast<std::size_t>(t.after.front())];
        const auto n = static_cast<std::int64_t>(f.ring.size());
        const auto m = static_cast<std::int64_t>(lattice.routes[static_cast<std::size_t>(t.after.front())].size());
        edges.emplace_back(first_job[static_cast<std::size_t>(t.after.front())] + (f.latency_steps - 1) * m +
                               (t.ring_member + n - 1) % n % m,
                           end_job[i]);
      } else {
        for (int a : t.after) edges.emplace_back(end_job[static_cast<std::size_t>(a)], end_job[i]);
      }
      continue;
    }
    const auto kind0 = static_cast<int>(g.routes.size());
    const auto m = static_cast<std::int64_t>(lattice.routes[i].size());  // hops solved
    for (const auto& kind : lattice.routes[i]) g.routes.push_back(kind);
    first_job[i] = static_cast<std::int64_t>(g.jobs.size());
    for (std::int64_t s = 0; s < t.latency_steps; ++s)
      for (std::int64_t p = 0; p < m; ++p) {
        const std::int64_t job = add_job({.routes = kind0 + static_cast<int>(p), .bytes = step_bytes(t), .slices = t.slices});
        if (s > 0) edges.emplace_back(job - m - p + (p + m - 1) % m, job);
      }
    // Every step member p sends waits for p's own data, as step mode's sends do (ring_phase.cpp).
    for (std::int64_t p = 0; p < m; ++p) {
      const auto& entry = t.ring_entry.empty() ? t.after : t.ring_entry[static_cast<std::size_t>(p)];
      if (entry.empty()) continue;
      const std::int64_t ready = add_job({});
      for (int a : entry) edges.emplace_back(end_job[static_cast<std::size_t>(a)], ready);
      for (std::int64_t s = 0; s < t.latency_steps; ++s) edges.emplace_back(ready, first_job[i] + s * m + p);
    }
    end_job[i] = add_job({});  // the whole ring's end: after every last step
    for (std::int64_t p = 0; p < m; ++p) edges.emplace_back(first_job[i] + (t.latency_steps - 1) * m + p, end_job[i]);
  }
  g.set_edges(edges);
  core::drop_implied_links(g.routes, lattice.link_count);
  const auto finish = core::finish_times(g, dag_solver(true));
  std::vector<double> out(plan.transfers.size(), 0.0);
  for (std::size_t i = 0; i < plan.transfers.size(); ++i)
    if (!plan.transfers[i].ring.empty()) out[i] = finish[static_cast<std::size_t>(end_job[i])];
  return out;
}

}  // namespace

std::vector<hw::Route> planned_routes(const hw::Router& router, const std::vector<int>& gpus, const PlannedTransfer& t) {
  if (t.is_join) return {};
  if (t.ring.empty())
    return hop_routes(router, gpus[static_cast<std::size_t>(t.src)], gpus[static_cast<std::size_t>(t.dst)], t.hop);
  const HopRoutes hops = hop_routes_of(router, gpus, t);
  std::size_t subrings = 1;
  for (const auto* h : hops) subrings = std::max(subrings, h->size());
  std::vector<hw::Route> out(subrings);
  for (std::size_t k = 0; k < subrings; ++k)
    for (const auto* h : hops) out[k].insert(out[k].end(), (*h)[k % h->size()].begin(), (*h)[k % h->size()].end());
  return out;
}

std::vector<std::optional<std::int64_t>> folded_ring_latencies(const hw::Router& router, const std::vector<int>& gpus,
                                                               const StepPlan& plan, std::optional<IdleTiming> method) {
  return fold_rings(router, gpus, plan, method).latency_ps;
}

FoldedTiming fold_rings(const hw::Router& router, const std::vector<int>& gpus, const StepPlan& plan,
                        std::optional<IdleTiming> method) {
  FoldedTiming timing{.latency_ps = std::vector<std::optional<std::int64_t>>(plan.transfers.size())};
  auto& out = timing.latency_ps;
  // Step-mode plans (every collective outside coarse mode) have no folded ring: nothing to do.
  if (std::none_of(plan.transfers.begin(), plan.transfers.end(), [](const auto& t) { return !t.ring.empty(); }))
    return timing;
  const hw::Cluster& cluster = router.cluster();
  const auto level = levels_of(plan);
  std::map<int, std::vector<std::size_t>> rings_at;  // level -> its folded rings, which run at once
  std::vector<HopRoutes> hops(plan.transfers.size());
  bool only_rings = true;  // and joins: what coarse ring and hierarchical plans hold
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    if (t.ring.empty()) {
      only_rings = only_rings && t.is_join;
      continue;
    }
    hops[i] = hop_routes_of(router, gpus, t);
    rings_at[level[i]].push_back(i);
  }
  // The whole plan's lattice as one DAG where idle_timing() allows its flows, over one period of
  // its rotation symmetry (counted as core::flow_count would, without building it: S steps of
  // every hop's routes, in slices beyond those common to every ring): each member of a phase
  // starts when its own part of the phase before is in, as in step mode (hierarchical's phases
  // overlap that way). Else round by round.
  std::optional<LatticeHops> lattice;
  if (only_rings && method != IdleTiming::floor) lattice = lattice_hops(cluster, plan, hops);
  int common_slices = 0;
  for (const auto& t : plan.transfers)
    if (!t.ring.empty()) common_slices = std::gcd(common_slices, t.slices);
  std::int64_t lattice_flows = 0;
  std::size_t ranks = gpus.size();  // of the lattice solved: the group's, over the symmetry's order
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& kinds = lattice ? lattice->routes[i] : std::vector<core::DagRoutes>{};
    const std::size_t count = lattice ? kinds.size() : hops[i].size();
    if (count > 0 && count < hops[i].size()) ranks = std::max<std::size_t>(1, gpus.size() * count / hops[i].size());
    for (std::size_t p = 0; p < count; ++p)
      lattice_flows += std::int64_t{plan.transfers[i].latency_steps} *
                       static_cast<std::int64_t>(lattice ? kinds[p].size() : hops[i][p]->size()) *
                       (plan.transfers[i].slices / std::max(common_slices, 1));
  }
  const IdleTiming how = method ? *method : idle_timing(lattice_flows, ranks, true);
  std::optional<std::vector<double>> whole_end;  // per folded ring: when its last step is in
  if (lattice && how == IdleTiming::dag) {
    whole_end = plan_lattice_ends(plan, *lattice);
    timing.lattice_end_ps = std::llround(*std::max_element(whole_end->begin(), whole_end->end()));
  }
  std::vector<double> engine_end(plan.transfers.size(), 0.0);  // idle, from the collective's start
  for (const auto& [lvl, members] : rings_at) {
    std::vector<double> link_step_bytes(cluster.links.size(), 0.0);
    for (std::size_t i : members)
      for (const auto* routes : hops[i])
        for (const auto& r : *routes)
          for (int l : r) link_step_bytes[static_cast<std::size_t>(l)] += step_bytes(plan.transfers[i]) / static_cast<double>(routes->size());
    std::vector<LatticeRing> rings;
    for (std::size_t i : members) rings.push_back(lattice_ring(cluster, plan.transfers[i], hops[i], link_step_bytes));
    // Per ring: when its folded flow starts in the engine (all it waits for is in) and, from the
    // lattice, when it ends: from the whole plan's, or from this level's alone started together.
    std::vector<double> start, end;
    for (std::size_t i : members) {
      double at = 0;
      for (int a : plan.transfers[i].after) at = std::max(at, engine_end[static_cast<std::size_t>(a)]);
      start.push_back(at);
    }
    if (whole_end) {
      for (std::size_t i : members) end.push_back((*whole_end)[i]);
    } else if (how == IdleTiming::floor) {
      for (std::size_t k = 0; k < members.size(); ++k)
        end.push_back(start[k] + rings[k].steps * *std::min_element(rings[k].d.begin(), rings[k].d.end()));
    } else {
      keep_one_private_crossing(rings, cluster.links.size());
      const auto lattice = lattice_times_by_step(rings, cluster.links.size());
      for (std::size_t k = 0; k < members.size(); ++k) end.push_back(start[k] + lattice[k]);
    }
    // Every folded flow of the level ends at the slowest ring's end when idle. Were each to end
    // at its own, the rings whose lattice finished early would leave their links to the others
    // in the engine and pull the collective's end forward to about the earliest ring's (as on
    // a100-pcie 2x8, whose rings' lattices differ).
    const double slowest = *std::max_element(end.begin(), end.end());
    for (std::size_t k = 0; k < members.size(); ++k) {
      // The folded flow moves S steps at the ring's rate after this latency.
      const double bytes_time = rings[k].steps * *std::max_element(rings[k].busy.begin(), rings[k].busy.end());
      out[members[k]] = std::llround(std::max(0.0, slowest - start[k] - bytes_time));
      // A floor's earlier levels end early, so a ring after them would start early and wait longer.
      if (how == IdleTiming::floor && !plan.transfers[members[k]].after.empty()) out[members[k]] = 0;
      engine_end[members[k]] = start[k] + static_cast<double>(*out[members[k]]) + bytes_time;
    }
    // Joins after this level's rings end when the engine's flows do.
    for (std::size_t i = members.back() + 1; i < plan.transfers.size(); ++i)
      if (plan.transfers[i].is_join)
        for (int a : plan.transfers[i].after) engine_end[i] = std::max(engine_end[i], engine_end[static_cast<std::size_t>(a)]);
  }
  return timing;
}

}  // namespace stepsim::comm
