// How two devices of a Cluster are connected, in the words of `nvidia-smi topo -m`, derived from
// the graph (never stored): topo show prints it, and topo import checks its graph against it.
//
//   NV#   a direct NVLink bundle of # links, or # links to a shared NVSwitch
//   PIX   otherwise, over PCIe through exactly one PCIe switch (or none)
//   PXB   through several PCIe switches and no CPU
//   PHB   through one CPU node (a host bridge)
//   NODE  through several CPU nodes of one socket (host bridges within a NUMA node)
//   SYS   across a socket interconnect link
//   NET   on different servers (not an nvidia-smi code)
// The PCIe codes come from the shortest path over PCIe and socket links that does not pass
// through a GPU or NIC (first found in link order when several are as short).
#pragma once

#include <string>
#include <vector>

#include "hardware/cluster.hpp"

namespace stepsim::hw {

/// Code between two nodes (GPUs or NICs); "X" for a node with itself.
std::string connection_code_between_nodes(const Cluster& c, int node_a, int node_b);
/// Code between GPUs a and b.
std::string connection_code(const Cluster& c, int gpu_a, int gpu_b);
/// Row per GPU, column per GPU.
std::vector<std::vector<std::string>> connection_matrix(const Cluster& c);

}  // namespace stepsim::hw
