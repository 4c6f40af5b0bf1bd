// Routes between two servers composed from three searches, each shared by many pairs: inside the
// source server from the source GPU, over the switches outside servers from the switch the route
// leaves by, and inside the destination server from the vertex it enters by. A route found by one
// search over both servers and the switches (router.hpp) leaves its source server once, crosses
// switches only, and enters its destination server once, unless it passes through one of the two
// servers between two switches. It never does so where every such detour through a server costs
// strictly more than the cheapest way between those two switches over switches alone: then
// replacing the detour would give a cheaper route. That is checked per server, once; with it, and
// with no link joining two servers directly, the shortest routes of the one search are exactly
// the cheapest concatenations (source part, exit link, switch part, entry link, destination
// part), and composing them is exact. Without P2P the searches run over layered vertices
// (router_graph.hpp) that this does not model, so such clusters are always searched whole.
#include <algorithm>
#include <limits>
#include <optional>

#include "hardware/router_graph.hpp"

namespace stepsim::hw::routing {

void Graph::index_crossings(RouteSearch how) {
  int servers = 0;
  for (const int s : server_of_vertex) servers = std::max(servers, s + 1);
  exits.assign(static_cast<std::size_t>(servers), {});
  entries.assign(static_cast<std::size_t>(servers), {});
  detours_cost_more.assign(static_cast<std::size_t>(servers), -1);
  composable = how == RouteSearch::composed && layers == 1;
  for (std::size_t u = 0; u + 1 < first_out.size(); ++u)
    for (std::size_t k = first_out[u]; k < first_out[u + 1]; ++k) {
      const OutEdge& e = out_edges[k];
      const int from = server_of_vertex[u];
      if (from == e.server) continue;
      if (from >= 0 && e.server >= 0) composable = false;  // two servers joined directly
      if (from >= 0) exits[static_cast<std::size_t>(from)].push_back({static_cast<Vertex>(u), e.to, e.link, e.weight});
      else entries[static_cast<std::size_t>(e.server)].push_back({e.to, static_cast<Vertex>(u), e.link, e.weight});
    }
}

const Graph::Across& Graph::across(Vertex from_switch, Vertex to_switch) {
  const auto [it, added] = across_.try_emplace(static_cast<std::uint64_t>(from_switch) << 32 | static_cast<std::uint32_t>(to_switch));
  Across& a = it->second;
  if (!added) return a;
  // The switch's DAG comes from the recent ones: the pairs of one server's switches are asked
  // together.
  const Dag& fabric = dag_of(from_switch, SearchSpace::of(-1));
  const auto cost = fabric.distance(to_switch);
  if (!cost) return a;
  a.reachable = true;
  a.cost = *cost;
  Route reversed;
  collect_routes(fabric, to_switch, reversed, a.routes);
  return a;
}

const Dag& Graph::inside_from(Vertex entry, int server) {
  const auto [it, added] = entry_dags.try_emplace(entry);
  if (added) search(entry, SearchSpace::of(server), it->second);
  return it->second;
}

// Every way into `server` from one switch and out to another must cost more than the switches'
// own cheapest way between the two (none: it does not).
bool Graph::detour_costs_more(int server) {
  signed char& known = detours_cost_more[static_cast<std::size_t>(server)];
  if (known >= 0) return known == 1;
  known = 1;
  for (const Crossing& in : entries[static_cast<std::size_t>(server)]) {
    const Dag& inside = inside_from(in.inside, server);
    for (const Crossing& out : exits[static_cast<std::size_t>(server)]) {
      if (out.outside == in.outside) continue;  // a loop back to the same switch: never shortest
      const auto through = inside.distance(out.inside);
      if (!through) continue;
      const Across& around = across(in.outside, out.outside);
      if (!around.reachable || around.cost >= in.weight + *through + out.weight) known = 0;
    }
    if (known == 0) break;
  }
  return known == 1;
}

bool Graph::compose(Vertex source, int from_server, Vertex target, int to_server, std::vector<Route>& out) {
  if (!composable || !detour_costs_more(from_server) || !detour_costs_more(to_server)) return false;
  const auto& ways_out = exits[static_cast<std::size_t>(from_server)];
  // dag_of's result lives only until its next call, which across() may make: read what is needed
  // now, and ask for the DAG again to list the routes. The other DAGs live in node-based maps.
  std::vector<std::optional<std::int64_t>> to_exit;
  {
    const Dag& leaving = dag_of(source, SearchSpace::of(from_server));
    for (const Crossing& exit : ways_out) to_exit.push_back(leaving.distance(exit.inside));
  }
  struct Way {
    const Crossing* exit;
    const Across* between;
    const Crossing* entry;
  };
  std::vector<Way> cheapest;
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  for (std::size_t k = 0; k < ways_out.size(); ++k) {
    if (!to_exit[k]) continue;
    const Crossing& exit = ways_out[k];
    for (const Crossing& entry : entries[static_cast<std::size_t>(to_server)]) {
      const Across& between = across(exit.outside, entry.outside);
      const auto to_target = inside_from(entry.inside, to_server).distance(target);
      if (!between.reachable || !to_target) continue;
      const std::int64_t cost = *to_exit[k] + exit.weight + between.cost + entry.weight + *to_target;
      if (cost < best) best = cost, cheapest.clear();
      if (cost == best) cheapest.push_back({&exit, &between, &entry});
    }
  }
  if (cheapest.empty()) return false;
  const Dag& leaving = dag_of(source, SearchSpace::of(from_server));
  std::vector<Route> found, heads, tails;
  Route reversed;
  for (const Way& way : cheapest) {
    heads.clear(), tails.clear();
    collect_routes(leaving, way.exit->inside, reversed, heads);
    collect_routes(inside_from(way.entry->inside, to_server), target, reversed, tails);
    for (const Route& head : heads)
      for (const Route& middle : way.between->routes)
        for (const Route& tail : tails) {
          Route& r = found.emplace_back(head);
          r.push_back(way.exit->link);
          r.insert(r.end(), middle.begin(), middle.end());
          r.push_back(way.entry->link);
          r.insert(r.end(), tail.begin(), tail.end());
        }
  }
  // The order one search's DAG gives (collect_routes): by links from the destination back.
  std::sort(found.begin(), found.end(), [](const Route& a, const Route& b) {
    return std::lexicographical_compare(a.rbegin(), a.rend(), b.rbegin(), b.rend());
  });
  out = std::move(found);
  ++composed_pairs;
  return true;
}

}  // namespace stepsim::hw::routing
