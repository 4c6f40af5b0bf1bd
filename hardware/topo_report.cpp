#include "hardware/topo_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "hardware/router.hpp"
#include "hardware/topo_matrix.hpp"
#include "sim/config/units.hpp"

namespace stepsim::hw {
namespace {

const char* kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::gpu: return "gpu";
    case NodeKind::nvswitch: return "nvswitch";
    case NodeKind::pcie_switch: return "pcie_switch";
    case NodeKind::cpu: return "cpu";
    case NodeKind::nic: return "nic";
    case NodeKind::network_switch: return "network_switch";
    case NodeKind::memory: return "memory";
  }
  return "?";
}

const char* kind_name(LinkKind k) {
  switch (k) {
    case LinkKind::nvlink: return "nvlink";
    case LinkKind::pcie: return "pcie";
    case LinkKind::socket: return "socket";
    case LinkKind::infiniband: return "infiniband";
    case LinkKind::ethernet: return "ethernet";
    case LinkKind::memory: return "memory";
  }
  return "?";
}

// "300", "31.5", "56.25": GB/s with at most two decimals, no trailing zeros.
std::string gbps(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", bytes_per_s / 1e9);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// Left-aligned columns, two spaces apart; trailing spaces trimmed.
std::string format_table(const std::vector<std::vector<std::string>>& rows, const std::string& indent = "") {
  std::vector<std::size_t> width;
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line = indent;
    for (std::size_t i = 0; i < r.size(); ++i) line += r[i] + std::string(width[i] - r[i].size() + 2, ' ');
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

int shown_gpus(const Cluster& c) { return c.servers > 2 ? 2 * c.gpus_per_server : c.gpu_count(); }

std::string matrices(const Cluster& c) {
  const int n = shown_gpus(c);
  const Router router(c);
  std::vector<std::vector<std::string>> codes{{""}}, bandwidth{{""}};
  for (int g = 0; g < n; ++g) {
    codes[0].push_back("GPU" + std::to_string(g));
    bandwidth[0].push_back("GPU" + std::to_string(g));
  }
  for (int a = 0; a < n; ++a) {
    codes.push_back({"GPU" + std::to_string(a)});
    bandwidth.push_back({"GPU" + std::to_string(a)});
    for (int b = 0; b < n; ++b) {
      codes.back().push_back(connection_code(c, a, b));
      bandwidth.back().push_back(a == b ? "-" : gbps(router.bottleneck_bytes_per_s(a, b)));
    }
  }
  std::string out = "Connection between GPUs (as nvidia-smi topo -m names it):\n" + format_table(codes) +
                    "\nBottleneck bandwidth between GPUs (GB/s, per direction, all equal-cost routes):\n" +
                    format_table(bandwidth);
  if (n < c.gpu_count())
    out += "(servers 0 and 1 of " + std::to_string(c.servers) + " shown; the others are built alike)\n";
  return out;
}

const char* const kLegend =
    "Legend:\n"
    "  X    = self\n"
    "  NV#  = a bonded set of # NVLinks (direct, or to a shared NVSwitch)\n"
    "  PIX  = PCIe through at most a single PCIe switch\n"
    "  PXB  = PCIe through multiple PCIe switches, no host bridge\n"
    "  PHB  = PCIe through a host bridge (a CPU)\n"
    "  NODE = PCIe across host bridges within one NUMA node\n"
    "  SYS  = PCIe and the socket interconnect between NUMA nodes (QPI/UPI/xGMI)\n"
    "  NET  = different servers: through NICs and the network (stepsim's code, not nvidia-smi's)\n";

std::string summary(const Cluster& c) {
  std::map<NodeKind, int> nodes;
  for (const Node& n : c.nodes) ++nodes[n.kind];
  std::string node_list;
  for (const auto& [kind, count] : nodes) node_list += (node_list.empty() ? "" : ", ") + std::to_string(count) + " " + kind_name(kind);
  // Physical links: a directed link and its reverse count once.
  std::map<std::tuple<LinkKind, std::string, double, std::int64_t>, int> links;
  for (const Link& l : c.links) ++links[{l.kind, l.label, l.bytes_per_s, l.latency_ps}];
  std::vector<std::vector<std::string>> rows{{"kind", "count", "bandwidth", "latency", "label"}};
  for (const auto& [key, count] : links) {
    const auto& [kind, label, bw, latency] = key;
    rows.push_back({kind_name(kind), std::to_string(count / 2), gbps(bw) + " GB/s",
                    config::format_duration_ps(static_cast<double>(latency)), label});
  }
  return "Nodes: " + node_list + "\nLinks (each direction has the bandwidth shown):\n" + format_table(rows, "  ");
}

}  // namespace

std::string topo_report(const Cluster& c) {
  std::ostringstream out;
  out << c.name << ": " << c.gpu_count() << " GPUs (" << c.gpu.name << "), " << c.servers << " server"
      << (c.servers == 1 ? "" : "s") << " x " << c.gpus_per_server << " GPUs"
      << (c.gpu_p2p ? "" : "; no GPU P2P over PCIe: traffic staged through host memory") << "\n\n"
      << matrices(c) << "\n" << kLegend << "\n" << summary(c);
  return out.str();
}

std::string topo_dot(const Cluster& c) {
  std::ostringstream out;
  out << "graph \"" << c.name << "\" {\n  node [shape=box];\n";
  for (int s = -1; s < c.servers; ++s) {
    if (s >= 0) out << "  subgraph cluster_server" << s << " {\n    label=\"server " << s << "\";\n";
    for (std::size_t i = 0; i < c.nodes.size(); ++i)
      if (c.nodes[i].server == s)
        out << (s >= 0 ? "    " : "  ") << "n" << i << " [label=\"" << c.nodes[i].name << "\"];\n";
    if (s >= 0) out << "  }\n";
  }
  std::map<std::pair<int, int>, bool> drawn;
  for (const Link& l : c.links) {
    const auto key = std::minmax(l.from, l.to);
    if (drawn[{key.first, key.second}]) continue;
    drawn[{key.first, key.second}] = true;
    out << "  n" << key.first << " -- n" << key.second << " [label=\"" << l.label << "\\n"
        << gbps(l.bytes_per_s) << " GB/s\"];\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace stepsim::hw
