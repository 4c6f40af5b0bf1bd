// Turns a parsed `nvidia-smi topo -m` matrix into hardware YAML (the mapping is in
// topo_import.hpp) and checks that the graph gives back every code.
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>
#include <sstream>

#include "hardware/hardware_readers.hpp"
#include "hardware/hardware_yaml.hpp"
#include "hardware/topo_import.hpp"
#include "hardware/topo_matrix.hpp"

namespace stepsim::hw {
namespace {

using config::ConfigError;

// How far apart two devices are over PCIe: 1 PIX .. 5 SYS; 0 unknown (an NV# hides it).
int pcie_level(const std::string& code) {
  static const std::map<std::string, int> kLevels{{"PIX", 1}, {"PXB", 2}, {"PHB", 3}, {"NODE", 4}, {"SYS", 5}};
  const auto it = kLevels.find(code);
  return it == kLevels.end() ? 0 : it->second;
}

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) { return parent[x] == x ? x : parent[x] = find(parent[x]); }
  void unite(int a, int b) { parent[find(a)] = find(b); }
};

// classes[k][d]: representative of device d among devices joined by codes of level <= k+1
// (k = 0 PIX .. 3 NODE). Sockets (k = 3) also join devices of equal NUMA (or CPU) affinity
// when no SYS separates their groups: NV# rows hide the PCIe path, affinity still tells.
std::vector<std::vector<int>> pcie_classes(const TopoMatrix& m) {
  const std::size_t n = m.devices.size();
  std::vector<std::vector<int>> classes;
  for (int level = 1; level <= 4; ++level) {
    UnionFind uf(n);
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < n; ++b)
        if (const int l = pcie_level(m.codes[a][b]); l > 0 && l <= level) uf.unite(static_cast<int>(a), static_cast<int>(b));
    if (level == 4) {
      auto affinity = [&](std::size_t d) {
        const auto& dev = m.devices[d];
        return !dev.numa_affinity.empty() && dev.numa_affinity != "N/A" ? dev.numa_affinity : dev.cpu_affinity;
      };
      for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b) {
          if (affinity(a).empty() || affinity(a) != affinity(b)) continue;
          bool sys = false;
          for (std::size_t x = 0; x < n; ++x)
            for (std::size_t y = 0; y < n; ++y)
              sys = sys || (uf.find(static_cast<int>(x)) == uf.find(static_cast<int>(a)) &&
                            uf.find(static_cast<int>(y)) == uf.find(static_cast<int>(b)) && m.codes[x][y] == "SYS");
          if (!sys) uf.unite(static_cast<int>(a), static_cast<int>(b));
        }
    }
    std::vector<int> rep(n);
    for (std::size_t d = 0; d < n; ++d) rep[d] = uf.find(static_cast<int>(d));
    classes.push_back(rep);
  }
  return classes;
}

std::string gbps_text(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6gGB/s", bytes_per_s / 1e9);
  return buf;
}

class YamlWriter {
 public:
  std::vector<std::string> nodes, links;
  std::string add_node(const std::string& name, const std::string& kind) {
    nodes.push_back("    - {name: " + name + ", kind: " + kind + "}");
    return name;
  }
  void add_link(const std::string& a, const std::string& b, const std::string& kind, int lanes, double bw,
                const std::string& label) {
    links.push_back("    - {from: " + a + ", to: " + b + ", kind: " + kind + ", lanes: " + std::to_string(lanes) +
                    ", bandwidth: " + gbps_text(bw) + ", label: " + label + "}");
  }
};

