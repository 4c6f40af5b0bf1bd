// Routes between servers composed from searches of their parts (route_composition.cpp) against
// one search over both servers and the switches (RouteSearch::whole): the same routes, in the
// same order, on every preset and on machines built so that composing would be wrong.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"

namespace stepsim::hw {
namespace {

// Routes from each of `sources` to every GPU of another server, both ways, composed and whole.
void check_alike(const Cluster& c, const std::vector<int>& sources) {
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
    // A server's first and last GPU (different PCIe switches, sockets, NICs), to every other GPU.
    check_alike(c, {0, c.gpus_per_server - 1});
  }
}

TEST_CASE("two leaf groups, rail-optimized and fat tree: the spines' equal-cost routes, in order") {
  // dgx-h100: 32 servers per leaf, so 40 servers make two groups, joined only at the spines.
  const Cluster rail = load_cluster("dgx-h100", {.nodes = 40, .gpus_per_node = std::nullopt});
  check_alike(rail, {0, 3, 8 * 39 + 5});
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
  check_alike(c, {0, 1, 8, 9, 16});
  // GPU 8 (server 1, rail 0) to GPU 1 (server 0, rail 1): 4 spines and the detour.
  CHECK(Router(c).routes(8, 1).size() == 5);
}

TEST_CASE("two servers cabled to each other directly: routes may go server to server, found whole") {
  Cluster c = load_cluster("dgx-a100", {.nodes = 3, .gpus_per_node = std::nullopt});
  add_duplex(c, node_named(c, "mlx5_0", 0), node_named(c, "mlx5_0", 1), LinkKind::infiniband);
  check_alike(c, {0, 7, 8, 23});
}

}  // namespace
}  // namespace stepsim::hw
