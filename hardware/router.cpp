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

template <typename G>
Dag shortest_route_dag(const G& g, Vertex source) {
  std::vector<std::int64_t> dist(boost::num_vertices(g));
  Dag dag(dist.size());
  TieRecorder recorder;
  recorder.preds = &dag;
  recorder.dist = &dist;
  boost::dijkstra_shortest_paths(
      g, source,
      boost::weight_map(boost::get(&EdgeData::weight, g))
          .distance_map(boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, g)))
          .visitor(recorder));
  return dag;
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
  std::vector<Dag> dags, local_dags;  // per source GPU, across servers and within one; lazy

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
  G.dags.resize(cluster.gpu_count());
  G.local_dags.resize(cluster.gpu_count());
  cache_.resize(cluster.gpu_count());
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
  auto& row = cache_[from];
  if (row.empty()) {
    // A new source costs a row of the cache and a shortest-path DAG over the whole graph: on
    // large clusters this is where memory grows (N² in all), so it is watched here.
    config::check_memory_every(16, " while routing");
    row.resize(n);
  }
  if (!row[to].empty()) return row[to];
  Graph& G = *graph_;
  const Vertex source = G.out(cluster_.gpu_nodes[from], 0);
  const bool local = cluster_.server_of(from) == cluster_.server_of(to);
  Dag& dag = local ? G.local_dags[from] : G.dags[from];
  if (dag.empty() && local)
    dag = shortest_route_dag(boost::make_filtered_graph(G.g, NoNetwork{&G.g}), source);
  else if (dag.empty())
    dag = shortest_route_dag(G.g, source);
  Route reversed;
  collect_routes(dag, G.in(cluster_.gpu_nodes[to], G.layers - 1), source, reversed, row[to]);
  if (row[to].empty())
    throw std::logic_error("Router::routes: GPU " + std::to_string(to) + " cannot be reached from GPU " +
                           std::to_string(from) + " in " + cluster_.name);
  return row[to];
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
