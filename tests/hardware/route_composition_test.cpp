// Routes between servers composed from searches of their parts (route_composition.cpp) against
// one search over both servers and the switches (RouteSearch::whole): the same routes, in the
// same order, on every preset and on machines built so that composing would be wrong.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>

#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"

namespace stepsim::hw {
namespace {

// Routes from each of `sources` to every GPU of another server, both ways, composed and whole.
// Returns how many pairs the composed router composed (the rest it searched whole).
std::size_t check_alike(const Cluster& c, const std::vector<int>& sources) {
  const Router composed(c, RouteSearch::composed);
  const Router whole(c, RouteSearch::whole);
  int pairs = 0;
  for (int a : sources)
    for (int b = 0; b < c.gpu_count(); ++b) {
      if (c.server_of(a) == c.server_of(b)) continue;
      CAPTURE(a);
      CAPTURE(b);
      REQUIRE(composed.routes(a, b) == whole.routes(a, b));
      REQUIRE(composed.routes(b, a) == whole.routes(b, a));
      pairs += 2;
    }
  CHECK(pairs > 0);
  CHECK(whole.composed_pairs() == 0);
  return composed.composed_pairs();
}

int node_named(const Cluster& c, const std::string& name, int server) {
  for (std::size_t i = 0; i < c.nodes.size(); ++i)
    if (c.nodes[i].name == name && c.nodes[i].server == server) return static_cast<int>(i);
  FAIL("no node " << name << " in server " << server);
  return -1;
}

void add_duplex(Cluster& c, int a, int b, LinkKind kind) {
  Link there = c.links.back();  // a NIC-to-leaf link's figures: the last the builder added
  there.from = a, there.to = b, there.kind = kind;
  Link back = there;
  std::swap(back.from, back.to);
  c.links.push_back(there);
  c.links.push_back(back);
}

TEST_CASE("every preset on three servers: composed routes are the whole search's") {
  for (const std::string& preset : preset_names()) {
    CAPTURE(preset);
    const Cluster c = load_cluster(preset, {.nodes = 3, .gpus_per_node = std::nullopt});
    // A server's first and last GPU (different PCIe switches, sockets, NICs), to every other GPU;
    // composed wherever the GPUs have P2P (rtx4090 and rtx5090 stage through host memory).
    const std::size_t composed = check_alike(c, {0, c.gpus_per_server - 1});
    CHECK((composed > 0) == c.gpu_p2p);
  }
}

TEST_CASE("two leaf groups, rail-optimized and fat tree: the spines' equal-cost routes, in order") {
  // dgx-h100: 32 servers per leaf, so 40 servers make two groups, joined only at the spines.
  const Cluster rail = load_cluster("dgx-h100", {.nodes = 40, .gpus_per_node = std::nullopt});
  CHECK(check_alike(rail, {0, 3, 8 * 39 + 5}) > 0);
  CHECK(Router(rail).routes(0, 8 * 39 + 1).size() == 4);  // rail 0 to rail 1 across groups: 4 spines
  const Cluster fat = load_cluster_text(R"yaml(
gpu: H100-SXM5-80GB
server:
  gpus: 4
  nvlink: {topology: nvswitch, links: 18, bandwidth: 450GB/s}
  pcie: {bandwidth: 63GB/s, gpus_per_switch: 2}
  sockets: 2
  socket_link: {bandwidth: 128GB/s}
  nics: 2
network:
  topology: fat-tree
  nic: {kind: infiniband, bandwidth: 400Gb/s}
  servers_per_leaf: 2
  spines: 3
  oversubscription: 2
)yaml", "fat tree", {.nodes = 5, .gpus_per_node = std::nullopt});
  check_alike(fat, {0, 1, 2, 3, 17});
}

TEST_CASE("NICs on the CPU: every way out and in is as cheap, and the routes keep one order") {
  // GPUs and NICs on root ports of one socket: a route may leave by either NIC and enter by
  // either, over either spine: 2 x 2 x 2 routes, ordered by their links from the destination back
  // as one search gives them, not in the order the ways were composed.
  const Cluster c = load_cluster_text(R"yaml(
gpu: A100
server:
  gpus: 2
  pcie: {bandwidth: 31.5GB/s, gpus_per_switch: 0}
  nics: 2
network:
  topology: fat-tree
  nic: {kind: infiniband, bandwidth: 200Gb/s}
  spines: 2
)yaml", "root ports", {.nodes = 3, .gpus_per_node = std::nullopt});
  check_alike(c, {0, 1});
  CHECK(Router(c).routes(0, 2).size() == 8);
}

TEST_CASE("a NIC cabled to two leaves: the detour through its server is a route too, found whole") {
  // Server 0's first NIC also goes to leaf 1, so leaf 0 -> mlx5_0 -> leaf 1 costs what leaf 0 ->
  // spine -> leaf 1 costs: routes between rails pass through server 0 between two switches,
  // which composing cannot see; the server fails the check and its routes are searched whole.
  Cluster c = load_cluster("dgx-h100", {.nodes = 3, .gpus_per_node = std::nullopt});
  add_duplex(c, node_named(c, "mlx5_0", 0), node_named(c, "leaf1", -1), LinkKind::infiniband);
  // Server 0 fails the check; pairs of servers 1 and 2 are still composed.
  CHECK(check_alike(c, {0, 1, 8, 9, 16}) > 0);
  // GPU 8 (server 1, rail 0) to GPU 1 (server 0, rail 1): 4 spines and the detour.
  CHECK(Router(c).routes(8, 1).size() == 5);
}

// A server drawn at random, link by link: 2-4 GPUs, 1-2 PCIe switches, 1-2 CPUs and 1-3 NICs,
// every device hung on a tree so that the server is connected, NVLink between some GPUs, and two
// link rates so that equal-cost routes are common. Seeded: the same servers every run.
std::string random_server(std::uint32_t& seed) {
  auto next = [&](int n) {
    seed = seed * 1664525u + 1013904223u;  // Numerical Recipes' LCG
    return static_cast<int>((seed >> 16) % static_cast<std::uint32_t>(n));
  };
  const char* rate[] = {"25GB/s", "50GB/s"};
  const int gpus = 2 + next(3), switches = 1 + next(2), cpus = 1 + next(2), nics = 1 + next(3);
  std::string nodes, links;
  auto node = [&](const std::string& name, const char* kind) { nodes += "    - {name: " + name + ", kind: " + kind + "}\n"; };
  auto link = [&](const std::string& a, const std::string& b, const char* kind) {
    links += "    - {from: " + a + ", to: " + b + ", kind: " + kind + ", bandwidth: " + rate[next(2)] + "}\n";
  };
  // A device hangs on a PCIe switch or on a CPU's root port.
  auto parent = [&] {
    const int k = next(switches + cpus);
    return k < switches ? "sw" + std::to_string(k) : "cpu" + std::to_string(k - switches);
  };
  for (int c = 0; c < cpus; ++c) node("cpu" + std::to_string(c), "cpu");
  for (int c = 1; c < cpus; ++c) link("cpu0", "cpu" + std::to_string(c), "socket");
  for (int s = 0; s < switches; ++s) {
    node("sw" + std::to_string(s), "pcie_switch");
    link("sw" + std::to_string(s), "cpu" + std::to_string(next(cpus)), "pcie");
  }
  for (int g = 0; g < gpus; ++g) {
    node("gpu" + std::to_string(g), "gpu");
    link("gpu" + std::to_string(g), parent(), "pcie");
    if (g > 0 && next(2) == 0) link("gpu" + std::to_string(g), "gpu" + std::to_string(next(g)), "nvlink");
  }
  for (int n = 0; n < nics; ++n) {
    node("nic" + std::to_string(n), "nic");
    link("nic" + std::to_string(n), parent(), "pcie");
  }
  const char* topology = next(2) == 0 ? "rail" : "fat-tree";
  return "gpu: A100\nserver:\n  nodes:\n" + nodes + "  links:\n" + links + "network:\n  topology: " + topology +
         "\n  nic: {kind: infiniband, bandwidth: 25GB/s}\n  servers_per_leaf: " + std::to_string(1 + next(3)) +
         "\n  spines: " + std::to_string(1 + next(3)) + "\n";
}

TEST_CASE("random servers on random fabrics, some cabled oddly: composed routes are the whole search's") {
  std::uint32_t seed = 20261207;
  std::size_t composed = 0;
  for (int trial = 0; trial < 24; ++trial) {
    CAPTURE(trial);
    const std::string yaml = random_server(seed);
    CAPTURE(yaml);
    Cluster c = load_cluster_text(yaml, "random", {.nodes = 4, .gpus_per_node = std::nullopt});
    // A third of the trials cable a NIC of server 0 to a second switch as well, and a sixth join
    // servers 1 and 2 directly, so that the checks that keep composing exact are exercised.
    if (trial % 3 == 1) add_duplex(c, node_named(c, "nic0", 0), node_named(c, "leaf1", -1), LinkKind::infiniband);
    if (trial % 6 == 5) add_duplex(c, node_named(c, "nic0", 1), node_named(c, "nic0", 2), LinkKind::infiniband);
    // A quarter cable a GPU of server 3 straight to a leaf: routes leave and enter by the GPU.
    if (trial % 4 == 2) add_duplex(c, node_named(c, "gpu0", 3), node_named(c, "leaf0", -1), LinkKind::infiniband);
    std::vector<int> sources;  // every GPU of server 0, server 1's first (to reach server 2) and server 3's
    for (int g = 0; g <= c.gpus_per_server; ++g) sources.push_back(g);
    sources.push_back(3 * c.gpus_per_server);
    composed += check_alike(c, sources);
  }
  CHECK(composed > 0);
}

TEST_CASE("two servers cabled to each other directly: routes may go server to server, found whole") {
  Cluster c = load_cluster("dgx-a100", {.nodes = 3, .gpus_per_node = std::nullopt});
  add_duplex(c, node_named(c, "mlx5_0", 0), node_named(c, "mlx5_0", 1), LinkKind::infiniband);
  CHECK(check_alike(c, {0, 7, 8, 23}) == 0);  // nothing composed: the cluster fails the check
}

}  // namespace
}  // namespace stepsim::hw
