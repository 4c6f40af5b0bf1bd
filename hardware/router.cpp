#include "hardware/router.hpp"

#include <boost/graph/adjacency_list.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>
#include <string>

#include "sim/config/resident_memory.hpp"

namespace stepsim::hw {
namespace {

// A non-NVLink hop outweighs any number of NVLink hops: routes minimise (non-NVLink, all) links.
constexpr std::int64_t kNonNvlinkCost = 1 << 20;

struct EdgeData {
  int link = 0;
  std::int64_t weight = 1;
  bool network = false;  ///< InfiniBand or Ethernet: used only between servers
};
using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, EdgeData>;
using Vertex = boost::graph_traits<BoostGraph>::vertex_descriptor;
using Edge = boost::graph_traits<BoostGraph>::edge_descriptor;

struct Pred {
  int link;
  Vertex from;
  bool operator<(const Pred& o) const { return link < o.link || (link == o.link && from < o.from); }
};
// Per vertex the search reached: the last links of its shortest routes, ordered by link, so that
// routes come out in one order whatever order the search met them in. Flat, so that a DAG
// recomputed into an older one's slot reuses its storage.
struct Dag {
  std::vector<std::pair<Vertex, std::size_t>> reached;  // sorted by vertex: where its preds begin
  std::vector<Pred> preds;

  void clear() { reached.clear(), preds.clear(); }
  /// The last links into `v`, or none where the search did not reach it.
  std::pair<const Pred*, const Pred*> into(Vertex v) const {
    const auto it = std::lower_bound(reached.begin(), reached.end(), std::pair<Vertex, std::size_t>{v, 0});
    if (it == reached.end() || it->first != v) return {nullptr, nullptr};
    const std::size_t end = it + 1 == reached.end() ? preds.size() : (it + 1)->second;
    return {preds.data() + it->second, preds.data() + end};
  }
};

}  // namespace

// Vertices: `layers` copies of [nodes, then one extra "out" vertex per GPU]. A GPU's links leave
// from its out vertex and arrive at its node vertex, so no route passes through a GPU. Without
// P2P, layer 1 means "may deliver": the route has passed a CPU (host memory) or arrives over
// NVLink (a bridge still does P2P); such links lead from layer 0 to layer 1, and routes end there.
// Where a CPU has a host-memory node, passing the CPU is not enough: the route must enter the
// memory node (and come back out through the CPU).
struct Router::Graph {
  BoostGraph g;
  int nodes = 0, block = 0, layers = 1;
  std::vector<int> gpu_of_node;
  // The DAGs of the most recently routed sources (across servers, or within one): a DAG spans
  // what its search reached (two servers and every switch), so keeping one per GPU of a
  // 16,384-GPU cluster would take GBs. A plan
  // asks for a source's few peers close together (a ring's neighbours, a tree's parent and
  // children), so a short list recomputes a DAG rarely; the routes themselves stay cached.
  // `scope`: which part of the graph the DAG was searched in (kInside, kEverywhere or a server: dag_of).
  struct RecentDag {
    int source = -1;
    int scope = 0;
    std::uint64_t used = 0;
    Dag dag;
  };
  static constexpr std::size_t kRecentDags = 64;
  static constexpr std::uint64_t kSearchesPerMemoryCheck = 64;
  std::uint64_t searches = 0;
  std::vector<RecentDag> recent;
  std::uint64_t clock = 0;
  std::vector<int> server_of_vertex;  // Node::server of each vertex's node, every layer

  // A DAG's search space: inside the source's server (kInside), the source's server, the servers
  // numbered `scope` and the switches (scope >= 0), or the whole graph (kEverywhere).
  static constexpr int kInside = -1, kEverywhere = -2;

  const Dag& dag_of(int source_gpu, int source_server, int scope, Vertex source) {
    ++clock;
    for (RecentDag& r : recent)
      if (r.source == source_gpu && r.scope == scope) {
        r.used = clock;
        return r.dag;
      }
    // A DAG is the memory routing costs: watched here (config::kMaxMemoryGib), every so many
    // searches (a look costs more than a small search).
    if (++searches % kSearchesPerMemoryCheck == 1) config::check_memory(" while routing");
    RecentDag* slot = nullptr;
    if (recent.size() < kRecentDags) {
      slot = &recent.emplace_back();
    } else {
      slot = &*std::min_element(recent.begin(), recent.end(),
                                [](const RecentDag& a, const RecentDag& b) { return a.used < b.used; });
    }
    slot->source = source_gpu;
    slot->scope = scope;
    slot->used = clock;
    search(source, source_server, scope, slot->dag);
    return slot->dag;
  }

