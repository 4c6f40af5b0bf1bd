#include "hardware/router.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include "hardware/router_graph.hpp"
#include "sim/config/resident_memory.hpp"

namespace stepsim::hw {
namespace routing {
namespace {

// A non-NVLink hop outweighs any number of NVLink hops: routes minimise (non-NVLink, all) links.
constexpr std::int64_t kNonNvlinkCost = 1 << 20;
constexpr std::int64_t kUnreached = std::numeric_limits<std::int64_t>::max();

using Edge = boost::graph_traits<BoostGraph>::edge_descriptor;

}  // namespace

std::pair<const Pred*, const Pred*> Dag::into(Vertex v) const {
  const auto it = std::lower_bound(reached.begin(), reached.end(), std::pair<Vertex, std::size_t>{v, 0});
  if (it == reached.end() || it->first != v) return {nullptr, nullptr};
  const std::size_t end = it + 1 == reached.end() ? preds.size() : (it + 1)->second;
  return {preds.data() + it->second, preds.data() + end};
}

std::optional<std::int64_t> Dag::distance(Vertex v) const {
  if (v == source) return 0;
  const auto it = std::lower_bound(reached.begin(), reached.end(), std::pair<Vertex, std::size_t>{v, 0});
  if (it == reached.end() || it->first != v) return std::nullopt;
  return distance_of[static_cast<std::size_t>(it - reached.begin())];
}

void collect_routes(const Dag& dag, Vertex at, Route& reversed, std::vector<Route>& out) {
  if (at == dag.source) {
    out.emplace_back(reversed.rbegin(), reversed.rend());
    return;
  }
  const auto [first, last] = dag.into(at);
  for (const Pred* p = first; p != last; ++p) {
    reversed.push_back(p->link);
    collect_routes(dag, p->from, reversed, out);
    reversed.pop_back();
  }
}

Graph::Graph(const Cluster& cluster, RouteSearch how) {
  nodes = static_cast<int>(cluster.nodes.size());
  block = nodes + cluster.gpu_count();
  layers = cluster.gpu_p2p ? 1 : 2;
  gpu_of_node.assign(cluster.nodes.size(), -1);
  for (int gpu = 0; gpu < cluster.gpu_count(); ++gpu) gpu_of_node[static_cast<std::size_t>(cluster.gpu_nodes[static_cast<std::size_t>(gpu)])] = gpu;
  g = BoostGraph(static_cast<std::size_t>(block * layers));
  server_of_vertex.resize(static_cast<std::size_t>(block * layers));
  for (int v = 0; v < block * layers; ++v) {
    const int k = v % block;
    server_of_vertex[static_cast<std::size_t>(v)] =
        cluster.nodes[static_cast<std::size_t>(k < nodes ? k : cluster.gpu_nodes[static_cast<std::size_t>(k - nodes)])].server;
  }
  std::vector<bool> has_memory(cluster.nodes.size(), false);  // CPUs with a host-memory node
  for (const Link& link : cluster.links) has_memory[link.from] = has_memory[link.from] || link.kind == LinkKind::memory;
  for (int l = 0; l < static_cast<int>(cluster.links.size()); ++l) {
    const Link& link = cluster.links[static_cast<std::size_t>(l)];
    const NodeKind to = cluster.nodes[static_cast<std::size_t>(link.to)].kind;
    // Entering a CPU (host bridge) counts as two hops: NCCL ranks host-bridge paths below
    // switch and network paths, so cross-rail traffic takes the spines, not a peer's PCIe tree.
    const std::int64_t weight = link.kind == LinkKind::nvlink ? 1 : to == NodeKind::cpu ? 2 * kNonNvlinkCost : kNonNvlinkCost;
    // Staging happens in host memory: in the memory node where the CPU has one (the route goes
    // cpu -> mem -> cpu, crossing the memory link both ways), else in the CPU itself.
    const bool delivers = to == NodeKind::memory || (to == NodeKind::cpu && !has_memory[static_cast<std::size_t>(link.to)]) ||
                          (to == NodeKind::gpu && link.kind == LinkKind::nvlink);
    for (int layer = 0; layer < layers; ++layer) {
      const int next = layers == 2 && delivers ? 1 : layer;
      const bool network = link.kind == LinkKind::infiniband || link.kind == LinkKind::ethernet;
      boost::add_edge(out(link.from, layer), in(link.to, next), EdgeData{l, weight, network}, g);
    }
  }
  index_out_edges();
  index_crossings(how);
}

void Graph::index_out_edges() {
  const std::size_t vertices = boost::num_vertices(g);
  first_out.assign(vertices + 1, 0);
  out_edges.clear();
  for (std::size_t u = 0; u < vertices; ++u) {
    first_out[u] = out_edges.size();
    for (const Edge& e : boost::make_iterator_range(boost::out_edges(u, g))) {
      const Vertex v = boost::target(e, g);
      out_edges.push_back({server_of_vertex[v], v, g[e].link, g[e].weight, g[e].network});
    }
    std::stable_sort(out_edges.begin() + static_cast<std::ptrdiff_t>(first_out[u]), out_edges.end(),
                     [](const OutEdge& a, const OutEdge& b) { return a.server < b.server; });
  }
  first_out[vertices] = out_edges.size();
}

const Dag& Graph::dag_of(Vertex source, SearchSpace space) {
  ++clock;
  // Switches' DAGs in a list of their own, so that a run of GPU sources does not push them out.
  std::vector<RecentDag>& recent = space == SearchSpace::of(-1) ? recent_switch_dags : recent_dags;
  for (RecentDag& r : recent)
    if (r.source == source && r.space == space) {
      r.used = clock;
      return r.dag;
    }
  RecentDag* slot = nullptr;
  if (recent.size() < kRecentDags) {
    slot = &recent.emplace_back();
  } else {
    slot = &*std::min_element(recent.begin(), recent.end(),
                              [](const RecentDag& a, const RecentDag& b) { return a.used < b.used; });
  }
  slot->source = source;
  slot->space = space;
  slot->used = clock;
  search(source, space, slot->dag);
  return slot->dag;
}

// Keeps every equal-cost predecessor (ties kept as Boost's visitor edge_not_relaxed would).
// Between two servers the search stays in those two and the switches between: no server forwards
// traffic between two others (NCCL moves data only through the two ranks' hosts and the fabric).
// Its scratch is sized to the graph once and only the vertices reached are reset, so a search
// between two servers of a 16,384-GPU cluster costs those two servers and the switches, not the
// graph.
void Graph::search(Vertex source, SearchSpace space, Dag& dag) {
  // DAGs are the memory routing costs: watched here (config::kMaxMemoryGib), every so many
  // searches (a look costs more than a small search).
  if (++searches % kSearchesPerMemoryCheck == 1) config::check_memory(" while routing");
  if (dist.empty()) dist.assign(boost::num_vertices(g), kUnreached), settled.assign(dist.size(), 0), into.resize(dist.size());
  touched.clear();
  // A binary heap on scratch kept between searches (std::priority_queue's own algorithms).
  heap.clear();
  auto push = [&](std::int64_t d, Vertex v) {
    heap.emplace_back(d, v);
    std::push_heap(heap.begin(), heap.end(), std::greater<>());
  };
  dist[source] = 0;
  touched.push_back(source);
  push(0, source);
  auto relax = [&](Vertex u, std::int64_t d, const OutEdge& e) {
    const Vertex v = e.to;
    const std::int64_t through = d + e.weight;
    if (dist[v] == kUnreached) touched.push_back(v);
    if (through < dist[v]) {
      dist[v] = through;
      into[v].assign(1, Pred{e.link, u});
      push(through, v);
    } else if (through == dist[v]) {
      into[v].push_back(Pred{e.link, u});
    }
  };
  auto relax_into = [&](Vertex u, std::int64_t d, int server) {  // u's edges into `server`
    const auto first = out_edges.begin() + static_cast<std::ptrdiff_t>(first_out[u]);
    const auto last = out_edges.begin() + static_cast<std::ptrdiff_t>(first_out[u + 1]);
    const auto [from, to] = std::equal_range(first, last, OutEdge{.server = server},
                                              [](const OutEdge& a, const OutEdge& b) { return a.server < b.server; });
    for (auto e = from; e != to; ++e) relax(u, d, *e);
  };
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const auto [d, u] = heap.back();
    heap.pop_back();
    if (settled[u]) continue;
    settled[u] = 1;
    if (space.kind == SearchSpace::Kind::servers) {
      for (const int server : space.servers)
        if (server != SearchSpace::kNone) relax_into(u, d, server);
      continue;
    }
    for (std::size_t k = first_out[u]; k < first_out[u + 1]; ++k)
      if (space.kind == SearchSpace::Kind::everywhere || !out_edges[k].network) relax(u, d, out_edges[k]);
  }
  dag.clear();
  dag.source = source;
  std::sort(touched.begin(), touched.end());
  for (const Vertex v : touched) {
    if (!into[v].empty()) {
      std::sort(into[v].begin(), into[v].end());
      dag.reached.emplace_back(v, dag.preds.size());
      dag.distance_of.push_back(dist[v]);
      dag.preds.insert(dag.preds.end(), into[v].begin(), into[v].end());
    }
    dist[v] = kUnreached, settled[v] = 0, into[v].clear();
  }
}

}  // namespace routing

