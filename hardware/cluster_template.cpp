#include "hardware/cluster_template.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace stepsim::hw {
namespace {

int add_node(Cluster& c, NodeKind kind, std::string name, int server) {
  c.nodes.push_back(Node{kind, std::move(name), server});
  return static_cast<int>(c.nodes.size()) - 1;
}

/// One physical link: two directed Links with the same figures.
void add_duplex(Cluster& c, int a, int b, const LinkSpec& s) {
  c.links.push_back(Link{a, b, s.kind, s.bytes_per_s, s.latency_ps, s.lanes, s.label});
  c.links.push_back(Link{b, a, s.kind, s.bytes_per_s, s.latency_ps, s.lanes, s.label});
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Adds one server from parameters; returns its NIC node indices in order.
std::vector<int> add_template_server(Cluster& c, const ServerTemplate& t, int server) {
  std::vector<int> gpus, cpus, switches, nics;
  for (int g = 0; g < t.gpus; ++g) gpus.push_back(add_node(c, NodeKind::gpu, "gpu" + std::to_string(g), server));
  for (int s = 0; s < t.sockets; ++s) cpus.push_back(add_node(c, NodeKind::cpu, "cpu" + std::to_string(s), server));
  for (int a = 0; a < t.sockets; ++a)
    for (int b = a + 1; b < t.sockets; ++b) add_duplex(c, cpus[a], cpus[b], t.socket_link);
  if (t.host_memory) {
    // Half of B each way: write + read <= B for staged flows (cluster_template.hpp derives it).
    LinkSpec half = *t.host_memory;
    half.kind = LinkKind::memory;
    half.bytes_per_s /= 2;
    for (int s = 0; s < t.sockets; ++s)
      add_duplex(c, cpus[s], add_node(c, NodeKind::memory, "mem" + std::to_string(s), server), half);
  }
  const int switch_count = t.gpus_per_switch > 0 ? ceil_div(t.gpus, t.gpus_per_switch) : 0;
  for (int i = 0; i < switch_count; ++i) {
    switches.push_back(add_node(c, NodeKind::pcie_switch, "pcie" + std::to_string(i), server));
    add_duplex(c, switches.back(), cpus[i * t.sockets / switch_count], t.pcie_link);
  }
  // The PCIe parent of GPU g: its switch, or the root port of its socket.
  auto parent_of_gpu = [&](int g) {
    return switch_count > 0 ? switches[g / t.gpus_per_switch] : cpus[g * t.sockets / t.gpus];
  };
  for (int g = 0; g < t.gpus; ++g) add_duplex(c, gpus[g], parent_of_gpu(g), t.pcie_link);
  for (int j = 0; j < t.nics; ++j) {
    nics.push_back(add_node(c, NodeKind::nic, "mlx5_" + std::to_string(j), server));
    add_duplex(c, nics.back(), parent_of_gpu(j * t.gpus / t.nics), t.pcie_link);
  }
  if (t.nvlink == NvlinkTopology::nvswitch) {
    const int nvswitch = add_node(c, NodeKind::nvswitch, "nvswitch0", server);
    for (int g : gpus) add_duplex(c, g, nvswitch, t.nvlink_link);
  } else if (t.nvlink == NvlinkTopology::pairs) {
    for (int g = 0; g + 1 < t.gpus; g += 2) add_duplex(c, gpus[g], gpus[g + 1], t.nvlink_link);
  } else if (t.nvlink == NvlinkTopology::mesh) {
    LinkSpec one = t.nvlink_link;
    one.bytes_per_s /= std::max(1, one.lanes);
    one.lanes = 1;
    for (int a = 0; a < t.gpus; ++a)
      for (int b = a + 1; b < t.gpus; ++b) add_duplex(c, gpus[a], gpus[b], one);
  }
  c.gpu_nodes.insert(c.gpu_nodes.end(), gpus.begin(), gpus.end());
  return nics;
}

std::vector<int> add_explicit_server(Cluster& c, const ExplicitServer& s, int server) {
  const int offset = static_cast<int>(c.nodes.size());
  std::vector<int> nics;
  for (const auto& n : s.nodes) {
    const int index = add_node(c, n.kind, n.name, server);
    if (n.kind == NodeKind::gpu) c.gpu_nodes.push_back(index);
    if (n.kind == NodeKind::nic) nics.push_back(index);
  }
  for (const auto& l : s.links)
    add_duplex(c, l.from + offset, l.to + offset, LinkSpec{l.kind, l.bytes_per_s, l.latency_ps, l.lanes, l.label});
  return nics;
}

// Leaf-spine network over the servers' NICs (cluster_template.hpp says how they are wired).
void add_network(Cluster& c, const NetworkTemplate& n, const std::vector<std::vector<int>>& nics) {
  const int servers = static_cast<int>(nics.size());
  const int rails = n.topology == NetworkTopology::rail ? static_cast<int>(nics[0].size()) : 1;
  const int groups = ceil_div(servers, n.servers_per_leaf);
  std::map<std::pair<int, int>, int> leaf_of;  // (group, rail) -> node
  for (int g = 0; g < groups; ++g)
    for (int r = 0; r < rails; ++r)
      leaf_of[{g, r}] = add_node(c, NodeKind::network_switch, "leaf" + std::to_string(g * rails + r), -1);
  for (int s = 0; s < servers; ++s)
    for (std::size_t j = 0; j < nics[s].size(); ++j) {
      const int rail = n.topology == NetworkTopology::rail ? static_cast<int>(j) : 0;
      add_duplex(c, nics[s][j], leaf_of.at({s / n.servers_per_leaf, rail}), n.nic_link);
    }
  if (leaf_of.size() < 2) return;
  // Uplink per leaf = its designed NIC ports x NIC bandwidth / oversubscription, over the spines.
  const double ports_per_leaf = static_cast<double>(n.servers_per_leaf) * static_cast<double>(nics[0].size()) / rails;
  LinkSpec up = n.nic_link;
  up.bytes_per_s = ports_per_leaf * n.nic_link.bytes_per_s / n.oversubscription / n.spines;
  up.latency_ps = n.switch_latency_ps;
  up.lanes = 1;
  up.label = n.nic_link.label + " leaf-spine";
  std::vector<int> spines;
  for (int i = 0; i < n.spines; ++i)
    spines.push_back(add_node(c, NodeKind::network_switch, "spine" + std::to_string(i), -1));
  for (const auto& [key, leaf] : leaf_of)
    for (int spine : spines) add_duplex(c, leaf, spine, up);
}

}  // namespace

Cluster build_cluster(const ClusterTemplate& t) {
  if (t.servers < 1) throw std::logic_error("build_cluster: servers < 1");
  if (t.servers > 1 && !t.network) throw std::logic_error("build_cluster: servers > 1 without a network");
  Cluster c;
  c.name = t.name;
  c.gpu = t.gpu;
  c.comm = t.comm;
  c.servers = t.servers;
  std::vector<std::vector<int>> nics;
  for (int s = 0; s < t.servers; ++s) {
    if (const auto* tmpl = std::get_if<ServerTemplate>(&t.server)) {
      nics.push_back(add_template_server(c, *tmpl, s));
      c.gpu_p2p = tmpl->p2p;
      c.gpu_mesh = tmpl->nvlink == NvlinkTopology::mesh;
      c.host_ram_bytes = tmpl->host_ram_bytes;
    } else {
      const auto& ex = std::get<ExplicitServer>(t.server);
      nics.push_back(add_explicit_server(c, ex, s));
      c.gpu_p2p = ex.p2p;
    }
  }
  c.gpus_per_server = c.gpu_count() / t.servers;
  if (t.servers > 1) add_network(c, *t.network, nics);
  return c;
}

}  // namespace stepsim::hw
