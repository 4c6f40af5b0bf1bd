// topo show: each preset prints the topology it claims, in nvidia-smi's codes, and the report's
// layout is pinned whole on the smallest preset.
#include <doctest/doctest.h>

#include "hardware/hardware_yaml.hpp"
#include "hardware/topo_matrix.hpp"
#include "hardware/topo_report.hpp"

namespace stepsim::hw {
namespace {

// Row of GPU0 in the connection matrix.
std::vector<std::string> first_row(const std::string& preset, ClusterShape shape = {}) {
  return connection_matrix(load_cluster(preset, shape))[0];
}
using Row = std::vector<std::string>;

TEST_CASE("each preset's GPU0 row, as nvidia-smi would print it") {
  // NVSwitch: NV# with the GPU's link count (A100 12, H100/H200 18).
  CHECK(first_row("dgx-a100") == Row{"X", "NV12", "NV12", "NV12", "NV12", "NV12", "NV12", "NV12"});
  CHECK(first_row("dgx-h100") == Row{"X", "NV18", "NV18", "NV18", "NV18", "NV18", "NV18", "NV18"});
  CHECK(first_row("hgx-h200")[7] == "NV18");
  // Two GPUs per switch, two switches per socket: PIX, PHB (same CPU), SYS (other socket).
  CHECK(first_row("a100-pcie") == Row{"X", "PIX", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS"});
  // One GPU per x16 port on the RTX 4090 box: every same-socket pair meets at the CPU (PHB).
  CHECK(first_row("rtx4090") == Row{"X", "PHB", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS"});
  CHECK(first_row("a100-pcie", {.nodes = std::nullopt, .gpus_per_node = 4}) == Row{"X", "PIX", "SYS", "SYS"});
  // Bridged pairs: NV4 on RTX 3090 (4 links), NV12 on H100 PCIe (300 / 25).
  CHECK(first_row("rtx3090-nvlink") == Row{"X", "NV4", "PHB", "PHB"});
  CHECK(first_row("h100-pcie-nvlink") == Row{"X", "NV12", "PHB", "PHB", "SYS", "SYS", "SYS", "SYS"});
  // Another server: NET.
  CHECK(first_row("dgx-a100", {.nodes = 2, .gpus_per_node = std::nullopt})[8] == "NET");
}

TEST_CASE("the whole report of a bridged RTX 3090 pair") {
  const std::string expected =
      "rtx3090-nvlink: 2 GPUs (RTX-3090), 1 server x 2 GPUs; no GPU P2P over PCIe: traffic staged through host memory\n"
      "\n"
      "Connection between GPUs (as nvidia-smi topo -m names it):\n"
      "      GPU0  GPU1\n"
      "GPU0  X     NV4\n"
      "GPU1  NV4   X\n"
      "\n"
      "Bottleneck bandwidth between GPUs (GB/s, per direction, all equal-cost routes):\n"
      "      GPU0   GPU1\n"
      "GPU0  -      56.25\n"
      "GPU1  56.25  -\n"
      "\n"
      "Legend:\n"
      "  X    = self\n"
      "  NV#  = a bonded set of # NVLinks (direct, or to a shared NVSwitch)\n"
      "  PIX  = PCIe through at most a single PCIe switch\n"
      "  PXB  = PCIe through multiple PCIe switches, no host bridge\n"
      "  PHB  = PCIe through a host bridge (a CPU)\n"
      "  NODE = PCIe across host bridges within one NUMA node\n"
      "  SYS  = PCIe and the socket interconnect between NUMA nodes (QPI/UPI/xGMI)\n"
      "  NET  = different servers: through NICs and the network (stepsim's code, not nvidia-smi's)\n"
      "\n"
      "Nodes: 2 gpu, 1 cpu, 1 nic\n"
      "Links (each direction has the bandwidth shown):\n"
      "  kind    count  bandwidth   latency    label\n"
      "  nvlink  1      56.25 GB/s  100.00 ns  NVLink3 bridge x4\n"
      "  pcie    3      31.5 GB/s   250.00 ns  PCIe gen4 x16\n";
  CHECK(topo_report(load_cluster("rtx3090-nvlink", {.nodes = std::nullopt, .gpus_per_node = 2})) == expected);
}

TEST_CASE("large clusters show two servers; the summary counts links by kind") {
  const std::string r = topo_report(load_cluster("dgx-h100", {.nodes = 4, .gpus_per_node = std::nullopt}));
  CHECK(r.find("dgx-h100: 32 GPUs (H100-SXM5-80GB), 4 servers x 8 GPUs\n") == 0);
  CHECK(r.find("(servers 0 and 1 of 4 shown; the others are built alike)\n") != std::string::npos);
  // 4 servers x 8 GPUs x 1 NVLink each; 4 x 8 NICs at NDR 400 Gb/s = 50 GB/s.
  CHECK(r.find("  nvlink      32     450 GB/s") != std::string::npos);
  CHECK(r.find("  infiniband  32     50 GB/s") != std::string::npos);
  CHECK(r.find("GPU16") == std::string::npos);
}

TEST_CASE("the Graphviz view draws each physical link once, servers boxed") {
  const std::string dot = topo_dot(load_cluster("rtx3090-nvlink", {.nodes = std::nullopt, .gpus_per_node = 2}));
  CHECK(dot ==
        "graph \"rtx3090-nvlink\" {\n  node [shape=box];\n"
        "  subgraph cluster_server0 {\n    label=\"server 0\";\n"
        "    n0 [label=\"gpu0\"];\n    n1 [label=\"gpu1\"];\n    n2 [label=\"cpu0\"];\n    n3 [label=\"mlx5_0\"];\n  }\n"
        "  n0 -- n2 [label=\"PCIe gen4 x16\\n31.5 GB/s\"];\n"
        "  n1 -- n2 [label=\"PCIe gen4 x16\\n31.5 GB/s\"];\n"
        "  n2 -- n3 [label=\"PCIe gen4 x16\\n31.5 GB/s\"];\n"
        "  n0 -- n1 [label=\"NVLink3 bridge x4\\n56.25 GB/s\"];\n"
        "}\n");
}

}  // namespace
}  // namespace stepsim::hw
