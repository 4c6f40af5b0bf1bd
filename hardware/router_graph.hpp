// Inside the Router (router.hpp): the graph it searches, its shortest-path searches (router.cpp),
// and routes between servers composed from searches of the parts (route_composition.cpp). Only
// those two files include this.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hardware/cluster.hpp"
#include "hardware/router.hpp"

namespace stepsim::hw::routing {

struct EdgeData {
  int link = 0;
  std::int64_t weight = 1;
  bool network = false;  ///< InfiniBand or Ethernet: used only between servers
};
using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, EdgeData>;
using Vertex = boost::graph_traits<BoostGraph>::vertex_descriptor;

struct Pred {
  int link;
  Vertex from;
  bool operator<(const Pred& o) const { return link < o.link || (link == o.link && from < o.from); }
};

/// One search's result: per vertex it reached, its distance from the source and the last links
/// of its shortest routes, ordered by link, so that routes come out in one order whatever order
/// the search met them in. Flat, so that a DAG recomputed into an older one's slot reuses its
/// storage.
struct Dag {
  Vertex source = 0;
  std::vector<std::pair<Vertex, std::size_t>> reached;  // sorted by vertex: where its preds begin
  std::vector<std::int64_t> distance_of;                // per entry of `reached`
  std::vector<Pred> preds;

  void clear() { reached.clear(), distance_of.clear(), preds.clear(); }
  /// The last links into `v`, or none where the search did not reach it.
  std::pair<const Pred*, const Pred*> into(Vertex v) const;
  /// How far `v` is from the source (0 for the source), or nothing where the search did not reach it.
  std::optional<std::int64_t> distance(Vertex v) const;
};

/// Appends to `out` every route of `dag` from its source to `at`, in the order of their links
/// from `at` back (`reversed` is scratch, empty on entry and on return). At the source: one empty
/// route.
void collect_routes(const Dag& dag, Vertex at, Route& reversed, std::vector<Route>& out);

/// Where a search may go: inside the source's server without network links, anywhere, or into
/// the vertices of up to three servers (-1: the switches outside servers).
struct SearchSpace {
  enum class Kind : std::uint8_t { inside, everywhere, servers };
  static constexpr int kNone = -2;  ///< an unused slot of `servers`
  Kind kind = Kind::servers;
  std::array<int, 3> servers{kNone, kNone, kNone};
  bool operator==(const SearchSpace&) const = default;

  static SearchSpace inside() { return {.kind = Kind::inside}; }
  static SearchSpace everywhere() { return {.kind = Kind::everywhere}; }
  static SearchSpace of(int a, int b = kNone, int c = kNone) { return {.kind = Kind::servers, .servers = {a, b, c}}; }
};

// Vertices: `layers` copies of [nodes, then one extra "out" vertex per GPU]. A GPU's links leave
// from its out vertex and arrive at its node vertex, so no route passes through a GPU. Without
// P2P, layer 1 means "may deliver": the route has passed a CPU (host memory) or arrives over
// NVLink (a bridge still does P2P); such links lead from layer 0 to layer 1, and routes end there.
// Where a CPU has a host-memory node, passing the CPU is not enough: the route must enter the
// memory node (and come back out through the CPU).
struct Graph {
  explicit Graph(const Cluster& cluster, RouteSearch how);

  BoostGraph g;
  int nodes = 0, block = 0, layers = 1;
  std::vector<int> gpu_of_node;
  std::vector<int> server_of_vertex;  // Node::server of each vertex's node, every layer

  Vertex in(int node, int layer) const { return static_cast<Vertex>(layer * block + node); }
  Vertex out(int node, int layer) const {
    const int gpu = gpu_of_node[static_cast<std::size_t>(node)];
    return gpu < 0 ? in(node, layer) : static_cast<Vertex>(layer * block + nodes + gpu);
  }

  /// The DAG of the shortest routes from `source` within `space`, from the recently used ones
  /// where it is among them. Valid until the next call.
  const Dag& dag_of(Vertex source, SearchSpace space);

  /// Routes from `source` (a GPU's out vertex in server `from_server`) to `target` (a GPU's node
  /// in `to_server`, another server), composed from searches of the two servers and of the
  /// switches between (route_composition.cpp); false, with `out` untouched, where composing is
  /// not known to give exactly the routes of one search over both servers and the switches.
  bool compose(Vertex source, int from_server, Vertex target, int to_server, std::vector<Route>& out);
  std::size_t composed_pairs = 0;  ///< compose() calls that returned true

 private:
  // Dijkstra from `source` (Dijkstra 1959) within `space`, into `dag`.
  void search(Vertex source, SearchSpace space, Dag& dag);
  void index_out_edges();
  void index_crossings(RouteSearch how);

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

  // The DAGs of the most recently searched sources: a DAG spans what its search reached (two
  // servers and every switch), so keeping one per GPU of a 16,384-GPU cluster would take GBs. A
  // plan asks for a source's few peers close together (a ring's neighbours, a tree's parent and
  // children), so a short list recomputes a DAG rarely; the routes themselves stay cached.
  struct RecentDag {
    Vertex source = 0;
    SearchSpace space;
    std::uint64_t used = 0;
    Dag dag;
  };
  static constexpr std::size_t kRecentDags = 64;
  static constexpr std::uint64_t kSearchesPerMemoryCheck = 64;
  std::uint64_t searches = 0;
  std::vector<RecentDag> recent_dags, recent_switch_dags;  // switches: searched over switches only
  std::uint64_t clock = 0;

  // Search scratch, sized to the graph once; only the vertices reached are reset.
  std::vector<std::int64_t> dist;       // per vertex, between searches: unreached
  std::vector<char> settled;            // per vertex, between searches: 0
  std::vector<std::vector<Pred>> into;  // per vertex, during a search: the last links of its shortest routes
  std::vector<Vertex> touched;
  std::vector<std::pair<std::int64_t, Vertex>> heap;  // (distance, vertex), std::greater-ordered

  // Composition (route_composition.cpp). A crossing is a link between a server's vertex and a
  // switch outside servers.
  struct Crossing {
    Vertex inside = 0, outside = 0;
    int link = 0;
    std::int64_t weight = 1;
  };
  bool composable = false;                     // P2P, no link between two servers, not turned off
  std::vector<std::vector<Crossing>> exits;    // per server: its links out to the switches
  std::vector<std::vector<Crossing>> entries;  // per server: the switches' links into it
  std::vector<signed char> detours_cost_more;  // per server: -1 not yet known, else 0 or 1
  // The cheapest ways between two switches over switches only. Kept per pair asked, not as each
  // switch's whole DAG: those grow with the square of the switches (370 MB at 2,048 leaves).
  struct Across {
    bool reachable = false;
    std::int64_t cost = 0;
    std::vector<Route> routes;  // one empty route from a switch to itself
  };
  std::unordered_map<std::uint64_t, Across> across_;  // (from << 32 | to)
  std::unordered_map<Vertex, Dag> entry_dags;         // per vertex a switch enters a server by: inside it

  const Across& across(Vertex from_switch, Vertex to_switch);
  const Dag& inside_from(Vertex entry, int server);
  bool detour_costs_more(int server);
};

}  // namespace stepsim::hw::routing
