// gpu_to_host / host_to_gpu: the PCIe way from a GPU into its own socket's CPU, and on into that
// socket's memory node where the server has one.
#include <doctest/doctest.h>

#include "hardware/hardware_yaml.hpp"
#include "hardware/host_route.hpp"

namespace stepsim::hw {
namespace {

std::vector<std::string> node_names(const Cluster& c, const Route& r) {
  std::vector<std::string> names{c.nodes[c.links[r.front()].from].name};
  for (int l : r) names.push_back(c.nodes[c.links[l].to].name);
  return names;
}

using Names = std::vector<std::string>;

TEST_CASE("host route: through the GPU's own PCIe switch to its socket's CPU") {
  // dgx-a100: one switch per GPU (and its NIC), GPUs 0-3 on socket 0, 4-7 on socket 1.
  const Cluster c = load_cluster("dgx-a100");
  CHECK(node_names(c, gpu_to_host(c, 0)) == Names{"gpu0", "pcie0", "cpu0"});
  CHECK(node_names(c, gpu_to_host(c, 5)) == Names{"gpu5", "pcie5", "cpu1"});
  CHECK(node_names(c, host_to_gpu(c, 5)) == Names{"cpu1", "pcie5", "gpu5"});
  for (int l : gpu_to_host(c, 3)) CHECK(c.links[static_cast<std::size_t>(l)].kind == LinkKind::pcie);
}

TEST_CASE("host route: on into the socket's memory where the server models it") {
  const Cluster c = load_cluster_text(
      "gpu: RTX-5090\nserver:\n  gpus: 4\n  pcie: {bandwidth: 63GB/s}\n  sockets: 2\n"
      "  socket_link: {bandwidth: 128GB/s}\n  host_memory: {bandwidth: 100GB/s}\n  p2p: false\n",
      "hw.yaml");
  CHECK(node_names(c, gpu_to_host(c, 1)) == Names{"gpu1", "cpu0", "mem0"});
  CHECK(node_names(c, gpu_to_host(c, 2)) == Names{"gpu2", "cpu1", "mem1"});
  CHECK(node_names(c, host_to_gpu(c, 2)) == Names{"mem1", "cpu1", "gpu2"});
}

TEST_CASE("host route: the GPUs of a later server reach that server's CPU") {
  const Cluster c = load_cluster("dgx-h100", {.nodes = 2, .gpus_per_node = std::nullopt});
  const Route r = gpu_to_host(c, 9);
  REQUIRE(!r.empty());
  for (int l : r) CHECK(c.nodes[static_cast<std::size_t>(c.links[static_cast<std::size_t>(l)].to)].server == 1);
  CHECK(c.nodes[static_cast<std::size_t>(c.links[static_cast<std::size_t>(r.back())].to)].kind == NodeKind::cpu);
}

}  // namespace
}  // namespace stepsim::hw
