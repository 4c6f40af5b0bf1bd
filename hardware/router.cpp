#include "hardware/router.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>

#include <algorithm>
#include <limits>
#include <map>
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
};
using Dag = std::vector<std::vector<Pred>>;  // per vertex: the last links of its shortest routes

// Dijkstra visitor keeping every equal-cost predecessor, not just one.
struct TieRecorder : boost::default_dijkstra_visitor {
  Dag* preds = nullptr;
  const std::vector<std::int64_t>* dist = nullptr;
  template <typename G>
  void edge_relaxed(Edge e, const G& g) const {
    (*preds)[boost::target(e, g)].assign(1, Pred{g[e].link, boost::source(e, g)});
  }
  template <typename G>
  void edge_not_relaxed(Edge e, const G& g) const {
    const Vertex u = boost::source(e, g), v = boost::target(e, g);
    if ((*dist)[v] != std::numeric_limits<std::int64_t>::max() && (*dist)[u] + g[e].weight == (*dist)[v])
      (*preds)[v].push_back(Pred{g[e].link, u});
  }
};

// Routes between GPUs of one server stay inside it: the graph without network links.
struct NoNetwork {
  const BoostGraph* g = nullptr;
  bool operator()(const Edge& e) const { return !(*g)[e].network; }
};

// Routes between two servers stay in them and the switches between: no server forwards traffic
// between two others (NCCL moves data only through the two ranks' hosts and the fabric). The
// search then visits two servers, not all of them.
struct BetweenServers {
  const BoostGraph* g = nullptr;
  const std::vector<int>* server_of_vertex = nullptr;  // per vertex; -1 for switches outside servers
  int a = 0, b = 0;
  bool outside_or_ours(Vertex v) const {
    const int s = (*server_of_vertex)[v];
    return s < 0 || s == a || s == b;
  }
  bool operator()(const Edge& e) const { return outside_or_ours(boost::source(e, *g)) && outside_or_ours(boost::target(e, *g)); }
};

// Fills `dag` (reusing its storage: a DAG is recomputed into the slot of an older one, and
// reallocating one list per vertex each time cost more than the search).
template <typename G>
void shortest_route_dag(const G& g, Vertex source, Dag& dag) {
  std::vector<std::int64_t> dist(boost::num_vertices(g));
  dag.resize(dist.size());
  for (auto& preds : dag) preds.clear();
  TieRecorder recorder;
  recorder.preds = &dag;
  recorder.dist = &dist;
  boost::dijkstra_shortest_paths(
      g, source,
      boost::weight_map(boost::get(&EdgeData::weight, g))
          .distance_map(boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, g)))
          .visitor(recorder));
}

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
  // the whole graph, so keeping one per GPU of a 16,384-GPU cluster would take tens of GB. A plan
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
    // A DAG is the memory routing costs: watched here (config::kMaxMemoryGib).
    config::check_memory(" while routing");
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
    if (scope == kInside)
      shortest_route_dag(boost::make_filtered_graph(g, NoNetwork{&g}), source, slot->dag);
    else if (scope == kEverywhere)
      shortest_route_dag(g, source, slot->dag);
    else
      shortest_route_dag(boost::make_filtered_graph(g, BetweenServers{&g, &server_of_vertex, source_server, scope}), source,
                         slot->dag);
    return slot->dag;
  }

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
}

namespace {

void collect_routes(const Dag& dag, Vertex at, Vertex source, Route& reversed, std::vector<Route>& out) {
  if (at == source) {
    out.emplace_back(reversed.rbegin(), reversed.rend());
    return;
  }
  for (const Pred& p : dag[at]) {
    reversed.push_back(p.link);
    collect_routes(dag, p.from, source, reversed, out);
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