Router::Router(const Cluster& cluster, RouteSearch how)
    : cluster_(cluster), graph_(std::make_shared<routing::Graph>(cluster, how)) {
  std::map<std::tuple<LinkKind, double, std::int64_t>, int> classes;
  link_class_.reserve(cluster.links.size());
  for (const Link& l : cluster.links)
    link_class_.push_back(classes.try_emplace({l.kind, l.bytes_per_s, l.latency_ps}, static_cast<int>(classes.size())).first->second);
}

const std::vector<Route>& Router::routes(int from, int to) const {
  using routing::SearchSpace;
  const int n = cluster_.gpu_count();
  if (from < 0 || to < 0 || from >= n || to >= n || from == to)
    throw std::logic_error("Router::routes(" + std::to_string(from) + ", " + std::to_string(to) +
                           "): needs two different GPUs below " + std::to_string(n));
  if (log_) log_->emplace_back(from, to);
  const std::uint64_t key = static_cast<std::uint64_t>(from) << 32 | static_cast<std::uint32_t>(to);
  if (const auto hit = cache_.find(key); hit != cache_.end()) return hit->second;
  routing::Graph& G = *graph_;
  const int from_node = cluster_.gpu_nodes[static_cast<std::size_t>(from)];
  const int to_node = cluster_.gpu_nodes[static_cast<std::size_t>(to)];
  const auto source = G.out(from_node, 0);
  const auto target = G.in(to_node, G.layers - 1);
  const int from_server = cluster_.nodes[static_cast<std::size_t>(from_node)].server;
  const int to_server = cluster_.nodes[static_cast<std::size_t>(to_node)].server;
  std::vector<Route> found;
  Route reversed;
  if (cluster_.server_of(from) == cluster_.server_of(to)) {
    routing::collect_routes(G.dag_of(source, SearchSpace::inside()), target, reversed, found);
  } else if (to_server < 0) {
    routing::collect_routes(G.dag_of(source, SearchSpace::everywhere()), target, reversed, found);
  } else if (from_server < 0 || from_server == to_server || !G.compose(source, from_server, target, to_server, found)) {
    const SearchSpace between = from_server < 0 || from_server == to_server ? SearchSpace::of(-1, to_server)
                                                                            : SearchSpace::of(-1, from_server, to_server);
    routing::collect_routes(G.dag_of(source, between), target, reversed, found);
    // Servers wired to each other only through a third (no switch between them) are routed over
    // the whole graph, as before the search was narrowed.
    if (found.empty()) routing::collect_routes(G.dag_of(source, SearchSpace::everywhere()), target, reversed, found);
  }
  if (found.empty())
    throw std::logic_error("Router::routes: GPU " + std::to_string(to) + " cannot be reached from GPU " +
                           std::to_string(from) + " in " + cluster_.name);
  return cache_.emplace(key, std::move(found)).first->second;
}

std::size_t Router::composed_pairs() const { return graph_->composed_pairs; }

const std::vector<int>& Router::links_from(int gpu) const {
  if (links_from_.empty()) links_from_.resize(static_cast<std::size_t>(cluster_.gpu_count()));
  std::vector<int>& out = links_from_.at(static_cast<std::size_t>(gpu));
  if (!out.empty()) return out;
  const routing::Graph& G = *graph_;
  for (const routing::Edge& e :
       boost::make_iterator_range(boost::out_edges(G.out(cluster_.gpu_nodes[static_cast<std::size_t>(gpu)], 0), G.g)))
    out.push_back(G.g[e].link);
  std::sort(out.begin(), out.end());
  return out;
}

double Router::bottleneck_bytes_per_s(int from, int to) const {
  const auto& all = routes(from, to);
  std::map<int, int> uses;
  for (const auto& r : all)
    for (int link : r) ++uses[link];
  double per_route = std::numeric_limits<double>::infinity();
  for (const auto& [link, count] : uses) per_route = std::min(per_route, cluster_.links[static_cast<std::size_t>(link)].bytes_per_s / count);
  return per_route * static_cast<double>(all.size());
}

}  // namespace stepsim::hw
