#include "hardware/topo_matrix.hpp"

#include <algorithm>
#include <deque>

namespace stepsim::hw {
namespace {

// NVLink lanes between a and b: a direct bundle, or the narrower side through an NVSwitch.
int nvlink_lanes(const Cluster& c, int a, int b) {
  int direct = 0, switched = 0;
  for (const Link& l : c.links) {
    if (l.kind != LinkKind::nvlink || l.from != a) continue;
    if (l.to == b) direct += l.lanes;
    if (c.nodes[l.to].kind != NodeKind::nvswitch) continue;
    for (const Link& m : c.links)
      if (m.kind == LinkKind::nvlink && m.from == l.to && m.to == b) switched = std::max(switched, std::min(l.lanes, m.lanes));
  }
  return direct > 0 ? direct : switched;
}

bool is_pcie_side(LinkKind k) { return k == LinkKind::pcie || k == LinkKind::socket; }

// Breadth-first search over PCIe and socket links, not through endpoints (GPUs, NICs).
// Returns the link indices of the first shortest path, empty when there is none.
std::vector<int> pcie_path(const Cluster& c, int a, int b) {
  std::vector<std::vector<int>> out(c.nodes.size());
  for (int l = 0; l < static_cast<int>(c.links.size()); ++l) out[c.links[l].from].push_back(l);
  std::vector<int> via(c.nodes.size(), -1);
  std::vector<bool> seen(c.nodes.size(), false);
  std::deque<int> queue{a};
  seen[a] = true;
  while (!queue.empty()) {
    const int u = queue.front();
    queue.pop_front();
    if (u == b) break;
    const NodeKind k = c.nodes[u].kind;
    if (u != a && (k == NodeKind::gpu || k == NodeKind::nic)) continue;
    for (int l : out[u]) {
      const Link& link = c.links[l];
      if (!is_pcie_side(link.kind) || seen[link.to]) continue;
      seen[link.to] = true;
      via[link.to] = l;
      queue.push_back(link.to);
    }
  }
  std::vector<int> path;
  for (int v = b; v != a && via[v] >= 0; v = c.links[via[v]].from) path.push_back(via[v]);
  if (path.empty() || c.links[path.back()].from != a) return {};
  return path;
}

}  // namespace

std::string connection_code_between_nodes(const Cluster& c, int a, int b) {
  if (a == b) return "X";
  if (c.nodes[a].server != c.nodes[b].server) return "NET";
  if (const int lanes = nvlink_lanes(c, a, b); lanes > 0) return "NV" + std::to_string(lanes);
  const std::vector<int> path = pcie_path(c, a, b);
  if (path.empty()) return "SYS";  // no PCIe path at all: the farthest there is
  int cpus = 0, switches = 0;
  bool socket = false;
  for (int l : path) {
    socket = socket || c.links[l].kind == LinkKind::socket;
    if (c.links[l].to == b) continue;
    const NodeKind k = c.nodes[c.links[l].to].kind;
    cpus += k == NodeKind::cpu;
    switches += k == NodeKind::pcie_switch;
  }
  if (socket) return "SYS";
  if (cpus >= 2) return "NODE";
  if (cpus == 1) return "PHB";
  return switches >= 2 ? "PXB" : "PIX";
}

std::string connection_code(const Cluster& c, int gpu_a, int gpu_b) {
  return connection_code_between_nodes(c, c.gpu_nodes[gpu_a], c.gpu_nodes[gpu_b]);
}

std::vector<std::vector<std::string>> connection_matrix(const Cluster& c) {
  std::vector<std::vector<std::string>> m(c.gpu_count(), std::vector<std::string>(c.gpu_count()));
  for (int a = 0; a < c.gpu_count(); ++a)
    for (int b = 0; b < c.gpu_count(); ++b) m[a][b] = connection_code(c, a, b);
  return m;
}

}  // namespace stepsim::hw
