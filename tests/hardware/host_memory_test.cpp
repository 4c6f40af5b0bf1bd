// Host memory (`server.host_memory`): the memory node and link the template builds, staged routes
// through it, and the exact message of each mistake. cluster_template.hpp derives the B/2 link.
#include <doctest/doctest.h>

#include <algorithm>

#include "hardware/hardware_yaml.hpp"
#include "hardware/router.hpp"

namespace stepsim::hw {
namespace {

constexpr double kG = 1e9;

// Two sockets, two GPUs on each one's root ports, host memory 100 GB/s per socket.
std::string two_sockets(const std::string& p2p) {
  return "gpu: RTX-5090\nserver:\n  gpus: 4\n  pcie: {bandwidth: 63GB/s}\n  sockets: 2\n"
         "  socket_link: {bandwidth: 128GB/s}\n  host_memory: {bandwidth: 100GB/s, label: DRAM}\n  p2p: " +
         p2p + "\n";
}

std::vector<std::string> node_names(const Cluster& c, const Route& r) {
  std::vector<std::string> names{c.nodes[c.links[r.front()].from].name};
  for (int l : r) names.push_back(c.nodes[c.links[l].to].name);
  return names;
}

using Names = std::vector<std::string>;

TEST_CASE("host memory: one memory node per socket, half the DRAM bandwidth each way") {
  const Cluster c = load_cluster_text(two_sockets("false"), "hw.yaml");
  int memory_nodes = 0, memory_links = 0;
  for (const Node& n : c.nodes) memory_nodes += n.kind == NodeKind::memory;
  CHECK(memory_nodes == 2);
  for (const Link& l : c.links) {
    if (l.kind != LinkKind::memory) continue;
    ++memory_links;
    // write + read <= B = 100 GB/s and staged flows write and read alike, so 50 GB/s each way.
    CHECK(l.bytes_per_s == doctest::Approx(50 * kG));
    CHECK(l.label == "DRAM");
  }
  CHECK(memory_links == 4);  // 2 sockets x both directions
  // Without the key nothing changes: rtx4090 has no memory node.
  for (const Node& n : load_cluster("rtx4090").nodes) CHECK(n.kind != NodeKind::memory);
}

TEST_CASE("host memory: a staged transfer goes into the socket's memory and back out") {
  const Cluster c = load_cluster_text(two_sockets("false"), "hw.yaml");
  const Router router(c);
  // Same socket: one route, in and out of mem0; the bottleneck is memory's 50 GB/s, not 63.
  REQUIRE(router.routes(0, 1).size() == 1);
  CHECK(node_names(c, router.routes(0, 1)[0]) == Names{"gpu0", "cpu0", "mem0", "cpu0", "gpu1"});
  CHECK(router.bottleneck_bytes_per_s(0, 1) == doctest::Approx(50 * kG));
  // Across sockets: staged on either side costs the same, so two routes, split evenly; each
  // half gets min(63 / 2 shared PCIe, 50 memory) = 31.5, so 63 in all.
  REQUIRE(router.routes(0, 2).size() == 2);
  std::vector<Names> routes;
  for (const Route& r : router.routes(0, 2)) routes.push_back(node_names(c, r));
  std::sort(routes.begin(), routes.end());
  CHECK(routes == std::vector<Names>{{"gpu0", "cpu0", "cpu1", "mem1", "cpu1", "gpu2"},
                                     {"gpu0", "cpu0", "mem0", "cpu0", "cpu1", "gpu2"}});
  CHECK(router.bottleneck_bytes_per_s(0, 2) == doctest::Approx(63 * kG));
}

TEST_CASE("host memory: with P2P, GPU traffic never enters it") {
  const Cluster c = load_cluster_text(two_sockets("true"), "hw.yaml");
  const Router router(c);
  REQUIRE(router.routes(0, 1).size() == 1);
  CHECK(node_names(c, router.routes(0, 1)[0]) == Names{"gpu0", "cpu0", "gpu1"});
  for (const Route& r : router.routes(0, 2)) CHECK(node_names(c, r) == Names{"gpu0", "cpu0", "cpu1", "gpu2"});
}

TEST_CASE("rtx5090: 4 GPUs per socket, each staged through its socket's memory") {
  const Cluster c = load_cluster("rtx5090");
  const Router router(c);
  // gpus: 8 on 2 sockets: GPU g on socket g*2/8, so 0-3 on cpu0.
  CHECK(node_names(c, router.routes(3, 2)[0]) == Names{"gpu3", "cpu0", "mem0", "cpu0", "gpu2"});
  CHECK(router.routes(3, 4).size() == 2);
  // gpus: 4: GPU g on socket g*2/4, so 1 -> 2 crosses the sockets.
  const Cluster four = load_cluster("rtx5090", {.nodes = std::nullopt, .gpus_per_node = 4});
  CHECK(Router(four).routes(1, 2).size() == 2);
  CHECK(node_names(four, Router(four).routes(0, 1)[0]) == Names{"gpu0", "cpu0", "mem0", "cpu0", "gpu1"});
}

void check_error(const std::string& yaml, const std::string& message) {
  CHECK_THROWS_WITH(load_cluster_text(yaml, "hw.yaml"), message.c_str());
}

TEST_CASE("host memory: mistakes are positioned and say what was expected") {
  const std::string head = "gpu: RTX-5090\nserver:\n  gpus: 2\n  pcie: {}\n  p2p: false\n";
  check_error(head + "  host_memory: {bandwidth: 307.2}\n",
              "hw.yaml:6:28: server.host_memory.bandwidth: expected a bandwidth with a unit such as 450GB/s, "
              "found '307.2'");
  check_error(head + "  host_memory: {label: DDR5}\n", "hw.yaml:6:16: server.host_memory: missing required key 'bandwidth'");
  check_error(head + "  host_memory: {bandwith: 307.2GB/s}\n",
              "hw.yaml:6:17: server.host_memory: unknown key 'bandwith'; did you mean 'bandwidth'?");
  check_error(head + "comm: {host_memory_efficiency: 0}\n",
              "hw.yaml:6:32: comm.host_memory_efficiency: expected a fraction in (0, 1], found '0'");
}

}  // namespace
}  // namespace stepsim::hw
