#include "sim/comm/lattice_symmetry.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "sim/comm/plan_dag.hpp"

namespace stepsim::comm {
namespace {

// One crossing of a link, as the rotation by m sees it: ring, hop modulo m, route.
using Use = std::tuple<std::size_t, std::size_t, std::size_t>;

// The routes reduced by a rotation of m hops, or nullopt where it does not map the lattice onto
// itself. `hops.routes[i][p]`: ring i's hop p's routes over cluster links.
std::optional<LatticeHops> rotated_by(const LatticeHops& hops, std::size_t m) {
  const auto& full = hops.routes;
  // Each hop like the one m before it: as many routes, with the same start latencies.
  for (const auto& ring : full)
    for (std::size_t p = m; p < ring.size(); ++p) {
      const auto& a = ring[p];
      const auto& b = ring[p % m];
      if (a.size() != b.size()) return std::nullopt;
      for (std::size_t r = 0; r < a.size(); ++r)
        if (a[r].latency_ps != b[r].latency_ps || a[r].links.size() != b[r].links.size()) return std::nullopt;
    }
  // Each link's crossings, turned back by multiples of m: links with the same ones form a class.
  // Indexed by link, numbered in link order.
  std::vector<std::vector<Use>> uses(hops.link_count);
  std::vector<double> ps_per_byte(hops.link_count);
  for (std::size_t i = 0; i < full.size(); ++i)
    for (std::size_t p = 0; p < full[i].size(); ++p)
      for (std::size_t r = 0; r < full[i][p].size(); ++r)
        for (const auto& c : full[i][p][r].links) {
          uses[static_cast<std::size_t>(c.link)].emplace_back(i, p % m, r);
          ps_per_byte[static_cast<std::size_t>(c.link)] = c.ps_per_byte;
        }
  std::map<std::pair<double, std::vector<Use>>, int> class_of_uses;
  std::vector<int> class_of_link(hops.link_count, -1);
  std::vector<const std::vector<Use>*> uses_of_class;
  std::vector<double> class_ps_per_byte;
  for (std::size_t link = 0; link < uses.size(); ++link) {
    auto& u = uses[link];
    if (u.empty()) continue;
    std::sort(u.begin(), u.end());
    const auto [it, fresh] =
        class_of_uses.try_emplace({ps_per_byte[link], std::move(u)}, static_cast<int>(uses_of_class.size()));
    if (fresh) uses_of_class.push_back(&it->first.second), class_ps_per_byte.push_back(ps_per_byte[link]);
    class_of_link[link] = it->second;
  }
  // Each route crosses the same classes as its copy m hops before.
  auto classes = [&](const core::DagRoute& route) {
    std::vector<int> out;
    for (const auto& c : route.links) out.push_back(class_of_link[static_cast<std::size_t>(c.link)]);
    std::sort(out.begin(), out.end());
    return out;
  };
  for (const auto& ring : full)
    for (std::size_t p = m; p < ring.size(); ++p)
      for (std::size_t r = 0; r < ring[p].size(); ++r)
        if (classes(ring[p][r]) != classes(ring[p % m][r])) return std::nullopt;
  LatticeHops out{.routes = std::vector<std::vector<core::DagRoutes>>(full.size()), .link_count = uses_of_class.size()};
  for (std::size_t i = 0; i < full.size(); ++i) {
    if (full[i].empty()) continue;
    for (std::size_t p = 0; p < m; ++p) {
      core::DagRoutes kind;
      for (std::size_t r = 0; r < full[i][p].size(); ++r) {
        core::DagRoute route{.latency_ps = full[i][p][r].latency_ps};
        auto crossed = classes(full[i][p][r]);
        crossed.erase(std::unique(crossed.begin(), crossed.end()), crossed.end());
        // A class's link carries this route's turned copies this many times: its load per unit
        // of this route's rate.
        for (int c : crossed) {
          const auto& u = *uses_of_class[static_cast<std::size_t>(c)];
          const auto times = std::count(u.begin(), u.end(), Use{i, p, r});
          for (std::int64_t k = 0; k < times; ++k) route.links.push_back({c, class_ps_per_byte[static_cast<std::size_t>(c)]});
        }
        kind.push_back(std::move(route));
      }
      out.routes[i].push_back(std::move(kind));
    }
  }
  return out;
}

}  // namespace

LatticeHops lattice_hops(const hw::Cluster& cluster, const StepPlan& plan, const std::vector<HopRoutes>& hops) {
  LatticeHops full{.routes = std::vector<std::vector<core::DagRoutes>>(plan.transfers.size()), .link_count = cluster.links.size()};
  std::optional<std::size_t> n;
  bool same_length = true, own_starts = false;
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    if (t.ring.empty()) continue;
    const PlannedTransfer one_step{.step_latency_ps = t.step_latency_ps, .network_step_latency_ps = t.network_step_latency_ps};
    for (const auto* routes : hops[i]) {
      core::DagRoutes kind;
      for (const auto& r : *routes) kind.push_back(dag_route(cluster, r, one_step));
      full.routes[i].push_back(std::move(kind));
    }
    same_length = same_length && (!n || *n == t.ring.size());
    n = t.ring.size();
    own_starts = own_starts || std::any_of(t.ring_entry.begin(), t.ring_entry.end(),
                                           [&](const std::vector<int>& e) { return e != t.ring_entry.front(); });
  }
  if (!n || !same_length || own_starts) return full;
  for (std::size_t m = 1; m < *n; ++m)
    if (*n % m == 0)
      if (auto reduced = rotated_by(full, m)) return std::move(*reduced);
  return full;
}

}  // namespace stepsim::comm
