// What `stepsim topo show` prints about a Cluster, as plain strings (no printing here): the GPU x
// GPU connection matrix in nvidia-smi's words (topo_matrix.hpp), the bottleneck bandwidth of
// each GPU pair (Router), a legend and a summary of nodes and links; and a Graphviz rendering.
// Clusters of more than two servers show servers 0 and 1 only (all servers are built alike).
#pragma once

#include <string>

#include "hardware/cluster.hpp"

namespace stepsim::hw {

/// The whole report, lines ending in '\n'; bandwidths in GB/s (1e9 bytes/s) per direction.
std::string topo_report(const Cluster& c);
/// An undirected Graphviz graph: a cluster box per server, an edge per physical link.
std::string topo_dot(const Cluster& c);

}  // namespace stepsim::hw