// NV# pairs: one NVSwitch for a group of 3+ GPUs with the same NV# between every two, else
// direct bundles.
void add_nvlinks(const TopoMatrix& m, const GpuSpec& gpu, YamlWriter& w) {
  const std::size_t n = m.devices.size();
  UnionFind uf(n);
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b)
      if (m.codes[a][b].rfind("NV", 0) == 0) {
        if (gpu.nvlink_links == 0)
          throw ConfigError(m.where[a][b], "", m.devices[a].label + " to " + m.devices[b].label + " is " + m.codes[a][b] +
                                                   ", but " + gpu.name + " has no NVLink in hardware/gpus.yaml");
        uf.unite(static_cast<int>(a), static_cast<int>(b));
      }
  std::map<int, std::vector<std::size_t>> groups;
  for (std::size_t d = 0; d < n; ++d) groups[uf.find(static_cast<int>(d))].push_back(d);
  int switches = 0;
  for (const auto& [rep, g] : groups) {
    bool uniform = g.size() >= 3;
    for (std::size_t a : g)
      for (std::size_t b : g) uniform = uniform && (a == b || m.codes[a][b] == m.codes[g[0]][g[1]]);
    if (uniform) {
      const int lanes = std::stoi(m.codes[g[0]][g[1]].substr(2));
      const std::string sw = w.add_node("nvswitch" + std::to_string(switches++), "nvswitch");
      for (std::size_t d : g)
        w.add_link(m.devices[d].name, sw, "nvlink", lanes, lanes * gpu.nvlink_link_bytes_per_s(), "NV" + std::to_string(lanes));
      continue;
    }
    for (std::size_t a : g)
      for (std::size_t b : g)
        if (a < b && m.codes[a][b].rfind("NV", 0) == 0) {
          const int lanes = std::stoi(m.codes[a][b].substr(2));
          w.add_link(m.devices[a].name, m.devices[b].name, "nvlink", lanes, lanes * gpu.nvlink_link_bytes_per_s(), m.codes[a][b]);
        }
  }
}

}  // namespace

namespace {

// Figures nvidia-smi does not print; the YAML says so in a comment.
constexpr double kSocketBytesPerS = 67.2e9;  // 3 UPI links at 11.2 GT/s, as hardware/presets/a100-pcie.yaml
constexpr double kFabricLinksPerHostBridge = 4;  // host bridge fabric: 4 x16 links, never the bottleneck

// Builds the PCIe tree of sockets, host bridges and switches (topo_import.hpp).
class PcieTreeWriter {
 public:
  PcieTreeWriter(const TopoMatrix& m, const GpuSpec& gpu, YamlWriter& w)
      : m_(m), classes_(pcie_classes(m)), w_(w), bw_(gpu.pcie_bytes_per_s),
        label_("PCIe gen" + std::to_string(gpu.pcie_generation) + " x16") {}

  void write() {
    std::vector<std::size_t> all(m_.devices.size());
    std::iota(all.begin(), all.end(), 0);
    std::vector<std::string> sockets;
    const auto socket_groups = split(all, 3);
    for (std::size_t s = 0; s < socket_groups.size(); ++s) {
      const std::string cpu = w_.add_node("cpu" + std::to_string(s), "cpu");
      sockets.push_back(cpu);
      const auto bridges = split(socket_groups[s], 2);
      for (std::size_t h = 0; h < bridges.size(); ++h) {
        std::string parent = cpu;
        if (bridges.size() > 1) {
          parent = w_.add_node(cpu + "_hb" + std::to_string(h), "cpu");
          w_.add_link(parent, cpu, "pcie", 16, kFabricLinksPerHostBridge * bw_, "host bridge fabric");
        }
        for (const auto& group : split(bridges[h], 1)) attach(group, parent);
      }
    }
    for (std::size_t a = 0; a < sockets.size(); ++a)
      for (std::size_t b = a + 1; b < sockets.size(); ++b) w_.add_link(sockets[a], sockets[b], "socket", 1, kSocketBytesPerS, "UPI x3");
  }

 private:
  // `members` grouped by their class at `level`, in order of first appearance.
  std::vector<std::vector<std::size_t>> split(const std::vector<std::size_t>& members, int level) const {
    std::vector<std::vector<std::size_t>> out;
    std::map<int, std::size_t> index;
    for (std::size_t d : members) {
      const auto [it, fresh] = index.emplace(classes_[level][d], out.size());
      if (fresh) out.emplace_back();
      out[it->second].push_back(d);
    }
    return out;
  }

