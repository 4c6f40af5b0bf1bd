// A simulated machine: GPUs, switches, CPUs and NICs joined by directed links, plus the GPU kind
// and the collective parameters. Built by presets or hardware YAML (hardware_yaml.hpp), or by
// `topo import`. Plain data; routing lives in router.hpp.
//
// Links are directed and carry per-direction bandwidth: a physical NVLink bundle between a GPU and
// an NVSwitch is two Links, one each way. GPU g (0-based, server-major: g = server·gpus_per_server
// + local) is node gpu_nodes[g].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hardware/comm_params.hpp"
#include "hardware/gpu_spec.hpp"

namespace stepsim::hw {

/// `memory` is a socket's host DRAM ("mem0"): with no GPU P2P, staged traffic is written into it
/// and read back out over its `memory` link to the CPU (cluster_template.hpp says how).
enum class NodeKind { gpu, nvswitch, pcie_switch, cpu, nic, network_switch, memory };
enum class LinkKind { nvlink, pcie, socket, infiniband, ethernet, memory };

struct Node {
  NodeKind kind = NodeKind::gpu;
  std::string name;  ///< "gpu3", "nvswitch0", "cpu1", "mlx5_0", "leaf2"
  int server = 0;    ///< which server it sits in; -1 for network switches outside servers
};

struct Link {
  int from = 0, to = 0;            ///< node indices
  LinkKind kind = LinkKind::nvlink;
  double bytes_per_s = 0;          ///< per direction
  std::int64_t latency_ps = 0;
  int lanes = 1;                   ///< NVLink count of an NV# bundle; PCIe lanes; informational
  std::string label;               ///< "NVLink3 x12", "PCIe gen4 x16", "HDR 200Gb/s"
};

struct Cluster {
  std::string name;                ///< preset or file name
  GpuSpec gpu;
  CommParams comm;
  int servers = 1;
  int gpus_per_server = 0;
  std::vector<Node> nodes;
  std::vector<Link> links;
  std::vector<int> gpu_nodes;      ///< node index of each GPU
  /// False when GPUs cannot reach each other's memory over PCIe (GeForce on the stock driver):
  /// every route from a GPU then passes through a CPU, i.e. is staged in host memory, unless it
  /// arrives over NVLink (a bridge still does P2P); where the CPU has a memory node, the route
  /// goes into that memory and back out. router.hpp.
  bool gpu_p2p = true;
  /// Every two GPUs of a server joined by a link of their own (NvlinkTopology::mesh, AMD's xGMI):
  /// a collective inside a server can use all of a GPU's links at once.
  bool gpu_mesh = false;
  /// Host RAM of one server (bytes); 0 = not stated by its preset or file (ServerTemplate).
  std::int64_t host_ram_bytes = 0;

  int gpu_count() const { return static_cast<int>(gpu_nodes.size()); }
  int server_of(int gpu) const { return gpu / gpus_per_server; }
  int local_index(int gpu) const { return gpu % gpus_per_server; }
};

}  // namespace stepsim::hw
