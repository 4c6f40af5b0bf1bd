#include "hardware/host_route.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

namespace stepsim::hw {
namespace {

// The link `from` -> `to` of the given kind.
std::optional<int> link_between(const Cluster& c, int from, int to, LinkKind kind) {
  for (std::size_t l = 0; l < c.links.size(); ++l)
    if (c.links[l].from == from && c.links[l].to == to && c.links[l].kind == kind) return static_cast<int>(l);
  return std::nullopt;
}

}  // namespace

Route gpu_to_host(const Cluster& cluster, int gpu) {
  if (gpu < 0 || gpu >= cluster.gpu_count()) throw std::invalid_argument("gpu_to_host: unknown GPU " + std::to_string(gpu));
  const int source = cluster.gpu_nodes[static_cast<std::size_t>(gpu)];
  const int server = cluster.nodes[static_cast<std::size_t>(source)].server;
  std::vector<std::vector<int>> out_links(cluster.nodes.size());
  for (std::size_t l = 0; l < cluster.links.size(); ++l) {
    const Link& link = cluster.links[l];
    if (link.kind == LinkKind::pcie && cluster.nodes[static_cast<std::size_t>(link.from)].server == server)
      out_links[static_cast<std::size_t>(link.from)].push_back(static_cast<int>(l));
  }
  // Breadth first from the GPU over PCIe, passing through switches only; `via` is the link that
  // reached each node.
  std::vector<bool> seen(cluster.nodes.size(), false);
  std::vector<std::optional<int>> via(cluster.nodes.size());
  seen[static_cast<std::size_t>(source)] = true;
  std::vector<int> level{source};
  std::optional<int> cpu;
  while (!level.empty() && !cpu) {
    std::vector<int> next, reached;
    for (int n : level)
      for (int l : out_links[static_cast<std::size_t>(n)]) {
        const int to = cluster.links[static_cast<std::size_t>(l)].to;
        if (seen[static_cast<std::size_t>(to)]) continue;
        seen[static_cast<std::size_t>(to)] = true;
        via[static_cast<std::size_t>(to)] = l;
        const NodeKind kind = cluster.nodes[static_cast<std::size_t>(to)].kind;
        if (kind == NodeKind::cpu) reached.push_back(to);
        if (kind == NodeKind::pcie_switch) next.push_back(to);
      }
    if (!reached.empty()) cpu = *std::min_element(reached.begin(), reached.end());
    level = std::move(next);
  }
  Route route;
  if (!cpu) return route;
  for (int n = *cpu; via[static_cast<std::size_t>(n)]; n = cluster.links[static_cast<std::size_t>(*via[static_cast<std::size_t>(n)])].from)
    route.push_back(*via[static_cast<std::size_t>(n)]);
  std::reverse(route.begin(), route.end());
  for (std::size_t l = 0; l < cluster.links.size(); ++l)
    if (cluster.links[l].from == *cpu && cluster.links[l].kind == LinkKind::memory) {
      route.push_back(static_cast<int>(l));
      break;
    }
  return route;
}

Route host_to_gpu(const Cluster& cluster, int gpu) {
  Route route;
  const Route there = gpu_to_host(cluster, gpu);
  for (auto it = there.rbegin(); it != there.rend(); ++it) {
    const Link& l = cluster.links[static_cast<std::size_t>(*it)];
    const auto back = link_between(cluster, l.to, l.from, l.kind);
    if (!back) throw std::logic_error("host_to_gpu: link " + std::to_string(*it) + " has no reverse");
    route.push_back(*back);
  }
  return route;
}

}  // namespace stepsim::hw
