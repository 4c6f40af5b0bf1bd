// Routes between GPUs on a Cluster's graph (Boost.Graph inside): shortest paths by hop count,
// all equal-cost ones where the topology has several (NVSwitch planes, ECMP in fat trees).
// Computed once per source GPU on first use and cached; the Router must not outlive its Cluster.
#pragma once

#include <vector>

#include "hardware/cluster.hpp"

namespace stepsim::hw {

using Route = std::vector<int>;  ///< link indices into Cluster::links, source to destination

class Router {
 public:
  explicit Router(const Cluster& cluster);

  /// The equal-cost shortest routes from GPU `from` to GPU `to` (at least one; a flow between them
  /// may be split evenly across them). Requires: from != to, both valid GPUs, connected.
  const std::vector<Route>& routes(int from, int to) const;
  /// Bandwidth a single transfer from `from` to `to` can get on an idle machine: the bottleneck of
  /// each route, summed over the equal-cost routes (bytes/s, per direction).
  double bottleneck_bytes_per_s(int from, int to) const;
  const Cluster& cluster() const { return cluster_; }

 private:
  const Cluster& cluster_;
  mutable std::vector<std::vector<std::vector<Route>>> cache_;  // [from][to] -> routes
};

}  // namespace stepsim::hw