  std::string add_switch() { return w_.add_node("pcie" + std::to_string(switches_++), "pcie_switch"); }

  // Devices joined by PXB or closer: alone on a root port, on one switch, or on leaf switches
  // under a top switch (every PIX group gets its own leaf, so two groups are always PXB apart).
  void attach(const std::vector<std::size_t>& group, const std::string& parent) {
    if (group.size() == 1) return w_.add_link(m_.devices[group[0]].name, parent, "pcie", 16, bw_, label_);
    const auto leaves = split(group, 0);
    const std::string top = add_switch();
    w_.add_link(top, parent, "pcie", 16, bw_, label_);
    for (const auto& leaf : leaves) {
      const std::string sw = leaves.size() == 1 ? top : add_switch();
      if (sw != top) w_.add_link(sw, top, "pcie", 16, bw_, label_);
      for (std::size_t d : leaf) w_.add_link(m_.devices[d].name, sw, "pcie", 16, bw_, label_);
    }
  }

  const TopoMatrix& m_;
  std::vector<std::vector<int>> classes_;
  YamlWriter& w_;
  double bw_;
  std::string label_;
  int switches_ = 0;
};

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace

std::string topo_to_hardware_yaml(const TopoMatrix& m, const GpuSpec& gpu, const std::string& source) {
  YamlWriter w;
  for (const auto& d : m.devices) w.add_node(d.name, d.is_gpu ? "gpu" : "nic");
  add_nvlinks(m, gpu, w);
  PcieTreeWriter(m, gpu, w).write();
  std::ostringstream out;
  out << "# Imported by `stepsim topo import` from " << source << " (nvidia-smi topo -m).\n"
      << "# NV# = # NVLinks x " << gbps_text(gpu.nvlink_link_bytes_per_s()) << " per direction; PCIe links "
      << gbps_text(gpu.pcie_bytes_per_s) << " per direction: " << gpu.name << " in hardware/gpus.yaml.\n"
      << "# nvidia-smi prints neither link speeds nor the socket interconnect: sockets are joined by\n"
      << "# " << gbps_text(kSocketBytesPerS) << " (3 UPI links, as hardware/presets/a100-pcie.yaml), host bridges by a\n"
      << "# fabric taken as never the bottleneck. Latencies are 0. Edit what you know better.\n"
      << "name: " << std::filesystem::path(source).stem().string() << "\n"
      << "gpu: " << gpu.name << "\n"
      << "server:\n  nodes:\n" << join_lines(w.nodes) << "  links:\n" << join_lines(w.links);
  return out.str();
}

std::string import_nvidia_smi_topo(const std::string& text, const std::string& file, const std::string& gpu_name) {
  const TopoMatrix m = parse_nvidia_smi_topo(text, file);
  const GpuSpec gpu = find_gpu_spec(gpu_name, {}, "gpu");
  const std::string yaml = topo_to_hardware_yaml(m, gpu, file);
  const Cluster c = load_cluster_text(yaml, file + " (imported)");
  std::map<std::string, int> node_of;
  for (int i = 0; i < static_cast<int>(c.nodes.size()); ++i) node_of[c.nodes[i].name] = i;
  for (std::size_t a = 0; a < m.devices.size(); ++a)
    for (std::size_t b = a + 1; b < m.devices.size(); ++b) {
      const std::string got = connection_code_between_nodes(c, node_of.at(m.devices[a].name), node_of.at(m.devices[b].name));
      if (got != m.codes[a][b])
        throw ConfigError(m.where[a][b], "", m.devices[a].label + " to " + m.devices[b].label + " is " + m.codes[a][b] +
                                                 ", which no PCIe tree that fits the other entries gives (the nearest makes it " +
                                                 got + ")");
    }
  return yaml;
}

}  // namespace stepsim::hw
