// Routes between GPUs on a Cluster's graph (a Boost.Graph inside): shortest paths by hop count,
// all equal-cost ones where the topology has several (NVSwitch planes, ECMP in fat trees).
// Computed on first use and cached per GPU pair asked for (not per pair of the cluster); the
// shortest-path DAGs behind them are kept for the most recent sources only, so memory grows with
// the pairs a plan uses, not with the square of the GPUs. The Router must not outlive its Cluster.
//
// "Shortest" is lexicographic: fewest links that are not NVLink (a link into a CPU counting as
// two, as NCCL ranks host-bridge paths last), then fewest links. So two GPUs on one NVSwitch talk
// over NVLink even though a shared PCIe switch is as many hops away, as NCCL does. A route never
// passes through a third GPU (no GPU forwards traffic). When the cluster has no GPU peer-to-peer
// over PCIe (Cluster::gpu_p2p false), every route that does not arrive over NVLink passes through
// a CPU: the transfer is staged in host memory. Where the server models host memory
// (cluster_template.hpp), the route goes into that socket's memory node and back out
// (cpu -> mem -> cpu); a staged transfer between sockets then has two equal-cost routes (staged
// on either side) and is split over both. No route passes through a third server either, unless
// two servers are wired together only through one: a route between two servers is searched in
// those two and the switches outside servers (Node::server -1).
//
// Cost: inside a server, one Dijkstra per source over that server. Between two servers, the route
// is composed (route_composition.cpp) from three searches that many pairs share: from the source
// GPU inside its server, over the switches between the switch it leaves by and the one it enters
// by (kept per pair of switches asked), and inside the destination server from the vertex it
// enters by (one per entry). That is exact where a route between servers cannot gain by passing
// through one of them on its way between two switches (checked per server, with the cluster P2P
// and no link joining two servers directly); elsewhere one search covers both servers and the
// switches. Equal-cost routes to a destination
// come in the order of their links from the destination back, whichever way they were found.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hardware/cluster.hpp"

namespace stepsim::hw {

using Route = std::vector<int>;  ///< link indices into Cluster::links, source to destination

/// How routes between servers are found: composed where that is exact (the default), or always
/// by one search over both servers and the switches (what tests compare composition with).
enum class RouteSearch { composed, whole };

namespace routing {
struct Graph;  // the Boost.Graph and its searches (router_graph.hpp)
}

class Router {
 public:
  explicit Router(const Cluster& cluster, RouteSearch how = RouteSearch::composed);

  /// The equal-cost shortest routes from GPU `from` to GPU `to` (at least one; a flow between them
  /// may be split evenly across them). Requires: from != to, both valid GPUs, connected. The
  /// vector stays where it is for the Router's lifetime (callers keep pointers to it).
  const std::vector<Route>& routes(int from, int to) const;
  /// Bandwidth a single transfer from `from` to `to` can get on an idle machine: the bottleneck of
  /// each route, summed over the equal-cost routes (bytes/s, per direction). Routes that share a
  /// link share it: with the flow split evenly over n routes, this is n · min over links of
  /// (capacity / routes using it), which is the plain sum when the routes are disjoint.
  double bottleneck_bytes_per_s(int from, int to) const;
  const Cluster& cluster() const { return cluster_; }
  /// The links leaving GPU `gpu` (indices into Cluster::links), in link order; kept once asked.
  const std::vector<int>& links_from(int gpu) const;
  /// How many pairs' routes were composed rather than searched whole (route_composition.cpp):
  /// tests check that the composed way is the one that ran.
  std::size_t composed_pairs() const;
  /// A number per link, equal for two links exactly when they have the same kind, rate and
  /// latency: what a renaming of links must keep (route_equivalence.hpp), in a small dense table
  /// rather than the cluster's large link records.
  int link_class(int link) const { return link_class_[static_cast<std::size_t>(link)]; }
  /// While `log` is set (not nullptr), every pair routes() is asked for is appended to it, cache
  /// hits included: what a computation on this router consulted, so that its result can be
  /// reused where those routes are the same up to renaming (route_equivalence.hpp).
  void record_pairs(std::vector<std::pair<int, int>>* log) const { log_ = log; }
  /// The log record_pairs() set, or nullptr.
  std::vector<std::pair<int, int>>* recording() const { return log_; }

 private:
  const Cluster& cluster_;
  std::shared_ptr<routing::Graph> graph_;
  mutable std::unordered_map<std::uint64_t, std::vector<Route>> cache_;  // (from << 32 | to) -> routes
  std::vector<int> link_class_;
  mutable std::vector<std::vector<int>> links_from_;  // per GPU, empty until asked (a GPU has links)
  mutable std::vector<std::pair<int, int>>* log_ = nullptr;
};

}  // namespace stepsim::hw