  // A vertex's out-edges, each with what the search filters on, sorted by the server of its
  // target (switches outside servers, -1, first), so that a search between two servers reads a
  // switch's edges into those two and into other switches, not its edges into every server under
  // it (a leaf switch of a rail-optimized fabric has one per server).
  struct OutEdge {
    int server = -1;  ///< Node::server of the target
    Vertex to = 0;
    int link = 0;
    std::int64_t weight = 1;
    bool network = false;
  };
  std::vector<std::size_t> first_out;  // per vertex and one past: where its out-edges begin
  std::vector<OutEdge> out_edges;

  void index_out_edges() {
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

  // Dijkstra from `source` (Dijkstra 1959), keeping every equal-cost predecessor (ties kept as
  // Boost's visitor edge_not_relaxed would). Where it may go: inside the source's server without
  // network links (kInside); anywhere (kEverywhere); or, between two servers, in those two and
  // the switches between: no server forwards traffic between two others (NCCL moves data only
  // through the two ranks' hosts and the fabric). Its scratch is sized to the graph once and only
  // the vertices reached are reset, so a search between two servers of a 16,384-GPU cluster costs
  // those two servers and the switches, not the graph.
  void search(Vertex source, int source_server, int scope, Dag& dag) {
    constexpr std::int64_t kUnreached = std::numeric_limits<std::int64_t>::max();
    if (dist.empty()) dist.assign(boost::num_vertices(g), kUnreached), settled.assign(dist.size(), 0), into.resize(dist.size());
    touched.clear();
    using Entry = std::pair<std::int64_t, Vertex>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    dist[source] = 0;
    touched.push_back(source);
    queue.emplace(0, source);
    auto relax = [&](Vertex u, std::int64_t d, const OutEdge& e) {
      const Vertex v = e.to;
      const std::int64_t through = d + e.weight;
      if (dist[v] == kUnreached) touched.push_back(v);
      if (through < dist[v]) {
        dist[v] = through;
        into[v].assign(1, Pred{e.link, u});
        queue.emplace(through, v);
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
    while (!queue.empty()) {
      const auto [d, u] = queue.top();
      queue.pop();
      if (settled[u]) continue;
      settled[u] = 1;
      if (scope >= 0) {
        relax_into(u, d, -1);
        if (source_server >= 0) relax_into(u, d, source_server);
        if (scope != source_server) relax_into(u, d, scope);
        continue;
      }
      for (std::size_t k = first_out[u]; k < first_out[u + 1]; ++k)
        if (scope == kEverywhere || !out_edges[k].network) relax(u, d, out_edges[k]);
    }
    dag.clear();
    std::sort(touched.begin(), touched.end());
    for (const Vertex v : touched) {
      if (!into[v].empty()) {
        std::sort(into[v].begin(), into[v].end());
        dag.reached.emplace_back(v, dag.preds.size());
        dag.preds.insert(dag.preds.end(), into[v].begin(), into[v].end());
      }
      dist[v] = kUnreached, settled[v] = 0, into[v].clear();
    }
  }
  std::vector<std::int64_t> dist;  // per vertex, between searches: kUnreached
  std::vector<char> settled;       // per vertex, between searches: 0
  std::vector<std::vector<Pred>> into;  // per vertex, during a search: the last links of its shortest routes
  std::vector<Vertex> touched;

  Vertex in(int node, int layer) const { return static_cast<Vertex>(layer * block + node); }
  Vertex out(int node, int layer) const {
    const int gpu = gpu_of_node[node];
    return gpu < 0 ? in(node, layer) : static_cast<Vertex>(layer * block + nodes + gpu);
  }
};

Router::Router(const Cluster& cluster) : cluster_(cluster), graph_(std::make_shared<Graph>()) {
  Graph& G = *graph_;
  G.nodes = static_cast<int>(cluster.nodes.size());
  G.block = G.nodes + cluster.gpu_count();
  G.layers = cluster.gpu_p2p ? 1 : 2;
  G.gpu_of_node.assign(cluster.nodes.size(), -1);
  for (int gpu = 0; gpu < cluster.gpu_count(); ++gpu) G.gpu_of_node[cluster.gpu_nodes[gpu]] = gpu;
  G.g = BoostGraph(static_cast<std::size_t>(G.block * G.layers));
  G.server_of_vertex.resize(static_cast<std::size_t>(G.block * G.layers));
  for (int v = 0; v < G.block * G.layers; ++v) {
    const int k = v % G.block;
    G.server_of_vertex[static_cast<std::size_t>(v)] = cluster.nodes[k < G.nodes ? k : cluster.gpu_nodes[k - G.nodes]].server;
  }
  std::vector<bool> has_memory(cluster.nodes.size(), false);  // CPUs with a host-memory node
  for (const Link& link : cluster.links) has_memory[link.from] = has_memory[link.from] || link.kind == LinkKind::memory;
  for (int l = 0; l < static_cast<int>(cluster.links.size()); ++l) {
    const Link& link = cluster.links[l];
    const NodeKind to = cluster.nodes[link.to].kind;
    // Entering a CPU (host bridge) counts as two hops: NCCL ranks host-bridge paths below
    // switch and network paths, so cross-rail traffic takes the spines, not a peer's PCIe tree.
    const std::int64_t weight = link.kind == LinkKind::nvlink ? 1 : to == NodeKind::cpu ? 2 * kNonNvlinkCost : kNonNvlinkCost;
    // Staging happens in host memory: in the memory node where the CPU has one (the route goes
    // cpu -> mem -> cpu, crossing the memory link both ways), else in the CPU itself.
    const bool delivers = to == NodeKind::memory || (to == NodeKind::cpu && !has_memory[link.to]) ||
                          (to == NodeKind::gpu && link.kind == LinkKind::nvlink);
    for (int layer = 0; layer < G.layers; ++layer) {
      const int next = G.layers == 2 && delivers ? 1 : layer;
      const bool network = link.kind == LinkKind::infiniband || link.kind == LinkKind::ethernet;
      boost::add_edge(G.out(link.from, layer), G.in(link.to, next), EdgeData{l, weight, network}, G.g);
    }
  }
  G.index_out_edges();
}

namespace {

void collect_routes(const Dag& dag, Vertex at, Vertex source, Route& reversed, std::vector<Route>& out) {
  if (at == source) {
    out.emplace_back(reversed.rbegin(), reversed.rend());
    return;
  }
  const auto [first, last] = dag.into(at);
  for (const Pred* p = first; p != last; ++p) {
    reversed.push_back(p->link);
    collect_routes(dag, p->from, source, reversed, out);
    reversed.pop_back();
  }
}

}  // namespace

const std::vector<Route>& Router::routes(int from, int to) const {
  const int n = cluster_.gpu_count();
  if (from < 0 || to < 0 || from >= n || to >= n || from == to)
    throw std::logic_error("Router::routes(" + std::to_string(from) + ", " + std::to_string(to) +
                           "): needs two different GPUs below " + std::to_string(n));
  if (log_) log_->emplace_back(from, to);
  const std::uint64_t key = static_cast<std::uint64_t>(from) << 32 | static_cast<std::uint32_t>(to);
  if (const auto hit = cache_.find(key); hit != cache_.end()) return hit->second;
  Graph& G = *graph_;
  const Vertex source = G.out(cluster_.gpu_nodes[from], 0);
  const Vertex target = G.in(cluster_.gpu_nodes[to], G.layers - 1);
  const int from_server = cluster_.nodes[cluster_.gpu_nodes[from]].server;
  const int to_server = cluster_.nodes[cluster_.gpu_nodes[to]].server;
  const int scope = cluster_.server_of(from) == cluster_.server_of(to) ? Graph::kInside
                    : to_server >= 0                                   ? to_server
                                                                       : Graph::kEverywhere;
  std::vector<Route> found;
  Route reversed;
  collect_routes(G.dag_of(from, from_server, scope, source), target, source, reversed, found);
  // Servers wired to each other only through a third (no switch between them) are routed over
  // the whole graph, as before the search was narrowed.
  if (found.empty() && scope != Graph::kInside)
    collect_routes(G.dag_of(from, from_server, Graph::kEverywhere, source), target, source, reversed, found);
  if (found.empty())
    throw std::logic_error("Router::routes: GPU " + std::to_string(to) + " cannot be reached from GPU " +
                           std::to_string(from) + " in " + cluster_.name);
  return cache_.emplace(key, std::move(found)).first->second;
}

std::vector<int> Router::links_from(int gpu) const {
  const Graph& G = *graph_;
  std::vector<int> out;
  for (const Edge& e : boost::make_iterator_range(boost::out_edges(G.out(cluster_.gpu_nodes[static_cast<std::size_t>(gpu)], 0), G.g)))
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
  for (const auto& [link, count] : uses) per_route = std::min(per_route, cluster_.links[link].bytes_per_s / count);
  return per_route * static_cast<double>(all.size());
}

}  // namespace stepsim::hw
