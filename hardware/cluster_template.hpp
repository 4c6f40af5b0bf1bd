// A cluster described by a few numbers: N identical servers on a network. Presets use it, so
// "4xA100 with NVLink" and "64 H100 servers" are one preset with other numbers; `topo import`
// writes the link-by-link server form. build_cluster() turns a template into the Cluster graph.
//
// Units: bandwidth bytes/s per direction, latency picoseconds. Every physical link becomes two
// directed Links of the same figures. Node names are local to their server ("gpu3", "cpu0",
// "pcie1", "nvswitch0", "mlx5_2"); network switches are "leaf4", "spine1" with server -1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "hardware/cluster.hpp"

namespace stepsim::hw {

/// The figures of one kind of physical link.
struct LinkSpec {
  LinkKind kind = LinkKind::pcie;
  double bytes_per_s = 0;        ///< per direction
  std::int64_t latency_ps = 0;
  int lanes = 1;                 ///< NVLink count or PCIe lanes
  std::string label;             ///< "NVLink3 x12", "PCIe gen4 x16"
};

/// mesh: every two GPUs joined by one link of their own (AMD's xGMI on an 8-GPU OAM board).
enum class NvlinkTopology { none, nvswitch, pairs, mesh };

/// A server from parameters. GPUs fill PCIe switches in order (`gpus_per_switch` each; 0 puts
/// GPU g on a root port of socket g·sockets/gpus: 8 GPUs on 2 sockets are 4 + 4, 4 are 2 + 2),
/// switches are spread evenly over the sockets, NIC j sits next to GPU j·gpus/nics. With NVSwitch the server has one logical switch, and each GPU's link to it
/// carries the GPU's whole NVLink bandwidth; with pairs GPU 2k is bridged to GPU 2k+1; with mesh
/// every two GPUs share one link, a `links`-th of the GPU's bandwidth (links >= gpus − 1).
///
/// Host memory (optional): each socket s gets a node "mem<s>" joined to its CPU by a `memory`
/// link. Without P2P a staged transfer is written into host DRAM by one device and read out by the
/// next, so its route is ... -> cpu -> mem -> cpu -> ... (router.hpp) and each byte crosses the
/// socket's memory twice, once each way. DRAM bandwidth is one budget B for reads and writes
/// together (the DDR bus is half duplex), i.e. write + read <= B. A staged flow at rate r writes
/// r and reads r, so the flows staged in one socket's memory satisfy 2·Σr <= B, i.e. Σr <= B/2:
/// exactly a duplex link with B/2 per direction, as every flow on it uses both directions at the
/// same rate. So `bytes_per_s` is B and the link gets B/2 each way.
struct ServerTemplate {
  int gpus = 1;
  NvlinkTopology nvlink = NvlinkTopology::none;
  LinkSpec nvlink_link;          ///< GPU to NVSwitch, or bridge between a pair
  LinkSpec pcie_link;            ///< GPU or NIC to its switch or root port, and switch uplinks
  int gpus_per_switch = 0;
  int sockets = 1;
  LinkSpec socket_link;          ///< between every two sockets (UPI, xGMI)
  bool p2p = true;               ///< false: GPU-to-GPU traffic goes through host memory (a CPU)
  int nics = 0;
  /// Per socket: bytes_per_s = DRAM bandwidth B, reads and writes together (see above).
  std::optional<LinkSpec> host_memory;
  /// The server's host RAM (bytes, all sockets); 0 = not stated. What ZeRO-Offload may fill.
  std::int64_t host_ram_bytes = 0;
};

/// A server drawn link by link (hardware YAML `server: {nodes, links}`, `topo import`).
struct ExplicitServer {
  std::vector<Node> nodes;       ///< server fields are ignored; GPUs in file order
  std::vector<Link> links;       ///< one per physical link; build_cluster adds the reverse
  bool p2p = true;
};

enum class NetworkTopology { fat_tree, rail };

/// A two-level leaf-spine network. Fat tree: servers_per_leaf servers share a leaf. Rail: NIC r
/// of every server in a group of servers_per_leaf goes to that group's leaf r. Each leaf has
/// (its NIC ports · NIC bandwidth / oversubscription) of uplink, split evenly over `spines`
/// spine switches; with a single leaf there are no spines.
struct NetworkTemplate {
  NetworkTopology topology = NetworkTopology::fat_tree;
  LinkSpec nic_link;             ///< NIC to leaf
  int servers_per_leaf = 1;
  int spines = 1;
  double oversubscription = 1.0; ///< >= 1
  std::int64_t switch_latency_ps = 0;  ///< latency of leaf-spine links
};

struct ClusterTemplate {
  std::string name;
  GpuSpec gpu;
  CommParams comm;
  int servers = 1;
  std::variant<ServerTemplate, ExplicitServer> server;
  std::optional<NetworkTemplate> network;  ///< required when servers > 1
};

/// Requires: servers >= 1; a network when servers > 1; links name existing nodes.
Cluster build_cluster(const ClusterTemplate& t);

}  // namespace stepsim::hw
