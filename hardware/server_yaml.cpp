// Reads `server:` (template or link-by-link) and `network:` of a hardware YAML file.
#include <map>

#include "hardware/hardware_readers.hpp"
#include "sim/config/yaml_field.hpp"

namespace stepsim::hw {
namespace {

using config::Field;

LinkKind read_link_kind(const Field& f) {
  const std::string k = f.as_choice({"nvlink", "pcie", "socket", "infiniband", "ethernet"});
  if (k == "nvlink") return LinkKind::nvlink;
  if (k == "pcie") return LinkKind::pcie;
  if (k == "socket") return LinkKind::socket;
  if (k == "infiniband") return LinkKind::infiniband;
  return LinkKind::ethernet;
}

NodeKind read_node_kind(const Field& f) {
  const std::string k = f.as_choice({"gpu", "nvswitch", "pcie_switch", "cpu", "nic"});
  if (k == "gpu") return NodeKind::gpu;
  if (k == "nvswitch") return NodeKind::nvswitch;
  if (k == "pcie_switch") return NodeKind::pcie_switch;
  if (k == "cpu") return NodeKind::cpu;
  return NodeKind::nic;
}

// bandwidth, latency, lanes, label of a link; `fallback` supplies what is left out.
LinkSpec read_link_figures(const Field& f, LinkSpec s) {
  if (auto v = f.optional("bandwidth")) s.bytes_per_s = v->as_bandwidth();
  else if (s.bytes_per_s <= 0) f.required("bandwidth");  // throws: missing required key
  if (auto v = f.optional("latency")) s.latency_ps = v->as_duration_ps();
  if (auto v = f.optional("lanes")) s.lanes = static_cast<int>(v->as_positive_int());
  if (auto v = f.optional("label")) s.label = v->as_string();
  return s;
}

ServerTemplate read_pcie_side(const Field& f, const GpuSpec& gpu, ServerTemplate t);

ServerTemplate read_template(const Field& f, const GpuSpec& gpu) {
  f.check_keys({"gpus", "nvlink", "pcie", "sockets", "socket_link", "p2p", "nics", "host_memory", "host_ram"});
  ServerTemplate t;
  t.gpus = read_gpu_count(f.required("gpus"), "GPUs per server");
  if (auto nv = f.optional("nvlink")) {
    nv->check_keys({"topology", "bandwidth", "links", "latency", "label"});
    const std::string topo = nv->required("topology").as_choice({"nvswitch", "pairs", "mesh", "none"});
    t.nvlink = topo == "nvswitch" ? NvlinkTopology::nvswitch
               : topo == "pairs"  ? NvlinkTopology::pairs
               : topo == "mesh"   ? NvlinkTopology::mesh
                                  : NvlinkTopology::none;
    if (t.nvlink == NvlinkTopology::none) return read_pcie_side(f, gpu, t);
    LinkSpec base{LinkKind::nvlink, gpu.nvlink_bytes_per_s, 0, gpu.nvlink_links, ""};
    if (auto links = nv->optional("links")) base.lanes = static_cast<int>(links->as_positive_int());
    else if (base.lanes <= 0) nv->required("links");  // throws: the GPU has no NVLink figure
    t.nvlink_link = read_link_figures(*nv, base);
    t.nvlink_link.lanes = base.lanes;
    if (t.nvlink_link.label.empty()) t.nvlink_link.label = "NVLink x" + std::to_string(base.lanes);
    if (t.nvlink == NvlinkTopology::mesh && base.lanes < t.gpus - 1)
      nv->required("topology").fail("a mesh joins every two of the " + std::to_string(t.gpus) + " GPUs by a link of their own: expected at least " +
                                    std::to_string(t.gpus - 1) + " links per GPU, found " + std::to_string(base.lanes));
  }
  return read_pcie_side(f, gpu, t);
}

// The PCIe tree, sockets, P2P and NICs of a template server.
ServerTemplate read_pcie_side(const Field& f, const GpuSpec& gpu, ServerTemplate t) {
  const Field pcie = f.required("pcie");
  pcie.check_keys({"bandwidth", "lanes", "latency", "label", "gpus_per_switch"});
  const std::string gen_label = "PCIe gen" + std::to_string(gpu.pcie_generation) + " x16";
  t.pcie_link = read_link_figures(pcie, LinkSpec{LinkKind::pcie, gpu.pcie_bytes_per_s, 0, 16, gen_label});
  if (auto v = pcie.optional("gpus_per_switch")) t.gpus_per_switch = static_cast<int>(v->as_non_negative_int());
  if (auto v = f.optional("sockets")) t.sockets = static_cast<int>(v->as_positive_int());
  if (t.sockets > 1) {
    const Field s = f.required("socket_link");
    s.check_keys({"bandwidth", "latency", "lanes", "label"});
    t.socket_link = read_link_figures(s, LinkSpec{LinkKind::socket, 0, 0, 1, "socket interconnect"});
  }
  if (auto v = f.optional("p2p")) t.p2p = v->as_bool();
  if (auto v = f.optional("nics")) t.nics = static_cast<int>(v->as_non_negative_int());
  if (auto m = f.optional("host_memory")) {
    // Per socket; bandwidth is reads and writes together (cluster_template.hpp halves it per direction).
    m->check_keys({"bandwidth", "latency", "label"});
    t.host_memory = read_link_figures(*m, LinkSpec{LinkKind::memory, 0, 0, 1, "host memory"});
  }
  if (auto v = f.optional("host_ram")) {
    t.host_ram_bytes = v->as_bytes();
    if (t.host_ram_bytes <= 0) v->fail("expected the server's host RAM, a size above zero such as 2TB, found " + v->found());
  }
  return t;
}

ExplicitServer read_explicit(const Field& f) {
  f.check_keys({"nodes", "links", "p2p"});
  ExplicitServer s;
  std::map<std::string, int> index;
  for (const Field& n : f.required("nodes").items()) {
    n.check_keys({"name", "kind"});
    const Field name = n.required("name");
    if (!index.emplace(name.as_string(), static_cast<int>(s.nodes.size())).second)
      name.fail("duplicate node name '" + name.as_string() + "'");
    s.nodes.push_back(Node{read_node_kind(n.required("kind")), name.as_string(), 0});
  }
  auto node_of = [&](const Field& name) {
    auto it = index.find(name.as_string());
    if (it != index.end()) return it->second;
    std::vector<std::string> names;
    for (const auto& [k, v] : index) names.push_back(k);
    std::string message = "no node named '" + name.as_string() + "'";
    const std::string suggestion = config::closest_match(name.as_string(), names);
    if (!suggestion.empty()) message += "; did you mean '" + suggestion + "'?";
    name.fail(message);
  };
  for (const Field& l : f.required("links").items()) {
    l.check_keys({"from", "to", "kind", "bandwidth", "latency", "lanes", "label"});
    const int from = node_of(l.required("from")), to = node_of(l.required("to"));
    if (from == to) l.required("to").fail("a link needs two different nodes, found '" + s.nodes[from].name + "' twice");
    const LinkSpec spec = read_link_figures(l, LinkSpec{read_link_kind(l.required("kind")), 0, 0, 1, ""});
    s.links.push_back(Link{from, to, spec.kind, spec.bytes_per_s, spec.latency_ps, spec.lanes, spec.label});
  }
  if (auto v = f.optional("p2p")) s.p2p = v->as_bool();
  bool has_gpu = false;
  for (const auto& n : s.nodes) has_gpu = has_gpu || n.kind == NodeKind::gpu;
  if (!has_gpu) f.required("nodes").fail("expected at least one node of kind gpu, found none");
  return s;
}

}  // namespace

std::variant<ServerTemplate, ExplicitServer> read_server(const Field& f, const GpuSpec& gpu) {
  if (!f.is_map()) f.fail("expected a mapping with 'gpus' (a template) or 'nodes' and 'links', found " + f.found());
  if (f.has("nodes") || f.has("links")) return read_explicit(f);
  return read_template(f, gpu);
}

NetworkTemplate read_network(const Field& f) {
  f.check_keys({"topology", "nic", "servers_per_leaf", "spines", "oversubscription", "switch_latency"});
  NetworkTemplate n;
  n.topology = f.required("topology").as_choice({"fat-tree", "rail"}) == "rail" ? NetworkTopology::rail
                                                                                : NetworkTopology::fat_tree;
  const Field nic = f.required("nic");
  nic.check_keys({"kind", "bandwidth", "latency", "label"});
  LinkKind kind = LinkKind::infiniband;
  if (auto k = nic.optional("kind")) {
    kind = read_link_kind(*k);
    if (kind != LinkKind::infiniband && kind != LinkKind::ethernet)
      k->fail("expected one of infiniband, ethernet, found " + k->found());
  }
  n.nic_link = read_link_figures(nic, LinkSpec{kind, 0, 0, 1, ""});
  if (auto v = f.optional("servers_per_leaf")) n.servers_per_leaf = static_cast<int>(v->as_positive_int());
  if (auto v = f.optional("spines")) n.spines = static_cast<int>(v->as_positive_int());
  if (auto v = f.optional("oversubscription")) {
    n.oversubscription = v->as_double();
    if (n.oversubscription < 1) v->fail("expected a number >= 1 (1 = non-blocking), found " + v->found());
  }
  if (auto v = f.optional("switch_latency")) n.switch_latency_ps = v->as_duration_ps();
  return n;
}

}  // namespace stepsim::hw
